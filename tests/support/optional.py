"""Test folders whose libraries are optional (``tests/apps``, ``tests/stores``): skipped when a
library is missing, except under the tox env made to run them, where that is an error (the env
that exists to run them must never pass having run nothing)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable
from pathlib import Path

import pytest


def missing(names: Iterable[str]) -> list[str]:
    """The modules among *names* that cannot be imported."""
    absent = []
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # the parent package of a dotted name is missing
            found = False
        if not found:
            absent.append(name)
    return absent


def require(names: Iterable[str], *, flag: str, group: str) -> list[str]:
    """What *names* lacks; an ImportError when the env variable *flag* is ``1``."""
    absent = missing(names)
    if absent and os.environ.get(flag) == "1":
        raise ImportError(
            f"{flag}=1 but {', '.join(absent)} cannot be imported: install the {group!r} "
            f"dependency group (tox -e {group} does), or unset {flag} to skip these tests"
        )
    return absent


def skip_folder(folder: Path, absent: list[str], group: str, items: list[pytest.Item]) -> None:
    """Mark every test under *folder* skipped when libraries are *absent*."""
    if not absent:
        return
    skip = pytest.mark.skip(reason=f"needs {', '.join(absent)} (tox -e {group})")
    for item in items:
        if folder in item.path.parents:
            item.add_marker(skip)
