"""Writing the command line's outputs: atomically, creating directories; a failure exits 2."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ragleaklab_core._atomic import write_atomic
from ragleaklab_core.errors import InputError


def make_dir(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create: {exc.strerror or exc}", source=directory.as_posix()
        ) from None


def write_file(target: Path, text: str | Iterable[str]) -> None:
    """Write *text* (a string, or chunks streamed as they come) to *target* atomically, creating
    its directory; errors exit 2."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, text.encode("utf-8") if isinstance(text, str) else text)
    except OSError as exc:  # --out under a file, no permission, disk full...
        raise InputError(f"cannot write: {exc.strerror or exc}", source=target.as_posix()) from None
