"""``ragleaklab label judge`` says what it did, end to end: a judge that judged nothing exits 3
and never says "next: label agreement"; a judge whose endpoint cannot be reached (refused, a
name that does not resolve, a server that hangs, a server that dies half-way) stops at once
with exit 3 and the endpoint named (its credentials hidden) instead of failing every answer for
minutes; progress goes to stderr."""

from __future__ import annotations

import json
import re
import shutil
import socket
import time
from pathlib import Path

import pytest

from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer
from tests.support.judge_models import harm_in_answer, honest, read_request, reply

PACK = "claim-corruption"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("judged")
    rlk("run", "-p", PACK, "--smoke", "-o", "out", cwd=root, ok=(0, 1))
    return root / "out"


def judge(run_dir: Path, base_url: str, *more: str, env=None, ok=(3,)):
    started = time.monotonic()
    done = rlk(
        "label",
        "judge",
        str(run_dir),
        "--judge",
        "openai-compatible",
        "-O",
        f"base_url='{base_url}'",
        *more,
        cwd=run_dir.parent,
        env=env,
        ok=ok,
    )
    return done, time.monotonic() - started


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fresh(run_dir: Path, tmp_path: Path) -> Path:
    """A copy of the run with no review folder."""
    copy = tmp_path / "out"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("review"))
    return copy


def test_an_endpoint_that_refuses_stops_at_once_naming_it_without_its_password(run_dir, tmp_path):
    out = fresh(run_dir, tmp_path)
    port = closed_port()
    done, took = judge(out, f"http://judge:hunter2pw@127.0.0.1:{port}/v1")
    assert took < 60  # one answer's retries, not 30 answers'
    assert "cannot reach its endpoint (the first answer asked)" in done.stderr
    assert f"127.0.0.1:{port}/v1/chat/completions" in done.stderr
    assert "Connection refused" in done.stderr
    assert "hunter2pw" not in done.stdout + done.stderr
    assert "no review file was written" in done.stderr and "next:" not in done.stdout
    assert not (out / "review" / "judge-openai-compatible.jsonl").exists()
    assert "Traceback" not in done.stderr


def test_a_name_that_does_not_resolve_stops_at_once(run_dir, tmp_path):
    out = fresh(run_dir, tmp_path)
    done, _ = judge(out, "http://judge.invalid/v1", "-O", "retries=0", "-O", "timeout=10")
    assert "cannot reach its endpoint (the first answer asked)" in done.stderr
    assert "judge.invalid" in done.stderr and "next:" not in done.stdout


def test_an_endpoint_that_hangs_stops_at_once(run_dir, tmp_path):
    out = fresh(run_dir, tmp_path)
    with FakeRagServer(completion=honest()) as server:
        server.hang(100, seconds=30)
        done, took = judge(out, f"{server.base_url}/v1", "-O", "timeout=0.5", "-O", "retries=1")
    assert took < 30
    assert "cannot reach its endpoint" in done.stderr and "timed out after 0.5 s" in done.stderr


def test_an_endpoint_that_dies_half_way_stops_after_three_in_a_row_and_resumes(run_dir, tmp_path):
    out = fresh(run_dir, tmp_path)
    answer = honest()
    with FakeRagServer() as server:
        served = []

        def complete(request):
            served.append(1)
            if len(served) == 5:
                server.drop(10_000)  # every later request: the connection drops
            return answer(request)

        server.completion = complete
        done, _ = judge(out, f"{server.base_url}/v1", "-O", "retries=0")
        assert "cannot reach its endpoint (3 answers in a row)" in done.stderr
        assert "RemoteProtocolError" in done.stderr and "next:" not in done.stdout
        cache = (out / "review" / "cache" / "judges.jsonl").read_text().split("\n")
        assert len([line for line in cache if line]) == 5  # what was judged is kept
        server.faults.clear()
        server.completion = answer
        again, _ = judge(out, f"{server.base_url}/v1", ok=(0,))
    assert re.search(r"\d+ answer\(s\) asked, 5 from the cache", again.stdout), again.stdout
    assert "next: ragleaklab label agreement" in again.stdout


def test_a_judge_that_judged_nothing_exits_3_and_names_why(run_dir, tmp_path):
    out = fresh(run_dir, tmp_path)
    with FakeRagServer(completion=lambda request: "I cannot help with that.") as server:
        done, _ = judge(out, f"{server.base_url}/v1")
    assert "(0 positive, 0 negative, 30 not judged)" in done.stdout
    assert "judged none of the 30 case(s)" in done.stderr
    assert "I cannot help with that." in done.stderr  # why, case by case
    assert "next:" not in done.stdout
    assert "hint: `ragleaklab plugins`" not in done.stderr  # the plugin is installed
    file = out / "review" / "judge-openai-compatible.jsonl"
    rows = [json.loads(line) for line in file.read_text().split("\n") if line]
    assert len(rows) == 30 and all(r["label"] == "" and r["judge_error"] for r in rows)


def test_a_judge_that_judged_some_exits_0_and_says_how_many_are_missing(run_dir, tmp_path):
    out = fresh(run_dir, tmp_path)
    answer = honest()
    calls = []

    def some(request):
        calls.append(1)
        return answer(request) if len(calls) % 2 else "no idea"

    with FakeRagServer(completion=some) as server:
        done, _ = judge(out, f"{server.base_url}/v1", ok=(0,))
    assert "not judged" in done.stdout and "case(s) have no label" in done.stderr
    assert "next: ragleaklab label agreement" in done.stdout


def test_progress_goes_to_stderr(run_dir, tmp_path):
    out = fresh(run_dir, tmp_path)
    with FakeRagServer(completion=honest(), latency=0.05) as server:
        done, _ = judge(
            out,
            f"{server.base_url}/v1",
            env={"RAGLEAKLAB_PROGRESS_INTERVAL": "0.2"},
            ok=(0,),
        )
    assert re.search(r"progress: judge openai-compatible \d+/30 answers", done.stderr)
    assert "progress:" not in done.stdout
    bad, _ = judge(
        out, "http://127.0.0.1:9/v1", env={"RAGLEAKLAB_PROGRESS_INTERVAL": "soon"}, ok=(2,)
    )
    assert "RAGLEAKLAB_PROGRESS_INTERVAL" in bad.stderr


def test_the_review_file_does_not_depend_on_the_random_marker(run_dir, tmp_path):
    out = fresh(run_dir, tmp_path)
    seen: list[str] = []

    def quoting(request):  # a model that quotes the marker in its reason
        shown = read_request(request)
        seen.append(str(shown.marker))
        return reply(
            shown, harm_in_answer(shown.ground_truth, shown.answer), f"under {shown.marker}"
        )

    files = []
    with FakeRagServer(completion=quoting) as server:
        for seed in ("1", "2"):
            shutil.rmtree(out / "review", ignore_errors=True)
            rlk(
                "label",
                "judge",
                str(out),
                "--judge",
                "openai-compatible",
                "-O",
                f"base_url='{server.base_url}/v1'",
                cwd=tmp_path,
                hashseed=seed,
                ok=(0,),
            )
            files.append((out / "review" / "judge-openai-compatible.jsonl").read_bytes())
    assert files[0] == files[1] and b"under <marker>" in files[0]
    assert len(set(seen)) == len(seen) == 60  # a fresh marker per request, none in the file
    assert not any(m.encode() in files[0] for m in seen)
