"""Every pack in one command against a FastAPI service with a bearer token and a principal
header, once ignoring the principal and once enforcing it.

The service (``rlk_app_fastapi.py``) is the one of test_fastapi_app.py, started with
``RLK_APP_ACCESS=ignore`` (one shared index: the cross-tenant leak) or ``enforce`` (retrieval
skips what the ``X-User`` may not see, by the ``access`` ingest sent). One config serves every
pack: ``cross-tenant`` asks as its tenants' users through ``X-User = "{principal}"``, and every
case without a principal (a few of cross-tenant's, all of the other packs') goes out without the
header (docs/targets.md, an anonymous case on http), so no case errors for lack of one.

What is asserted per pack, since the whole run's verdict is not about principals: this naive
service repeats its best chunk, so ``verbatim-extraction`` fails on both apps, and
``citation-forgery`` is not tested on both (its answers cite nothing the metric can judge); the
run exits 1 either way. ``cross-tenant`` is the pack the principal decides: it fails on the
ignoring app and passes on the enforcing one. Its smoke subset has only 5 attack cases, so the
enforcing app is also run on the whole pack (623 cases, 168 attacks), which it must pass too.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core import PACKS, available_names
from tests.apps.support import fastapi_seen, fastapi_service, no_traceback, report, rlk, runs

TOKEN = "fastapi-token-0b7d41c6"
CROSS = "cross-tenant"
APPS = ("ignore", "enforce")
DOC = Path(__file__).resolve().parents[2] / "docs" / "targets.md"
#: The config of docs/targets.md's HTTP example, as written (its service at the test's port).
EXAMPLE = re.search(
    r"<!-- example-http: ragleaklab.toml -->\n```toml\n(.*?)```", DOC.read_text("utf-8"), re.S
)
assert EXAMPLE is not None, "docs/targets.md lost its HTTP example"
CONFIG = EXAMPLE.group(1)


def _run(tmp: Path, base: str, *args: str) -> dict[str, Any]:
    cfg = tmp / "cfg.toml"
    cfg.write_text(CONFIG.replace("http://127.0.0.1:8000", base))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAG_API_TOKEN", TOKEN)  # the subprocess inherits it
        done = rlk("run", *args, "-c", str(cfg), "-o", "out", cwd=tmp)
    no_traceback(done)
    assert TOKEN not in done.stdout + done.stderr
    return {
        "out": tmp / "out",
        "done": done,
        "report": report(tmp / "out"),
        "runs": runs(tmp / "out"),
        "seen": fastapi_seen(base),
    }


@pytest.fixture(scope="module")
def every_pack(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """``ragleaklab run --smoke -c cfg.toml -o out`` (no ``-p``) against each app, each on a
    service of its own (so what it saw is this run's)."""
    results = {}
    for access in APPS:
        with fastapi_service(RLK_APP_TOKEN=TOKEN, RLK_APP_ACCESS=access) as base:
            results[access] = _run(tmp_path_factory.mktemp(access), base, "--smoke")
    return results


def _pack(result: dict[str, Any], name: str) -> dict[str, Any]:
    [pack] = [p for p in result["report"]["packs"] if p["name"] == name]
    return pack


@pytest.mark.parametrize("access", APPS)
def test_one_command_reports_every_installed_pack_and_no_case_errors(every_pack, access):
    result = every_pack[access]
    done, report_ = result["done"], result["report"]
    assert done.returncode == report_["exit_code"] == 1, done.stdout + done.stderr
    assert report_["verdict"] == "fail"
    # a finished run leaves neither a journal nor a ledger of planted documents
    left = {p.name for p in result["out"].iterdir()}
    assert not left & {"runs.journal.json", "runs.jsonl.partial", "planted.jsonl"}, left
    names = [p["name"] for p in report_["packs"]]
    assert sorted(names) == sorted(available_names(PACKS))
    for pack in report_["packs"]:
        assert pack["verdict"] in {"pass", "fail", "error"}, pack["name"]
        assert pack["cases"]["run"] > 0 and pack["cases"]["errored"] == 0, pack["name"]
    # every case was asked and answered: none errored for lack of a principal (or at all)
    records = result["runs"]
    assert (
        len(records)
        == report_["totals"]["cases"]
        == sum(p["cases"]["run"] for p in report_["packs"])
    )
    assert [r["test_id"] for r in records if r["error"] is not None] == []
    # what this naive service earns whatever it does with the principal (see the docstring)
    assert _pack(result, "verbatim-extraction")["verdict"] == "fail"
    citation = _pack(result, "citation-forgery")
    assert (citation["verdict"], citation["tested"]) == ("error", False)
    assert "cited = 0 in every case" in citation["not_tested_reason"]


@pytest.mark.parametrize("access", APPS)
def test_the_principal_header_is_sent_for_principals_and_left_out_for_anonymous_cases(
    every_pack, access
):
    result = every_pack[access]
    records, seen = result["runs"], result["seen"]
    asked_as = Counter(r["principal"] for r in records if r.get("principal") is not None)
    anonymous = [r for r in records if r.get("principal") is None]
    # exactly the cases with a principal carried X-User, each with its own principal
    assert seen["users"] == dict(asked_as)
    assert all(r["pack"] == CROSS for r in records if r.get("principal") is not None)
    # every other case came without the header: never empty, never the placeholder
    assert seen["anonymous"] == len(anonymous) > 0
    assert {r["pack"] for r in anonymous} == set(available_names(PACKS))  # cross-tenant's too
    # ingest told the service who may see each document, and nothing else of the ground truth
    assert seen["fields"] == ["access", "doc_id", "text"]
    assert seen["chunks"] == []  # every pack's documents removed at its reset


def test_the_app_that_ignores_the_principal_fails_cross_tenant(every_pack):
    pack = _pack(every_pack["ignore"], CROSS)
    assert (pack["verdict"], pack["tested"]) == ("fail", True)
    values = pack["values"]
    assert values["forbidden_words"]["failing_cases"] > 0
    assert values["forbidden_retrieved"]["summary"]["max"] > 0  # other tenants' records retrieved


def test_the_app_that_enforces_the_principal_passes_cross_tenant(every_pack, tmp_path):
    pack = _pack(every_pack["enforce"], CROSS)
    assert (pack["verdict"], pack["tested"]) == ("pass", True)
    # it passes because retrieval never returned a document the asker may not see
    assert pack["values"]["forbidden_retrieved"]["summary"]["max"] == 0
    assert pack["wiring"]["reached"] is True and pack["wiring"]["unknown_ids"] == 0
    # the smoke subset has 5 attacks: the whole pack (168) must pass as well
    with fastapi_service(RLK_APP_TOKEN=TOKEN, RLK_APP_ACCESS="enforce") as base:
        whole = _run(tmp_path, base, "-p", CROSS)
    assert whole["done"].returncode == 0, whole["done"].stdout + whole["done"].stderr
    [pack] = whole["report"]["packs"]
    assert (pack["name"], pack["verdict"], pack["tested"]) == (CROSS, "pass", True)
    assert pack["cases"]["run"] == pack["cases"]["in_pack"] == len(whole["runs"]) > 600
    assert all(r["error"] is None for r in whole["runs"])
    assert pack["values"]["forbidden_retrieved"]["summary"]["max"] == 0


def test_the_principal_changes_only_what_cross_tenant_measures(every_pack):
    # The other packs ask no case as a principal: both apps give them the same answers.
    answers = {
        access: {
            (r["pack"], r["test_id"]): r["answer"]
            for r in every_pack[access]["runs"]
            if r["pack"] != CROSS
        }
        for access in APPS
    }
    assert answers["ignore"] == answers["enforce"] and len(answers["ignore"]) > 0
    for name in available_names(PACKS):
        if name != CROSS:
            verdicts = [_pack(every_pack[a], name)["verdict"] for a in APPS]
            assert verdicts[0] == verdicts[1], name
