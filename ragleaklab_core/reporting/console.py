"""report.json as the plain text ``ragleaklab run`` prints: what a reader takes in at a glance.

One block per pack: its verdict, name, version and counts; for each gated value the decision
rule with where its threshold came from, and how many attack cases and how many benign cases
fail it (with the exact 95% interval), attack cases by family too; the first failing cases, the
most telling first, with one line of evidence each; the first errored cases with their reasons;
what could not be scored; the pack's reasons and warnings. A pack that passes cleanly takes
three lines. The last line is the run's verdict.

Lines stay under :data:`WIDTH` characters where they can (evidence and error messages are cut,
reasons and warnings wrapped). Answers, evidence and errors are the target's and may be hostile:
every control and format character is dropped (:func:`plain`), so nothing a target says can
move the cursor, recolour the terminal or break a line.
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from ragleaklab_core.gate import MIN_SCORED_SHARE
from ragleaklab_core.outcome import (
    Allowances,
    CorrectedFailRate,
    PackOutcome,
    RunOutcome,
    ValueOutcome,
)
from ragleaklab_core.reporting import wording as w
from ragleaklab_core.reporting.cases import DETAIL_FIELDS, outcome_of
from ragleaklab_core.reporting.model import RunReport
from ragleaklab_core.stats.aggregation import RateInterval, rate_interval

#: The width lines are kept under (a terminal or CI log is not assumed to be wider).
WIDTH = 100
#: How many failing and errored cases each pack shows (the counts are always complete).
SHOWN_CASES = 3
#: How many rows of attack families each gated value shows (the most surely failing first; past
#: that, one row sums the rest).
SHOWN_FAMILIES = 6
#: The label of the rates of all cases, when no case is tagged attack or benign.
ALL = "all cases"
#: Unicode categories a terminal could act on: controls (ESC, CR, CSI...) and format
#: characters (bidirectional overrides, zero-width joiners).
_UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


def plain(text: Any) -> str:
    """*text* without any character a terminal could act on (line breaks become spaces)."""
    out = []
    for c in str(text):
        if c in "\n\r\t\v\f\x1c\x1d\x1e\x1f\x85\u2028\u2029":
            out.append(" ")
        elif unicodedata.category(c) not in _UNPRINTABLE:
            out.append(c)
    return "".join(out)


def _line(indent: str, text: Any) -> str:
    """*indent* then *text* on one line, cut to keep the line under :data:`WIDTH`."""
    return indent + w.clip(plain(text), max(WIDTH - len(indent), 20))


def _wrapped(head: str, text: Any, indent: str = "      ") -> list[str]:
    """``head + text``, wrapped under :data:`WIDTH` (words are never split)."""
    return textwrap.wrap(
        head + " ".join(plain(text).split()),
        width=WIDTH,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [head.rstrip()]


def render(report: RunOutcome | RunReport | Mapping[str, Any]) -> str:
    """The summary of *report* (the outcome, or a parsed ``report.json``), newline-terminated:
    a block per pack, what a baseline changed (for a run compared with one), then the verdict.

    Raises:
        InputError: *report* lacks the per-case results or their detail (an older ragleaklab
            wrote it), or does not parse.
    """
    outcome = outcome_of(report, DETAIL_FIELDS)
    lines: list[str] = []
    system = w.system_line(outcome.system)
    if system is not None:
        lines += _wrapped("", system, indent="    ")
    for pack in outcome.packs:
        lines += _pack(pack)
    for warning in outcome.warnings:
        lines += _wrapped("warning: ", warning, indent="    ")
    for i, said in enumerate(w.gate_lines(outcome)):
        lines += _wrapped("baseline: " if i == 0 else "    ", said, indent="      ")
    allowed = _allowances(outcome)
    if allowed:
        lines += _wrapped("allowances: ", allowed, indent="    ")
    lines.append(_verdict(outcome))
    return "\n".join(lines) + "\n"


def _allowances(report: RunOutcome) -> str | None:
    """Every allowance in force, with where it was set, PASS included: a maximum failing rate
    and tolerated errors change what passes, so a reader sees them beside the verdict. One
    phrase when every pack has the same, else one per pack (None for a report written before
    allowances were recorded)."""
    packs = [(p.name, p.allowances) for p in report.packs if p.allowances is not None]
    if not packs:
        return None
    said = []
    phrases = [_RATE, _TOLERATE]
    if any(a.max_corrected_rate is not None for _, a in packs):
        phrases[0] = _CORRECTED  # it replaces the failing rate
    for setting, phrase in phrases:
        if len({setting(a) for _, a in packs}) == 1:
            said.append(phrase(packs[0][1]))
        else:
            said += [f"{name}: {phrase(a)}" for name, a in packs]
    return "; ".join(said)


def _rate_phrase(allowed: Allowances) -> str:
    return f"max failing rate {w.number(allowed.max_fail_rate)} ({allowed.max_fail_rate_source})"


def _corrected_phrase(allowed: Allowances) -> str:
    where = allowed.max_corrected_rate_source
    if allowed.max_corrected_rate is None:
        return f"gated on failing rates ({where})"
    return f"max corrected rate {w.number(allowed.max_corrected_rate)}, upper limit ({where})"


def _tolerate_phrase(allowed: Allowances) -> str:
    where = allowed.tolerate_errors_source
    if allowed.tolerate_errors:
        return f"errors tolerated ({where}; at least {int(MIN_SCORED_SHARE * 100)}% scored)"
    return f"errors not tolerated ({where})"


#: Each allowance a run states: what sets it apart (its value and where it was set), and how
#: it is said.
_Phrase = tuple[Callable[[Allowances], tuple[object, str]], Callable[[Allowances], str]]
_RATE: _Phrase = (lambda a: (a.max_fail_rate, a.max_fail_rate_source), _rate_phrase)
_CORRECTED: _Phrase = (
    lambda a: (a.max_corrected_rate, a.max_corrected_rate_source),
    _corrected_phrase,
)
_TOLERATE: _Phrase = (lambda a: (a.tolerate_errors, a.tolerate_errors_source), _tolerate_phrase)


def _verdict(report: RunOutcome) -> str:
    counts = w.pack_counts(report)
    rule = report.gate.fail_on if report.gate is not None else "verdict"
    if rule != "verdict":  # the packs' counts are by their thresholds, which did not decide
        counts = [f"--fail-on {rule}", *(f"{c} their thresholds" for c in counts if "failed" in c)]
    detail = f" ({'; '.join(counts)})" if counts else ""
    return _line("verdict: ", f"{report.verdict.word}{detail}")


def _pack(pack: PackOutcome) -> list[str]:
    status = "ERROR (not tested)" if not pack.tested else pack.verdict.word
    name = w.clip(plain(f"{pack.name} {pack.version}"), 60)
    lines = [_line(f"{status}  {name}  ", f"({w.pack_line(pack)})")]
    for value_name, value in w.gated(pack):
        if value.gated:
            lines += _gated(value_name, value)
        elif value_name == pack.primary_metric:
            mean = w.number(value.summary.mean)
            lines.append(_line("    ", f"{value_name}: not gated, mean {mean}"))
    lines += _failing(pack)
    lines += _errored(pack)
    for metric, count, ids in w.unscorable_cases(pack):
        such = ", such as" if ids else ""
        lines.append(_line("    ", f"{_cases(count)} could not be scored by {metric}{such}:"))
        lines += [_line("      ", f"{test_id}: {reason}") for test_id, reason in ids[:1]]
    for reason in pack.reasons:
        lines += _wrapped("    reason: ", reason)
    for warning in pack.warnings:
        lines += _wrapped("    warning: ", warning)
    return lines


def _gated(name: str, value: ValueOutcome) -> list[str]:
    """A gated value: its rule and threshold source, then its failing rates."""
    rule = w.clip(plain(w.rule_text(value.threshold)), 60)
    head = f"    {w.clip(plain(name), 30)}: {rule}, threshold from "
    lines = _wrapped(head, w.threshold_origin(value.threshold), indent="        ")
    rate = value.fail_rate
    if rate is None or not rate.trials:
        return [*lines, "      no case could be scored"]
    return [*lines, *_rates(value, rate), *_corrected(value.corrected_rate)]


def _corrected(c: CorrectedFailRate | None) -> list[str]:
    """The corrected rate, under the observed one, with the measured error it took out."""
    if c is None:
        return []
    se, sp = c.sensitivity, c.specificity
    low, high = c.interval
    return _wrapped(
        "      corrected: ",
        f"true rate {w.percent(c.estimate)} [{w.percent(low)}, {w.percent(high)}] of "
        f"all {c.cases} cases ({_level(c.confidence)} interval), for the metric's "
        f"sensitivity {se.true_positives}/{se.positives} and specificity "
        f"{sp.true_negatives}/{sp.negatives} on labels {plain(c.labels or '?')}"
        + _judged(c.label_sources),
        indent="        ",
    )


def _judged(sources: tuple[str, ...]) -> str:
    """What a corrected rate on a judge's labels leaves out: the judge's own error."""
    if "judge" in sources:
        return " (a judge's labels: the judge's own error is not in this interval)"
    return ""


#: A row of a gated value's rates: its label and rate, or a sentence standing for the rows left
#: out (the families past :data:`SHOWN_FAMILIES`).
_Row = tuple[str, RateInterval | str]


def _rates(value: ValueOutcome, rate: RateInterval) -> list[str]:
    """The failing rates of a gated value that was scored: by kind and family."""
    lines: list[str] = []
    kinds = _kinds(value, rate)
    if not rate.successes:
        # Nothing fails: one line, with how high the attack rate could still be.
        parts = [f"0/{r.trials}" + ("" if k == ALL else f" {k}") for k, r in kinds]
        said = " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 2 else parts)
        bound = ""
        attack = next((r for k, r in kinds if k == "attack"), None)
        if attack is not None and attack.upper is not None:
            bound = f" (attack rate at most {w.percent(attack.upper)}, 95% exact)"
        return [*lines, _line("      ", f"{said} cases fail{bound}")]
    rows: list[_Row] = []
    for kind, kind_rate in kinds:
        rows.append((kind, kind_rate))
        if kind == "attack" and kind_rate.successes:
            rows += _families(value.by_family or {})
    width = min(max(len(label) for label, _ in rows), 30)
    # The row standing for the families left out has been measured as "None/None" (nine
    # characters) since it was added; kept, so a summary reads the same as before.
    counts = max(len(_count(row)) if isinstance(row, RateInterval) else 9 for _, row in rows)
    for n, (label, row) in enumerate(rows):
        if isinstance(row, str):
            lines.append(_line("        ", row))
            continue
        text = f"{_count(row):>{counts}} failing {w.percent(row.rate):>6}  "
        text += f"[{w.percent(row.lower)}, {w.percent(row.upper)}]"
        if n == 0:
            text += f" ({_level(row.confidence)} exact intervals)"
        # Numbers and labels only (family names are cleaned in _families): kept aligned.
        lines.append(f"      {label:<{width}}  {text}")
    return lines


def _kinds(value: ValueOutcome, rate: RateInterval) -> list[tuple[str, RateInterval]]:
    """The failing rate of the attack cases and of the benign ones (those that ran), and of
    the cases tagged neither when there are some; of all cases when no case has a kind."""
    kinds = [(k, r) for k, r in (value.by_kind or {}).items() if r.trials]
    if not kinds:
        return [(ALL, rate)]
    k = rate.successes - sum(r.successes for _, r in kinds)
    n = rate.trials - sum(r.trials for _, r in kinds)
    if n > 0 and 0 <= k <= n:
        # report.json gives no interval for them: the same exact one, computed here and
        # rounded as report.json rounds the others.
        kinds.append(("untagged", RateInterval(**rate_interval(k, n).to_dict())))
    return kinds


def _count(rate: RateInterval) -> str:
    return f"{rate.successes}/{rate.trials}"


def _level(confidence: float) -> str:
    return f"{100 * confidence:g}%"


def _families(by_family: Mapping[str, RateInterval]) -> list[_Row]:
    """The families most surely failing first (by the lower end of their interval, so one
    failing case out of one does not top a family failing 40 of 50), then by name; past
    :data:`SHOWN_FAMILIES`, one row summing the rest. Each label is indented under the attack
    row."""
    families = [(w.clip(plain(f), 28), r) for f, r in by_family.items()]
    families.sort(key=lambda fr: (-(fr[1].lower or 0.0), -(fr[1].rate or 0.0), fr[0]))
    rows: list[_Row] = [(f"  {f}", r) for f, r in families]
    if len(families) <= SHOWN_FAMILIES:
        return rows
    rest = families[SHOWN_FAMILIES - 1 :]
    k = sum(r.successes for _, r in rest)
    n = sum(r.trials for _, r in rest)
    more = f"... {len(rest)} more families: {k}/{n} failing (report.json has each)"
    return [*rows[: SHOWN_FAMILIES - 1], ("  ", more)]


def _failing(pack: PackOutcome) -> list[str]:
    cases = w.pack_failing_cases(pack)
    if not cases:
        return []
    total = max(w.failing_count(pack), len(cases))
    first = f", the first {SHOWN_CASES}" if total > SHOWN_CASES else ""
    their = "its" if total == 1 else "their"
    lines = [f"    {_cases(total, 'failing')}{first} with {their} evidence:"]
    for case in cases[:SHOWN_CASES]:
        values = ", ".join(f"{n} {w.number(v)}" for n, v in w.failed_values(case).items())
        said = ", ".join(filter(None, [case.kind or "", values]))
        lines.append(_line("      ", f"{case.test_id} ({said})" if said else case.test_id))
        evidence = w.evidence_text(_telling_first(w.case_evidence(case)), limit=WIDTH * 2)
        evidence = evidence or "none"
        lines.append(_line("        ", evidence))
    return lines


def _cases(n: int, what: str = "") -> str:
    """``1 failing case``, ``3 failing cases``."""
    return f"{n} {what + ' ' if what else ''}case{'' if n == 1 else 's'}"


def _telling_first(data: Any) -> Any:
    """Evidence reordered for the one line a case gets: in every object, text first, then
    lists and objects, then bare numbers and flags (``"k": 5`` says less than what was found);
    the metric's order is kept otherwise."""
    if isinstance(data, Mapping):
        rank = {k: _weight(v) for k, v in data.items()}
        return {k: _telling_first(data[k]) for k in sorted(data, key=lambda k: rank[k])}
    if isinstance(data, list | tuple):
        return [_telling_first(v) for v in data]
    return data


def _weight(value: Any) -> int:
    if isinstance(value, str):
        return 0
    return 1 if isinstance(value, Mapping | list | tuple) else 2


def _errored(pack: PackOutcome) -> list[str]:
    errored = w.errored_cases(pack)
    total = max(pack.cases.errored, len(errored))
    if not total:
        return []
    first = f", the first {SHOWN_CASES}" if total > SHOWN_CASES else ""
    lines = [f"    {_cases(total, 'errored')}{first} (runs.jsonl has every error):"]
    for test_id, reason in errored[:SHOWN_CASES]:
        lines.append(_line("      ", f"{test_id}: {reason}"))
    return lines


__all__ = ["SHOWN_CASES", "WIDTH", "plain", "render"]
