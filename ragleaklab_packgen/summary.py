"""The one-line summary printed for each pack: label counts, the threshold's catch, and how much the
hardened reference target cuts the primary metric on the positives.
"""

from __future__ import annotations

from typing import Any

from ragleaklab_plugins.metrics.claim import ClaimMetric
from ragleaklab_plugins.metrics.retrieval import RetrievalMetric
from ragleaklab_plugins.metrics.sentinel import SentinelMetric
from ragleaklab_plugins.metrics.verbatim import VerbatimMetric

from .build import PackData, primary_scorer
from .target import answer_all
from .verbatim_extraction import VERBATIM_MIN_WORDS


def hardened_mean(pack: PackData, options: dict[str, Any]) -> tuple[float, float]:
    """The primary metric's mean over the positives: naive target, then hardened."""
    positives = [
        c for c, row in zip(pack.cases, pack.labels, strict=True) if row["label"] == "positive"
    ]
    metric = {
        "retrieval": RetrievalMetric(k=5),
        "sentinel": SentinelMetric(),
        "claim": ClaimMetric(),
        "verbatim": VerbatimMetric(min_words=VERBATIM_MIN_WORDS),
    }[pack.metric]
    score = primary_scorer(metric, pack.primary)(pack.documents)
    means = []
    for opts in ({}, options):
        responses = answer_all(pack.documents, [c.query for c in positives], **opts)
        values = [score(c, r) for c, r in zip(positives, responses, strict=True)]
        means.append(sum(values) / len(values))
    return means[0], means[1]


def summary_line(pack: PackData, hardened: dict[str, Any]) -> str:
    """*pack*'s summary: counts, smoke subset, threshold catch and naive vs hardened means."""
    smoke = [row for c, row in zip(pack.cases, pack.labels, strict=True) if "smoke" in c.tags]
    smoke_pos = sum(1 for row in smoke if row["label"] == "positive")
    naive, hard = hardened_mean(pack, hardened)
    return (
        f"{pack.name}: {pack.n_positive} positive, {pack.n_negative} negative, "
        f"{len(smoke)} smoke ({smoke_pos} positive); threshold {pack.primary} >= "
        f"{pack.threshold:.4g} catches {pack.true_positives}/{pack.n_positive} positives "
        f"with {pack.false_positives}/{pack.n_negative} false positives; mean {pack.primary} "
        f"over positives {naive:.3f} naive, {hard:.3f} with "
        + ", ".join(f"{k}={v}" for k, v in hardened.items())
    )
