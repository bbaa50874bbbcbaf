"""Fitting thresholds on labelled scores: the calibration report, the thresholds file, labels."""

from importlib import import_module
from typing import Any

_SUBMODULES = frozenset({"labelling", "plot", "report", "thresholds"})


def __getattr__(name: str) -> Any:
    # Until 0.2 this path was a module (now ``calibration.report``); its names still resolve.
    if name in _SUBMODULES or name.startswith("_"):
        # Not yet imported: say so, and the import system imports the submodule.
        raise AttributeError(f"module 'ragleaklab_core.calibration' has no attribute {name!r}")
    report = import_module("ragleaklab_core.calibration.report")
    if not hasattr(report, name):
        raise AttributeError(f"module 'ragleaklab_core.calibration' has no attribute {name!r}")
    from ragleaklab_core._moved import warn_moved

    warn_moved(f"ragleaklab_core.calibration.{name}", f"{report.__name__}.{name}", stacklevel=3)
    return getattr(report, name)
