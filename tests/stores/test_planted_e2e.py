"""What a run plants in a real store never outlives it, and never touches the team's documents.

Each store (Chroma on disk, Qdrant in local mode, Postgres with pgvector) is wired as
docs/targets.md wires a LangChain vector store and already holds the team's documents, one of
them under the id of a pack document. ``ragleaklab run`` runs in a subprocess, as in CI; what
the store holds is read with the database's own client. The store must end every scenario
holding exactly the team's documents, unchanged: after a run, after SIGTERM mid-pack, after
SIGKILL and ``ragleaklab cleanup`` (or a later run in the same directory), and after two runs at
once, which also measure exactly what each measures alone.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.stores.support import (
    Doc,
    Store,
    comparable,
    no_traceback,
    pack_documents,
    rlk,
    runs,
    start,
    wait_for,
    write_config,
)

PACK = "relevance-hijack"
DOCUMENTS = pack_documents(PACK)
PACK_IDS = {d["doc_id"] for d in DOCUMENTS}
N = len(DOCUMENTS)  # 533
# The team uses a pack document's id for a page of its own (as id and in its metadata).
SHARED_ID = DOCUMENTS[0]["doc_id"]
SELECTION = ("-p", PACK, "--smoke")  # 30 cases, all 533 documents planted
# Paced, so a run is still mid-pack when the test signals it, or when another run comes (about
# 8 s for the 30 cases).
PACED = ("--rate-limit", "4")


@pytest.fixture
def team(store: Store) -> dict[str, Doc]:
    """The team's documents, in the store before ragleaklab runs: what it must hold after."""
    store.add_team(
        SHARED_ID,
        "Our own page: access requests go through the service desk.",
        {"owner": "team", "doc_id": SHARED_ID},
    )
    store.add_team("handbook-1", "Expenses are filed by the fifth of the month.")
    held = store.documents()
    assert len(held) == 2
    return held


def config(tmp_path: Path, store: Store) -> str:
    return str(write_config(tmp_path / "ragleaklab.toml", store))


def ledger(out: Path) -> list[tuple[str, dict[str, Any]]]:
    """OUT/planted.jsonl's entries: ``("planted" | "removed", {"store": ..., "ids": [...]})``."""
    path = out / "planted.jsonl"
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        try:
            entries.append(next(iter(json.loads(line).items())))
        except json.JSONDecodeError:
            # The line a running (or killed) run is writing: not recorded yet.
            break
    return entries


def planted(out: Path) -> list[str]:
    """The ids OUT/planted.jsonl says were planted (as the store knows them)."""
    return [i for kind, body in ledger(out) if kind == "planted" for i in body["ids"]]


def outstanding(out: Path) -> set[str]:
    """The ids planted and not marked removed."""
    removed = {i for kind, body in ledger(out) if kind == "removed" for i in body["ids"]}
    return set(planted(out)) - removed


def ingested(out: Path, store: Store) -> bool:
    """The pack's documents are all recorded, and all in the store: the run is mid-pack."""
    ids = planted(out)
    if len(ids) < N:
        return False
    if store.kind == "qdrant":
        # Local mode locks its directory while the run holds it: no other client can look.
        # A first answered case means ingest is over.
        partial = out / "runs.jsonl.partial"
        return partial.is_file() and bool(partial.read_bytes().strip())
    return len(store.holding(ids)) == N


def signalled(
    tmp_path: Path, store: Store, sig: signal.Signals, *, when: str = "ingested"
) -> tuple[subprocess.CompletedProcess[str], Path, list[str]]:
    """A paced run of the pack, sent *sig* once the pack is planted (or, ``when="recorded"``,
    as soon as its ids are recorded, whatever the store holds yet); the ids recorded then."""
    out = tmp_path / "out"
    process = start(
        "run",
        "-c",
        config(tmp_path, store),
        *SELECTION,
        *PACED,
        "-o",
        str(out),
        cwd=tmp_path,
        store=store,
    )
    try:
        if when == "recorded":
            wait_for("the planted ids were recorded", lambda: bool(planted(out)), process)
        else:
            wait_for("the pack was planted", lambda: ingested(out, store), process)
        ids = planted(out)
        process.send_signal(sig)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    return done, out, ids


def assert_tested(records: list[dict[str, Any]]) -> None:
    """Every case answered (none errored) and the pack's own documents retrieved (not only the
    team's page that shares a pack id)."""
    assert len(records) == 30
    errors = [r["error"] for r in records if r["error"]]
    assert not errors, errors[:3]
    retrieved = {d["doc_id"] for r in records for d in r["retrieved"]}
    assert retrieved & (PACK_IDS - {SHARED_ID})


def the_run_s_own(store: Store, ids: list[str], team: dict[str, Doc]) -> None:
    """*ids* are N documents of the pack, in the store under ids of the run's own, tagged."""
    held = store.documents()
    assert len(ids) == len(set(ids)) == N
    assert not set(ids) & (PACK_IDS | set(team))
    assert [i for i in ids if i in held] == ids
    assert sorted(held[i].metadata["doc_id"] for i in ids) == sorted(PACK_IDS)
    assert len({held[i].metadata["ragleaklab_run"] for i in ids}) == 1
    assert {i: held[i] for i in team} == team  # beside the team's documents, unchanged


# -- a run that ends normally ---------------------------------------------------------------------


def test_a_run_tests_the_pack_and_leaves_only_the_team_s_documents(
    store: Store, team: dict[str, Doc], tmp_path: Path
) -> None:
    done = rlk(
        "run", "-c", config(tmp_path, store), *SELECTION, "-o", "out", cwd=tmp_path, store=store
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr  # tested: not 3
    no_traceback(done)
    assert_tested(runs(tmp_path / "out"))  # pgvector's sync-only store included
    assert not (tmp_path / "out" / "planted.jsonl").exists()  # nothing outstanding
    assert store.documents() == team


# -- SIGTERM mid-pack ----------------------------------------------------------------------------


def test_sigterm_mid_pack_removes_what_was_planted(
    store: Store, team: dict[str, Doc], tmp_path: Path
) -> None:
    done, out, ids = signalled(tmp_path, store, signal.SIGTERM)
    assert done.returncode == 128 + signal.SIGTERM, done.stdout + done.stderr
    no_traceback(done)
    assert len(ids) == N
    assert f"removing {N} planted documents" in done.stderr
    assert f"removed {N} planted documents" in done.stderr
    assert not outstanding(out)  # the ledger says so (or is gone: nothing outstanding)
    assert not store.holding(ids)
    assert store.documents() == team


# -- SIGKILL: ragleaklab cleanup, or a later run, removes what was left ---------------------------


def test_after_sigkill_cleanup_removes_what_was_planted(
    store: Store, team: dict[str, Doc], tmp_path: Path
) -> None:
    done, out, ids = signalled(tmp_path, store, signal.SIGKILL)
    assert done.returncode == -signal.SIGKILL
    assert planted(out) == ids
    the_run_s_own(store, ids, team)  # the whole pack left behind
    assert outstanding(out) == set(planted(out))

    first = rlk("cleanup", str(out), cwd=tmp_path, store=store)
    assert first.returncode == 0, first.stdout + first.stderr
    no_traceback(first)
    assert f"removed {N} planted documents from" in first.stdout
    assert f"nothing planted by a run in {out.as_posix()} is left" in first.stdout
    assert store.documents() == team
    assert not outstanding(out)

    again = rlk("cleanup", str(out), cwd=tmp_path, store=store)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"nothing planted by a run in {out.as_posix()} is left" in again.stdout
    assert store.documents() == team


@pytest.mark.parametrize(
    "store, flag",
    [
        ("chroma", "--resume"),
        ("qdrant", "--resume"),
        ("pgvector", "--resume"),
        ("chroma", "--restart"),
    ],
    indirect=["store"],
)
def test_after_sigkill_at_any_point_a_later_run_removes_it_first(
    store: Store, team: dict[str, Doc], tmp_path: Path, flag: str
) -> None:
    # Killed as soon as the ids are recorded: ingest may not have started, or be half done.
    done, out, left = signalled(tmp_path, store, signal.SIGKILL, when="recorded")
    assert done.returncode == -signal.SIGKILL
    assert planted(out) == left
    assert len(left) == N
    before = store.documents()
    assert {i: before[i] for i in team} == team
    assert set(before) - set(team) <= set(left)  # nothing the ledger does not list
    args = ("run", "-c", config(tmp_path, store), *SELECTION, "-o", str(out))

    if flag == "--restart":  # (the same for every store: checked once)
        # A plain run in OUT refuses (it holds an interrupted run) and touches nothing.
        plain = rlk(*args, cwd=tmp_path, store=store)
        assert plain.returncode == 2, plain.stdout + plain.stderr
        assert "--resume" in plain.stderr and "--restart" in plain.stderr
        assert f"left {N} planted documents in" in plain.stderr
        assert f"ragleaklab cleanup {out.as_posix()}" in plain.stderr
        assert store.documents() == before

    # Continued or started again, it first removes what the killed run left.
    later = rlk(*args, flag, cwd=tmp_path, store=store)
    assert later.returncode in (0, 1), later.stdout + later.stderr
    no_traceback(later)
    assert f"removed {N} documents an earlier run in {out.as_posix()} planted in" in later.stderr
    assert_tested(runs(out))
    assert not (out / "planted.jsonl").exists()
    assert store.documents() == team


# -- two runs at once on one store ---------------------------------------------------------------


@pytest.mark.parametrize("store", ["chroma", "pgvector"], indirect=True)
def test_two_runs_at_once_each_measure_what_they_measure_alone(
    store: Store, team: dict[str, Doc], tmp_path: Path
) -> None:
    cfg = config(tmp_path, store)
    # Alone (not paced: pacing changes when cases are asked, not what they retrieve).
    alone = rlk("run", "-c", cfg, *SELECTION, "-o", "alone", cwd=tmp_path, store=store)
    assert alone.returncode in (0, 1), alone.stdout + alone.stderr
    expected = comparable(runs(tmp_path / "alone"))
    assert_tested(expected)
    assert store.documents() == team

    outs = [tmp_path / "one", tmp_path / "two"]
    args = ("run", "-c", cfg, *SELECTION, *PACED, "-o")
    processes = [start(*args, str(outs[0]), cwd=tmp_path, store=store)]
    try:
        # The second starts once the first has recorded its pack: it comes while the first's
        # cases are asked (about 8 s of them), and waits for them.
        wait_for("the first run recorded its pack", lambda: bool(planted(outs[0])), processes[0])
        processes.append(start(*args, str(outs[1]), cwd=tmp_path, store=store))
        results = [p.communicate(timeout=180) for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (stdout, stderr) in zip(processes, results, strict=True):
        assert p.returncode == alone.returncode, stdout + stderr
    # The second waited for the first's pack (the store's lock), and neither saw the other.
    assert "store.waiting" in results[1][1]
    own = PACK_IDS | set(team)
    for o in outs:
        got = comparable(runs(o))
        if store.kind != "chroma":
            assert got == expected
            continue
        # Chroma searches an HNSW graph, which is approximate: the documents a run deleted leave
        # traces in it, so a later run may be handed other neighbours for a query or two than a
        # fresh store gives. Each run is still measured alone: the same cases, all tested, and
        # never a document that is neither its pack's nor the team's.
        assert_tested(got)
        assert [r["test_id"] for r in got] == [r["test_id"] for r in expected]
        assert {d["doc_id"] for r in got for d in r["retrieved"]} <= own
    assert store.documents() == team


@pytest.mark.parametrize("store", ["pgvector"], indirect=True)
def test_two_runs_from_two_machines_never_count_each_other_s_documents(
    store: Store, team: dict[str, Doc], tmp_path: Path
) -> None:
    """Two CI jobs on two machines share one Postgres: no lock file is shared between them (each
    its own temporary directory here), so their packs meet in the store. A case that retrieved
    the other run's documents is errored, never counted as tested; every other case measured
    exactly what it measures alone."""
    cfg = config(tmp_path, store)
    alone = rlk("run", "-c", cfg, *SELECTION, "-o", "alone", cwd=tmp_path, store=store)
    assert alone.returncode in (0, 1), alone.stdout + alone.stderr
    expected = {(r["test_id"], r["epoch"]): r for r in comparable(runs(tmp_path / "alone"))}

    outs = [tmp_path / "one", tmp_path / "two"]
    processes = []
    try:
        for o in outs:
            machine = tmp_path / f"{o.name}-tmp"
            machine.mkdir()
            processes.append(
                start(
                    *("run", "-c", cfg, *SELECTION, *PACED, "-o", str(o)),
                    cwd=tmp_path,
                    store=store,
                    env={"TMPDIR": str(machine)},
                )
            )
        wait_for(
            "both packs were in the store at once",
            lambda: (
                all(len(planted(o)) == N for o in outs)
                and len(store.holding(planted(outs[0]) + planted(outs[1]))) == 2 * N
            ),
            processes[0],
        )
        results = [p.communicate(timeout=180) for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    met = 0
    for p, o, (stdout, stderr) in zip(processes, outs, results, strict=True):
        no_traceback(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
        records = comparable(runs(o))
        assert len(records) == len(expected)
        foreign = [r for r in records if r["error"]]
        for record in foreign:
            assert (
                "ForeignPlanted: a retrieved document was planted by another ragleaklab run"
                in (record["error"]["message"])
            ), record["error"]
        for record in records:
            if not record["error"]:
                assert record == expected[record["test_id"], record["epoch"]]
        report = json.loads((o / "report.json").read_text(encoding="utf-8"))
        [pack] = report["packs"]
        assert pack["cases"]["errored"] == len(foreign)
        if foreign:
            assert p.returncode == 1, stdout + stderr  # an errored case fails the run
        met += len(foreign)
    assert met  # the packs met in the store: cases saw the other run's documents
    assert store.documents() == team
