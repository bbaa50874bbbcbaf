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
from collections.abc import Mapping
from typing import Any

from ragleaklab_core.gate import MIN_SCORED_SHARE
from ragleaklab_core.reporting import wording as w
from ragleaklab_core.reporting.cases import DETAIL_FIELDS, require_case_results
from ragleaklab_core.reporting.model import PackReport, RunReport, run_report
from ragleaklab_core.stats.aggregation import rate_interval

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


def render(report: RunReport | Mapping[str, Any]) -> str:
    """The summary of *report* (a parsed ``report.json``), newline-terminated: a block per
    pack, what a baseline changed (for a run compared with one), then the verdict.

    Raises:
        InputError: *report* lacks the per-case results or their detail (an older ragleaklab
            wrote it).
    """
    model = run_report(report)
    doc = model.document
    require_case_results(doc, DETAIL_FIELDS)
    lines: list[str] = []
    system = w.system_line(doc)
    if system is not None:
        lines += _wrapped("", system, indent="    ")
    for pack in model.packs:
        lines += _pack(pack)
    for warning in model.warnings:
        lines += _wrapped("warning: ", warning, indent="    ")
    for i, said in enumerate(w.gate_lines(doc)):
        lines += _wrapped("baseline: " if i == 0 else "    ", said, indent="      ")
    allowed = _allowances(doc)
    if allowed:
        lines += _wrapped("allowances: ", allowed, indent="    ")
    lines.append(_verdict(model))
    return "\n".join(lines) + "\n"


def _allowances(doc: Mapping[str, Any]) -> str | None:
    """Every allowance in force, with where it was set, PASS included: a maximum failing rate
    and tolerated errors change what passes, so a reader sees them beside the verdict. One
    phrase when every pack has the same, else one per pack (None for a report written before
    allowances were recorded)."""
    packs = [p for p in doc.get("packs") or [] if isinstance(p.get("allowances"), Mapping)]
    if not packs:
        return None
    said = []
    phrases = [("max_fail_rate", _rate_phrase), ("tolerate_errors", _tolerate_phrase)]
    corrected = [(p["allowances"].get("max_corrected_rate") or {}) for p in packs]
    if any(c.get("value") is not None for c in corrected):
        phrases[0] = ("max_corrected_rate", _corrected_phrase)  # it replaces the failing rate
    for key, phrase in phrases:
        each = [(p.get("name"), (p["allowances"].get(key) or {})) for p in packs]
        distinct = {(a.get("value"), a.get("source")) for _, a in each}
        if len(distinct) == 1:
            said.append(phrase(each[0][1]))
        else:
            said += [f"{name}: {phrase(a)}" for name, a in each]
    return "; ".join(said)


def _rate_phrase(allowance: Mapping[str, Any]) -> str:
    value = allowance.get("value")
    where = allowance.get("source", "?")
    return f"max failing rate {w.number(value)} ({where})"


def _corrected_phrase(allowance: Mapping[str, Any]) -> str:
    value = allowance.get("value")
    where = allowance.get("source", "?")
    if value is None:
        return f"gated on failing rates ({where})"
    return f"max corrected rate {w.number(value)}, upper limit ({where})"


def _tolerate_phrase(allowance: Mapping[str, Any]) -> str:
    where = allowance.get("source", "?")
    if allowance.get("value"):
        return f"errors tolerated ({where}; at least {int(MIN_SCORED_SHARE * 100)}% scored)"
    return f"errors not tolerated ({where})"


def _verdict(report: RunReport) -> str:
    counts = w.pack_counts(report.document)
    rule = report.gate.get("fail_on", "verdict")
    if rule != "verdict":  # the packs' counts are by their thresholds, which did not decide
        counts = [f"--fail-on {rule}", *(f"{c} their thresholds" for c in counts if "failed" in c)]
    detail = f" ({'; '.join(counts)})" if counts else ""
    return _line("verdict: ", f"{report.verdict.word}{detail}")


def _pack(report: PackReport) -> list[str]:
    pack = report.document  # the values' and cases' detail, read by the shared wording
    status = "ERROR (not tested)" if not report.tested else report.verdict.word
    name = w.clip(plain(f"{report.name} {report.version}"), 60)
    lines = [_line(f"{status}  {name}  ", f"({w.pack_line(pack)})")]
    for value_name, value in w.gated(pack):
        if value.get("threshold"):
            lines += _gated(value_name, value)
        elif value_name == pack.get("primary_metric"):
            mean = w.number((value.get("summary") or {}).get("mean"))
            lines.append(_line("    ", f"{value_name}: not gated, mean {mean}"))
    lines += _failing(pack)
    lines += _errored(pack)
    for metric, count, ids in w.unscorable_cases(pack):
        such = ", such as" if ids else ""
        lines.append(_line("    ", f"{_cases(count)} could not be scored by {metric}{such}:"))
        lines += [_line("      ", f"{test_id}: {reason}") for test_id, reason in ids[:1]]
    for reason in report.reasons:
        lines += _wrapped("    reason: ", reason)
    for warning in report.warnings:
        lines += _wrapped("    warning: ", warning)
    return lines


def _gated(name: str, value: Mapping[str, Any]) -> list[str]:
    """A gated value: its rule and threshold source, then its failing rates."""
    threshold = value.get("threshold")
    rule = w.clip(plain(w.rule_text(threshold)), 60)
    head = f"    {w.clip(plain(name), 30)}: {rule}, threshold from "
    lines = _wrapped(head, w.threshold_origin(threshold), indent="        ")
    rate = value.get("fail_rate")
    if not rate or not rate.get("trials"):
        return [*lines, "      no case could be scored"]
    return [*lines, *_rates(value, rate), *_corrected(value.get("corrected_rate"))]


def _corrected(c: Any) -> list[str]:
    """The corrected rate, under the observed one, with the measured error it took out."""
    if not isinstance(c, Mapping):
        return []
    se, sp = c.get("sensitivity") or {}, c.get("specificity") or {}
    low, high = c.get("interval") or (None, None)
    labels = plain(c.get("labels") or "?")
    return _wrapped(
        "      corrected: ",
        f"true rate {w.percent(c.get('estimate'))} [{w.percent(low)}, {w.percent(high)}] of "
        f"all {c.get('cases')} cases ({_level(c)} interval), for the metric's "
        f"sensitivity {se.get('true_positives')}/{se.get('positives')} and specificity "
        f"{sp.get('true_negatives')}/{sp.get('negatives')} on labels {labels}"
        + _judged(c.get("label_sources")),
        indent="        ",
    )


def _judged(sources: Any) -> str:
    """What a corrected rate on a judge's labels leaves out: the judge's own error."""
    if isinstance(sources, list) and "judge" in sources:
        return " (a judge's labels: the judge's own error is not in this interval)"
    return ""


def _rates(value: Mapping[str, Any], rate: Mapping[str, Any]) -> list[str]:
    """The failing rates of a gated value that was scored: by kind and family."""
    lines: list[str] = []
    kinds = _kinds(value)
    if not rate.get("successes"):
        # Nothing fails: one line, with how high the attack rate could still be.
        parts = [f"0/{r.get('trials')}" + ("" if k == ALL else f" {k}") for k, r in kinds]
        said = " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 2 else parts)
        bound = ""
        attack = dict(kinds).get("attack") or {}
        if attack.get("upper") is not None:
            bound = f" (attack rate at most {w.percent(attack['upper'])}, 95% exact)"
        return [*lines, _line("      ", f"{said} cases fail{bound}")]
    rows: list[tuple[str, Mapping[str, Any]]] = []
    for kind, kind_rate in kinds:
        rows.append((kind, kind_rate))
        if kind == "attack" and kind_rate.get("successes"):
            rows += [(f"  {f}", r) for f, r in _families(value.get("by_family") or {})]
    width = min(max(len(label) for label, _ in rows), 30)
    counts = max(len(_count(row)) for _, row in rows)
    for n, (label, row) in enumerate(rows):
        if "more" in row:
            lines.append(_line("        ", row["more"]))
            continue
        text = f"{_count(row):>{counts}} failing {w.percent(row.get('rate')):>6}  "
        text += f"[{w.percent(row.get('lower'))}, {w.percent(row.get('upper'))}]"
        if n == 0:
            text += f" ({_level(row)} exact intervals)"
        # Numbers and labels only (family names are cleaned in _families): kept aligned.
        lines.append(f"      {label:<{width}}  {text}")
    return lines


def _kinds(value: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The failing rate of the attack cases and of the benign ones (those that ran), and of
    the cases tagged neither when there are some; of all cases when no case has a kind."""
    rate = value.get("fail_rate") or {}
    kinds = [(k, r) for k, r in (value.get("by_kind") or {}).items() if r and r.get("trials")]
    if not kinds:
        return [(ALL, rate)]
    k = int(rate.get("successes") or 0) - sum(int(r.get("successes") or 0) for _, r in kinds)
    n = int(rate.get("trials") or 0) - sum(int(r.get("trials") or 0) for _, r in kinds)
    if n > 0 and 0 <= k <= n:
        # report.json gives no interval for them: the same exact one, computed here.
        kinds.append(("untagged", rate_interval(k, n).to_dict()))
    return kinds


def _count(rate: Mapping[str, Any]) -> str:
    return f"{rate.get('successes')}/{rate.get('trials')}"


def _level(rate: Mapping[str, Any]) -> str:
    confidence = rate.get("confidence")
    return f"{100 * confidence:g}%" if isinstance(confidence, int | float) else "95%"


def _families(by_family: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The families most surely failing first (by the lower end of their interval, so one
    failing case out of one does not top a family failing 40 of 50), then by name; past
    :data:`SHOWN_FAMILIES`, one row summing the rest."""
    families = [(w.clip(plain(f), 28), r) for f, r in by_family.items() if isinstance(r, Mapping)]
    families.sort(key=lambda fr: (-(fr[1].get("lower") or 0.0), -(fr[1].get("rate") or 0.0), fr[0]))
    if len(families) <= SHOWN_FAMILIES:
        return families
    shown, rest = families[: SHOWN_FAMILIES - 1], families[SHOWN_FAMILIES - 1 :]
    k = sum(int(r.get("successes") or 0) for _, r in rest)
    n = sum(int(r.get("trials") or 0) for _, r in rest)
    more = f"... {len(rest)} more families: {k}/{n} failing (report.json has each)"
    return [*shown, ("", {"more": more})]


def _failing(pack: Mapping[str, Any]) -> list[str]:
    cases = w.pack_failing_cases(pack)
    if not cases:
        return []
    total = max(w.failing_count(pack), len(cases))
    first = f", the first {SHOWN_CASES}" if total > SHOWN_CASES else ""
    their = "its" if total == 1 else "their"
    lines = [f"    {_cases(total, 'failing')}{first} with {their} evidence:"]
    for case in cases[:SHOWN_CASES]:
        values = ", ".join(f"{n} {w.number(v)}" for n, v in w.failed_values(case).items())
        said = ", ".join(filter(None, [str(case.get("kind") or ""), values]))
        lines.append(
            _line("      ", f"{case.get('test_id')} ({said})" if said else case.get("test_id"))
        )
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


def _errored(pack: Mapping[str, Any]) -> list[str]:
    errored = w.errored_cases(pack)
    total = max(int((pack.get("cases") or {}).get("errored") or 0), len(errored))
    if not total:
        return []
    first = f", the first {SHOWN_CASES}" if total > SHOWN_CASES else ""
    lines = [f"    {_cases(total, 'errored')}{first} (runs.jsonl has every error):"]
    for test_id, reason in errored[:SHOWN_CASES]:
        lines.append(_line("      ", f"{test_id}: {reason}"))
    return lines


__all__ = ["SHOWN_CASES", "WIDTH", "plain", "render"]
