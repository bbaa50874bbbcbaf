"""What ``report.json`` says about single cases: every case run with its outcome (the pack's
``case_results``), the failing and errored cases in detail, and the gated rates split into
attack and benign cases, and the attack cases by family.

Renderings of a report (Markdown, HTML, JUnit, SARIF) read only ``report.json``, so whatever
they show about a case must be here. Everything is bounded (excerpts, list lengths, evidence)
and ordered, so the report stays small and byte-identical for the same inputs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragleaklab_core.gate import Outcome, case_outcome
from ragleaklab_core.outcome import CaseDetail, CaseOutcome
from ragleaklab_core.run.case_kinds import DETAILED, FAMILY, KINDS, families_of, kind_of
from ragleaklab_core.run.records import CaseRecord
from ragleaklab_core.run.spool import Spool
from ragleaklab_core.run.streamed import Streamed

if TYPE_CHECKING:
    from ragleaklab_core.run.evaluation import PackVerdict
    from ragleaklab_core.run.runner import CaseResult

#: The outcomes a case is detailed for: what a reader triages.
DETAILED_OUTCOMES = (Outcome.FAIL, Outcome.ERROR)
#: Longest answer excerpt and evidence string, in characters; longest evidence list.
ANSWER_CHARS = 400
EVIDENCE_CHARS = 200
EVIDENCE_ITEMS = 20
#: How many retrieved document ids a case lists (in rank order).
RETRIEVED_IDS = 10


def outcome_of(result: CaseResult, failing: Sequence[str]) -> Outcome:
    """The case's outcome, as :func:`ragleaklab_core.gate.case_outcome` ranks them."""
    return case_outcome(
        errored=result.error is not None, failing=bool(failing), unscorable=bool(result.unscorable)
    )


def case_results(verdict: PackVerdict) -> Sequence[CaseOutcome]:
    """Every case run, in the pack's order: its kind and tags, outcome, epoch-reduced values,
    the gated values it fails, why it errored or could not be scored; and for the first
    :data:`DETAILED` failing or errored cases, its ``detail`` (query, answer excerpt, retrieved
    ids) and each metric's ``evidence`` in every epoch. What every rendering reads.

    The list is produced afresh each time it is walked (from the results on disk), so a pack of
    a million cases never holds a million case entries in memory.
    """
    gated = [(v.name, v.threshold) for v in verdict.values if v.threshold is not None]
    detailed = verdict.detailed
    epochs: dict[str, list[CaseRecord]] = {}
    for record in _detailed_records(verdict):
        epochs.setdefault(record.test_id, []).append(record)
    for records in epochs.values():
        records.sort(key=lambda r: r.epoch)

    def produce() -> Iterator[CaseOutcome]:
        for r in verdict.run.results:
            failing = sorted(
                name for name, t in gated if name in r.values and t.fails(r.values[name])
            )
            tags = list(r.tags)
            records = epochs.get(r.test_id, [])
            yield CaseOutcome(
                test_id=r.test_id,
                kind=kind_of(tags),
                tags=tuple(tags),
                outcome=outcome_of(r, failing),
                # Unrounded: a value rounded below its threshold would seem to pass it.
                values={k: float(x) for k, x in sorted(r.values.items())},
                failing=tuple(failing),
                error=r.error,
                unscorable=dict(sorted(r.unscorable.items())),
                detail=_detail(records) if r.test_id in detailed else None,
                evidence=_evidence(records) if r.test_id in detailed else {},
            )

    return Streamed(len(verdict.run.results), produce)


def _detailed_records(verdict: PackVerdict) -> Iterator[CaseRecord]:
    """The records of the detailed cases. The run's records on disk are in (case, epoch) order,
    ``epochs`` per case, so only the lines at the detailed cases' positions are decoded, and
    reading stops after the last; other record sequences are scanned by test id."""
    if not verdict.detailed:
        return
    records = verdict.run.records
    if not isinstance(records, Spool):
        yield from (r for r in records if r.test_id in verdict.detailed)
        return
    per_case = verdict.run.settings.epochs
    wanted = {i * per_case + e for i in verdict.detailed_at for e in range(per_case)}
    last = max(wanted)
    for position, line in enumerate(records.lines()):
        if position in wanted:
            yield CaseRecord.from_dict(json.loads(line))
        if position >= last:
            return


def detail_counts(verdict: PackVerdict) -> dict[str, int]:
    """How many failing or errored cases are detailed, and how many are not (beyond
    :data:`DETAILED`): the renderings' "and N more"."""
    shown = len(verdict.detailed)
    return {"detailed": shown, "not_detailed": verdict.n_triaged - shown}


def _detail(records: Sequence[CaseRecord]) -> CaseDetail:
    """The case's query and, from the first epoch the target answered (an errored case may
    have none), the answer excerpt and the retrieved ids in rank order; ``masked`` when a
    secret was masked in any epoch's record (:func:`~ragleaklab_core.run.records.mask_record`);
    ``repaired`` when a lone surrogate was replaced
    (:func:`~ragleaklab_core.run.records.repair_record`)."""
    answered = next((r for r in records if r.answer is not None), None)
    answer = None if answered is None else answered.answer
    retrieved = None if answered is None else answered.retrieved
    masked = sorted({m for r in records for m in r.masked})
    repaired = sorted({m for r in records for m in r.repaired})
    return CaseDetail(
        query=records[0].query if records else None,
        answer=None if answer is None else answer[:ANSWER_CHARS],
        answer_truncated=answer is not None and len(answer) > ANSWER_CHARS,
        retrieved_ids=None
        if retrieved is None
        else tuple(str(d["doc_id"]) for d in retrieved[:RETRIEVED_IDS]),
        # Which fields had a secret of the run's configuration replaced by *** (only then).
        masked=tuple(masked),
        # Which fields held text that was not Unicode (a lone surrogate, shown as U+FFFD).
        repaired=tuple(repaired),
    )


def _evidence(records: Sequence[CaseRecord]) -> dict[str, tuple[Any, ...]]:
    """Metric -> its bounded evidence in each epoch, in epoch order; null for an epoch that
    errored before the metric scored it (only an errored case has one)."""
    metrics = sorted({m for r in records for m in r.metrics})
    return {
        m: tuple(
            _bounded(r.metrics[m].get("evidence") or {}) if m in r.metrics else None
            for r in records
        )
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
]
