"""Replays reproduce the recorded run, errors included (issue 39, class 7).

A recording of a run in which the service failed some cases holds those cases' errors (kind and
redacted message): ``--replay`` errors the same cases, stops where the recorded run stopped,
ends with the same verdict and exit code, and says which cases errored in the recording and
why. The service is the loopback HTTP RAG service with injected faults, run through the real
CLI; a replay runs with the service's faults gone, so a replay that asked it would differ.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

PACK = "relevance-hijack"


def config_file(path: Path, server: FakeRagServer, **run: Any) -> Path:
    lines = [
        '[target]\nname = "http"\n\n[target.options]',
        f'url = "{server.url("/simple")}"',
        f'ingest_url = "{server.url("/ingest")}"',
        f'reset_url = "{server.url("/reset")}"',
        "retries = 0",
        "backoff = 0.001",
        "[run]",
        "concurrency = 1",
        *(f"{k} = {json.dumps(v)}" for k, v in run.items()),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def said(result: subprocess.CompletedProcess[str]) -> str:
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    return " ".join(text.split())


def report(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "report.json").read_text(encoding="utf-8"))


def errored_ids(directory: Path) -> list[str]:
    cases = report(directory)["packs"][0]["case_results"]
    return [c["test_id"] for c in cases if c["outcome"] == "error"]


def record_then_replay(server, tmp_path, *flags: str, faults=None, **run: Any):
    config = config_file(tmp_path / "c.toml", server, **run)
    (faults or (lambda: server.fail(3, status=503, path="/simple")))()
    base = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "base", "--record", "rec",
               *flags, cwd=tmp_path)  # fmt: skip
    server.faults.clear()  # the service is healthy now: a replay that asked it would pass
    again = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "again", "--replay", "rec",
                *flags, cwd=tmp_path)  # fmt: skip
    return base, again


def test_a_recording_stores_each_errored_case_with_its_error(server, tmp_path):
    record_then_replay(server, tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "rec" / f"{PACK}.jsonl").read_text().splitlines()]
    failed = [x for x in lines if "error" in x]
    assert len(failed) == 3 and all("response" not in x for x in failed)
    assert {x["test_id"] for x in failed} == set(errored_ids(tmp_path / "base"))
    error = failed[0]["error"]
    assert error["kind"] == "TargetRequestError" and "503" in error["message"]
    assert error["not_asked"] is False


@pytest.mark.parametrize(
    ("flags", "code"),
    [
        ((), 1),  # errors not tolerated: FAIL
        (("--tolerate-errors", "--max-fail-rate", "0.5"), 0),  # within the worst case
        (("--tolerate-errors", "--max-fail-rate", "0.4"), 1),  # the worst case exceeds it
    ],
)
def test_a_replay_errors_the_same_cases_with_the_same_verdict(server, tmp_path, flags, code):
    base, again = record_then_replay(server, tmp_path, *flags)
    assert base.returncode == code, said(base)
    assert again.returncode == code, said(again)
    errored = errored_ids(tmp_path / "base")
    assert len(errored) == 3 and errored_ids(tmp_path / "again") == errored
    b, a = report(tmp_path / "base"), report(tmp_path / "again")
    assert a["packs"][0]["values"] == b["packs"][0]["values"]
    assert (a["verdict"], a["exit_code"]) == (b["verdict"], b["exit_code"])
    text = said(again)
    assert f"replayed: 3 cases errored in the recording (case {errored[0]} epoch 0: " in text
    assert "HTTP 503" in text
    assert "replayed:" not in said(base)


def test_a_replay_of_a_run_whose_service_went_away_stops_where_it_stopped(server, tmp_path):
    base, again = record_then_replay(
        server, tmp_path, faults=lambda: server.drop(40, path="/simple"),
        max_consecutive_failures=5,
    )  # fmt: skip
    assert base.returncode == 3, said(base)
    assert again.returncode == 3, said(again)
    b, a = report(tmp_path / "base")["packs"][0], report(tmp_path / "again")["packs"][0]
    assert a["tested"] is b["tested"] is False
    assert errored_ids(tmp_path / "again") == errored_ids(tmp_path / "base")
    assert "target unreachable" in a["not_tested_reason"]
    assert "5 consecutive requests failed to reach it" in a["not_tested_reason"]


def test_an_ingest_failure_replays_as_not_tested(server, tmp_path):
    base, again = record_then_replay(
        server, tmp_path, faults=lambda: server.fail(1, status=500, path="/ingest")
    )
    assert base.returncode == again.returncode == 3, said(base) + said(again)
    a = report(tmp_path / "again")["packs"][0]
    assert a["tested"] is False and a["verdict"] == "error"
    assert a["not_tested_reason"].startswith("ingest failed: RecordedError: errored in the ")
    assert "HTTP 500" in a["not_tested_reason"]


def test_a_recording_lacking_an_errored_case_is_still_refused(server, tmp_path):
    record_then_replay(server, tmp_path)
    path = tmp_path / "rec" / f"{PACK}.jsonl"
    # An older recording held no line for a case the service failed: refused, never skipped.
    kept = [x for x in path.read_text().splitlines() if '"error"' not in x]
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    done = rlk("run", "-p", PACK, "--smoke", "-o", "old", "--replay", "rec", cwd=tmp_path)
    assert done.returncode == 2, said(done)
    assert "lacks 3 of the cases this run selects" in said(done)


@pytest.mark.parametrize(
    "error", ['"boom"', '{"kind": 1, "message": "x"}', '{"kind": "X", "message": "x", '
              '"transport_failure": "yes"}', '{"message": "x"}']
)  # fmt: skip
def test_a_malformed_recorded_error_is_refused_with_its_line(server, tmp_path, error):
    record_then_replay(server, tmp_path)
    path = tmp_path / "rec" / f"{PACK}.jsonl"
    lines = path.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if '"error"' in x)
    line = json.loads(lines[at])
    lines[at] = json.dumps({k: v for k, v in line.items() if k != "error"})[:-1] + (
        f', "error": {error}}}'
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = rlk("run", "-p", PACK, "--smoke", "-o", "bad", "--replay", "rec", cwd=tmp_path)
    assert done.returncode == 2, said(done)
    assert f"{PACK}.jsonl:{at + 1}" in said(done) and "malformed recording line" in said(done)
