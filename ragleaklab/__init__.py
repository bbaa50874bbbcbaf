"""ragleaklab inside other evaluation harnesses.

The core API (runner, calibration, plugin loading) lives in :mod:`ragleaklab_core`. This package
holds the integrations, named after the distribution on purpose: inspect_ai names the tasks,
scorers and metrics that an installed package registers ``<top-level import package>/<name>``,
so they are ``ragleaklab/pack``, ``ragleaklab/verbatim``, ``ragleaklab/<any installed metric>``...

Importing ``ragleaklab`` imports neither inspect_ai nor any plugin. The inspect_ai components are
importable from here by name (``from ragleaklab import pack_dataset``); the first such access
imports inspect_ai (install it with ``pip install 'ragleaklab[inspect]'``).
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any

# Only the standard library here: inspect imports this package for every evaluation (it holds
# the entry point), so it must not be able to fail.
try:
    __version__ = version("ragleaklab")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"

#: Names served from :mod:`ragleaklab._inspect.components` on first access (imports inspect_ai).
#: Besides these, every installed metric plugin whose name is an identifier is served as its
#: registered scorer (``ragleaklab.retrieval``, ``ragleaklab.citation``, a third party's
#: ``ragleaklab.acme_pii``): no list of metrics is kept here.
_INSPECT_NAMES = frozenset(
    {
        "ask_target",
        "gated",
        "leak_rate",
        "leak_stderr",
        "metric_scorer",
        "pack",
        "pack_dataset",
        "scorer_for",
    }
)


def _metric_scorer_names() -> set[str]:
    """The installed metric plugins that are served as scorers by name, read from entry-point
    metadata (no import): asking for any other name never imports inspect_ai, so
    ``hasattr(ragleaklab, "x")`` stays an AttributeError, not an ImportError, without the extra.
    """
    found = {ep.name for ep in entry_points(group="ragleaklab.metrics")}
    return {n for n in found if n.isidentifier() and not n.startswith("_")} - _INSPECT_NAMES


def __getattr__(name: str) -> Any:
    if name == "__all__":  # star imports get every installed metric's scorer too
        return ["__version__", *sorted(_INSPECT_NAMES | _metric_scorer_names())]
    if name in _INSPECT_NAMES:
        value = getattr(import_module("ragleaklab._inspect.components"), name)
        globals()[name] = value
        return value
    if name in _metric_scorer_names():
        # Not cached: a metric reinstalled with other declared values gets its new scorer.
        return getattr(import_module("ragleaklab._inspect.components"), name)
    raise AttributeError(f"module 'ragleaklab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({"__version__", *_INSPECT_NAMES, *_metric_scorer_names()})
