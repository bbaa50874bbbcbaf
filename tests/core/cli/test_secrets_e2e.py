"""Secrets never leave a run: the real CLI, at -vv, against the loopback server, with --record.

The credentials come from the environment (``Bearer ${RAG_TOKEN}`` in a header, ``?api_key=
${RAG_KEY}`` in the URLs); the server checks they were sent, and not one of them (raw,
percent-encoded or JSON-escaped) may appear on stdout, on stderr (console or JSON logs, httpx's
request lines included), in report.json, runs.jsonl or the recording.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

TOKEN = "some-unique-secret-value-7c2e/+9"
KEY = "rag-key-unique-5d1a=="
PACK = "relevance-hijack"


def forms(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}


@pytest.mark.parametrize("log_format", ["console", "json"])
def test_no_secret_reaches_any_output_while_every_request_carries_them(tmp_path, log_format):
    with FakeRagServer() as server:
        query = "?api_key=${RAG_KEY}&mode=fast"
        config = tmp_path / "c.toml"
        config.write_text(
            f"""
[target]
name = "http"

[target.options]
url = "{server.url("/simple")}{query}"
ingest_url = "{server.url("/ingest")}{query}"
reset_url = "{server.url("/reset")}{query}"
headers = {{ Authorization = "Bearer ${{RAG_TOKEN}}" }}
""",
            encoding="utf-8",
        )
        out = rlk(
            "-vv", "--log-format", log_format,
            "run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o", "--record", "rec",
            cwd=tmp_path, env={"RAG_TOKEN": TOKEN, "RAG_KEY": KEY}, epoch="1",
        )  # fmt: skip
        seen = list(server.seen)
    assert out.returncode in (0, 1), out.stdout + out.stderr  # tested: pass or fail, no error
    assert "Traceback" not in out.stderr

    # The run really sent the credentials, on every call: ingest, each query, reset.
    paths = [s.path for s in seen]
    assert paths[0] == "/ingest" and paths[-1] == "/reset" and "/simple" in paths
    assert all(s.headers.get("authorization") == f"Bearer {TOKEN}" for s in seen)
    assert all(s.params.get("api_key") == KEY for s in seen)

    # The logs are there (httpx's request lines included), with the credentials as ***.
    assert "HTTP Request: POST" in out.stderr and "api_key=***" in out.stderr
    if log_format == "json":
        events = [json.loads(line) for line in out.stderr.splitlines() if line.startswith("{")]
        assert events and any("HTTP Request" in e["event"] for e in events)

    files = sorted(p for d in ("o", "rec") for p in (tmp_path / d).rglob("*") if p.is_file())
    assert {p.name for p in files} >= {"report.json", "runs.jsonl", f"{PACK}.jsonl"}
    outputs = {"stdout": out.stdout, "stderr": out.stderr}
    outputs.update({str(p.relative_to(tmp_path)): p.read_text(encoding="utf-8") for p in files})
    leaks = [
        (where, form)
        for where, text in outputs.items()
        for secret in (TOKEN, KEY)
        for form in forms(secret)
        if form in text
    ]
    assert leaks == []

    # What reproduces the run is kept: the references, not their values.
    options = json.loads((tmp_path / "o" / "report.json").read_text())
    text = json.dumps(options)
    assert "Bearer ${RAG_TOKEN}" in text and "api_key=${RAG_KEY}" in text
