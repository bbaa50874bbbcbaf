"""Plain-text wording of a report.json's parts, shared by the console, Markdown and HTML
renderings.

Every function takes pieces of the parsed ``report.json`` dict and returns unescaped text: each
rendering escapes it for its own syntax. The per-case lists of a pack (its failing, errored and
unscorable cases) are read only through the accessors at the end of this module, so a change of
their layout in report.json changes those few functions and no rendering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragleaklab_core.config import DEFAULT_TARGET
from ragleaklab_core.gate import Outcome, Verdict
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


def rule_text(threshold: Mapping[str, Any] | None) -> str:
    """``score >= 0.7059 -> FAIL`` (the decision rule with the threshold filled in)."""
    if not threshold:
        return "not gated"
    rule = str(threshold.get("decision_rule", "?"))
    value = threshold.get("value")
    shown = "none (flags nothing)" if value is None else number(value, 6)
    return rule.replace("threshold", shown)


def threshold_origin(threshold: Mapping[str, Any] | None) -> str:
    """Where a gated value's threshold came from, in words: ``the pack's default``, ``the
    config file``, or the thresholds file with the fitter and date of the calibration that
    wrote it (as ``calibrate --write-thresholds`` recorded them)."""
    source = str((threshold or {}).get("source") or "?")
    if is_pack_default(source):
        return "the pack's default"
    if source == "config":
        return "the config file"
    return source


def count_text(rate: Mapping[str, Any] | None) -> str:
    """``242/700 (34.6%)`` from a ``fail_rate`` dict."""
    if not rate:
        return "n/a"
    return f"{rate.get('successes')}/{rate.get('trials')} ({percent(rate.get('rate'))})"


def corrected_cells(corrected: Mapping[str, Any]) -> tuple[str, str, str]:
    """``("all, corrected", "12.0%", "4.1%-22.3% (95%, corrected)")``: a ``corrected_rate``
    dict as the row the Markdown and HTML tables give it under the failing rates."""
    low, high = corrected.get("interval") or (None, None)
    confidence = corrected.get("confidence")
    level = f"{100 * confidence:g}%, " if isinstance(confidence, int | float) else ""
    return (
        "all, corrected",
        percent(corrected.get("estimate")),
        f"{percent(low)}-{percent(high)} ({level}corrected)",
    )


def interval_text(rate: Mapping[str, Any] | None) -> str:
    """``31.0%-38.3% (95% exact)``: the Clopper-Pearson interval of a ``fail_rate`` dict."""
    if not rate or rate.get("lower") is None:
        return "n/a"
    confidence = rate.get("confidence")
    level = f"{100 * confidence:g}% " if isinstance(confidence, int | float) else ""
    return f"{percent(rate['lower'])}-{percent(rate['upper'])} ({level}exact)"


def pack_line(pack: Mapping[str, Any]) -> str:
    """``700 cases, 0 errored, 3 epochs reduced by max`` for a pack."""
    cases = pack.get("cases") or {}
    parts = [f"{cases.get('run', '?')} cases", f"{cases.get('errored', 0)} errored"]
    epochs = cases.get("epochs", 1)
    if isinstance(epochs, int) and epochs > 1:
        parts.append(f"{epochs} epochs reduced by {cases.get('reducer')}")
    if cases.get("tags"):
        parts.append("tags " + ", ".join(map(str, cases["tags"])))
    if cases.get("exclude_tags"):
        parts.append("excluding tags " + ", ".join(map(str, cases["exclude_tags"])))
    return ", ".join(parts)


def pack_counts(report: Mapping[str, Any]) -> list[str]:
    """``["3 of 4 packs failed", "1 of 4 packs not tested or errored"]``, the parts that apply."""
    totals = report.get("totals") or {}
    packs = totals.get("packs", 0)
    parts = []
    if totals.get("failed"):
        parts.append(f"{totals['failed']} of {packs} packs failed")
    if totals.get("packs_errored"):
        parts.append(f"{totals['packs_errored']} of {packs} packs not tested or errored")
    return parts


def system_line(report: Mapping[str, Any]) -> str | None:
    """``tested: python (callable app:answer, python@a31895bf96bb), config ragleaklab.toml``:
    which system the run tested and the config file it read, first in every rendering (a
    passing run of the embedded reference RAG must not read as a pass of the user's app). None
    for a report written before it was recorded."""
    system = report.get("system")
    if not isinstance(system, Mapping) or not system.get("target"):
        return None
    name = str(system["target"])
    said = [str(x) for x in (system.get("where"), system.get("identity")) if x]
    if name == DEFAULT_TARGET:  # what runs when no target is configured: say so plainly
        said.insert(0, "the embedded reference RAG")
    config = system.get("config")
    return (
        f"tested: {name}"
        + (f" ({', '.join(said)})" if said else "")
        + (f", config {config}" if config else ", no config file")
    )


def run_line(report: Mapping[str, Any]) -> str:
    """``4 of 4 packs failed; 2595 cases, 0 errored; target reference``."""
    totals = report.get("totals") or {}
    packs = totals.get("packs", 0)
    parts = pack_counts(report)
    if not parts:
        parts.append(f"{totals.get('passed', 0)} of {packs} packs passed")
    parts.append(f"{totals.get('cases', 0)} cases, {totals.get('errored', 0)} errored")
    target = report.get("target") or {}
    if target.get("name"):
        parts.append(f"target {target['name']} ({target.get('provider')})")
    return "; ".join(parts)


def gate_lines(report: Mapping[str, Any]) -> list[str]:
    """What a baseline changed, for a run compared with one (``run --baseline``): the rule that
    decided, why, and each gated value's failing rate in both runs; empty otherwise."""
    gate = report.get("gate")
    if not isinstance(gate, Mapping) or not isinstance(gate.get("baseline"), Mapping):
        return []
    baseline = gate["baseline"]
    rule = str(gate.get("fail_on", "verdict"))
    lines = [
        f"compared with baseline {baseline.get('path')} (one-sided level "
        f"{baseline.get('level')}); --fail-on {rule}: {verdict_word(str(report.get('verdict')))}"
        f" (by its thresholds alone: {verdict_word(str(gate.get('thresholds_verdict')))})"
    ]
    lines += [str(reason) for reason in gate.get("reasons") or []]
    diff = baseline.get("diff") if isinstance(baseline.get("diff"), Mapping) else {}
    lines += [f"target changed from the baseline: {x}" for x in diff.get("target_changes") or []]
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
        metric: epochs[0] if isinstance(epochs, list) and len(epochs) == 1 else epochs
        for metric, epochs in (evidence or {}).items()
    }


def clip(text: Any, limit: int) -> str:
    """*text* on one line, at most *limit* characters (an ellipsis marks a cut)."""
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "\u2026"


def failing_cases(report: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """Every listed failing case as (pack, case), the most telling first: taken in turn from
    each pack (so every failing pack shows among the first), then in each pack's order
    (:func:`pack_failing_cases`)."""
    queues = [
        [(pack, case) for case in pack_failing_cases(pack)] for pack in report.get("packs") or []
    ]
    ordered = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def gated(pack: Mapping[str, Any]) -> Sequence[tuple[str, Mapping[str, Any]]]:
    """The pack's values, gated ones first (then the primary metric, then the rest), by name."""
    values = pack.get("values") or {}
    primary = pack.get("primary_metric")

    def order(item: tuple[str, Any]) -> tuple[int, str]:
        name, value = item
        return (0 if value.get("threshold") else 1 if name == primary else 2, name)

    return sorted(values.items(), key=order)


# -- a pack's cases: the only readers of report.json's per-case lists ----------------------------


def pack_failing_cases(pack: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The failing cases *pack* details (``case_results`` with a ``detail``), the most telling
    first: attack cases before benign ones, then by the highest value failed, then by id. Each
    has ``test_id``, ``kind``, ``tags``, ``detail`` (query, answer...); read its values with
    :func:`failed_values` and its evidence with :func:`case_evidence`."""
    counts: Mapping[str, Any] = pack["cases"] if isinstance(pack.get("cases"), Mapping) else {}
    results = pack.get("case_results") or []
    # The in-process run's own list (streamed from disk, its counts exact) is read no further
    # than its last detailed case: a million cases need not all be read. A file is read whole.
    detailed = None if isinstance(results, list) else counts.get("detailed")
    listed, seen = [], 0
    for case in results:
        if case.get("detail"):
            seen += 1
            if case.get("outcome") == Outcome.FAIL:
                listed.append(case)
            if isinstance(detailed, int) and seen >= detailed:
                break
    return sorted(listed, key=_rank)


def _rank(case: Mapping[str, Any]) -> tuple[int, float, str]:
    values = [v for v in failed_values(case).values() if isinstance(v, int | float)]
    return (0 if case.get("kind") == "attack" else 1, -max(values, default=0.0), case["test_id"])


def failed_values(case: Mapping[str, Any]) -> dict[str, Any]:
    """The gated values a failing *case* fails, with its value of each, by name."""
    values = case.get("values") or {}
    return {n: values[n] for n in case.get("failing") or [] if n in values}


def case_evidence(case: Mapping[str, Any]) -> dict[str, Any]:
    """Each metric's evidence for *case*, by metric (of its first epoch that has one)."""
    out = {}
    for metric, data in (case.get("evidence") or {}).items():
        if isinstance(data, list):  # one per epoch; None for an epoch that errored
            data = next((epoch for epoch in data if epoch is not None), {})
        out[str(metric)] = data
    return out


def failing_count(pack: Mapping[str, Any]) -> int:
    """How many cases of *pack* fail a gated value (each counted once)."""
    counts: Mapping[str, Any] = pack["cases"] if isinstance(pack.get("cases"), Mapping) else {}
    if isinstance(counts.get("failing"), int):
        return int(counts["failing"])
    results = pack.get("case_results") or []
    return sum(1 for case in results if isinstance(case, Mapping) and case.get("failing"))


def unlisted_failing(pack: Mapping[str, Any]) -> int:
    """How many failing cases of *pack* report.json holds without their detail (those past
    the first 500 failing or errored cases by id)."""
    return sum(1 for c in pack["case_results"] if c["outcome"] == Outcome.FAIL and not c["detail"])


def errored_cases(pack: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(test_id, reason)`` of the errored cases *pack* lists (the first 50, by id); its
    ``cases.errored`` counts them all."""
    return [(str(k), str(v)) for k, v in (pack.get("errored") or {}).items()]


def unscorable_cases(pack: Mapping[str, Any]) -> list[tuple[str, int, list[tuple[str, str]]]]:
    """``(metric, count, [(test_id, reason)...])`` for each metric that could not score some
    of *pack*'s cases (the ids are the first 50)."""
    out = []
    for metric, data in (pack.get("unscorable") or {}).items():
        data = data if isinstance(data, Mapping) else {}
        ids = [(str(k), str(v)) for k, v in (data.get("ids") or {}).items()]
        out.append((str(metric), int(data.get("count") or len(ids)), ids))
    return out


def masked_note(detail: Mapping[str, Any]) -> str:
    """What a rendering adds after a case's answer when ragleaklab masked a secret of the run's
    configuration in it (``detail.masked``) or replaced text that was not Unicode
    (``detail.repaired``): the text shown is not exactly what the system said."""
    notes = []
    if masked := detail.get("masked"):
        notes.append(f" [a configured secret was masked as *** in: {', '.join(map(str, masked))}]")
    if repaired := detail.get("repaired"):
        notes.append(
            " [a lone surrogate (not Unicode) was replaced by U+FFFD in: "
            f"{', '.join(map(str, repaired))}]"
        )
    return "".join(notes)


__all__ = [
    "case_evidence",
    "clip",
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
