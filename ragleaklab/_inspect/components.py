"""Every inspect_ai component of ragleaklab; importing this module registers them all."""

from ragleaklab._inspect.dataset import pack_dataset
from ragleaklab._inspect.metrics import leak_rate, leak_stderr
from ragleaklab._inspect.reducers import gated
from ragleaklab._inspect.scorers import (
    access,
    claim,
    metric_scorer,
    retrieval,
    scorer_for,
    sentinel,
    verbatim,
)
from ragleaklab._inspect.solver import ask_target
from ragleaklab._inspect.tasks import pack

__all__ = [
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
]
