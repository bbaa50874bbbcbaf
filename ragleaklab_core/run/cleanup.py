"""Remove what earlier runs in an output directory planted and never removed.

Used by ``ragleaklab cleanup OUT`` and, before anything else is planted, by every later run in
OUT (``--resume``, ``--restart`` or a plain run, and ``calibrate -o OUT``). The target that
removes them is built from the configuration given now; it must plant into the same store the
ledger names (its ``plants_into``), or nothing is touched and the command says which store and
how to reach it. Only ids provably ragleaklab's are removed (:mod:`.ownership`): the rest are
named and left alone, so a ledger naming a team's own documents deletes none of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from ragleaklab_core._discovery import LoadedPlugin
from ragleaklab_core._signals import notice, shielded
from ragleaklab_core.errors import RagleaklabError
from ragleaklab_core.run.executor import describe, plants_into
from ragleaklab_core.run.ownership import Refused, derived, refusal_message, tagged
from ragleaklab_core.run.planted import (
    LEDGER,
    PlantLedger,
    StoreLock,
    cleanup_command,
    compact,
    read_outstanding,
)


class PlantedLeft(RagleaklabError):
    """Documents an earlier run planted are still in a store and could not be removed with the
    target given (another store, no way to remove, the store failed): exit 3, as for a target
    that cannot be used."""

    exit_code = 3
    about_plugins = False  # no "`ragleaklab plugins` lists what is installed" hint


class NotProvablyPlanted(PlantedLeft):
    """The ledger lists ids nothing proves ragleaklab planted: they were left alone (exit 3)."""

    def __init__(self, message: str, refused: Sequence[Refused]) -> None:
        super().__init__(message)
        self.refused = tuple(refused)


@frozen
class Cleanup:
    """What a cleanup did.

    Attributes:
        removed: How many planted documents were removed (or found gone already), per store.
        left: The ids still planted, per store (empty when nothing is left).
        refused: The ids nothing proves ragleaklab planted: not removed, still listed.
    """

    removed: dict[str, int]
    left: dict[str, tuple[str, ...]]
    refused: tuple[Refused, ...] = ()

    @property
    def total_removed(self) -> int:
        return sum(self.removed.values())

    @property
    def total_left(self) -> int:
        return sum(len(ids) for ids in self.left.values())


def remove_outstanding(directory: Path, target: LoadedPlugin) -> Cleanup:
    """Remove, with *target*, what runs in *directory* planted and did not remove, when it is
    provably ragleaklab's (:mod:`.ownership`); what is not is in the result's ``refused``.

    Raises:
        InputError: The ledger is malformed.
        PlantedLeft: Its store is not the one *target* plants into, or *target* cannot
            remove documents; nothing was touched.
    """
    outstanding = read_outstanding(directory)
    if not outstanding:
        compact(directory, outstanding)
        return Cleanup({}, {})
    ledger = (directory / LEDGER).as_posix()
    store = plants_into(target.obj, target.target_traits)
    traits = target.target_traits
    for planted_in, ids in outstanding.by_store.items():
        if planted_in != store:
            used = outstanding.targets.get(planted_in, "?")
            now = f"plants into {store}" if store else "plants into nothing that outlives a run"
            raise PlantedLeft(
                f"{ledger} lists {len(ids)} documents an earlier run (target {used!r}) planted "
                f"in {planted_in} and did not remove, and target {target.name!r} as configured "
                f"now {now}: give the configuration that run used (-c CONFIG, --target, "
                "--target-option) to remove them"
            )
    if not (traits.remove_planted or traits.aremove_planted):
        raise PlantedLeft(
            f"{ledger} lists {outstanding.count} documents an earlier run planted in {store}, "
            f"and target {target.name!r} has no remove_planted(ids) to remove them"
        )
    record = PlantLedger(directory, run_id="cleanup")
    removed: dict[str, int] = {}
    left: dict[str, tuple[str, ...]] = {}
    refused: list[Refused] = []
    try:
        for planted_in in outstanding.by_store:
            plantings = [p for p in outstanding.plantings if p.store == planted_in]
            claims = derived(target, planted_in, plantings)
            refused.extend(claims.refused)
            if not claims.ours:
                continue
            # Another run on this machine planting in the store holds it until its pack is
            # removed: its documents (even under ids a copied ledger names) are never pulled
            # from under it.
            lock = StoreLock(planted_in)
            asyncio.run(lock.aacquire())
            try:
                gone, still, foreign = _remove_ours(target, planted_in, claims.ours, record)
            finally:
                lock.release()
            refused.extend(foreign)
            if gone:
                removed[planted_in] = len(gone)
            if still:
                left[planted_in] = tuple(still)
    finally:
        record.close()
        compact(directory, read_outstanding(directory))
    return Cleanup(removed, left, tuple(refused))


def _remove_ours(
    target: LoadedPlugin, store: str, ours: Mapping[str, str], record: PlantLedger
) -> tuple[list[str], tuple[str, ...], tuple[Refused, ...]]:
    """Remove the ids of *store* that derive from their run (*ours*), those the store holds
    tagged otherwise excepted: what is gone, what is still there, what was refused."""
    try:
        remove, gone, foreign = tagged(target, store, ours)
    except Exception as exc:
        raise PlantedLeft(
            f"reading which run {len(ours)} planted documents in {store} are tagged with "
            f"failed: {describe(exc)}; nothing was removed and their ids stay listed, so the "
            "same command can be run again"
        ) from None
    record.removed(store, gone)  # the store no longer holds them
    still: tuple[str, ...] = ()
    if remove:
        doing = f"removing {len(remove)} planted documents from {store}"
        notice(f"{doing}...")
        # A signal held here ends the command (or the run about to start) after it.
        with shielded(lambda d=doing: d):  # type: ignore[misc]
            still = _remove(target, remove)
            kept = set(still)
            done = [i for i in remove if i not in kept]
            record.removed(store, done)  # recorded before a held signal is delivered
        gone = (*gone, *done)
    return list(gone), still, foreign


def _remove(target: LoadedPlugin, ids: Sequence[str]) -> tuple[str, ...]:
    traits, obj = target.target_traits, target.obj
    try:
        if traits.aremove_planted:
            still: Any = asyncio.run(obj.aremove_planted(list(ids)))
        else:
            still = obj.remove_planted(list(ids))
    except Exception as exc:
        raise PlantedLeft(
            f"removing {len(ids)} planted documents failed: {describe(exc)}; their ids stay "
            "listed, so the same command can be run again"
        ) from None
    asked = set(ids)
    return tuple(str(i) for i in still or () if str(i) in asked)


def before_planting(directory: Path, target: LoadedPlugin) -> None:
    """What a run does first in *directory*: remove what earlier runs there left planted, or
    refuse (naming the count, the ledger and the command) without planting anything. Ids that
    are not provably ragleaklab's are left alone and refuse the run (exit 3), once the ones that
    are were removed."""
    if not (directory / LEDGER).is_file():
        return
    result = remove_outstanding(directory, target)
    for store, count in result.removed.items():
        where = directory.as_posix()
        notice(f"removed {count} documents an earlier run in {where} planted in {store}")
    ledger = (directory / LEDGER).as_posix()
    if result.refused:
        raise NotProvablyPlanted(
            f"{refusal_message(ledger, result.refused)}; nothing was planted or asked",
            result.refused,
        )
    if result.left:
        raise PlantedLeft(
            f"{result.total_left} documents an earlier run planted are still in "
            f"{', '.join(result.left)} (ids in {ledger}); nothing was "
            f"planted or asked: remove them with `{cleanup_command(directory)}`"
        )


__all__ = [
    "Cleanup",
    "NotProvablyPlanted",
    "PlantedLeft",
    "before_planting",
    "remove_outstanding",
]
