"""Write files atomically: a crash or a failed run never leaves a partial file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from ragleaklab_core.errors import InputError


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


def make_dir(directory: Path) -> None:
    """Create *directory* and its parents; an :class:`InputError` naming it otherwise."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create: {exc.strerror or exc}", source=directory.as_posix()
        ) from None


def write_file(target: Path, text: str | Iterable[str]) -> None:
    """Write *text* (a string, or chunks streamed as they come) to *target* atomically, creating
    its directory; an :class:`InputError` naming the file otherwise (exit 2)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, text.encode("utf-8") if isinstance(text, str) else text)
    except OSError as exc:  # --out under a file, no permission, disk full...
        raise InputError(f"cannot write: {exc.strerror or exc}", source=target.as_posix()) from None
