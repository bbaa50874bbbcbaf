"""report.json as GitHub-flavoured Markdown, for a pull-request comment or
``$GITHUB_STEP_SUMMARY``: the verdict first, a table per pack, the top failing cases, and the
rest in a collapsed ``<details>``.

Queries, answers and evidence are attacker-controlled: every character that Markdown or HTML
could read as syntax is written as a numeric character reference (:func:`text`), so a case's
text can neither end a table cell nor open a link, a code span, a tag or a math span.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import frozen

from ragleaklab_core.config import MARKDOWN_MAX_CHARS
from ragleaklab_core.outcome import CaseOutcome, PackOutcome, RunOutcome, Verdict
from ragleaklab_core.reporting import wording as w
from ragleaklab_core.reporting.cases import DETAIL_FIELDS, outcome_of
from ragleaklab_core.reporting.model import RunReport

#: The default cap, in characters: what a GitHub pull-request comment holds (65536), the
#: smaller of that and a job summary (1 MiB a step). 0 asks for no cap.
MAX_CHARS = MARKDOWN_MAX_CHARS
#: GitHub's limit on one step's summary, in bytes (the step summary is capped in characters at
#: a quarter of it: ``reporting.outputs.STEP_SUMMARY_CHARS``).
STEP_SUMMARY_BYTES = 1024 * 1024
#: How many failing cases show before the collapsed section.
TOP_CASES = 10
#: Characters of a query, answer or evidence shown in a table cell.
CELL_CHARS = 120
#: How many errored cases each pack lists.
ERRORED_SHOWN = 5

PackCase = tuple[PackOutcome, CaseOutcome]  # a pack, one of its failing cases
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
_CUT_NOTE = (
    "> **Note:** this summary was cut to stay under {limit} characters (what a pull-request "
    "comment holds; `--markdown-max-chars` sets it): {cuts}. The full report is report.json in "
    "the run's output directory: `ragleaklab report OUT --format html -o report.html` renders "
    "all of it, `ragleaklab report OUT --format markdown --markdown-max-chars 0` this summary "
    "uncut."
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


def render(
    report: RunOutcome | RunReport | Mapping[str, Any], *, max_chars: int = MAX_CHARS
) -> str:
    """The Markdown summary of *report* (the outcome, or a parsed ``report.json``), at most
    *max_chars* characters (0: no cap).

    A summary that would be longer loses, in this order, until it fits: the rows of the
    collapsed list of failing cases, then the rows of the top failing cases, then every pack's
    list of errored cases, then every pack's table of values, then whole packs from the last
    (each counted in a closing line); the run's verdict, totals and warnings are never cut, and
    a note under them says what was cut and where the full report is. Tables lose whole rows
    (a table left without any is dropped), so what remains reads as Markdown, and the same
    report and cap always give the same text.

    Raises:
        InputError: *report* lacks the per-case results or their detail (an older ragleaklab
            wrote it), or does not parse.
    """
    outcome = outcome_of(report, DETAIL_FIELDS)
    head = _head(outcome)
    packs = [_pack(pack) for pack in outcome.packs]
    ordered = w.failing_cases(outcome)
    top, rest = ordered[:TOP_CASES], ordered[TOP_CASES:]
    unlisted = sum(w.unlisted_failing(p) for p in outcome.packs)
    tail = [f"_ragleaklab {text(outcome.tool.version)}_", ""]
    if unlisted:
        more = f"{unlisted} more failing cases are counted but not detailed in report.json."
        tail[:0] = [more, ""]
    whole = _joined(head, [p.lines() for p in packs], _top(top), _details(rest, len(rest)), tail)
    if not max_chars or len(whole) <= max_chars:
        return whole
    return _cut(head, packs, top, rest, tail, max_chars)


@frozen
class _PackLines:
    """A pack's section in parts, each of which the cut may leave out."""

    heading: list[str]  # its verdict, counts and why it was not tested
    table: list[str]  # its gated values, with a blank line after
    notes: list[str]  # its reasons and warnings
    errored: list[str]  # the errored cases it lists
    unscorable: list[str]  # how many cases each metric could not score

    def lines(self, *, table: bool = True, errored: bool = True) -> list[str]:
        items = [*self.notes, *(self.errored if errored else []), *self.unscorable]
        return [*self.heading, *(self.table if table else []), *items, *([""] if items else [])]


def _joined(
    head: list[str], packs: list[list[str]], top: list[str], details: list[str], tail: list[str]
) -> str:
    return "\n".join([*head, *[line for pack in packs for line in pack], *top, *details, *tail])


def _top(cases: list[PackCase]) -> list[str]:
    return ["### Top failing cases", "", *_case_table(cases), ""] if cases else []


def _cut(
    head: list[str],
    packs: list[_PackLines],
    top: list[PackCase],
    rest: list[PackCase],
    tail: list[str],
    limit: int,
) -> str:
    """The summary cut to *limit* characters, as :func:`render` describes."""

    def within(
        cuts: list[str], body: list[list[str]], top: Sequence[str] = (), details: Sequence[str] = ()
    ) -> str | None:
        note = [_CUT_NOTE.format(limit=limit, cuts="; ".join(cuts)), ""]
        out = _joined([*head, *note], body, list(top), list(details), tail)
        return out if len(out) <= limit else None

    full = [p.lines() for p in packs]
    cuts: list[str] = []
    # 1. The collapsed list of failing cases keeps the rows that fit.
    if rest:

        def collapsed(kept: int) -> str | None:
            said = (
                f"the collapsed list shows the first {kept} of the {len(rest)} other failing cases"
            )
            return within([said], full, _top(top), _details(rest[:kept], len(rest)))

        found = _longest(len(rest), collapsed)
        if found is not None:
            return found
        cuts.append(f"the collapsed list of the {len(rest)} other failing cases")
    # 2. The top failing cases keep the rows that fit.
    if top:

        def first(kept: int) -> str | None:
            said = f"the table of top failing cases shows the first {kept} of {len(top)}"
            return within([*cuts, said], full, _top(top[:kept]), [])

        found = _longest(len(top), first)
        if found is not None:
            return found
        cuts.append(f"the table of the top {len(top)} failing cases")
    # 3. No case lists at all: the packs' errored cases go too.
    if any(p.errored for p in packs):
        cuts.append("each pack's list of errored cases (runs.jsonl has every error)")
    found = within(cuts, [p.lines(errored=False) for p in packs])
    if found is not None:
        return found
    # 4. The packs' tables of values, from the last.
    compact = [p.lines(table=False, errored=False) for p in packs]

    def tables_kept(kept: int) -> str | None:
        said = f"the tables of values of {_last(len(packs) - kept)}"
        body = [p.lines(errored=False) for p in packs[:kept]] + compact[kept:]
        return within([*cuts, said], body)

    found = _longest(len(packs) - 1, tables_kept)
    if found is not None:
        return found
    cuts.append("each pack's table of values (its rates and intervals)")
    found = within(cuts, compact)
    if found is not None:
        return found

    # 5. Whole packs, from the last, counted in a closing line.
    def packs_kept(kept: int) -> str | None:
        left = len(compact) - kept
        verb = "is" if left == 1 else "are"
        closing = [f"{_last(left).capitalize()} {verb} only in report.json.", ""]
        return within([*cuts, _last(left)], compact[:kept], closing, [])

    found = _longest(len(compact) - 1, packs_kept)
    if found is not None:
        return found
    # 6. The verdict and the totals alone (the run's warnings as fit): a cap is never below
    # MARKDOWN_MIN_CHARS, which leaves room for them and the note.
    note = [_CUT_NOTE.format(limit=limit, cuts="; ".join([*cuts, "every pack"])), ""]
    for keep in range(len(head), 4, -1):
        out = "\n".join([*head[:keep], *([""] if head[keep - 1] else []), *note, *tail])
        if len(out) <= limit:
            return out
    return "\n".join([*head[:4], *note, *tail])


def _last(count: int) -> str:
    """``the last pack``, ``the last 3 packs``."""
    return "the last pack" if count == 1 else f"the last {count} packs"


def _longest(most: int, attempt: Callable[[int], str | None]) -> str | None:
    """``attempt(k)`` for the largest *k* from 1 to *most* it is not None for (the text is
    longer as *k* grows), or None."""
    low, high, best = 1, most, None
    while low <= high:
        middle = (low + high) // 2
        found = attempt(middle)
        if found is None:
            high = middle - 1
        else:
            best, low = found, middle + 1
    return best


def _head(report: RunOutcome) -> list[str]:
    """The verdict, the totals, what a baseline changed and the run's warnings: never cut."""
    said = [f"- {text(line, 400)}" for line in w.gate_lines(report)]
    said += [f"- warning: {text(warning, 600)}" for warning in report.warnings]
    return [
        f"## {_ICON[report.verdict]} ragleaklab: {report.verdict.word}",
        "",
        *_system(report),
        f"**{text(w.run_line(report), 400)}**",
        "",
        *said,
        *([""] if said else []),
    ]


def _system(report: RunOutcome) -> list[str]:
    system = w.system_line(report.system)
    return [] if system is None else [text(system, 400), ""]


def _pack(pack: PackOutcome) -> _PackLines:
    title = f"{text(pack.name, 80)} {text(pack.version, 40)}"
    heading = [f"### {_ICON[pack.verdict]} {title}: {pack.verdict.word}", ""]
    heading += [text(w.pack_line(pack), 300), ""]
    if not pack.tested:
        heading += [f"**Not tested:** {text(pack.not_tested_reason, 300)}", ""]
    table = [
        "| value | mean | threshold | threshold source | cases | failing | 95% interval |",
        "|---|---:|---|---|---|---:|---|",
    ]
    for name, value in w.gated(pack):
        threshold = value.threshold
        first = (
            f"| {text(name, 60)} | {w.number(value.summary.mean)} "
            f"| {text(w.rule_text(threshold), 80)} "
        )
        source = threshold.source if threshold is not None else ""
        if threshold is not None and threshold.forced:  # said first: a long source is cut at 80
            source = f"FORCED over a refusal (calibrate --force): {source}"
        first += f"| {text(source, 80)} "
        if threshold is None:
            table.append(first + "| all | n/a | n/a |")
            continue
        rate = value.fail_rate
        first += f"| all | {text(w.count_text(rate))} | {text(w.interval_text(rate))} |"
        table.append(first)
        for kind, kind_rate in (value.by_kind or {}).items():
            if kind_rate.trials:
                table.append(
                    f"| | | | | {text(kind)} | {text(w.count_text(kind_rate))} "
                    f"| {text(w.interval_text(kind_rate))} |"
                )
        if value.corrected_rate is not None:  # the true rate, the metric's measured error out
            label, estimate, interval = w.corrected_cells(value.corrected_rate)
            table.append(f"| | | | | {text(label)} | {estimate} | {text(interval)} |")
    table.append("")
    notes = [f"- {text(reason, 300)}" for reason in pack.reasons]
    notes += [f"- warning: {text(warning, 300)}" for warning in pack.warnings]
    listed = w.errored_cases(pack)
    errored = [
        f"- errored {text(test_id, 60)}: {text(reason, 200)}"
        for test_id, reason in listed[:ERRORED_SHOWN]
    ]
    if len(listed) > ERRORED_SHOWN:
        errored.append(f"- ... {pack.cases.errored} errored in all")
    unscorable = [
        f"- {cases.count} cases could not be scored by {text(metric, 60)}"
        for metric, cases in pack.unscorable.items()
    ]
    return _PackLines(heading, table, notes, errored, unscorable)


def _case_table(cases: list[PackCase]) -> list[str]:
    lines = [
        "| pack | case | kind | fails | query | answer | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for pack, case in cases:
        fails = ", ".join(f"{n} {w.number(v)}" for n, v in w.failed_values(case).items())
        detail = case.detail
        query, answer = (None, None) if detail is None else (detail.query, detail.answer)
        masked = "" if detail is None else w.masked_note(detail)
        lines.append(
            f"| {text(pack.name, 60)} | {text(case.test_id, 60)} "
            f"| {text(case.kind or '')} | {text(fails)} | {text(query)} "
            f"| {text(answer)}{text(masked)} "
            f"| {text(w.evidence_text(case.evidence))} |"
        )
    return lines


def _details(cases: list[PackCase], total: int) -> list[str]:
    """The collapsed section listing *cases*, the first of *total* failing cases not shown
    (nothing when there are none)."""
    if not cases:
        return []
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


__all__ = ["MAX_CHARS", "STEP_SUMMARY_BYTES", "render", "text"]
