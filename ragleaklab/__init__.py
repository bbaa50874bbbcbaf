"""ragleaklab inside other evaluation harnesses.

The core API (runner, calibration, plugin loading) lives in :mod:`ragleaklab_core`. This package
holds the integrations, named after the distribution on purpose: inspect_ai names the tasks,
scorers and metrics that an installed package registers ``<top-level import package>/<name>``,
so they are ``ragleaklab/pack``, ``ragleaklab/verbatim``...

Importing ``ragleaklab`` imports neither inspect_ai nor any plugin. The inspect_ai components are
importable from here by name (``from ragleaklab import pack_dataset``); the first such access
imports inspect_ai (install it with ``pip install 'ragleaklab[inspect]'``).
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

# Only the standard library here: inspect imports this package for every evaluation (it holds
# the entry point), so it must not be able to fail.
try:
    __version__ = version("ragleaklab")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"

#: Names served from :mod:`ragleaklab._inspect.components` on first access (imports inspect_ai).
_INSPECT_NAMES = frozenset(
    {
        "access",
        "ask_target",
        "claim",
        "gated",
        "leak_rate",
        "leak_stderr",
        "metric_scorer",
        "pack",
        "pack_dataset",
        "retrieval",
        "scorer_for",
        "sentinel",
        "verbatim",
    }
)


def __getattr__(name: str) -> Any:
    if name not in _INSPECT_NAMES:
        raise AttributeError(f"module 'ragleaklab' has no attribute {name!r}")
    value = getattr(import_module("ragleaklab._inspect.components"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({"__version__", *_INSPECT_NAMES})


__all__ = ["__version__", *sorted(_INSPECT_NAMES)]
