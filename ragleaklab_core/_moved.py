"""The import paths of the flat layout (before 0.2), kept working with a loud warning.

Until 0.2 every module of the core sat in one folder (``ragleaklab_core.runner``,
``ragleaklab_core.pytest_plugin``...). Those paths are named in other people's code and docs, so
a finder on ``sys.meta_path`` maps each old path to the module that now holds it: the *same*
module object (``ragleaklab_core.runner is ragleaklab_core.run.runner``), after a
``FutureWarning`` that names the new path. ``FutureWarning``, not ``DeprecationWarning``: the
latter is hidden outside ``__main__`` and tests, and an import that will break in 1.0 should
be seen by whoever runs the code. The public API is ``ragleaklab_core`` itself (and
``ragleaklab_core.testing``); prefer it to any module path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

#: Old module path (under ``ragleaklab_core.``) -> where it lives now.
MOVED: dict[str, str] = {
    "aggregation": "stats.aggregation",
    "roc": "stats.roc",
    "fitting": "stats.fitting",
    "manifest": "packs.manifest",
    "pack_validation": "packs.validation",
    "scaffold": "packs.scaffold",
    "labelling": "calibration.labelling",
    "thresholds": "calibration.thresholds",
    "plot": "calibration.plot",
    "runner": "run.runner",
    "recording": "run.recording",
    "wiring": "run.wiring",
    "journal": "run.journal",
    "verdict": "run.evaluation",
    "suite": "run.suite",
    "run_report": "run.report",
    "pack_calibration": "run.calibrate_pack",
    "cli_label": "cli.label",
    "cli_packs": "cli.packs",
    "pytest_plugin": "testing.pytest_plugin",
    # 0.3: the gate left reporting (it decides; reporting only shows).
    "reporting.gate": "gate",
    # 0.4: evaluation gathers the facts the gate decides on; the verdict is the gate's.
    "run.verdict": "run.evaluation",
}

_PREFIX = "ragleaklab_core."


def warn_moved(old: str, new: str, *, stacklevel: int = 2) -> None:
    warnings.warn(
        f"{old} moved to {new}; the old path will be removed in ragleaklab 1.0 "
        "(the public API is `ragleaklab_core`)",
        FutureWarning,
        stacklevel=stacklevel,
    )


class _MovedLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self._new = new
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # stacklevel 3: warn_moved, this method, then (importlib's frames are skipped) the import.
        warn_moved(spec.name, self._new, stacklevel=3)
        # The module itself, not a copy, so its classes and state are shared.
        module = importlib.import_module(self._new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # Nothing to run (it ran under its new name); the import system has just overwritten
        # the module's __spec__ with the old path's: give it its own back.
        module.__spec__ = self._spec


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the flat layout's module paths and hands out the moved modules."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX):
            return None
        new = MOVED.get(fullname.removeprefix(_PREFIX))
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedLoader(_PREFIX + new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (importing the package twice is harmless)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
