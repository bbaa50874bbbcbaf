"""What every rendering reads: the finished run as its outcome (:func:`outcome_of`), decoded
once from ``report.json`` by the outcome's codec, after the check that the report holds the
per-case list (``packs[].case_results``) the renderings show.

A report written by an older ragleaklab lacks the list, or fields of it; the check names the
first missing place as a ``$.path`` and says so, and the codec refuses anything else that does
not parse, so ``ragleaklab report`` exits 2 saying which file and why, never renders a run with
no failing case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragleaklab_core.errors import InputError
from ragleaklab_core.outcome import RunOutcome
from ragleaklab_core.outcome.codec import decode
from ragleaklab_core.reporting.model import RunReport

#: What the JUnit and SARIF renderings read of each case.
OUTCOME_FIELDS = ("test_id", "outcome", "values", "failing", "error", "unscorable", "evidence")
#: What the Markdown and HTML renderings read of each case: the outcome, plus the kind and the
#: detail (query, answer excerpt, retrieved ids) of the failing cases they list.
DETAIL_FIELDS = ("test_id", "kind", "outcome", "values", "failing", "detail", "evidence")

_OLDER = "an older ragleaklab wrote this report.json; run again to render it"


def require_case_results(report: Mapping[str, Any], fields: Iterable[str]) -> None:
    """Check that every pack of *report* has ``case_results`` whose cases all hold *fields*.

    Raises:
        InputError: the first pack or case that does not, by its ``$.path``.
    """
    packs = report.get("packs")
    if not isinstance(packs, list):
        raise InputError("$.packs: missing or not a list; is this a report.json of ragleaklab run?")
    wanted = tuple(fields)
    for i, pack in enumerate(packs):
        results = pack.get("case_results") if isinstance(pack, Mapping) else None
        if isinstance(results, Sequence) and not isinstance(results, list | str):
            continue  # streamed by this process's own run: built with every field
        if not isinstance(results, list):
            raise InputError(f"$.packs[{i}]: report.json has no case_results ({_OLDER})")
        for j, case in enumerate(results):
            missing = [f for f in wanted if not isinstance(case, Mapping) or f not in case]
            if missing:
                raise InputError(
                    f"$.packs[{i}].case_results[{j}]: no {', '.join(missing)} ({_OLDER})"
                )


def outcome_of(
    report: RunOutcome | RunReport | Mapping[str, Any], fields: Iterable[str] = OUTCOME_FIELDS
) -> RunOutcome:
    """*report* as the outcome the renderings read: a :class:`RunOutcome` is kept; a parsed
    ``report.json`` (or a :class:`RunReport`'s ``document``) is checked for its per-case list
    and the *fields* of its cases the rendering shows (so a report an older ragleaklab wrote is
    named as such), then decoded by the outcome's codec.

    Raises:
        InputError: the report lacks its per-case list or a field of it (an older ragleaklab
            wrote it), or does not parse; by its ``$.path``.
    """
    if isinstance(report, RunOutcome):
        return report
    document = report.document if isinstance(report, RunReport) else report
    require_case_results(document, fields)
    # No file named here: the command that read the report names it.
    return decode(document, source="")


__all__ = [
    "DETAIL_FIELDS",
    "OUTCOME_FIELDS",
    "outcome_of",
    "require_case_results",
]
