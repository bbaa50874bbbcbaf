"""``--executor ray`` through the real CLI, against the session's local Ray cluster: the same
report as ``--executor local`` on every built-in pack, a worker killed mid-batch, resume across
executors, record and replay, an ingest that fails, and an address nobody listens on."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.ray.support import EPOCH, HERE, RAY_ENV, ray_env
from tests.support.cli import rlk

BUILTIN_PACKS = {
    "citation-forgery",
    "claim-corruption",
    "context-extraction",
    "relevance-hijack",
    "sentinel-takeover-safe",
    "verbatim-extraction",
    "cross-tenant",
    "markdown-exfiltration",
}
SMOKE = ["-p", "sentinel-takeover-safe", "--tag", "smoke"]


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ragleaklab_core.cli", "run", *args]


def ragleaklab(cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``ragleaklab run ARGS`` (:func:`tests.support.cli.rlk`) in the Ray tests' environment, in
    its own process: a Ray driver connects once per process, and its workers import the targets
    from PYTHONPATH."""
    return rlk(
        "run", *args, cwd=cwd, env=RAY_ENV, epoch=EPOCH, pythonpath=[HERE], timeout=timeout,
        own_process=True,
    )  # fmt: skip


def on_ray(address: str) -> list[str]:
    return ["--executor", "ray", "--ray-address", address]


def runs(path: Path) -> list[dict[str, Any]]:
    """runs.jsonl's records without their timings."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.pop("elapsed_ms")
    return lines


def ran(done: subprocess.CompletedProcess[str], *codes: int) -> None:
    assert done.returncode in codes, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


def test_every_builtin_pack_gives_the_same_report_on_either_executor(
    cluster: str, tmp_path: Path
) -> None:
    local = ragleaklab(tmp_path, "-o", "local")
    ray = ragleaklab(tmp_path, "-o", "ray", *on_ray(cluster))
    ran(local, 0, 1)
    ran(ray, local.returncode)
    report = (tmp_path / "ray" / "report.json").read_bytes()
    assert report == (tmp_path / "local" / "report.json").read_bytes()
    assert {p["name"] for p in json.loads(report)["packs"]} >= BUILTIN_PACKS
    assert runs(tmp_path / "ray" / "runs.jsonl") == runs(tmp_path / "local" / "runs.jsonl")
    assert "executor" not in json.loads(report)["settings"]


def test_a_worker_killed_mid_batch_has_its_cases_answered_by_another(
    cluster: str, tmp_path: Path
) -> None:
    from ragleaklab_core.run.runner import load_pack

    cases = [c for c in load_pack("sentinel-takeover-safe").obj.cases() if "smoke" in c.tags]
    marker = tmp_path / "died"
    target = [
        "--target",
        "python",
        "--target-option",
        'callable="rlk_ray_targets:DyingReference"',
        "--target-option",
        f"kwargs={{marker = {json.dumps(str(marker))}, die_on = "
        f"{json.dumps(cases[len(cases) // 2].query)}}}",
    ]
    marker.touch()  # the local run never dies
    local = ragleaklab(tmp_path, *SMOKE, *target, "-o", "local")
    marker.unlink()
    ray = ragleaklab(tmp_path, *SMOKE, *target, "-o", "ray", *on_ray(cluster))
    ran(local, 0, 1)
    ran(ray, local.returncode)
    assert marker.exists(), "the worker never died"
    assert "ray.worker_died" in ray.stderr
    report = json.loads((tmp_path / "ray" / "report.json").read_text(encoding="utf-8"))
    retried = report["packs"][0]["cases"]["retried"]
    assert 0 < retried <= 2 * 16  # the batches the lost worker held (2 of 16 at most), sent again
    # Apart from that count, the report is the local one: nothing lost, nothing twice.
    text = (tmp_path / "ray" / "report.json").read_text(encoding="utf-8")
    assert re.sub(r'"retried": \d+', '"retried": 0', text) == (
        tmp_path / "local" / "report.json"
    ).read_text(encoding="utf-8")
    records = runs(tmp_path / "ray" / "runs.jsonl")
    assert len({(r["test_id"], r["epoch"]) for r in records}) == len(records) == len(cases)
    assert records == runs(tmp_path / "local" / "runs.jsonl")


def _interrupted(cwd: Path, *args: str, lines: int) -> None:
    """Run, and interrupt with SIGINT (Ctrl-C) once the journal holds *lines* records."""
    journal = cwd / "out" / "runs.jsonl.partial"
    process = subprocess.Popen(
        command(*args, "-o", "out"),
        cwd=cwd,
        env=ray_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not journal.is_file() or len(journal.read_bytes().splitlines()) < lines:
            assert process.poll() is None, f"the run ended first: {process.communicate()}"
            assert time.monotonic() < deadline, "the journal never filled"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, f"{stdout}\n{stderr}"
    assert "run the same command with --resume" in stderr


@pytest.mark.parametrize("first, then", [("ray", "local"), ("local", "ray")])
def test_a_run_interrupted_on_one_executor_is_resumed_on_the_other(
    cluster: str, tmp_path: Path, first: str, then: str
) -> None:
    # Slowed down (the same in every run: it is in report.json's settings) so there is time to
    # interrupt; small batches, so the Ray run's first records come back early.
    (tmp_path / "ray.toml").write_text("[run.ray]\nbatch_size = 2\n", encoding="utf-8")
    paced = [*SMOKE, "--rate-limit", "10", "-c", "ray.toml"]
    flags = {"local": [], "ray": on_ray(cluster)}
    straight = ragleaklab(tmp_path, *paced, "-o", "straight")
    ran(straight, 0, 1)
    _interrupted(tmp_path, *paced, *flags[first], lines=6)
    kept = len((tmp_path / "out" / "runs.jsonl.partial").read_bytes().splitlines())
    assert 6 <= kept < 30
    resumed = ragleaklab(tmp_path, *paced, *flags[then], "-o", "out", "--resume")
    ran(resumed, straight.returncode)
    assert (tmp_path / "out" / "report.json").read_bytes() == (
        tmp_path / "straight" / "report.json"
    ).read_bytes()
    assert runs(tmp_path / "out" / "runs.jsonl") == runs(tmp_path / "straight" / "runs.jsonl")


def test_a_run_recorded_on_ray_is_the_local_recording_and_replays_on_ray(
    cluster: str, tmp_path: Path
) -> None:
    smoke = ["-p", "verbatim-extraction", "--tag", "smoke"]
    ran(ragleaklab(tmp_path, *smoke, *on_ray(cluster), "-o", "r", "--record", "rec-ray"), 0, 1)
    ran(ragleaklab(tmp_path, *smoke, "-o", "l", "--record", "rec-local"), 0, 1)
    recorded = sorted(p.name for p in (tmp_path / "rec-ray").iterdir())
    assert recorded == ["recording.json", "verbatim-extraction.jsonl"]
    for name in recorded:
        assert (tmp_path / "rec-ray" / name).read_bytes() == (
            tmp_path / "rec-local" / name
        ).read_bytes(), name
    on = ragleaklab(tmp_path, *smoke, *on_ray(cluster), "-o", "r2", "--replay", "rec-ray")
    off = ragleaklab(tmp_path, *smoke, "-o", "l2", "--replay", "rec-ray")
    ran(off, 0, 1)
    ran(on, off.returncode)
    replayed = (tmp_path / "r2" / "report.json").read_bytes()
    assert replayed == (tmp_path / "l2" / "report.json").read_bytes()
    # The replay answers as the target did: the same cases fail as in the recorded run.
    recorded_run = json.loads((tmp_path / "r" / "report.json").read_bytes())
    assert json.loads(replayed)["packs"][0]["values"] == recorded_run["packs"][0]["values"]


def test_an_ingest_that_fails_on_the_workers_stops_the_pack_as_it_does_locally(
    cluster: str, tmp_path: Path
) -> None:
    target = [
        "--target",
        "python",
        "--target-option",
        'callable="rlk_ray_targets:BrokenIngest"',
    ]
    local = ragleaklab(tmp_path, *SMOKE, *target, "-o", "local")
    ray = ragleaklab(tmp_path, *SMOKE, *target, "-o", "ray", *on_ray(cluster))
    ran(local, 3)
    ran(ray, 3)
    report = (tmp_path / "ray" / "report.json").read_bytes()
    assert report == (tmp_path / "local" / "report.json").read_bytes()
    pack = json.loads(report)["packs"][0]
    assert pack["tested"] is False
    assert "ingest failed" in pack["not_tested_reason"]


def test_an_address_nobody_listens_on_is_refused_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    done = ragleaklab(tmp_path, *SMOKE, *on_ray("127.0.0.1:1"), "-o", "out", timeout=120)
    assert done.returncode == 3, done.stderr
    assert time.monotonic() - started < 60
    assert "cannot reach the Ray cluster at 127.0.0.1:1" in done.stderr
    assert "ray start --head" in done.stderr
    assert not (tmp_path / "out").exists(), "nothing is written before the cluster is reached"


def test_a_shared_http_system_is_ingested_and_reset_once_by_the_driver(
    cluster: str, tmp_path: Path
) -> None:
    from tests.support.fake_rag_server import FakeRagServer

    with FakeRagServer() as server:
        target = [
            "--target",
            "http",
            "--target-option",
            f'url="{server.url("/simple")}"',
            "--target-option",
            f'ingest_url="{server.url("/ingest")}"',
            "--target-option",
            f'reset_url="{server.url("/reset")}"',
        ]
        local = ragleaklab(tmp_path, *SMOKE, *target, "-o", "local")
        ran(local, 0, 1)
        seen_locally = (list(server.ingested_batches), server.resets)
        server.clear()
        ray = ragleaklab(tmp_path, *SMOKE, *target, "-o", "ray", *on_ray(cluster))
        ran(ray, local.returncode)
        # Once, by the driver: two workers ingesting would plant every document twice.
        assert (list(server.ingested_batches), server.resets) == seen_locally
        assert server.resets == 1
    assert (tmp_path / "ray" / "report.json").read_bytes() == (
        tmp_path / "local" / "report.json"
    ).read_bytes()


def test_a_target_that_becomes_unreachable_on_the_workers_stops_the_pack(
    cluster: str, tmp_path: Path
) -> None:
    with socket.socket() as sock:  # a port just freed: nothing listens on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    target = [
        "--target",
        "http",
        "--target-option",
        f'url="http://127.0.0.1:{port}/rag"',
        "--target-option",
        "retries=0",
    ]
    done = ragleaklab(tmp_path, *SMOKE, *target, "-o", "ray", *on_ray(cluster))
    ran(done, 3)
    pack = json.loads((tmp_path / "ray" / "report.json").read_bytes())["packs"][0]
    assert pack["tested"] is False
    assert "target unreachable" in pack["not_tested_reason"]
    records = runs(tmp_path / "ray" / "runs.jsonl")
    assert len(records) == 30  # every case accounted for, none twice
    assert len({r["test_id"] for r in records}) == 30
    not_asked = [r for r in records if r["error"]["group"] == "ragleaklab.run"]
    assert not_asked, "the cases after the stop were still asked"
    assert all(r["error"] is not None for r in records)
