"""A sequence kept on disk: what a run produces per case, read back only when it is needed.

A run of a million cases must not hold a million records in memory, yet ``PackRun.records`` and
``PackRun.results`` are sequences callers iterate, count and index. A :class:`Spool` is that
sequence: items are appended once, as JSON lines in a private temporary file, and every
iteration reads them back one at a time. The file is removed when the spool is garbage-collected
(or at interpreter exit), so a spool behaves like the tuple it replaces, minus the memory.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import tempfile
import weakref
from collections.abc import Callable, Iterator
from typing import IO, Any, Generic, TypeVar

from ragleaklab_core._walked import Walked

T = TypeVar("T")


def _discard(handles: list[IO[str]], path: str) -> None:
    for handle in handles:
        handle.close()
    with contextlib.suppress(OSError):  # already gone (a temporary directory was cleaned)
        os.unlink(path)


class Spool(Walked[T], Generic[T]):
    """An append-only sequence of JSON-serialisable items stored as lines of a temporary file.

    Args:
        decode: Builds an item from its parsed JSON line.
        encode: Turns an item into what ``json.dumps`` writes (default: the item itself).
    """

    def __init__(
        self, decode: Callable[[Any], T], encode: Callable[[T], Any] | None = None
    ) -> None:
        fd, path = tempfile.mkstemp(prefix="ragleaklab-", suffix=".jsonl")
        # The open handle, while items are appended; sealed, none (a suite of hundreds of packs
        # must not hold a file descriptor per finished spool).
        self._open: list[IO[str]] = [os.fdopen(fd, "w", encoding="utf-8", newline="\n")]
        self._path = path
        self._decode = decode
        self._encode = encode
        self._length = 0
        self._finalizer = weakref.finalize(self, _discard, self._open, path)

    @property
    def path(self) -> str:
        """The file the items are stored in (one JSON line each, in order)."""
        self._flush()
        return self._path

    def seal(self) -> None:
        """Close the file for appending until the next append (reading never needs it open)."""
        while self._open:
            self._open.pop().close()

    def _flush(self) -> None:
        if self._open:
            self._open[0].flush()

    def append(self, item: T) -> None:
        data = item if self._encode is None else self._encode(item)
        self.append_line(json.dumps(data, ensure_ascii=False, allow_nan=False))

    def append_line(self, line: str) -> None:
        """Append an item already serialised (one line of JSON, no newline)."""
        if not self._open:
            self._open.append(open(self._path, "a", encoding="utf-8", newline="\n"))  # noqa: SIM115
        handle = self._open[0]
        handle.write(line)
        handle.write("\n")
        self._length += 1

    def lines(self) -> Iterator[str]:
        """The stored JSON lines, without their newline, in order."""
        self._flush()
        with open(self._path, encoding="utf-8", newline="\n") as handle:
            for line in itertools.islice(handle, self._length):
                yield line[:-1]

    def __iter__(self) -> Iterator[T]:
        decode = self._decode
        for line in self.lines():
            yield decode(json.loads(line))

    def __len__(self) -> int:
        return self._length

    def __repr__(self) -> str:
        return f"<Spool of {self._length} items>"


__all__ = ["Spool"]
