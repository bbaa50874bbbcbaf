"""Write files atomically: a crash or a failed run never leaves a partial file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _write_chunks(handle: IO[bytes], chunks: Iterable[str], size: int = 1 << 16) -> None:
    pending: list[str] = []
    held = 0
    for chunk in chunks:
        pending.append(chunk)
        held += len(chunk)
        if held >= size:
            handle.write("".join(pending).encode("utf-8"))
            pending, held = [], 0
    handle.write("".join(pending).encode("utf-8"))


def write_atomic(path: Path, data: bytes | Iterable[str]) -> None:
    """Write *data* to *path* through a temporary file in the same directory and a rename.

    *data* is bytes, or text chunks written (UTF-8) as they come: a report of a million cases
    is streamed to the file, never built whole in memory.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, bytes):
                fh.write(data)
            else:
                _write_chunks(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
