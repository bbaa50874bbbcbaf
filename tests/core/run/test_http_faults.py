"""The http target through the real CLI, against the loopback fake server, as CI would run it.

No silent PASS: ids the system renames, failing ingest or reset calls, a dead service and
streamed answers each end in a clear message and a non-zero exit, never in a PASS and never in
a traceback.
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
CHUNK_PATTERN = r"^(?P<doc_id>.+?)::chunk-\d+$"


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)  # strings, numbers, booleans and lists read the same in TOML


def write_config(path: Path, options: dict[str, Any], *, extra: str = "", **run: Any) -> Path:
    lines = ['[target]\nname = "http"\n\n[target.options]']
    lines += [f"{key} = {_toml(value)}" for key, value in options.items()]
    if run:
        lines.append("\n[run]")
        lines += [f"{key} = {_toml(value)}" for key, value in run.items()]
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


#: A threshold no case of PACK can fail: the pack passes unless something else is wrong.
LENIENT = f"""
[thresholds.{PACK}.poison_rate_at_k]
threshold = 1.0
decision_rule = "score > threshold -> FAIL"
"""


def report(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "report.json").read_text(encoding="utf-8"))


def runs(directory: Path) -> list[dict[str, Any]]:
    lines = (directory / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def ingesting(server: FakeRagServer, path: str = "/simple", **more: Any) -> dict[str, Any]:
    return {
        "url": server.url(path),
        "ingest_url": server.url("/ingest"),
        "reset_url": server.url("/reset"),
        "backoff": 0.001,
        **more,
    }


# ---- ids the system renames --------------------------------------------------------------------


def test_chunk_ids_are_not_tested_without_doc_id_pattern_and_measured_with_it(server, tmp_path):
    plain = write_config(tmp_path / "plain.toml", ingesting(server, "/chunked"))
    out = rlk("run", "-c", str(plain), "-p", PACK, "--smoke", "-o", "plain", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    assert f"ERROR (not tested)  {PACK}" in out.stdout
    assert "doc_id_pattern" in out.stdout
    (pack,) = report(tmp_path / "plain")["packs"]
    assert pack["tested"] is False and pack["wiring"]["reached"] is False
    assert "never reached the system" in pack["not_tested_reason"]

    # The same service, its chunk ids mapped back: the values the in-process reference gives.
    reference = rlk("run", "-p", PACK, "--smoke", "-o", "ref", cwd=tmp_path)
    assert reference.returncode in (0, 1), reference.stdout + reference.stderr
    mapped = write_config(
        tmp_path / "mapped.toml", ingesting(server, "/chunked", doc_id_pattern=CHUNK_PATTERN)
    )
    out = rlk("run", "-c", str(mapped), "-p", PACK, "--smoke", "-o", "mapped", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode == reference.returncode, out.stdout + out.stderr
    (pack,) = report(tmp_path / "mapped")["packs"]
    (want,) = report(tmp_path / "ref")["packs"]
    assert pack["tested"] is True and pack["wiring"]["unknown_ids"] == 0
    assert pack["values"] == want["values"] and pack["verdict"] == want["verdict"]
    retrieved = [d for r in runs(tmp_path / "mapped") for d in r["retrieved"]]
    assert retrieved and all(d["chunk_id"].startswith(d["doc_id"] + "::chunk-") for d in retrieved)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(", "not a valid regular expression"), ("^(.+)::c$", "named group (?P<doc_id>")],
)
def test_a_bad_doc_id_pattern_is_a_config_error_naming_the_option(
    server, tmp_path, pattern, message
):
    config = write_config(
        tmp_path / "c.toml", {"url": server.url("/simple"), "doc_id_pattern": pattern}
    )
    out = rlk("run", "-c", str(config), "-p", PACK, "-o", "o", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "$.target.options.doc_id_pattern" in out.stderr
    assert message in out.stderr
    assert not (tmp_path / "o").exists()
    assert server.hits == {}  # nothing was asked


# ---- isolation ---------------------------------------------------------------------------------

PACKS = ["-p", "relevance-hijack", "-p", "claim-corruption", "--smoke"]


def test_an_ingesting_target_without_reset_url_is_refused_several_packs(server, tmp_path):
    shared = ingesting(server)
    del shared["reset_url"]
    config = write_config(tmp_path / "shared.toml", shared)
    out = rlk("run", "-c", str(config), *PACKS, "-o", "o", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "cannot remove" in out.stderr and "reset_url" in out.stderr
    assert "--allow-shared-state" in out.stderr
    assert not (tmp_path / "o").exists() and server.hits == {}
    # with a reset_url each pack's documents are removed before the next pack ingests
    config = write_config(tmp_path / "reset.toml", ingesting(server))
    out = rlk("run", "-c", str(config), *PACKS, "-o", "o", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert [p["tested"] for p in report(tmp_path / "o")["packs"]] == [True, True]
    assert server.resets == 2


# ---- ingest, reset and a dead service ------------------------------------------------------------

TOKEN = "tok-4b1e9a-never-shown"


def test_an_ingest_401_leaves_the_pack_not_tested_with_the_call_named(server, tmp_path):
    server.fail(1, 401, path="/ingest")
    options = ingesting(server, headers={"Authorization": "Bearer ${RAG_TOKEN}"})
    config = write_config(tmp_path / "c.toml", options)
    out = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path,
              env={"RAG_TOKEN": TOKEN})  # fmt: skip
    no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    assert f"ERROR (not tested)  {PACK}" in out.stdout and "PASS" not in out.stdout
    (pack,) = report(tmp_path / "o")["packs"]
    assert pack["verdict"] == "error" and pack["tested"] is False
    assert pack["not_tested_reason"] == (
        f"ingest failed: TargetRequestError: ingest POST {server.url('/ingest')} failed after "
        '1 attempt (not retried): HTTP 401 Unauthorized: {"error": "injected 401"}'
    )
    assert "ingest POST" in out.stderr and "HTTP 401 Unauthorized" in out.stderr
    assert server.hits["/simple"] == 0  # no case was asked of a system without its documents
    assert all(
        r["error"]["message"].startswith("not asked: ingest failed") for r in runs(tmp_path / "o")
    )
    assert server.resets == 1  # what a partial ingest planted is still removed


def test_an_ingest_error_that_echoes_the_credentials_is_redacted(server, tmp_path):
    options = {**ingesting(server), "ingest_url": server.url("/leak/ingest")}
    options["headers"] = {"Authorization": "Bearer ${RAG_TOKEN}"}
    config = write_config(tmp_path / "c.toml", options)
    out = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path,
              env={"RAG_TOKEN": TOKEN})  # fmt: skip
    no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    (pack,) = report(tmp_path / "o")["packs"]
    assert "ingest POST" in pack["not_tested_reason"]
    assert "Bearer ***" in pack["not_tested_reason"]
    assert any(s.headers.get("authorization") == f"Bearer {TOKEN}" for s in server.seen)
    written = [out.stdout, out.stderr, *(p.read_text() for p in (tmp_path / "o").iterdir())]
    assert not [text for text in written if TOKEN in text]


def test_a_reset_failure_is_reported_on_its_pack(server, tmp_path):
    config = write_config(tmp_path / "c.toml", ingesting(server, retries=0), extra=LENIENT)
    # The fake serves the reference's answers: 12 of the 30 smoke cases fail; 0.4 allows them.
    args = ("run", "-c", str(config), "-p", PACK, "--smoke", "--max-fail-rate", "0.4")
    healthy = rlk(*args, "-o", "ok", cwd=tmp_path)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr  # passes when reset works
    assert f"PASS  {PACK}" in healthy.stdout
    server.fail(1, 500, path="/reset")
    out = rlk(*args, "-o", "o", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    assert f"PASS  {PACK}" not in out.stdout
    (pack,) = report(tmp_path / "o")["packs"]
    assert pack["verdict"] == "error" and pack["tested"] is True
    want = (
        f"reset failed: TargetRequestError: reset POST {server.url('/reset')} failed after "
        "1 attempt: HTTP 500 Internal Server Error"
    )
    assert any(r.startswith(want) for r in pack["reasons"]), pack["reasons"]
    assert any("later packs may see" in w for w in pack["warnings"])
    assert "reset POST" in out.stderr


def _closed_port_url(path: str) -> str:
    with FakeRagServer() as gone:
        return gone.url(path)


@pytest.mark.parametrize("how", ["refused", "503"])
def test_a_dead_service_stops_the_pack_after_max_consecutive_failures(server, tmp_path, how):
    if how == "refused":
        url = _closed_port_url("/simple")
    else:
        server.fail(1000, 503, path="/simple")  # a gateway saying the system is down
        url = server.url("/simple")
    config = write_config(
        tmp_path / "c.toml", {"url": url, "retries": 0}, max_consecutive_failures=3
    )
    out = rlk("run", "-c", str(config), "-p", PACK, "--concurrency", "1", "-o", "o", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    assert f"ERROR (not tested)  {PACK}" in out.stdout and "PASS" not in out.stdout
    (pack,) = report(tmp_path / "o")["packs"]
    assert pack["tested"] is False
    reason = pack["not_tested_reason"]
    assert reason.startswith("target unreachable: 3 consecutive requests failed to reach it")
    assert f"POST {url} failed after 1 attempt" in reason
    assert ("ConnectError" if how == "refused" else "HTTP 503") in reason
    records = runs(tmp_path / "o")
    asked = [r for r in records if not r["error"]["message"].startswith("not asked")]
    assert len(asked) == 3 and len(records) > 3
    if how == "503":
        assert server.hits["/simple"] == 3


def test_errors_the_system_answers_with_never_stop_the_pack(server, tmp_path):
    server.fail(1000, 500, path="/simple")  # the system is reachable, and broken
    config = write_config(
        tmp_path / "c.toml",
        {"url": server.url("/simple"), "retries": 0},
        max_consecutive_failures=3,
    )
    out = rlk(
        "run",
        "-c",
        str(config),
        "-p",
        PACK,
        "--smoke",
        "--concurrency",
        "1",
        "-o",
        "o",
        cwd=tmp_path,
    )
    no_traceback(out)
    assert out.returncode == 1, out.stdout + out.stderr  # errored cases fail a tested pack
    records = runs(tmp_path / "o")
    assert server.hits["/simple"] == len(records) > 3
    assert all("HTTP 500" in r["error"]["message"] for r in records)


# ---- streamed answers ----------------------------------------------------------------------------


def test_a_streaming_service_errors_every_case_with_a_clear_message(server, tmp_path):
    config = write_config(tmp_path / "c.toml", ingesting(server, "/stream"), extra=LENIENT)
    out = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode == 1, out.stdout + out.stderr  # errored cases fail the pack
    assert f"PASS  {PACK}" not in out.stdout
    records = runs(tmp_path / "o")
    assert records and all(
        r["error"]["message"].startswith("TargetResponseError: the response of POST")
        and "is a stream (text/event-stream); ragleaklab reads one JSON object"
        in r["error"]["message"]
        for r in records
    )
