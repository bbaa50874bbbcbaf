"""Whole runs that several gate test modules read, made once per test session."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from tests.support.cli import rlk

#: The verbatim pack against the reference target: naive, and hardened by cutting long quotes
#: (46 failing cases instead of 57: fewer, but not significantly) or by paraphrasing (none).
VERBATIM_RUNS: Mapping[str, tuple[str, ...]] = {
    "naive": (),
    "paraphrase": ("--target-option", "paraphrase=true"),
    "quotes": ("--target-option", "max_quote_words=8"),
}


@pytest.fixture(scope="session")
def verbatim_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The :data:`VERBATIM_RUNS`, each in its folder (``SOURCE_DATE_EPOCH=0``). Read only:
    a test that writes beside them copies them first (:func:`copy_runs`)."""
    root = tmp_path_factory.mktemp("verbatim-runs")
    for name, options in VERBATIM_RUNS.items():
        done = rlk("run", "-p", "verbatim-extraction", *options, "-o", name, cwd=root, epoch="0")
        assert done.returncode in (0, 1), done.stdout + done.stderr
    return root


@pytest.fixture(scope="session")
def copy_runs(verbatim_runs: Path) -> Callable[..., Path]:
    """``copy_runs(folder, naive="naive", ...)``: the session's runs copied into *folder*, each
    under the name given (a keyword names the folder, its value the run)."""

    def copy(folder: Path, **names: str) -> Path:
        for name, run in names.items():
            shutil.copytree(verbatim_runs / run, folder / name)
        return folder

    return copy
