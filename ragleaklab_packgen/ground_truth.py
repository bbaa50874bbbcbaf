"""The closest poison a case lists in its ground truth (the sentinel and claim packs).

A case lists its own poison's sentinel or claim, then those of the poison documents the retriever
ranks near its query, so the metric catches an answer corrupted by any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragleaklab_core import Document

from .build import Draft
from .target import nearest_ids
from .topics import TOPICS

#: At most this many sentinels / poison claims per case.
MAX_LISTED = 3


def nearest_poison(
    documents: Sequence[Document], drafts: Sequence[Draft], payload: Callable[[Document], str]
) -> list[list[str]]:
    """For each draft: its own poison's payload, then those of the poison documents the
    retriever ranks in its top ``NEAR_K`` (rank order), at most ``MAX_LISTED``; a draft near no
    poison gets the poison closest to its topic (same topic, else same unit kind, else any)."""
    poison = {d.doc_id: d for d in documents if d.kind == "poison"}
    near = nearest_ids(documents, [d.query for d in drafts])
    by_topic: dict[str, list[Document]] = {}
    for doc in poison.values():
        by_topic.setdefault(str(doc.metadata["target_doc_id"]).split("-")[1], []).append(doc)
    kind_of = {t.key: t.kind for t in TOPICS}
    out: list[list[str]] = []
    for draft, ids in zip(drafts, near, strict=True):
        listed = [draft.own] if draft.own else []
        for doc_id in ids:
            if doc_id in poison and payload(poison[doc_id]) not in listed:
                listed.append(payload(poison[doc_id]))
        if not listed:
            topic = str(draft.ground_truth.get("topic", ""))
            same = by_topic.get(topic) or [
                d
                for t, docs in sorted(by_topic.items())
                if kind_of[t] == kind_of.get(topic)
                for d in docs
            ]
            pool = same or [poison[k] for k in sorted(poison)]
            listed.append(payload(min(pool, key=lambda d: d.doc_id)))
        out.append(listed[:MAX_LISTED])
    return out
