"""What ``report.json`` says about single cases: the failing cases with their evidence, and the
gated rates split into attack and benign cases, and the attack cases by family.

Renderings of a report (Markdown, HTML, JUnit, SARIF) read only ``report.json``, so whatever
they show about a case must be here. Everything is bounded (excerpts, list lengths) and ordered,
so the report stays small and byte-identical for the same inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ragleaklab_core.stats.aggregation import rate_interval

if TYPE_CHECKING:
    from ragleaklab_core.run.runner import CaseRecord
    from ragleaklab_core.run.verdict import PackVerdict

#: The tags that mark a case as an attack or a benign question (the convention of every pack's
#: ``cases.jsonl``, docs/packs.md); a pack without them has no split.
KINDS = ("attack", "benign")
#: The tag prefix that names an attack case's family (``family:bait``, docs/packs.md), so that
#: rates can be split by family without a manifest key for it.
FAMILY = "family:"
#: How many failing cases a pack lists in detail (the counts are always complete).
DETAILED = 500
#: Longest answer excerpt and evidence string, in characters; longest evidence list.
ANSWER_CHARS = 400
EVIDENCE_CHARS = 200
EVIDENCE_ITEMS = 20
#: How many retrieved document ids a case lists (in rank order).
RETRIEVED_IDS = 10


def kind_of(tags: tuple[str, ...]) -> str | None:
    """``"attack"``, ``"benign"`` or None from a case's tags (attack wins if both)."""
    return next((kind for kind in KINDS if kind in tags), None)


def families_of(tags: tuple[str, ...]) -> list[str]:
    """The attack families a case's tags name (``family:bait`` -> ``bait``), sorted; a case
    normally has one, and one with several counts in each."""
    return sorted({t.removeprefix(FAMILY) for t in tags if t.startswith(FAMILY) and t != FAMILY})


def rates_by_kind(verdict: PackVerdict, name: str) -> dict[str, Any] | None:
    """The failing rate of gated value *name* among attack cases and among benign cases, each
    with its exact Clopper-Pearson interval; None when the pack's cases carry neither tag or
    the value is not gated."""
    value = verdict.value(name)
    tags = verdict.run.case_tags
    if value is None or value.threshold is None or not tags:
        return None
    failing = set(value.failing_ids)
    counts = {kind: [0, 0] for kind in KINDS}
    for result in verdict.run.results:
        kind = kind_of(tags.get(result.test_id, ()))
        if kind is None or name not in result.values:
            continue
        counts[kind][1] += 1
        counts[kind][0] += result.test_id in failing
    if not any(n for _, n in counts.values()):
        return None
    return {kind: rate_interval(k, n).to_dict() for kind, (k, n) in counts.items()}


def rates_by_family(verdict: PackVerdict, name: str) -> dict[str, Any] | None:
    """The failing rate of gated value *name* among the attack cases of each family (by name),
    each with its exact Clopper-Pearson interval; None when the value is not gated or no attack
    case carries a ``family:`` tag. Attack cases without one are in no family."""
    value = verdict.value(name)
    tags = verdict.run.case_tags
    if value is None or value.threshold is None or not tags:
        return None
    failing = set(value.failing_ids)
    counts: dict[str, list[int]] = {}
    for result in verdict.run.results:
        case_tags = tuple(tags.get(result.test_id, ()))
        if kind_of(case_tags) != "attack" or name not in result.values:
            continue
        for family in families_of(case_tags):
            tally = counts.setdefault(family, [0, 0])
            tally[1] += 1
            tally[0] += result.test_id in failing
    if not counts:
        return None
    return {family: rate_interval(k, n).to_dict() for family, (k, n) in sorted(counts.items())}


def failing_details(verdict: PackVerdict) -> list[dict[str, Any]]:
    """Every case failing a gated value (up to :data:`DETAILED`, by test id): its kind, query,
    answer excerpt, retrieved ids, the values it fails and each metric's evidence (of its first
    answered epoch)."""
    failing: dict[str, list[str]] = {}
    for value in verdict.values:
        for test_id in value.failing_ids:
            failing.setdefault(test_id, []).append(value.name)
    values = {r.test_id: r.values for r in verdict.run.results}
    first: dict[str, CaseRecord] = {}
    for answered in sorted(verdict.run.records, key=lambda r: r.epoch):
        if answered.error is None:
            first.setdefault(answered.test_id, answered)
    details = []
    for test_id in sorted(failing)[:DETAILED]:
        record = first.get(test_id)
        tags = tuple(verdict.run.case_tags.get(test_id, ()))
        answer = None if record is None else record.answer
        retrieved = None if record is None else record.retrieved
        details.append(
            {
                "test_id": test_id,
                "kind": kind_of(tags),
                "tags": list(tags),
                "fails": failing[test_id],
                "values": {n: round(values[test_id][n], 6) for n in failing[test_id]},
                "query": None if record is None else record.query,
                "answer": None if answer is None else answer[:ANSWER_CHARS],
                "answer_truncated": answer is not None and len(answer) > ANSWER_CHARS,
                "retrieved_ids": None
                if retrieved is None
                else [str(d["doc_id"]) for d in retrieved[:RETRIEVED_IDS]],
                "evidence": {}
                if record is None
                else {m: _bounded(r.get("evidence") or {}) for m, r in record.metrics.items()},
            }
        )
    return details


def _bounded(data: Any) -> Any:
    """*data* (JSON-compatible evidence) with long strings cut and long lists shortened."""
    if isinstance(data, str):
        return data if len(data) <= EVIDENCE_CHARS else data[:EVIDENCE_CHARS] + "..."
    if isinstance(data, Mapping):
        return {str(k): _bounded(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        items = [_bounded(v) for v in list(data)[:EVIDENCE_ITEMS]]
        return [*items, "..."] if len(data) > EVIDENCE_ITEMS else items
    if isinstance(data, float):
        return round(data, 6)
    return data


__all__ = [
    "FAMILY",
    "KINDS",
    "failing_details",
    "families_of",
    "kind_of",
    "rates_by_family",
    "rates_by_kind",
]
