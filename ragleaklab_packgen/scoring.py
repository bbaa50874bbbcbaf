"""The one place the generator reads a metric: to fit each pack's default threshold and to
measure the metric's quality on the pack. Labels never come from here (``instrumentation``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragleaklab_plugins.metrics.access import AccessMetric
from ragleaklab_plugins.metrics.attribution import AttributionMetric
from ragleaklab_plugins.metrics.citation import CitationMetric
from ragleaklab_plugins.metrics.claim import ClaimMetric
from ragleaklab_plugins.metrics.exfiltration import ExfiltrationMetric
from ragleaklab_plugins.metrics.retrieval import RetrievalMetric
from ragleaklab_plugins.metrics.sentinel import SentinelMetric
from ragleaklab_plugins.metrics.verbatim import VerbatimMetric

from ragleaklab_core import Case, Document, Response

#: A scorer factory: bound to a corpus, it scores one case's response.
Scorer = Callable[[Sequence[Document]], Callable[[Case, Response], float]]

_METRICS: Mapping[str, Callable[..., Any]] = {
    "retrieval": RetrievalMetric,
    "attribution": AttributionMetric,
    "sentinel": SentinelMetric,
    "claim": ClaimMetric,
    "verbatim": VerbatimMetric,
    "exfiltration": ExfiltrationMetric,
    "access": AccessMetric,
    "citation": CitationMetric,
}


def bound_metric(
    metric_name: str, options: Mapping[str, Any] | None, documents: Sequence[Document]
) -> Any:
    """The built-in metric *metric_name* with *options*, bound to *documents* when it can be."""
    metric = _METRICS[metric_name](**dict(options or {}))
    return metric.for_corpus(documents) if hasattr(metric, "for_corpus") else metric


def scorer(metric_name: str, value: str, options: Mapping[str, Any] | None = None) -> Scorer:
    """The built-in metric *metric_name* with *options*, bound to the corpus when it can be,
    reading its *value*. An unscorable case is a generator bug, never a silent 0."""

    def bind(documents: Sequence[Document]) -> Callable[[Case, Response], float]:
        bound = bound_metric(metric_name, options, documents)

        def score(case: Case, response: Response) -> float:
            result = bound.score(case, response)
            if result.unscorable:
                raise SystemExit(f"{case.test_id} is unscorable: {result.unscorable}")
            return float(result.values[value])

        return score

    return bind
