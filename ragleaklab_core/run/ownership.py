"""Which ids a ledger lists are provably ragleaklab's, before anything is removed.

``<out>/planted.jsonl`` is a file in a directory anyone may write to: a ledger naming a team's own
document ids must never make ``cleanup`` (or a later run in OUT) delete them. An id is removed
only when

a. **it derives from the ledger's run and pack**: the target's ``planted_ids`` (the function
   that planted it) gives it again for the pack's documents and the run's :func:`run_key`. The
   built-in python target derives a UUID5 in ragleaklab's own namespace from the run key and a
   ``doc_id``, so no run id, however chosen, derives an id a team picked, unless the team's ids
   are themselves such UUIDs; the http target's ids are the pack's own ``doc_id``s;
b. **the store holds it tagged with that run**, when the target can read the tag back
   (``planted_runs``): an id held untagged or tagged by another run is left alone, whatever (a)
   says. An id the store no longer holds is gone already.

Anything else is :class:`Refused`, with the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from ragleaklab_core._discovery import LoadedPlugin
from ragleaklab_core.errors import RagleaklabError
from ragleaklab_core.run.executor import describe
from ragleaklab_core.run.planted import RUN_TAG, Planting, run_key


@frozen
class Refused:
    """An id a ledger lists that nothing proves ragleaklab planted: it is left alone.

    Attributes:
        store: The store the ledger says it was planted in.
        id: The id, as the ledger spells it.
        reason: Why it is not provably ragleaklab's.
    """

    store: str
    id: str
    reason: str


@frozen
class Claims:
    """The ids of one store a ledger lists, split by what can be proved.

    Attributes:
        ours: Id -> the run key (:func:`run_key`) it derives from.
        refused: The ids that derive from no run and pack the ledger names.
    """

    ours: Mapping[str, str]
    refused: tuple[Refused, ...]


def derived(target: LoadedPlugin, store: str, plantings: Sequence[Planting]) -> Claims:
    """Split the ids *plantings* (all in *store*) list into those *target* derives again from
    their line's run and pack, and the rest (check (a) of the module docstring)."""
    ours: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for planting in plantings:
        ids, why = _derive(target, planting)
        for i in planting.ids:
            if i in ids:
                ours.setdefault(i, run_key(planting.run, planting.pack))
            else:
                reasons.setdefault(i, why)
    refused = tuple(Refused(store, i, why) for i, why in reasons.items() if i not in ours)
    return Claims(ours, refused)


def _derive(target: LoadedPlugin, planting: Planting) -> tuple[frozenset[str], str]:
    """The ids *target* derives for *planting*'s run and pack now, and what to say of an id
    that is not among them."""
    from ragleaklab_core.run.runner import load_pack  # the runner imports this module's users

    run, pack = planting.run, planting.pack
    if not run or not pack:
        return frozenset(), "its ledger line names no run and pack it could be derived from"
    named = f"run {run!a} and pack {pack!a}"
    if not target.target_traits.planted_ids:
        return frozenset(), f"target {target.name!r} has no planted_ids to derive it with"
    try:
        documents = list(load_pack(pack).obj.documents())
    except RagleaklabError:
        return frozenset(), f"pack {pack!a} is not installed, so nothing derives it"
    except Exception as exc:
        return frozenset(), f"pack {pack!a}'s documents could not be read: {describe(exc)}"
    try:
        ids = target.obj.planted_ids(documents, run=run_key(run, pack))
    except Exception as exc:
        return frozenset(), f"deriving the ids of {named} failed: {describe(exc)}"
    if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
        return frozenset(), f"target {target.name!r}'s planted_ids returned no list of ids"
    return (
        frozenset(i for i in ids if isinstance(i, str)),
        f"target {target.name!r} does not derive it from {named}",
    )


def checks_tags(target: LoadedPlugin) -> bool:
    """Whether *target* can read back the run a planted document is tagged with."""
    traits = target.target_traits
    return traits.planted_runs or traits.aplanted_runs


def tagged(
    target: LoadedPlugin, store: str, ours: Mapping[str, str]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[Refused, ...]]:
    """Check (b) of the module docstring on the ids *ours* maps to their run key: the ids to
    remove, the ids the store no longer holds, and the ids held untagged or tagged by another
    run (refused). A target that cannot read tags (or says it cannot, with None) leaves every
    id to remove, on (a) alone.

    Raises:
        RuntimeError: The target failed to say, or said it in a shape that is not a mapping.
    """
    ids = list(ours)
    if not ids or not checks_tags(target):
        return tuple(ids), (), ()
    traits, obj = target.target_traits, target.obj
    found: Any = (
        asyncio.run(obj.aplanted_runs(ids)) if traits.aplanted_runs else obj.planted_runs(ids)
    )
    if found is None:
        return tuple(ids), (), ()
    if not isinstance(found, Mapping):
        raise RuntimeError(
            f"target {target.name!r}'s planted_runs returned {type(found).__name__}, not a "
            "mapping of id to run"
        )
    remove, gone, refused = [], [], []
    for i in ids:
        if i not in found:
            gone.append(i)
            continue
        tag = found[i]
        if tag == ours[i]:
            remove.append(i)
        elif tag is None:
            refused.append(Refused(store, i, f"the store holds it without a {RUN_TAG} tag"))
        else:
            why = f"the store holds it tagged {RUN_TAG}={tag!a}, not {ours[i]!a}"
            refused.append(Refused(store, i, why))
    return tuple(remove), tuple(gone), tuple(refused)


def refusal_message(ledger: str, refused: Sequence[Refused], *, shown: int = 10) -> str:
    """What a refusal says: how many ids were left alone, each reason with (up to *shown* of)
    its ids, and what to do."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in refused:
        groups.setdefault((r.store, r.reason), []).append(r.id)
    lines = [
        f"{ledger} lists {len(refused)} ids that nothing proves ragleaklab planted; they were "
        "not removed, and nothing else in the store was touched (the team's documents were not "
        "touched):"
    ]
    for (store, reason), ids in groups.items():
        listed = ", ".join(ascii(i) for i in ids[:shown])
        more = f", ... ({len(ids) - shown} more)" if len(ids) > shown else ""
        lines.append(f"  {len(ids)} in {store}: {reason}: {listed}{more}")
    lines.append(
        f"they stay listed in {ledger}: if ragleaklab did not write those lines (a file copied "
        "or edited by hand), check what they name and delete the file"
    )
    return "\n".join(lines)


__all__ = ["Claims", "Refused", "checks_tags", "derived", "refusal_message", "tagged"]
