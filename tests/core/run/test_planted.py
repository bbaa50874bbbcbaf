"""What a run plants in a store that outlives it: recorded first, removed on every way out.

The store is a directory of JSON files (``planting/rlk_dirstore.py``), installed as the
``dirstore`` target of a fake distribution and driven through ``ragleaklab run`` and
``ragleaklab cleanup`` in real subprocesses, killed with real signals.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragleaklab_core._signals import received, shielded, termination_as_interrupt
from ragleaklab_core.errors import InputError
from ragleaklab_core.run.planted import (
    LEDGER,
    Planting,
    PlantLedger,
    compact,
    planted_id,
    read_outstanding,
    run_key,
)
from ragleaklab_core.run.runner import load_pack
from tests.support.cli import cli_env, rlk
from tests.support.fake_rag_server import FakeRagServer

HERE = Path(__file__).resolve().parent / "planting"
PACK = "context-extraction"
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


# ---- the ledger ----------------------------------------------------------------------------------


def test_planted_ids_are_the_runs_own_and_stable() -> None:
    a, b = run_key("run1", "pack"), run_key("run2", "pack")
    assert planted_id(a, "d1") == planted_id(a, "d1")
    assert len({planted_id(a, "d1"), planted_id(b, "d1"), planted_id(a, "d2")}) == 3
    assert planted_id(a, "d1") != "d1"
    assert planted_id(run_key("run1", "other"), "d1") != planted_id(a, "d1")


def test_outstanding_is_planted_minus_removed_per_store(tmp_path: Path) -> None:
    ledger = PlantLedger(tmp_path, "r1", config={"config": "rag.toml", "target": "t"})
    ledger.planted(Planting("r1", "p1", "t", "store A", ("a1", "a2", "a3")))
    ledger.removed("store A", ["a1", "a3"])
    ledger.planted(Planting("r1", "p2", "t", "store B", ("b1",)))
    ledger.close()
    left = read_outstanding(tmp_path)
    assert dict(left.by_store) == {"store A": ("a2",), "store B": ("b1",)}
    assert left.count == 2 and dict(left.configs) == {"store A": "rag.toml", "store B": "rag.toml"}
    compact(tmp_path, left)  # rewritten as what is left, and read the same
    again = read_outstanding(tmp_path)
    assert dict(again.by_store) == dict(left.by_store)
    assert dict(again.configs) == dict(left.configs)
    ledger = PlantLedger(tmp_path, "r2")
    ledger.removed("store A", ["a2"])
    ledger.removed("store B", ["b1"])
    ledger.finish()
    assert not (tmp_path / LEDGER).exists()


def test_a_line_torn_by_a_kill_is_nothing_planted_a_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / LEDGER
    whole = json.dumps({"planted": {"store": "s", "ids": ["x"], "target": "t"}})
    path.write_text(whole + "\n" + whole[:25], encoding="utf-8")
    assert dict(read_outstanding(tmp_path).by_store) == {"s": ("x",)}
    path.write_text('{"planted": {"store": "s"}}\n' + whole + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_outstanding(tmp_path)
    assert caught.value.line == 1 and LEDGER in str(caught.value)


# ---- runs through the CLI ----------------------------------------------------------------------


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A fake distribution providing the ``dirstore`` target, for subprocesses."""
    root = tmp_path / "site"
    info = root / "rlk_dirstore-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rlk-dirstore\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[ragleaklab.targets]\ndirstore = rlk_dirstore:DirStoreTarget\n"
    )
    shutil.copy(HERE / "rlk_dirstore.py", root / "rlk_dirstore.py")
    return root


def _config(path: Path, store: Path, **options: object) -> Path:
    lines = ["[target]", 'name = "dirstore"', "[target.options]", f'directory = "{store}"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in options.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _planted(store: Path) -> list[dict[str, str]]:
    """The documents a run planted (tagged with a run) still in the store."""
    found = []
    for path in store.glob("*.json"):
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            continue  # removed, or still being written, while the store was listed
        if "ragleaklab_run" in body:
            found.append(body)
    return found


def team_document(store: Path, doc_id: str, text: str) -> Path:
    """A document of the team's own, stored under the pack document's id itself."""
    path = store / f"{doc_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"doc_id": doc_id, "text": text}), encoding="utf-8")
    return path


def _pack_doc() -> tuple[str, int]:
    docs = list(load_pack(PACK).obj.documents())
    return docs[0].doc_id, len(docs)


def _start(
    site: Path, cwd: Path, *args: str, ignoring: tuple[signal.Signals, ...] = ()
) -> subprocess.Popen[str]:
    """The CLI in a child process whose signals are as a terminal's foreground run has them
    (whatever this test process inherited: a CI job started in the background ignores SIGINT
    and, under nohup, SIGHUP), but for *ignoring*."""

    def dispositions() -> None:
        for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN if signum in ignoring else signal.SIG_DFL)

    return subprocess.Popen(
        [sys.executable, "-m", "ragleaklab_core", *args],
        cwd=cwd,
        env=cli_env(pythonpath=[site]),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=dispositions,  # runs between fork and exec: no thread of ours meanwhile
    )


def _wait_mid_pack(out: Path, process: subprocess.Popen[str], timeout: float = 120.0) -> None:
    """Until the run has planted and answered at least one case."""
    deadline = time.monotonic() + timeout
    partial = out / "runs.jsonl.partial"
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if (out / LEDGER).is_file() and partial.is_file() and partial.stat().st_size > 0:
            return
        time.sleep(0.05)
    raise AssertionError("the run never got mid-pack")


def test_a_finished_run_leaves_nothing_planted_and_the_teams_document_as_it_was(
    site: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    doc_id, count = _pack_doc()
    team = team_document(store, doc_id, "the team's own page, under the pack's id")
    before = team.read_bytes()
    config = _config(tmp_path / "rag.toml", store)
    done = rlk(
        "run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out",
        cwd=tmp_path, pythonpath=[site], ok=(0, 1),
    )  # fmt: skip
    assert _planted(store) == []
    assert team.read_bytes() == before and sorted(p.name for p in store.iterdir()) == [team.name]
    assert not (tmp_path / "out" / LEDGER).exists()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["packs"][0]["name"] == PACK and report["packs"][0]["tested"] is True
    assert count > 100, done.stderr  # the whole pack was planted, not a handful


def _signalled(
    site: Path,
    tmp_path: Path,
    signum: signal.Signals,
    *,
    ignoring: tuple[signal.Signals, ...] = (),
    delay: float = 0.3,
) -> tuple[int, str, str]:
    """A smoke run of the pack on the store, sent *signum* mid-pack: its exit code, stdout and
    stderr."""
    store = tmp_path / "store"
    config = _config(tmp_path / "rag.toml", store, delay=delay)
    args = ("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out")
    run = _start(site, tmp_path, *args, ignoring=ignoring)
    _wait_mid_pack(tmp_path / "out", run)
    assert _planted(store), "nothing was planted before the signal"
    run.send_signal(signum)
    stdout, stderr = run.communicate(timeout=120)
    return run.returncode, stdout, stderr


@POSIX
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_terminated_run_removes_what_it_planted(
    site: Path, tmp_path: Path, signum: signal.Signals
) -> None:
    code, stdout, stderr = _signalled(site, tmp_path, signum)
    _, count = _pack_doc()
    assert code == 128 + signum, stdout + stderr
    assert f"removing {count} planted documents from dirstore" in stderr
    assert f"removed {count} planted documents" in stderr
    assert _planted(tmp_path / "store") == []
    assert not (tmp_path / "out" / LEDGER).exists()
    assert "--resume" in stderr  # the answers so far are kept, as for Ctrl-C


@POSIX
def test_a_run_started_with_sigint_ignored_still_ends_cleanly_on_sigterm(
    site: Path, tmp_path: Path
) -> None:
    # A background job of a script inherits SIGINT ignored: SIGTERM (a CI cancelling the job)
    # must still cancel the pack, remove what it planted and say so.
    code, stdout, stderr = _signalled(site, tmp_path, signal.SIGTERM, ignoring=(signal.SIGINT,))
    _, count = _pack_doc()
    assert code == 128 + signal.SIGTERM, stdout + stderr
    assert f"removed {count} planted documents" in stderr and "Traceback" not in stderr
    assert _planted(tmp_path / "store") == [] and not (tmp_path / "out" / LEDGER).exists()


@POSIX
def test_a_run_under_nohup_outlives_a_hangup(site: Path, tmp_path: Path) -> None:
    # nohup ignores SIGHUP so that a run outlives its terminal: the run keeps it ignored.
    ignoring = (signal.SIGHUP,)
    code, stdout, stderr = _signalled(site, tmp_path, signal.SIGHUP, ignoring=ignoring, delay=0.05)
    assert code in (0, 1), stdout + stderr  # the verdict, not 128 + SIGHUP
    assert "wrote out/report.json" in stdout + stderr
    assert _planted(tmp_path / "store") == [] and not (tmp_path / "out" / LEDGER).exists()


@POSIX
def test_a_second_signal_during_the_removal_is_held_once(site: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = _config(tmp_path / "rag.toml", store, delay=0.3, remove_delay=0.004)
    run = _start(site, tmp_path, "run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out")
    _wait_mid_pack(tmp_path / "out", run)
    run.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 60
    while len(_planted(store)) > 200 and time.monotonic() < deadline:
        time.sleep(0.01)  # the removal has begun
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=120)
    assert "still removing" in stderr, stderr
    assert _planted(store) == [] and run.returncode == 128 + signal.SIGTERM


@POSIX
def test_after_sigkill_cleanup_removes_what_the_ledger_lists(site: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    doc_id, count = _pack_doc()
    team = team_document(store, doc_id, "kept")
    config = _config(tmp_path / "rag.toml", store, delay=0.3)
    run = _start(site, tmp_path, "run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out")
    _wait_mid_pack(tmp_path / "out", run)
    run.kill()
    run.communicate(timeout=60)
    assert len(_planted(store)) == count  # SIGKILL: nothing could be removed
    listed = read_outstanding(tmp_path / "out")
    assert sorted(listed.by_store[f"dirstore {store.as_posix()}"]) == sorted(
        p.stem for p in store.glob("*.json") if p != team
    )
    # Another store's configuration touches nothing.
    other = _config(tmp_path / "other.toml", tmp_path / "elsewhere")
    refused = rlk("cleanup", "out", "-c", str(other), cwd=tmp_path, pythonpath=[site], ok=(3,))
    assert f"{count} documents" in refused.stderr and "Traceback" not in refused.stderr
    assert len(_planted(store)) == count
    # Without -c: the config the run was given (recorded, relative to where it ran).
    done = rlk("cleanup", "out", cwd=tmp_path, pythonpath=[site], ok=(0,))
    assert f"removed {count} planted documents from dirstore" in done.stdout
    assert _planted(store) == [] and team.read_text() == json.dumps(
        {"doc_id": doc_id, "text": "kept"}
    )
    again = rlk("cleanup", "out", cwd=tmp_path, pythonpath=[site], ok=(0,))
    assert "nothing planted by a run in out is left" in again.stdout


@POSIX
def test_a_later_run_in_out_removes_what_a_killed_run_left_first(
    site: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    _, count = _pack_doc()
    config = _config(tmp_path / "rag.toml", store, delay=0.3)
    run = _start(site, tmp_path, "run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out")
    _wait_mid_pack(tmp_path / "out", run)
    run.kill()
    run.communicate(timeout=60)
    fast = _config(tmp_path / "rag.toml", store)
    plain = rlk(
        "run", "-c", str(fast), "-p", PACK, "--smoke", "-o", "out",
        cwd=tmp_path, pythonpath=[site], ok=(2,),
    )  # fmt: skip
    assert f"left {count} planted documents in dirstore" in plain.stderr
    assert "ragleaklab cleanup out" in plain.stderr and len(_planted(store)) == count
    done = rlk(
        "run", "-c", str(fast), "-p", PACK, "--smoke", "-o", "out", "--restart",
        cwd=tmp_path, pythonpath=[site], ok=(0, 1),
    )  # fmt: skip
    assert f"removed {count} documents an earlier run in out planted" in done.stderr
    assert _planted(store) == [] and not (tmp_path / "out" / LEDGER).exists()


def test_a_store_that_fails_to_delete_is_named_with_the_count_and_the_command(
    site: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    _, count = _pack_doc()
    config = _config(tmp_path / "rag.toml", store, fail_delete=True)
    done = rlk(
        "run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out",
        cwd=tmp_path, pythonpath=[site], ok=(1, 3),  # never 0: the pack's reset failed
    )  # fmt: skip
    assert f"{count} planted documents are still in dirstore" in done.stderr
    assert "ragleaklab cleanup out" in done.stderr
    assert len(_planted(store)) == count
    assert read_outstanding(tmp_path / "out").count == count
    still = rlk("cleanup", "out", cwd=tmp_path, pythonpath=[site], ok=(3,))
    assert "refused to delete" in still.stderr
    assert read_outstanding(tmp_path / "out").count == count  # listed until really gone
    ok = _config(tmp_path / "fixed.toml", store)
    rlk("cleanup", "out", "-c", str(ok), cwd=tmp_path, pythonpath=[site], ok=(0,))
    assert _planted(store) == []


def test_two_runs_at_once_on_one_store_each_measure_what_they_measure_alone(
    site: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    config = _config(tmp_path / "rag.toml", store, delay=0.15)  # long enough to overlap
    args = ("run", "-c", str(config), "-p", PACK, "--smoke", "--concurrency", "1")
    rlk(*args, "-o", "alone", cwd=tmp_path, pythonpath=[site], ok=(0, 1))
    first = _start(site, tmp_path, *args, "-o", "one")
    second = _start(site, tmp_path, *args, "-o", "two")
    waited = []
    for process in (first, second):
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode in (0, 1), stdout + stderr
        waited.append("store.waiting" in stderr)
    assert any(waited)  # they did run at once: one waited for the other's pack
    alone = _measured(tmp_path / "alone")
    assert len(alone) == 30 and all(r["error"] is None for r in alone)
    assert _measured(tmp_path / "one") == alone
    assert _measured(tmp_path / "two") == alone
    assert _planted(store) == []


def _measured(out: Path) -> list[dict[str, object]]:
    """runs.jsonl's records without their timings (the one thing two runs never share)."""
    records = []
    for line in (out / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("elapsed_ms")
        records.append(record)
    return records


def test_nothing_planted_means_no_ledger(tmp_path: Path) -> None:
    """The reference target keeps its documents in the process: no ledger, no lock."""
    rlk("run", "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path, ok=(0, 1))
    assert not (tmp_path / "out" / LEDGER).exists()
    assert os.listdir(tmp_path / "out")


# ---- a service behind ingest_url and reset_url ---------------------------------------------------


def _http_config(path: Path, server: FakeRagServer) -> Path:
    path.write_text(
        "[target]\n"
        'name = "http"\n'
        "[target.options]\n"
        f'url = "{server.url("/simple")}"\n'
        f'ingest_url = "{server.url("/ingest")}"\n'
        f'reset_url = "{server.url("/reset")}"\n',
        encoding="utf-8",
    )
    return path


@POSIX
@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGKILL])
def test_a_services_planted_documents_are_recorded_and_reset_after_a_kill(
    tmp_path: Path, kill: signal.Signals
) -> None:
    _, count = _pack_doc()
    with FakeRagServer(latency=0.2) as server:
        config = _http_config(tmp_path / "rag.toml", server)
        run = _start(
            tmp_path, tmp_path, "run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out"
        )
        _wait_mid_pack(tmp_path / "out", run)
        listed = read_outstanding(tmp_path / "out")
        assert listed.count == count  # the pack's ids, recorded before they were sent
        assert list(listed.by_store) == [f"the service at {server.url('/ingest')}"]
        assert server.resets == 0
        run.send_signal(kill)
        _, stderr = run.communicate(timeout=120)
        if kill == signal.SIGTERM:
            assert run.returncode == 128 + signal.SIGTERM
            assert f"removing {count} planted documents" in stderr
            assert server.resets == 1 and not (tmp_path / "out" / LEDGER).exists()
            return
        assert server.resets == 0 and read_outstanding(tmp_path / "out").count == count
        # Its own process: `cleanup` of an http target leaves its connection to the service
        # open (a process's exit closes it; in the test process it is an unclosed socket).
        done = rlk("cleanup", "out", cwd=tmp_path, ok=(0,), own_process=True)
        assert f"removed {count} planted documents from the service at" in done.stdout
        assert server.resets == 1 and not (tmp_path / "out" / LEDGER).exists()


@POSIX
def test_calibrate_on_a_store_records_and_removes_what_it_plants(
    site: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    config = _config(tmp_path / "rag.toml", store, delay=0.3)
    args = ("calibrate", "--pack", PACK, "--smoke", "-o", "cal")
    run = _start(site, tmp_path, *args, "-c", str(config))
    deadline = time.monotonic() + 120
    while not ((tmp_path / "cal" / LEDGER).is_file() and _planted(store)):
        assert time.monotonic() < deadline and run.poll() is None, run.communicate()
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 128 + signal.SIGTERM, stderr
    assert "removed" in stderr and "nothing was written" in stderr and "Traceback" not in stderr
    assert _planted(store) == [] and not (tmp_path / "cal").exists()
    # Uninterrupted, it plants, removes and writes its report.
    fast = _config(tmp_path / "rag.toml", store)
    rlk(*args, "-c", str(fast), cwd=tmp_path, pythonpath=[site], ok=(0, 1))
    assert _planted(store) == [] and (tmp_path / "cal" / "calibration_report.json").is_file()
    assert not (tmp_path / "cal" / LEDGER).exists()


# ---- signals, in this process --------------------------------------------------------------------


@POSIX
def test_a_signal_held_during_a_removal_lets_it_finish_then_still_ends_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    finished = False
    holding = shielded(lambda: "removing 3 planted documents")
    with pytest.raises(KeyboardInterrupt), termination_as_interrupt(), holding:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler runs between these lines, and returns
        finished = True
    assert finished and received() == signal.SIGTERM
    assert "still removing 3 planted documents" in capsys.readouterr().err
    # A second signal stops the removal itself.
    with pytest.raises(KeyboardInterrupt), shielded(lambda: "removing", interrupted=True):
        os.kill(os.getpid(), signal.SIGHUP)
        time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        finished = False
    assert finished  # never reached the end of the block
