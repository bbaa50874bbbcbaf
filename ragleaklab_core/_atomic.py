"""Write files atomically: a crash or a failed run never leaves a partial file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Sequence
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


def write_all(files: Sequence[tuple[Path, str | bytes | Iterable[str]]]) -> None:
    """Write every ``(path, data)`` of *files*, or none of them.

    *data* is text, text chunks or bytes (a PNG, say). Each file is first written whole to a
    temporary beside it (text chunks streamed as they come); only when every one succeeded are
    they renamed into place, in order. A failure (disk full, a directory made read-only)
    removes the temporaries, and a rename that fails puts back what the earlier renames
    replaced: what was there before stays, unmixed with this write's files.

    Raises:
        InputError: A file could not be written; it names the file (exit 2).
    """
    staged: list[tuple[Path, str]] = []
    try:
        for target, text in files:
            staged.append((target, _stage(target, text)))
        _commit(staged)
    except BaseException:
        for _, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def _stage(target: Path, text: str | bytes | Iterable[str]) -> str:
    """A temporary beside *target* holding *text*, ready to be renamed over it."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", source=target.as_posix()) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(text, bytes):
                fh.write(text)
            else:
                _write_chunks(fh, [text] if isinstance(text, str) else text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(
                f"cannot write: {exc.strerror or exc}", source=target.as_posix()
            ) from None
        raise
    return tmp


def _commit(staged: Sequence[tuple[Path, str]]) -> None:
    """Rename every staged temporary over its target; on a failure, undo the renames made."""
    done: list[tuple[Path, bool, str | None]] = []  # (target, existed, a link to the old file)
    try:
        for target, tmp in staged:
            existed = os.path.lexists(target)
            done.append((target, existed, _keep(target)))
            os.replace(tmp, target)
    except BaseException as exc:
        # Ctrl-C between two renames too: the files are put back, not left half replaced.
        for target, existed, kept in reversed(done):
            with contextlib.suppress(OSError):
                if kept is not None:
                    os.replace(kept, target)
                elif not existed:  # there was no file: none is left
                    target.unlink(missing_ok=True)
        if not isinstance(exc, OSError):
            raise
        raise InputError(
            f"cannot write: {exc.strerror or exc}", source=done[-1][0].as_posix()
        ) from None
    for _, _, kept in done:
        if kept is not None:
            with contextlib.suppress(OSError):
                os.unlink(kept)


def _keep(target: Path) -> str | None:
    """A hard link to the file at *target*, to put it back; None when there is no file (or the
    file system makes no hard links)."""
    if not target.is_file():
        return None
    kept = os.path.join(target.parent, f".{target.name}.{os.getpid()}.kept")
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(kept)
        os.link(target, kept)
    except OSError:
        return None
    return kept


def output_problem(path: Path) -> str | None:
    """Why a file cannot be written at *path*, when that can be known before writing it: a
    directory there, or a nearest existing folder that is a file or not writable. None when
    nothing stands in the way (its folders are created when it is written)."""
    if path.is_dir():
        return "is a directory, expected a file"
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return f"cannot be created: {folder.as_posix()} is a file, not a directory"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot be written: the directory {folder.as_posix()} is not writable"
    return None


def same_file(a: Path, b: Path) -> bool:
    """True when *a* and *b* name one file (``./a`` and ``a``, a symbolic link and its target)."""
    if os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b)):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
