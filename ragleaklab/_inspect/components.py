"""Every inspect_ai component of ragleaklab; importing this module registers them all.

The scorers of the metric plugins are not listed here: importing
:mod:`ragleaklab._inspect.scorers` registers ``ragleaklab/<metric>`` for every installed metric,
and this module serves each as an attribute by the metric's name (``components.citation``),
so a third-party metric gets the same as a built-in one.
"""

from typing import Any

from ragleaklab._inspect import scorers as _scorers
from ragleaklab._inspect.dataset import pack_dataset
from ragleaklab._inspect.metrics import leak_rate, leak_stderr
from ragleaklab._inspect.reducers import gated
from ragleaklab._inspect.scorers import metric_scorer, scorer_for
from ragleaklab._inspect.solver import ask_target
from ragleaklab._inspect.tasks import pack


def __getattr__(name: str) -> Any:
    # An installed metric's registered scorer (``retrieval``, ``citation``, ``acme_pii``...).
    return getattr(_scorers, name)


__all__ = [
    "ask_target",
    "gated",
    "leak_rate",
    "leak_stderr",
    "metric_scorer",
    "pack",
    "pack_dataset",
    "scorer_for",
]
