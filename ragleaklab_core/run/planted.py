"""What a run planted in a store that outlives it, recorded before it is planted.

A target that plants a pack's documents in a store the process does not own (a Chroma directory,
a Qdrant collection, a Postgres table, a service behind ``ingest_url``) declares it with
``plants_into`` (the store's identity, never a secret) and ``planted_ids`` (the ids ingest is
about to give the documents). Before each ingest the runner appends those ids to
``<out>/planted.jsonl`` and makes them durable (flush and fsync), so a run killed at any point,
even with SIGKILL, leaves a list of exactly what it may have left behind. When the pack's reset
has removed them, a ``removed`` line follows. What is planted and never marked removed is
*outstanding*: ``ragleaklab cleanup OUT`` removes it (through a target built from the same
configuration, whose ``plants_into`` must name the same store), and so does every later run in
OUT before it plants anything, or it refuses.

The ids are the run's own: :func:`planted_id` derives a UUID from a string unique to the run and
the pack (:func:`run_key`) and the pack's ``doc_id``, so two runs never touch each other's
documents and a team's document that happens to share a pack's ``doc_id`` is never overwritten
or deleted. Planted documents also carry :data:`RUN_TAG` in their metadata: a target that sees a
retrieved document tagged by another run raises :class:`ForeignPlanted` (the case is errored,
never counted as tested).

Two runs on one machine that plant into the same store take turns, a pack at a time
(:class:`StoreLock`, a lock file per store that the operating system releases when a process
dies), so each measures what it would measure alone.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import attrs
import filelock
from attrs import frozen

from ragleaklab_core._log import get_logger
from ragleaklab_core.errors import InputError

log = get_logger(__name__)

#: The ledger's file name in a run's output directory.
LEDGER = "planted.jsonl"
#: The metadata key naming the run (and pack) that planted a document.
RUN_TAG = "ragleaklab_run"

# Fixed forever: the same run key and doc_id give the same id in every version.
_NAMESPACE = uuid.UUID("6f1c2d4e-9a3b-5c7d-8e1f-2a4b6c8d0e1f")


def new_run_id() -> str:
    """A fresh id for one invocation of ``ragleaklab run`` (never reused, never in a report)."""
    return uuid.uuid4().hex[:16]


def cleanup_command(directory: Path) -> str:
    """The command that removes what runs in *directory* left planted."""
    return f"ragleaklab cleanup {shlex.quote(directory.as_posix())}"


def run_key(run_id: str, pack: str) -> str:
    """The string a target receives in ``planted_ids``: unique to the run and the pack."""
    return f"{run_id}:{pack}"


def planted_id(run: str, doc_id: str) -> str:
    """The id a document of *run* (a :func:`run_key`) is planted under: a UUID string, which
    every store takes (Qdrant takes nothing else but integers)."""
    return str(uuid.uuid5(_NAMESPACE, f"{run}\x1f{doc_id}"))


class ForeignPlanted(RuntimeError):
    """A retrieved document was planted by another run in the same store at the same time."""

    transport_failure = False


@frozen
class Planting:
    """What one pack planted (or is about to plant) in one store.

    Attributes:
        run: The run's id (:func:`new_run_id`).
        pack: The pack's name.
        target: The target plugin's name.
        store: The store's identity (the target's ``plants_into``).
        ids: The ids as the store knows them.
    """

    run: str
    pack: str
    target: str
    store: str
    ids: tuple[str, ...]


@frozen
class Outstanding:
    """Planted ids never marked removed: one :class:`Planting` per store, run and pack, in the
    order they were planted (a line that names no run or pack has ``run``/``pack`` empty: its
    ids cannot be derived again, so nothing proves they are ragleaklab's)."""

    plantings: tuple[Planting, ...]
    #: The config file each store's planting run was given, when it was given one.
    configs: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def by_store(self) -> Mapping[str, tuple[str, ...]]:
        """Every outstanding id per store, once each, in the order planted."""
        stores: dict[str, dict[str, None]] = {}
        for planting in self.plantings:
            stores.setdefault(planting.store, {}).update(dict.fromkeys(planting.ids))
        return {store: tuple(ids) for store, ids in stores.items()}

    @property
    def targets(self) -> Mapping[str, str]:
        """The target each store was planted through (the last one the ledger names)."""
        return {p.store: p.target for p in self.plantings if p.target}

    @property
    def count(self) -> int:
        return sum(len(ids) for ids in self.by_store.values())

    def __bool__(self) -> bool:
        return self.count > 0


class PlantLedger:
    """``<out>/planted.jsonl``: appended and made durable before each planting.

    Args:
        directory: The run's output directory.
        run_id: This invocation's id.
        config: How the run was configured (the config file's path and the target's name, never
            option values), shown by ``cleanup`` when the target it builds is not the same.
    """

    def __init__(self, directory: Path, run_id: str, config: Mapping[str, Any] | None = None):
        self.directory = directory
        self.run_id = run_id
        self.config = dict(config or {})
        self._file: IO[str] | None = None
        self._made_directory = False

    @property
    def path(self) -> Path:
        return self.directory / LEDGER

    # ---- writing -------------------------------------------------------------------------------

    def planted(self, planting: Planting) -> None:
        """Record *planting* before any of it is planted: durable when this returns."""
        entry = {
            "planted": {
                "run": planting.run,
                "pack": planting.pack,
                "target": planting.target,
                "store": planting.store,
                "config": self.config,
                "ids": list(planting.ids),
            }
        }
        self._append(entry)

    def removed(self, store: str, ids: Sequence[str]) -> None:
        """Record that *ids* are no longer in *store*."""
        if ids:
            self._append({"removed": {"store": store, "ids": list(ids)}})

    def _append(self, entry: Mapping[str, Any]) -> None:
        if self._file is None:
            if not self.directory.exists():
                self.directory.mkdir(parents=True)
                self._made_directory = True
            _mend(self.path)
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())  # durable before the store is touched: SIGKILL keeps it

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def finish(self) -> None:
        """Remove the ledger when nothing it lists is outstanding (a finished run leaves none)."""
        self.close()
        compact(self.directory, read_outstanding(self.directory))
        if self._made_directory and not any(self.directory.iterdir()):
            self.directory.rmdir()  # made for the ledger alone: no empty output is left


def compact(directory: Path, outstanding: Outstanding) -> None:
    """Rewrite the ledger as what is *outstanding* (a ``planted`` line per store, run and pack,
    so that each id can still be derived again from its run and pack), atomically; remove it
    when nothing is. A line torn by a kill is then never followed by another."""
    path = directory / LEDGER
    if not outstanding:
        path.unlink(missing_ok=True)
        return
    lines = []
    for planting in outstanding.plantings:
        config = outstanding.configs.get(planting.store)
        body: dict[str, Any] = {
            "store": planting.store,
            "target": planting.target or None,
            "config": {"config": config} if config else {},
            "ids": list(planting.ids),
        }
        body.update({k: v for k, v in (("run", planting.run), ("pack", planting.pack)) if v})
        lines.append(json.dumps({"planted": body}, ensure_ascii=False, sort_keys=True) + "\n")
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as file:
        file.writelines(lines)
        file.flush()
        os.fsync(file.fileno())
    temporary.replace(path)


def read_outstanding(directory: Path) -> Outstanding:
    """What runs in *directory* planted and never removed.

    Raises:
        InputError: The ledger is malformed (it names the line). Only a last line without its
            line break (a run killed while writing it) is read as far as it goes: it lists ids
            that were never planted, since nothing is ingested before its line is whole. A
            whole line that is malformed is refused, never skipped.
    """
    path = directory / LEDGER
    planted: dict[tuple[str, str, str], dict[str, None]] = {}
    targets: dict[tuple[str, str, str], str] = {}
    configs: dict[str, str] = {}
    if not path.is_file():
        return Outstanding(())
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", source=path.as_posix()) from None
    lines = text.split("\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            kind, body = _line(raw)
        except (ValueError, KeyError, TypeError):
            if number == len(lines):
                break  # the line being written when the run was killed: nothing was planted
            raise InputError(
                "malformed line: expected {'planted': {...}} or {'removed': {...}} with a "
                "'store', a list of string 'ids' and, on a planted line, the 'run' and 'pack' "
                "as strings",
                source=path.as_posix(),
                line=number,
            ) from None
        store, ids = body["store"], body["ids"]
        if kind == "planted":
            key = (store, body.get("run", ""), body.get("pack", ""))
            planted.setdefault(key, {}).update(dict.fromkeys(ids))
            target, config = body.get("target"), body.get("config")
            if isinstance(target, str):
                targets[key] = target
            if isinstance(config, dict) and isinstance(config.get("config"), str):
                configs[store] = config["config"]
        else:
            for key, held in planted.items():
                if key[0] == store:
                    for i in ids:
                        held.pop(i, None)
    plantings = tuple(
        Planting(key[1], key[2], targets.get(key, ""), key[0], tuple(ids))
        for key, ids in planted.items()
        if ids
    )
    stores = {p.store for p in plantings}
    return Outstanding(plantings, {s: c for s, c in configs.items() if s in stores})


def _line(raw: str) -> tuple[str, Mapping[str, Any]]:
    """A ledger line's kind and body.

    Raises:
        ValueError, KeyError, TypeError: It is not a whole, well-formed line.
    """
    kind, body = _entry(json.loads(raw))
    store, ids = body["store"], body["ids"]
    run, pack = body.get("run", ""), body.get("pack", "")
    if not isinstance(store, str) or not _strings(ids):
        raise ValueError
    if not isinstance(run, str) or not isinstance(pack, str):
        raise ValueError
    return kind, body


def _mend(path: Path) -> None:
    """Before appending to the ledger: a last line without its line break is ended when it is
    whole, and cut when a kill tore it (it lists nothing that was planted: nothing is ingested
    before its line is whole), so that what is appended starts a line of its own instead of
    turning the last one into a malformed line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    if not data or data.endswith(b"\n"):
        return
    start = data.rfind(b"\n") + 1
    try:
        _line(data[start:].decode("utf-8"))
        whole = True
    except (ValueError, KeyError, TypeError):
        whole = False
    with path.open("r+b") as file:
        if whole:
            file.seek(0, os.SEEK_END)
            file.write(b"\n")
        else:
            file.truncate(start)
        file.flush()
        os.fsync(file.fileno())


def _entry(entry: Any) -> tuple[str, Mapping[str, Any]]:
    if not isinstance(entry, dict) or len(entry) != 1:
        raise ValueError
    ((kind, body),) = entry.items()
    if kind not in ("planted", "removed") or not isinstance(body, dict):
        raise ValueError
    return kind, body


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(i, str) for i in value)


# ---- one run per store at a time ---------------------------------------------------------------

#: Where the per-store lock files live (one directory for every user of this machine's temp dir).
LOCK_DIR = "ragleaklab-stores"


class StoreLock:
    """Held from a pack's planting to its removal, so two runs on one machine that plant into
    the same store take turns; the operating system releases it when the process dies."""

    def __init__(self, store: str, *, directory: Path | None = None) -> None:
        where = directory or Path(tempfile.gettempdir()) / LOCK_DIR
        digest = hashlib.sha256(store.encode("utf-8")).hexdigest()[:32]
        self.store = store
        self.path = where / f"{digest}.lock"
        self._lock: filelock.BaseFileLock | None = None

    async def aacquire(self) -> None:
        """Wait (without blocking the event loop, so an interrupt still ends the wait) until no
        other process holds the store."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(self.path)
        waited = False
        while True:
            try:
                lock.acquire(timeout=0)
                break
            except filelock.Timeout:
                if not waited:
                    waited = True
                    log.warning(
                        "store.waiting",
                        store=self.store,
                        reason="another ragleaklab run is planting in this store; waiting for "
                        "its pack to finish, so neither measures the other's documents",
                        lock=self.path.as_posix(),
                    )
                await asyncio.sleep(0.2)
        self._lock = lock

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


__all__ = [
    "LEDGER",
    "RUN_TAG",
    "ForeignPlanted",
    "Outstanding",
    "PlantLedger",
    "Planting",
    "StoreLock",
    "cleanup_command",
    "compact",
    "new_run_id",
    "planted_id",
    "read_outstanding",
    "run_key",
]
