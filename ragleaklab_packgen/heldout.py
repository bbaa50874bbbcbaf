"""The independent column of the quality cards: each pack's metric on answers its reference
target did not write (``independent/<pack>.jsonl``, hand-written and scripted, judged by a
person), at the threshold the pack ships.

An answer the metric cannot score is never dropped: it counts as not flagged (a miss when it is
positive) and the card says how many there were.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from attrs import frozen

from ragleaklab_core import Response, RetrievedDocument
from ragleaklab_core.stats.aggregation import RateInterval, rate_interval
from ragleaklab_core.stats.roc import AucResult, auc_delong

from .build import PackData
from .scoring import bound_metric

#: Where the independent answer sets live, one ``<pack name>.jsonl`` each.
INDEPENDENT_DIR = Path(__file__).resolve().parent / "independent"


@frozen
class ClassErrors:
    """The metric's errors at the shipped threshold on one class of independent answers."""

    name: str
    errors: int
    answers: int


@frozen
class Independent:
    """A pack's metric on its independent answers.

    Attributes:
        answers, positives: How many answers, and how many of them are labelled harmful.
        sources: How many answers each source wrote (``hand-written``, ``scripted:<app>``).
        judged_by: Who judged the labels, each once, in order.
        unscorable: Answers the metric could not score (counted as not flagged).
        auc: The AUC of the primary value against the labels (``None`` without both labels).
        tpr, fpr: At the pack's shipped threshold.
        classes: The classes the metric errs on at that threshold, worst first.
    """

    answers: int
    positives: int
    sources: tuple[tuple[str, int], ...]
    judged_by: tuple[str, ...]
    unscorable: int
    auc: AucResult | None
    tpr: RateInterval
    fpr: RateInterval
    classes: tuple[ClassErrors, ...]


def independent_rows(name: str) -> list[dict[str, object]]:
    """The independent answers of pack *name*, in file order; ``[]`` when it has none."""
    path = INDEPENDENT_DIR / f"{name}.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def measure_independent(pack: PackData) -> Independent | None:
    """*pack*'s primary value on its independent answers; ``None`` when it has none."""
    rows = independent_rows(pack.name)
    if not rows:
        return None
    metric = bound_metric(pack.metric, pack.metric_options.get(pack.metric), pack.documents)
    cases = {case.test_id: case for case in pack.cases}
    scores: list[float] = []
    for row in rows:
        retrieved = row["retrieved"]
        ranked = (
            tuple(RetrievedDocument(str(d)) for d in retrieved)
            if isinstance(retrieved, list)
            else None
        )
        response = Response(str(row["answer"]), ranked)
        result = metric.score(cases[str(row["case_id"])], response)
        scores.append(math.nan if result.unscorable else float(result.values[pack.primary]))
    return summarise(rows, scores, pack.threshold)


def summarise(
    rows: Sequence[dict[str, object]], scores: Sequence[float], threshold: float
) -> Independent:
    """The independent column from *rows* and their *scores* (NaN: unscorable)."""
    values = np.asarray(scores, dtype=float)
    labels = np.array([row["label"] == "positive" for row in rows])
    unscorable = np.isnan(values)
    flagged = ~unscorable & (np.nan_to_num(values, nan=-math.inf) >= threshold)
    # Unscorable answers rank below every scored one: never flagged, never dropped.
    ranked = np.where(unscorable, np.nanmin(values, initial=0.0) - 1.0, values)
    auc = auc_delong(ranked, labels) if labels.any() and (~labels).any() else None
    wrong = flagged != labels
    by_class: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_class.setdefault(str(row["class"]), []).append(i)
    classes = sorted(
        (
            ClassErrors(name, int(wrong[ids].sum()), len(ids))
            for name, ids in by_class.items()
            if wrong[ids].any()
        ),
        key=lambda c: (-c.errors / c.answers, -c.errors, c.name),
    )
    sources = Counter(str(row["source"]).split(":", 1)[0] for row in rows)
    return Independent(
        answers=len(rows),
        positives=int(labels.sum()),
        sources=tuple(sorted(sources.items())),
        judged_by=tuple(dict.fromkeys(str(row["judged_by"]) for row in rows)),
        unscorable=int(unscorable.sum()),
        auc=auc,
        tpr=rate_interval(int((flagged & labels).sum()), int(labels.sum())),
        fpr=rate_interval(int((flagged & ~labels).sum()), int((~labels).sum())),
        classes=tuple(classes),
    )
