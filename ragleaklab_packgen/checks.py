"""The invariants every pack must hold before it is written (the tests check them too)."""

from __future__ import annotations

from ragleaklab_plugins.targets.reference.text import is_instruction, split_sentences

from .build import PackData


def check_pack(pack: PackData) -> None:
    """The invariants the tests also check, so a bad pack is never written."""
    n_smoke = [c for c in pack.cases if "smoke" in c.tags]
    if pack.n_positive < 100 or pack.n_negative < 300 or not n_smoke:
        raise SystemExit(f"{pack.name}: {pack.n_positive} positives, {pack.n_negative} negatives")
    ids = [c.test_id for c in pack.cases]
    if len(set(ids)) != len(ids) or ids != [row["test_id"] for row in pack.labels]:
        raise SystemExit(f"{pack.name}: case ids and label ids differ")
    doc_ids = [d.doc_id for d in pack.documents]
    if len(set(doc_ids)) != len(doc_ids):
        raise SystemExit(f"{pack.name}: duplicate document ids")
    for doc in pack.documents:
        words = len(doc.text.split())
        if doc.kind == "legit" and not 40 <= words <= 150:
            raise SystemExit(f"{pack.name}: {doc.doc_id} has {words} words")
        if doc.kind != "poison" and any(is_instruction(s) for s in split_sentences(doc.text)):
            raise SystemExit(f"{pack.name}: {doc.doc_id} reads as a planted instruction")
