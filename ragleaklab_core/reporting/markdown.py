"""report.json as GitHub-flavoured Markdown, for a pull-request comment or
``$GITHUB_STEP_SUMMARY``: the verdict first, a table per pack, the top failing cases, and the
rest in a collapsed ``<details>``.

Queries, answers and evidence are attacker-controlled: every character that Markdown or HTML
could read as syntax is written as a numeric character reference (:func:`text`), so a case's
text can neither end a table cell nor open a link, a code span, a tag or a math span.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ragleaklab_core.gate import Verdict
from ragleaklab_core.reporting import wording as w
from ragleaklab_core.reporting.cases import DETAIL_FIELDS, require_case_results
from ragleaklab_core.reporting.model import PackReport, RunReport, run_report

#: GitHub's limit on one step's summary (1 MiB); the rendering never exceeds *max_bytes*.
STEP_SUMMARY_BYTES = 1024 * 1024
#: How many failing cases show before the collapsed section.
TOP_CASES = 10
#: Characters of a query, answer or evidence shown in a table cell.
CELL_CHARS = 120

PackCase = tuple[Mapping[str, Any], Mapping[str, Any]]  # a pack of report.json, one failing case
_ICON: dict[str, str] = {
    Verdict.PASS: "\u2705",
    Verdict.FAIL: "\u274c",
    Verdict.ERROR: "\u26a0\ufe0f",
}
# Markdown and HTML punctuation that could open or close something inline (a cell, emphasis, a
# code span, a link, a tag, an entity, GitHub math): backslash-escaped, which CommonMark allows
# for any ASCII punctuation and GFM honours for '|' inside table cells too.
_PUNCTUATION = set("\\`*_[]<>|~$&!")
# What GitHub would turn into a link or a mention by itself (`javascript:x`, `https://`, `www.`,
# `@team`, `a@b.example`): written as character references, which it shows but never links. A
# ':' before a space or at the end ("evidence: ...") can start no link and stays readable.
_LINKING = re.compile(r":(?=\S)|@|(?<=www)\.", re.IGNORECASE)
_TRUNCATED = (
    "\n> **Note:** this summary was cut to stay under {limit} bytes; report.json has it all.\n"
)


def text(value: Any, limit: int = CELL_CHARS) -> str:
    """*value* as inert Markdown on one line, at most *limit* characters before escaping."""
    clipped = w.clip("" if value is None else value, limit)
    out = []
    for c in clipped:
        if c in _PUNCTUATION:
            out.append("\\" + c)
        elif c.isprintable():
            out.append(c)
    return _LINKING.sub(_inert, "".join(out))


def _inert(match: re.Match[str]) -> str:
    # GitHub links an e-mail address after decoding references, so an '@' is also followed by
    # an invisible word joiner: a domain cannot start with it, and the text reads the same.
    c = match.group()
    return "&#64;&#8288;" if c == "@" else f"&#{ord(c)};"


def render(report: RunReport | Mapping[str, Any], *, max_bytes: int = STEP_SUMMARY_BYTES) -> str:
    """The Markdown summary of *report* (a parsed ``report.json``), at most *max_bytes* UTF-8
    bytes: when the whole would be longer, the collapsed list of failing cases is shortened
    first, then the end is cut, and a note says so.

    Raises:
        InputError: *report* lacks the per-case results or their detail (an older ragleaklab
            wrote it).
    """
    model = run_report(report)
    doc = model.document
    require_case_results(doc, DETAIL_FIELDS)
    head = _head(model)
    for pack in model.packs:
        head += _pack(pack)
    ordered = w.failing_cases(doc)
    top, rest = ordered[:TOP_CASES], ordered[TOP_CASES:]
    if top:
        head += ["### Top failing cases", "", *_case_table(top), ""]
    unlisted = sum(w.unlisted_failing(p) for p in doc.get("packs") or [])
    tail = [f"_ragleaklab {text((doc.get('tool') or {}).get('version'))}_", ""]
    if unlisted:
        more = f"{unlisted} more failing cases are counted but not detailed in report.json."
        tail[:0] = [more, ""]
    note = _TRUNCATED.format(limit=max_bytes)
    budget = max_bytes - _size(tail) - len(note.encode())
    lines = _fit(head, budget)
    cut = len(lines) < len(head)
    if rest and not cut:
        # The frame of the collapsed section, with room for "(N shown)", then whole rows.
        room = budget - _size(lines) - _size(_details([], len(rest))) - 20
        rows = _case_table(rest)[2:]
        kept = len(_fit(rows, room))
        cut = kept < len(rest)
        if kept:
            lines += _details(rest[:kept], len(rest))
    out = "\n".join(lines + tail)
    return out + note if cut else out


def _head(report: RunReport) -> list[str]:
    gate = w.gate_lines(report.document)
    return [
        f"## {_ICON[report.verdict]} ragleaklab: {report.verdict.word}",
        "",
        *_system(report),
        f"**{text(w.run_line(report.document), 400)}**",
        "",
        *[f"- {text(line, 400)}" for line in gate],
        *([""] if gate else []),
    ]


def _system(report: RunReport) -> list[str]:
    system = w.system_line(report.document)
    return [] if system is None else [text(system, 400), ""]


def _pack(report: PackReport) -> list[str]:
    pack = report.document  # the values' and cases' detail, read by the shared wording
    title = f"{text(report.name, 80)} {text(report.version, 40)}"
    lines = [f"### {_ICON[report.verdict]} {title}: {report.verdict.word}", ""]
    lines += [text(w.pack_line(pack), 300), ""]
    if not report.tested:
        lines += [f"**Not tested:** {text(report.not_tested_reason, 300)}", ""]
    lines += [
        "| value | mean | threshold | threshold source | cases | failing | 95% interval |",
        "|---|---:|---|---|---|---:|---|",
    ]
    for name, value in w.gated(pack):
        threshold = value.get("threshold")
        mean = (value.get("summary") or {}).get("mean")
        first = f"| {text(name, 60)} | {w.number(mean)} | {text(w.rule_text(threshold), 80)} "
        first += f"| {text((threshold or {}).get('source', ''), 80)} "
        if not threshold:
            lines.append(first + "| all | n/a | n/a |")
            continue
        rate = value.get("fail_rate")
        first += f"| all | {text(w.count_text(rate))} | {text(w.interval_text(rate))} |"
        lines.append(first)
        for kind, kind_rate in (value.get("by_kind") or {}).items():
            if kind_rate.get("trials"):
                lines.append(
                    f"| | | | | {text(kind)} | {text(w.count_text(kind_rate))} "
                    f"| {text(w.interval_text(kind_rate))} |"
                )
    lines.append("")
    for reason in report.reasons:
        lines.append(f"- {text(reason, 300)}")
    for warning in report.warnings:
        lines.append(f"- warning: {text(warning, 300)}")
    errored = pack.get("errored") or {}
    for test_id, reason in list(errored.items())[:5]:
        lines.append(f"- errored {text(test_id, 60)}: {text(reason, 200)}")
    if len(errored) > 5:
        lines.append(f"- ... {(pack.get('cases') or {}).get('errored')} errored in all")
    for metric, unscorable in (pack.get("unscorable") or {}).items():
        count = unscorable.get("count", 0)
        lines.append(f"- {count} cases could not be scored by {text(metric, 60)}")
    if lines[-1] != "":
        lines.append("")
    return lines


def _case_table(cases: list[PackCase]) -> list[str]:
    lines = [
        "| pack | case | kind | fails | query | answer | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for pack, case in cases:
        fails = ", ".join(f"{n} {w.number(v)}" for n, v in w.failed_values(case).items())
        detail = case.get("detail") or {}
        lines.append(
            f"| {text(pack.get('name'), 60)} | {text(case.get('test_id'), 60)} "
            f"| {text(case.get('kind') or '')} | {text(fails)} | {text(detail.get('query'))} "
            f"| {text(detail.get('answer'))}{text(w.masked_note(detail))} "
            f"| {text(w.evidence_text(case.get('evidence')))} |"
        )
    return lines


def _details(cases: list[PackCase], total: int) -> list[str]:
    """The collapsed section listing *cases*, the first of *total* failing cases not shown."""
    shown = f" ({len(cases)} shown)" if len(cases) < total else ""
    return [
        "<details>",
        f"<summary>The other {total} failing cases{shown}</summary>",
        "",
        *_case_table(cases),
        "",
        "</details>",
        "",
    ]


def _fit(lines: list[str], budget: int) -> list[str]:
    """The first of *lines* that fit in *budget* bytes (joined by newlines)."""
    kept, size = [], 0
    for line in lines:
        size += len(line.encode()) + 1
        if size > budget:
            break
        kept.append(line)
    return kept


def _size(lines: list[str]) -> int:
    return sum(len(line.encode()) + 1 for line in lines)


__all__ = ["STEP_SUMMARY_BYTES", "render", "text"]
