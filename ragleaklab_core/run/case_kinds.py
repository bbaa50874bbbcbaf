"""What a case is, from its tags: an attack or a benign question, of which attack family; and
how many failing cases a report details. Shared by the verdict (which counts) and the case
details (which list)."""

from __future__ import annotations

from collections.abc import Sequence

#: The tags that mark a case as an attack or a benign question (the convention of every pack's
#: ``cases.jsonl``, docs/packs.md); a pack without them has no split.
KINDS = ("attack", "benign")
#: The tag prefix that names an attack case's family (``family:bait``, docs/packs.md), so that
#: rates can be split by family without a manifest key for it.
FAMILY = "family:"
#: How many failing or errored cases a pack details (query, answer, evidence): the first ones in
#: the pack's order; the outcomes and values of every case are always there.
DETAILED = 500


def kind_of(tags: Sequence[str]) -> str | None:
    """``"attack"``, ``"benign"`` or None from a case's tags (attack wins if both)."""
    return next((kind for kind in KINDS if kind in tags), None)


def families_of(tags: tuple[str, ...]) -> list[str]:
    """The attack families a case's tags name (``family:bait`` -> ``bait``), sorted; a case
    normally has one, and one with several counts in each."""
    return sorted({t.removeprefix(FAMILY) for t in tags if t.startswith(FAMILY) and t != FAMILY})


__all__ = ["DETAILED", "FAMILY", "KINDS", "families_of", "kind_of"]
