"""The sequence behaviour shared by what ragleaklab reads again rather than holds.

A pack's cases file, a run's records on disk and a report's streamed lists are sequences that
produce their items by walking from the start. They know their length up front; indexing and
comparing walk them. Walking is for code that reads each item once; indexing is for tests and
small runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class Walked(Sequence[T]):
    """Indexing, slicing and equality for a sequence that defines ``__iter__`` and ``__len__``.

    A slice is a tuple; a prefix (``[:n]``) reads no further than its last item.
    """

    def __iter__(self) -> Iterator[T]:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __len__(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        length = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(length)
            if start == 0 and step == 1:
                return tuple(itertools.islice(iter(self), stop))
            return tuple(self)[index]
        position = index + length if index < 0 else index
        if not 0 <= position < length:
            raise IndexError(f"{type(self).__name__} index out of range")
        return next(itertools.islice(iter(self), position, None))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # its items may change (a spool grows)


__all__ = ["Walked"]
