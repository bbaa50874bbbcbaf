"""Plain-text wording of a finished run's parts, shared by the console, Markdown and HTML
renderings.

Every function takes parts of the outcome (:class:`~ragleaklab_core.outcome.RunOutcome`, its
:class:`~ragleaklab_core.outcome.PackOutcome` s, their values, rates and cases) and returns
unescaped text: each rendering escapes it for its own syntax. The per-case lists of a pack (its
failing, errored and unscorable cases) are read only through the accessors at the end of this
module, so a change of how a pack holds its cases changes those few functions and no rendering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragleaklab_core.config import DEFAULT_TARGET
from ragleaklab_core.outcome import (
    AppliedThreshold,
    CaseDetail,
    CaseOutcome,
    CorrectedFailRate,
    Outcome,
    PackOutcome,
    RunOutcome,
    System,
    ValueOutcome,
    Verdict,
)
from ragleaklab_core.stats.aggregation import RateInterval
from ragleaklab_core.values import is_pack_default

#: The verdicts of a run or a pack, as a reader sees them.
VERDICT_WORDS = {v.value: v.word for v in Verdict}


def verdict_word(status: str | None) -> str:
    return VERDICT_WORDS.get(str(status), str(status).upper())


def number(value: Any, digits: int = 4) -> str:
    """A metric value or threshold, short: ``0.705882``, ``1``, ``n/a`` for None."""
    if value is None:
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def percent(value: Any) -> str:
    return "n/a" if not isinstance(value, int | float) else f"{100 * value:.1f}%"


def rule_text(threshold: AppliedThreshold | None) -> str:
    """``score >= 0.7059 -> FAIL`` (the decision rule with the threshold filled in)."""
    if threshold is None:
        return "not gated"
    shown = "none (flags nothing)" if threshold.value is None else number(threshold.value, 6)
    return threshold.decision_rule.replace("threshold", shown)


def threshold_origin(threshold: AppliedThreshold | None) -> str:
    """Where a gated value's threshold came from, in words: ``the pack's default``, ``the
    config file``, or the thresholds file with the fitter and date of the calibration that
    wrote it (as ``calibrate --write-thresholds`` recorded them)."""
    source = (threshold.source if threshold is not None else "") or "?"
    if is_pack_default(source):
        return "the pack's default"
    if source == "config":
        return "the config file"
    return source


def count_text(rate: RateInterval | None) -> str:
    """``242/700 (34.6%)`` from a failing rate."""
    if rate is None:
        return "n/a"
    return f"{rate.successes}/{rate.trials} ({percent(rate.rate)})"


def corrected_cells(corrected: CorrectedFailRate) -> tuple[str, str, str]:
    """``("all, corrected", "12.0%", "4.1%-22.3% (95%, corrected)")``: a corrected rate as the
    row the Markdown and HTML tables give it under the failing rates."""
    low, high = corrected.interval
    return (
        "all, corrected",
        percent(corrected.estimate),
        f"{percent(low)}-{percent(high)} ({100 * corrected.confidence:g}%, corrected)",
    )


def interval_text(rate: RateInterval | None) -> str:
    """``31.0%-38.3% (95% exact)``: the Clopper-Pearson interval of a failing rate."""
    if rate is None or rate.lower is None:
        return "n/a"
    return f"{percent(rate.lower)}-{percent(rate.upper)} ({100 * rate.confidence:g}% exact)"


def pack_line(pack: PackOutcome) -> str:
    """``700 cases, 0 errored, 3 epochs reduced by max`` for a pack."""
    cases = pack.cases
    parts = [f"{cases.run} cases", f"{cases.errored} errored"]
    if cases.epochs > 1:
        parts.append(f"{cases.epochs} epochs reduced by {cases.reducer}")
    if cases.tags:
        parts.append("tags " + ", ".join(cases.tags))
    if cases.exclude_tags:
        parts.append("excluding tags " + ", ".join(cases.exclude_tags))
    return ", ".join(parts)


def pack_counts(report: RunOutcome) -> list[str]:
    """``["3 of 4 packs failed", "1 of 4 packs not tested or errored"]``, the parts that apply."""
    totals = report.totals
    parts = []
    if totals.failed:
        parts.append(f"{totals.failed} of {totals.packs} packs failed")
    if totals.packs_errored:
        parts.append(f"{totals.packs_errored} of {totals.packs} packs not tested or errored")
    return parts


def system_line(system: System) -> str | None:
    """``tested: python (callable app:answer, python@a31895bf96bb), config ragleaklab.toml``:
    which system a run tested (or a calibration was fitted on) and the config file it read,
    first in every rendering (a passing run of the embedded reference RAG must not read as a
    pass of the user's app). None when no target was named."""
    if not system.target:
        return None
    said = [x for x in (system.where, system.identity) if x]
    if system.target == DEFAULT_TARGET:  # what runs when no target is configured: say so plainly
        said.insert(0, "the embedded reference RAG")
    return (
        f"tested: {system.target}"
        + (f" ({', '.join(said)})" if said else "")
        + (f", config {system.config}" if system.config else ", no config file")
    )


def run_line(report: RunOutcome) -> str:
    """``4 of 4 packs failed; 2595 cases, 0 errored; target reference``."""
    totals = report.totals
    parts = pack_counts(report)
    if not parts:
        parts.append(f"{totals.passed} of {totals.packs} packs passed")
    parts.append(f"{totals.cases} cases, {totals.errored} errored")
    if report.target is not None and report.target.name:
        parts.append(f"target {report.target.name} ({report.target.provider})")
    return "; ".join(parts)


def gate_lines(report: RunOutcome) -> list[str]:
    """What a baseline changed, for a run compared with one (``run --baseline``): the rule that
    decided, why, and each gated value's failing rate in both runs; empty otherwise."""
    gate = report.gate
    if gate is None or gate.baseline is None:
        return []
    baseline = gate.baseline
    lines = [
        f"compared with baseline {baseline.path} (one-sided level {baseline.level}); "
        f"--fail-on {gate.fail_on}: {verdict_word(report.verdict)}"
        f" (by its thresholds alone: {verdict_word(gate.thresholds_verdict)})"
    ]
    return [*lines, *gate.reasons, *comparison_lines(baseline.diff)]


def comparison_lines(diff: Mapping[str, Any]) -> list[str]:
    """The comparison with a baseline (``gate.baseline.diff``, what ``ragleaklab diff --json``
    prints, which the outcome holds as the comparison wrote it), one line per change and per
    gated value compared."""
    lines = [f"target changed from the baseline: {x}" for x in diff.get("target_changes") or []]
    if diff.get("differences"):
        lines.append("compared with --force-baseline although: " + "; ".join(diff["differences"]))
    for value in diff.get("values") or []:
        b, n = value["base"], value["new"]
        changed = "regressed" if value.get("regressed") else "no significant rise"
        lines.append(
            f"{value['pack']} {value['value']}: failing {b['failing']}/{b['scored']} -> "
            f"{n['failing']}/{n['scored']}"
            + (f" (+{n['unscored']} unscored, counted as failing)" if n.get("unscored") else "")
            + f", {changed} (p = {number(value.get('p_value'))}); "
            f"{len(value.get('newly_failing') or [])} newly failing, "
            f"{len(value.get('no_longer_failing') or [])} no longer failing"
        )
    return lines


def evidence_text(evidence: Mapping[str, Any] | None, limit: int = 160) -> str:
    """One line of a failing case's evidence (as :func:`shown_evidence` gives it): each metric's
    non-empty entries as compact JSON, cut at *limit* characters. Evidence is the metric's own
    (the core knows none of its keys)."""
    parts = []
    for metric, data in shown_evidence(evidence).items():
        kept = (
            {k: v for k, v in data.items() if v not in (None, [], {}, "")}
            if isinstance(data, Mapping)
            else data
        )
        shown = json.dumps(kept, ensure_ascii=False, separators=(", ", ": "))
        parts.append(f"{metric}: {shown}")
    return clip("; ".join(parts), limit)


def shown_evidence(evidence: Mapping[str, Any] | None) -> dict[str, Any]:
    """A case's evidence (metric -> its evidence in each epoch) as a reader takes it in: a
    metric scored in one epoch shows that epoch's evidence, one scored in several the list."""
    return {
        metric: epochs[0] if isinstance(epochs, list | tuple) and len(epochs) == 1 else epochs
        for metric, epochs in (evidence or {}).items()
    }


def clip(text: Any, limit: int) -> str:
    """*text* on one line, at most *limit* characters (an ellipsis marks a cut)."""
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "\u2026"


def failing_cases(report: RunOutcome) -> list[tuple[PackOutcome, CaseOutcome]]:
    """Every listed failing case as (pack, case), the most telling first: taken in turn from
    each pack (so every failing pack shows among the first), then in each pack's order
    (:func:`pack_failing_cases`)."""
    queues = [[(pack, case) for case in pack_failing_cases(pack)] for pack in report.packs]
    ordered = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def gated(pack: PackOutcome) -> Sequence[tuple[str, ValueOutcome]]:
    """The pack's values, gated ones first (then the primary metric, then the rest), by name."""

    def order(item: tuple[str, ValueOutcome]) -> tuple[int, str]:
        name, value = item
        return (0 if value.gated else 1 if name == pack.primary_metric else 2, name)

    return sorted(pack.values.items(), key=order)


# -- a pack's cases: the only readers of its per-case list ---------------------------------------


def pack_failing_cases(pack: PackOutcome) -> list[CaseOutcome]:
    """The failing cases *pack* details (cases with a ``detail``), the most telling first:
    attack cases before benign ones, then by the highest value failed, then by id. Read a
    case's values with :func:`failed_values` and its evidence with :func:`case_evidence`."""
    # The in-process run's own list (streamed from disk, its counts exact) is read no further
    # than its last detailed case: a million cases need not all be read. A file is read whole.
    detailed = pack.cases.detailed if getattr(pack.case_results, "streamed", False) else None
    listed, seen = [], 0
    for case in pack.case_results:
        if case.detail is not None:
            seen += 1
            if case.outcome == Outcome.FAIL:
                listed.append(case)
            if detailed is not None and seen >= detailed:
                break
    return sorted(listed, key=_rank)


def _rank(case: CaseOutcome) -> tuple[int, float, str]:
    values = [v for v in failed_values(case).values() if isinstance(v, int | float)]
    return (0 if case.kind == "attack" else 1, -max(values, default=0.0), case.test_id)


def failed_values(case: CaseOutcome) -> dict[str, float]:
    """The gated values a failing *case* fails, with its value of each, by name."""
    return {n: case.values[n] for n in case.failing if n in case.values}


def case_evidence(case: CaseOutcome) -> dict[str, Any]:
    """Each metric's evidence for *case*, by metric (of its first epoch that has one)."""
    return {
        metric: next((epoch for epoch in epochs if epoch is not None), {})
        for metric, epochs in case.evidence.items()
    }


def failing_count(pack: PackOutcome) -> int:
    """How many cases of *pack* fail a gated value (each counted once)."""
    if pack.cases.failing is not None:
        return pack.cases.failing
    return sum(1 for case in pack.case_results if case.failing)


def unlisted_failing(pack: PackOutcome) -> int:
    """How many failing cases of *pack* report.json holds without their detail (those past
    the first 500 failing or errored cases by id)."""
    return sum(1 for c in pack.case_results if c.outcome == Outcome.FAIL and c.detail is None)


def errored_cases(pack: PackOutcome) -> list[tuple[str, str]]:
    """``(test_id, reason)`` of the errored cases *pack* lists (the first 50, by id); its
    ``cases.errored`` counts them all."""
    return list(pack.errored.items())


def unscorable_cases(pack: PackOutcome) -> list[tuple[str, int, list[tuple[str, str]]]]:
    """``(metric, count, [(test_id, reason)...])`` for each metric that could not score some
    of *pack*'s cases (the ids are the first 50)."""
    return [
        (metric, cases.count or len(cases.ids), list(cases.ids.items()))
        for metric, cases in pack.unscorable.items()
    ]


def masked_note(detail: CaseDetail) -> str:
    """What a rendering adds after a case's answer when ragleaklab masked a secret of the run's
    configuration in it (``detail.masked``) or replaced text that was not Unicode
    (``detail.repaired``): the text shown is not exactly what the system said."""
    notes = []
    if detail.masked:
        notes.append(f" [a configured secret was masked as *** in: {', '.join(detail.masked)}]")
    if detail.repaired:
        notes.append(
            " [a lone surrogate (not Unicode) was replaced by U+FFFD in: "
            f"{', '.join(detail.repaired)}]"
        )
    return "".join(notes)


__all__ = [
    "case_evidence",
    "clip",
    "comparison_lines",
    "count_text",
    "errored_cases",
    "evidence_text",
    "failed_values",
    "failing_cases",
    "failing_count",
    "gate_lines",
    "gated",
    "interval_text",
    "masked_note",
    "number",
    "pack_counts",
    "pack_failing_cases",
    "pack_line",
    "percent",
    "rule_text",
    "run_line",
    "shown_evidence",
    "threshold_origin",
    "unlisted_failing",
    "unscorable_cases",
    "verdict_word",
]
