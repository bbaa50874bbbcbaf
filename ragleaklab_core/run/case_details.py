"""What ``report.json`` says about single cases: every case run with its outcome (the pack's
``case_results``), the failing and errored cases in detail, and the gated rates split into
attack and benign cases, and the attack cases by family.

Renderings of a report (Markdown, HTML, JUnit, SARIF) read only ``report.json``, so whatever
they show about a case must be here. Everything is bounded (excerpts, list lengths, evidence)
and ordered, so the report stays small and byte-identical for the same inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragleaklab_core.stats.aggregation import rate_interval

if TYPE_CHECKING:
    from ragleaklab_core.run.runner import CaseRecord, CaseResult
    from ragleaklab_core.run.verdict import PackVerdict

#: The tags that mark a case as an attack or a benign question (the convention of every pack's
#: ``cases.jsonl``, docs/packs.md); a pack without them has no split.
KINDS = ("attack", "benign")
#: The tag prefix that names an attack case's family (``family:bait``, docs/packs.md), so that
#: rates can be split by family without a manifest key for it.
FAMILY = "family:"
#: How many failing or errored cases a pack details (query, answer, evidence), by test id; the
#: outcomes and values of every case are always there.
DETAILED = 500
#: The outcomes a case is detailed for: what a reader triages.
DETAILED_OUTCOMES = ("fail", "error")
#: Longest answer excerpt and evidence string, in characters; longest evidence list.
ANSWER_CHARS = 400
EVIDENCE_CHARS = 200
EVIDENCE_ITEMS = 20
#: How many retrieved document ids a case lists (in rank order).
RETRIEVED_IDS = 10


def kind_of(tags: Sequence[str]) -> str | None:
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
    if value is None or value.threshold is None:
        return None
    failing = set(value.failing_ids)
    counts = {kind: [0, 0] for kind in KINDS}
    for result in verdict.run.results:
        kind = kind_of(result.tags)
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
    if value is None or value.threshold is None:
        return None
    failing = set(value.failing_ids)
    counts: dict[str, list[int]] = {}
    for result in verdict.run.results:
        if kind_of(result.tags) != "attack" or name not in result.values:
            continue
        for family in families_of(result.tags):
            tally = counts.setdefault(family, [0, 0])
            tally[1] += 1
            tally[0] += result.test_id in failing
    if not counts:
        return None
    return {family: rate_interval(k, n).to_dict() for family, (k, n) in sorted(counts.items())}


def outcome_of(result: CaseResult, failing: Sequence[str]) -> str:
    """``error`` (a plugin raised, or the case was not asked) outranks ``fail`` (a gated value
    fails its threshold), which outranks ``unscorable``; otherwise ``pass``."""
    if result.error is not None:
        return "error"
    if failing:
        return "fail"
    return "unscorable" if result.unscorable else "pass"


def case_results(verdict: PackVerdict) -> list[dict[str, Any]]:
    """Every case run, in the pack's order: its kind and tags, outcome, epoch-reduced values,
    the gated values it fails, why it errored or could not be scored; and for the first
    :data:`DETAILED` failing or errored cases by test id, its ``detail`` (query, answer excerpt,
    retrieved ids) and each metric's ``evidence`` in every epoch. What every rendering reads."""
    failing: dict[str, list[str]] = {}
    for value in verdict.values:
        for test_id in value.failing_ids:
            failing.setdefault(test_id, []).append(value.name)
    outcomes = {r.test_id: outcome_of(r, failing.get(r.test_id, [])) for r in verdict.run.results}
    detailed = set(sorted(t for t, o in outcomes.items() if o in DETAILED_OUTCOMES)[:DETAILED])
    epochs: dict[str, list[CaseRecord]] = {}
    if detailed:  # one pass over the records on disk, keeping only the detailed cases'
        for record in verdict.run.records:
            if record.test_id in detailed:
                epochs.setdefault(record.test_id, []).append(record)
        for records in epochs.values():
            records.sort(key=lambda r: r.epoch)
    out = []
    for r in verdict.run.results:
        tags = list(r.tags)
        records = epochs.get(r.test_id, [])
        out.append(
            {
                "test_id": r.test_id,
                "kind": kind_of(tags),
                "tags": tags,
                "outcome": outcomes[r.test_id],
                # Unrounded: a value rounded below its threshold would seem to pass it.
                "values": {k: float(x) for k, x in sorted(r.values.items())},
                "failing": sorted(failing.get(r.test_id, [])),
                "error": r.error,
                "unscorable": dict(sorted(r.unscorable.items())),
                "detail": _detail(records) if r.test_id in detailed else None,
                "evidence": _evidence(records) if r.test_id in detailed else {},
            }
        )
    return out


def detail_counts(results: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many failing or errored cases of *results* are detailed, and how many are not
    (beyond :data:`DETAILED`): the renderings' "and N more"."""
    triaged = [c for c in results if c["outcome"] in DETAILED_OUTCOMES]
    shown = sum(c["detail"] is not None for c in triaged)
    return {"detailed": shown, "not_detailed": len(triaged) - shown}


def _detail(records: Sequence[CaseRecord]) -> dict[str, Any]:
    """The case's query and, from the first epoch the target answered (an errored case may
    have none), the answer excerpt and the retrieved ids in rank order."""
    answered = next((r for r in records if r.answer is not None), None)
    answer = None if answered is None else answered.answer
    retrieved = None if answered is None else answered.retrieved
    return {
        "query": records[0].query if records else None,
        "answer": None if answer is None else answer[:ANSWER_CHARS],
        "answer_truncated": answer is not None and len(answer) > ANSWER_CHARS,
        "retrieved_ids": None
        if retrieved is None
        else [str(d["doc_id"]) for d in retrieved[:RETRIEVED_IDS]],
    }


def _evidence(records: Sequence[CaseRecord]) -> dict[str, list[Any]]:
    """Metric -> its bounded evidence in each epoch, in epoch order; null for an epoch that
    errored before the metric scored it (only an errored case has one)."""
    metrics = sorted({m for r in records for m in r.metrics})
    return {
        m: [
            _bounded(r.metrics[m].get("evidence") or {}) if m in r.metrics else None
            for r in records
        ]
        for m in metrics
    }


def _bounded(data: Any) -> Any:
    """*data* (JSON-compatible evidence, the metric's own) with keys sorted (so the report does
    not depend on the order a plugin built it in), long strings cut, long lists shortened and
    floats rounded."""
    if isinstance(data, str):
        return data if len(data) <= EVIDENCE_CHARS else data[:EVIDENCE_CHARS] + "..."
    if isinstance(data, Mapping):
        return {str(k): _bounded(data[k]) for k in sorted(data, key=str)}
    if isinstance(data, list | tuple):
        items = [_bounded(v) for v in list(data)[:EVIDENCE_ITEMS]]
        return [*items, "..."] if len(data) > EVIDENCE_ITEMS else items
    if isinstance(data, float):
        return round(data, 6)
    return data


__all__ = [
    "DETAILED",
    "FAMILY",
    "KINDS",
    "case_results",
    "detail_counts",
    "families_of",
    "kind_of",
    "outcome_of",
    "rates_by_family",
    "rates_by_kind",
]
