"""A FastAPI RAG service on loopback, tested through the http target and the real CLI.

The service returns chunk ids of its own and guards ingest with a bearer token. Unmapped, the
attack never reaches it as far as the metrics can tell: not tested (exit 3), never PASS. Mapped
with ``doc_id_pattern``, the run finds its leaks. A wrong token is an ingest failure that names
the call, without a traceback or the token. Ingest sends the pack's ids and texts, never the
ground truth.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragleaklab_core import FLAG_HIGH
from tests.apps.support import fastapi_seen, fastapi_service, no_traceback, report, rlk, runs

TOKEN = "fastapi-token-5f0c2e9a"
SENTINEL = "sentinel-takeover-safe"
HIJACK = "relevance-hijack"
PATTERN = r"^(?P<doc_id>.+?)::chunk-\d+$"


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    with fastapi_service(RLK_APP_TOKEN=TOKEN) as base:
        yield base


def _toml(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def config(path: Path, base: str, **extra: str) -> Path:
    options = {
        "url": f"{base}/ask",
        "body": {"question": "{query}"},
        "headers": {"Authorization": "Bearer ${RLK_APP_TOKEN}"},
        "ingest_url": f"{base}/documents",
        "reset_url": f"{base}/reset",
        **extra,
    }
    lines = ["[target]", 'name = "http"', "", "[target.options]"]
    lines += [f"{key} = {_toml(value)}" for key, value in options.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(tmp_path: Path, cfg: Path, *args: str, token: str = TOKEN):
    os.environ["RLK_APP_TOKEN"] = token  # the subprocess inherits it (the env rlk passes on)
    try:
        return rlk("run", "-c", str(cfg), *args, cwd=tmp_path)
    finally:
        del os.environ["RLK_APP_TOKEN"]


def test_unmapped_chunk_ids_are_not_tested_and_mapped_ones_find_the_hijacks(tmp_path, service):
    unmapped = run(tmp_path, config(tmp_path / "u.toml", service), "-p", HIJACK, "-o", "u")
    assert unmapped.returncode == 3, unmapped.stdout + unmapped.stderr
    no_traceback(unmapped)
    [pack] = report(tmp_path / "u")["packs"]
    assert (pack["verdict"], pack["tested"]) == ("error", False)
    assert pack["not_tested_reason"].startswith("the attack never reached the system")
    assert "::chunk-" in pack["not_tested_reason"]

    # This app's own gate: any poison document among the 5 sources fails the case (the pack's
    # default, fitted on the reference target, needs all 5; see docs/packs.md).
    gate = tmp_path / "gate.json"
    gate.write_text(
        json.dumps(
            {
                "format": "ragleaklab-thresholds",
                "version": 1,
                "packs": {
                    HIJACK: {"poison_rate_at_k": {"threshold": 0.2, "decision_rule": FLAG_HIGH}}
                },
            }
        )
    )
    cfg = config(tmp_path / "m.toml", service, doc_id_pattern=PATTERN)
    mapped = run(tmp_path, cfg, "-p", HIJACK, "--thresholds", str(gate), "-o", "m")
    assert mapped.returncode == 1, mapped.stdout + mapped.stderr
    [pack] = report(tmp_path / "m")["packs"]
    assert (pack["verdict"], pack["tested"]) == ("fail", True)
    assert pack["wiring"]["reached"] is True and pack["wiring"]["unknown_ids"] == 0
    records = runs(tmp_path / "m")
    chunk_ids = [r["chunk_id"] for record in records for r in record["retrieved"]]
    assert chunk_ids and all("::chunk-" in c for c in chunk_ids)
    # The failing cases are exactly those whose sources hold a poison document.
    hijacked = [
        r["test_id"]
        for r in records
        if any(x["doc_id"].startswith("rh-poison-") for x in r["retrieved"])
    ]
    assert 0 < pack["values"]["poison_rate_at_k"]["failing_cases"] == len(hijacked) < len(records)
    # the service forgot the pack at reset, and ingest sent ids and texts only
    state = fastapi_seen(service)
    assert state["chunks"] == []
    assert set(state["fields"]) <= {"doc_id", "text"}, state["fields"]


def test_a_wrong_token_is_an_ingest_failure_that_names_the_call(tmp_path, service):
    cfg = config(tmp_path / "c.toml", service, doc_id_pattern=PATTERN)
    out = run(tmp_path, cfg, "-p", SENTINEL, "--smoke", "-o", "o", token="not-the-token-81c3")
    assert out.returncode == 3, out.stdout + out.stderr
    no_traceback(out)
    [pack] = report(tmp_path / "o")["packs"]
    assert pack["tested"] is False
    reason = pack["not_tested_reason"]
    assert reason.startswith("ingest failed") and "401" in reason, reason
    assert f"{service}/documents" in reason
    records = runs(tmp_path / "o")
    assert records and all(r["error"]["message"].startswith("not asked") for r in records)
    every_file = "".join(p.read_text() for p in (tmp_path / "o").rglob("*") if p.is_file())
    assert "not-the-token-81c3" not in every_file + out.stdout + out.stderr


def test_without_a_reset_url_several_packs_are_refused(tmp_path, service):
    cfg = config(tmp_path / "c.toml", service, doc_id_pattern=PATTERN)
    text = cfg.read_text().replace(f'reset_url = "{service}/reset"\n', "")
    cfg.write_text(text)
    out = run(tmp_path, cfg, "-p", SENTINEL, "-p", "relevance-hijack", "--smoke", "-o", "o")
    assert out.returncode == 2, out.stdout + out.stderr
    no_traceback(out)
    assert "cannot remove" in out.stderr and "reset_url" in out.stderr
    assert not (tmp_path / "o").exists()
