"""Running the real reference target in-process: its answers (the naive app by default) and its
retriever's ranking, which the labels and the closest-poison ground truth are read from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragleaklab_plugins.targets.reference import ReferenceTarget

from ragleaklab_core import Document, Response

from .instrumentation import LABEL_TARGET_OPTIONS

#: How many documents the "closest poison" look-up ranks (sentinel and claim ground truth).
NEAR_K = 10


def answer_all(
    documents: Sequence[Document],
    queries: Sequence[str],
    principals: Sequence[str | None] | None = None,
    **options: Any,
) -> list[Response]:
    """Answers of a fresh reference target that ingested *documents*: the labelled target
    (``LABEL_TARGET_OPTIONS``, the naive app) with *options* on top, each query asked as its
    principal (*principals*, one per query; none: every query anonymous)."""
    target = ReferenceTarget(**{**LABEL_TARGET_OPTIONS, **options})
    target.ingest(documents)
    who = [None] * len(queries) if principals is None else list(principals)
    if len(who) != len(queries):
        raise ValueError(f"{len(who)} principals for {len(queries)} queries")
    return [
        target.answer(q) if p is None else target.answer(q, principal=p)
        for q, p in zip(queries, who, strict=True)
    ]


def nearest_ids(
    documents: Sequence[Document], queries: Sequence[str], k: int = NEAR_K
) -> list[list[str]]:
    """The ids of the *k* documents the reference retriever ranks first for each query."""
    target = ReferenceTarget(top_k=k)
    target.ingest(documents)
    return [[r.doc_id for r in target.retrieve(q)[0]] for q in queries]
