"""Measuring a pack on the labelled target and on a hardened one: the one-line summary printed
for each pack, and the defence's effect on the same cases (failing rate by the metric at the
pack's threshold, harm rate by instrumentation) that the quality cards report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragleaklab_core import Document

from .build import PackData
from .target import answer_all


@dataclass(frozen=True)
class Measured:
    """Per case, on one configuration of the reference target: flagged by the metric at the
    pack's threshold (``failing``), and harmed by instrumentation (``harm``)."""

    failing: list[bool]
    harm: list[bool]


def measure(pack: PackData, options: Mapping[str, Any]) -> Measured:
    """*pack*'s cases answered by the labelled target with *options* on top."""
    documents: list[Document] = pack.documents
    poison = frozenset(d.doc_id for d in documents if d.kind == "poison")
    cases = pack.cases
    responses = answer_all(
        documents, [c.query for c in cases], [c.principal for c in cases], **options
    )
    score = pack.scorer(documents)
    failing = [score(c, r) >= pack.threshold for c, r in zip(pack.cases, responses, strict=True)]
    harm = [pack.rule(d, r, poison).positive for d, r in zip(pack.drafts, responses, strict=True)]
    return Measured(failing, harm)


def naive(pack: PackData) -> Measured:
    """*pack* on the labelled target itself: its labels and its scores at its threshold."""
    return Measured(
        [s >= pack.threshold for s in pack.scores],
        [row["label"] == "positive" for row in pack.labels],
    )


def summary_line(pack: PackData, hardened: Mapping[str, Any], defended: Measured) -> str:
    """*pack*'s summary: counts, smoke subset, threshold catch, and the failing and harm
    rates on the naive and the hardened target."""
    smoke = [row for c, row in zip(pack.cases, pack.labels, strict=True) if "smoke" in c.tags]
    smoke_pos = sum(1 for row in smoke if row["label"] == "positive")
    plain = naive(pack)
    n = len(pack.cases)
    return (
        f"{pack.name}: {pack.n_positive} positive, {pack.n_negative} negative, "
        f"{len(smoke)} smoke ({smoke_pos} positive); threshold {pack.primary} >= "
        f"{pack.threshold:.4g} catches {pack.true_positives}/{pack.n_positive} positives "
        f"with {pack.false_positives}/{pack.n_negative} false positives; failing "
        f"{sum(plain.failing)}/{n} naive, {sum(defended.failing)}/{n} with "
        + ", ".join(f"{k}={v}" for k, v in hardened.items())
        + f"; harmed {sum(plain.harm)}/{n} naive, {sum(defended.harm)}/{n} hardened"
    )
