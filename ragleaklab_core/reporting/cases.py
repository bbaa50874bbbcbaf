"""The per-case list every rendering reads (``packs[].case_results`` of ``report.json``), and
the check that a report holds what a rendering needs of it.

A report written by an older ragleaklab lacks the list, or fields of it; rendering it anyway
would raise a ``KeyError`` half-way or, worse, show a run with no failing case. The check names
the first missing place as a ``$.path`` instead, so ``ragleaklab report`` exits 2 saying which
file and why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragleaklab_core.errors import InputError

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


__all__ = ["DETAIL_FIELDS", "OUTCOME_FIELDS", "require_case_results"]
