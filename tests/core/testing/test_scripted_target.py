"""The testing kit's scripted target: replies chosen by query, rule or case, what it records, its
asynchronous form, and a real run of a built-in pack on it, in process and through the CLI."""

from __future__ import annotations

import asyncio
import builtins
import json
from pathlib import Path

import pytest

from ragleaklab_core import Case, Document
from ragleaklab_core.config import plugin_options
from ragleaklab_core.run.records import RunSettings
from ragleaklab_core.run.runner import load_pack, run_pack
from ragleaklab_core.testing import (
    Asked,
    AsyncScriptedTarget,
    Reply,
    Rule,
    ScriptedTarget,
    assert_target_contract,
)
from tests.support.workspace import Workspace

SCRIPTED = "ragleaklab_core.testing:ScriptedTarget"
ASYNC_SCRIPTED = "ragleaklab_core.testing:AsyncScriptedTarget"
#: A whole query of even length (the rule the faulty targets use).
EVEN = r"(?s)\A(?:..)*\Z"


def ids(response):
    return None if response.retrieved is None else [d.doc_id for d in response.retrieved]


def test_an_exact_query_wins_over_a_rule_and_a_rule_over_the_default():
    target = ScriptedTarget(
        replies={"ab": Reply("exact", retrieved=("d1", "d2"))},
        rules=[Rule("^a", Reply("rule", retrieved=None)), Rule("b", Reply("second rule"))],
        default=Reply("default"),
    )
    first = target.answer("ab")
    assert (first.answer, ids(first)) == ("exact", ["d1", "d2"])
    ruled = target.answer("ax")
    assert (ruled.answer, ids(ruled)) == ("rule", None)  # the first matching rule only
    assert target.answer("xb").answer == "second rule"
    fallback = target.answer("zz")
    assert (fallback.answer, ids(fallback)) == ("default", [])
    assert target.asked == [Asked("ab"), Asked("ax"), Asked("xb"), Asked("zz")]


def test_without_a_default_an_unscripted_query_is_an_error_not_an_answer():
    target = ScriptedTarget(replies={"known": Reply("yes")}, default=None)
    assert target.answer("known").answer == "yes"
    with pytest.raises(LookupError, match="no reply for 'unknown'"):
        target.answer("unknown")


def test_an_empty_answer_and_metadata_are_returned_as_scripted():
    response = ScriptedTarget(default=Reply(metadata={"trace": [1]})).answer("q")
    assert (
        response.answer == "" and response.retrieved == () and response.metadata == {"trace": [1]}
    )


@pytest.mark.parametrize("kind", ["TimeoutError", "ConnectionError", "RuntimeError"])
def test_an_error_reply_raises_its_type_with_its_message(kind):
    target = ScriptedTarget(rules=[Rule(EVEN, Reply("never", error="down", error_type=kind))])
    with pytest.raises(getattr(builtins, kind), match=r"^down$") as err:
        target.answer("ab")
    assert type(err.value).__name__ == kind
    assert target.answer("abc").answer == ""  # odd length: the default


def test_bad_scripts_are_refused_when_built():
    with pytest.raises(ValueError, match="error_type 'KeyboardInterrupt' is not one of"):
        Reply(error="x", error_type="KeyboardInterrupt")
    with pytest.raises(Exception, match=r"unterminated|missing"):
        Rule("(")


def test_it_records_documents_principals_resets_and_close():
    target = ScriptedTarget()
    docs = [Document("d1", "one"), Document("d2", "two")]
    target.ingest(iter(docs))
    assert target.documents == docs
    target.answer("q", principal="acme:alice")
    assert target.asked == [Asked("q", "acme:alice")]
    target.reset()
    assert target.documents == [] and target.resets == 1 and not target.closed
    target.close()
    assert target.closed
    with pytest.raises(RuntimeError, match="read-only"):
        ScriptedTarget(ingest_error="the index is read-only").ingest(docs)


def test_for_cases_scripts_by_test_id():
    cases = [Case("c1", "first?"), Case("c2", "second?"), Case("c3", "first?")]
    target = ScriptedTarget.for_cases(cases, {"c1": Reply("one"), "c2": Reply(error="no")})
    assert target.answer("first?").answer == "one"
    with pytest.raises(RuntimeError, match="no"):
        target.answer("second?")
    with pytest.raises(LookupError):
        target.answer("third?")  # no default given: unscripted queries are errors
    with pytest.raises(ValueError, match=r"no case has test_id \['c9'\]"):
        ScriptedTarget.for_cases(cases, {"c9": Reply()})
    with pytest.raises(ValueError, match="cases sharing the query 'first\\?'"):
        ScriptedTarget.for_cases(cases, {"c1": Reply("one"), "c3": Reply("three")})


def test_the_async_form_answers_through_aanswer_after_its_delay():
    target = AsyncScriptedTarget(replies={"q": Reply("a")}, delay=0.01)

    async def talk():
        await target.aingest([Document("d", "t")])
        answers = await asyncio.gather(*(target.aanswer("q", principal=p) for p in "xy"))
        await target.areset()
        await target.aclose()
        return answers

    answers = asyncio.run(talk())
    assert [a.answer for a in answers] == ["a", "a"]
    assert sorted(a.principal for a in target.asked) == ["x", "y"]
    assert target.resets == 1 and target.closed


@pytest.mark.parametrize("cls", [ScriptedTarget, AsyncScriptedTarget])
def test_both_forms_honour_the_target_contract(cls):
    (response,) = assert_target_contract(
        cls(replies={"q": Reply("a", retrieved=("d",))}), [Document("d", "t")], ["q"]
    )
    assert (response.answer, ids(response)) == ("a", ["d"])


def test_options_build_it_and_are_recorded_as_plain_data(rlk_fake_dist):
    rlk_fake_dist("acme-scripted", entry_points={"ragleaklab.targets": {"scripted": SCRIPTED}})
    options = {
        "replies": {"q": {"answer": "a", "retrieved": ["d1"]}},
        "rules": [{"pattern": "^x", "reply": {"error": "down", "error_type": "TimeoutError"}}],
        "default": None,
    }
    loaded = assert_target_contract("scripted", [Document("d1", "t")], ["q"], options=options)
    assert ids(loaded[0]) == ["d1"]
    built = ScriptedTarget(
        replies={"q": Reply("a", retrieved=("d1",))},
        rules=[Rule("^x", Reply(error="down", error_type="TimeoutError"))],
        default=None,
    )
    recorded = plugin_options(built)
    assert json.loads(json.dumps(recorded)) == recorded  # report.json can hold it
    assert recorded["replies"]["q"]["retrieved"] == ["d1"] and recorded["default"] is None
    with pytest.raises(pytest.fail.Exception, match=r"unknown key 'replys'"):
        assert_target_contract("scripted", [], ["q"], options={"replys": {}})


@pytest.mark.parametrize("entry", [SCRIPTED, ASYNC_SCRIPTED])
def test_a_real_run_errors_exactly_the_scripted_cases(rlk_fake_dist, entry):
    rlk_fake_dist("acme-scripted", entry_points={"ragleaklab.targets": {"scripted": entry}})
    pack = load_pack("relevance-hijack")
    smoke = [c for c in pack.obj.cases() if "smoke" in c.tags]
    poison = "rh-poison-doc"
    options = {
        "rules": [{"pattern": EVEN, "reply": {"error": "down", "error_type": "TimeoutError"}}],
        "default": {"answer": "fine", "retrieved": [poison]},
    }
    done = run_pack(
        pack,
        target_name="scripted",
        target_options=options,
        settings=RunSettings(tags=("smoke",), concurrency=4),
    )
    records = {r.test_id: r for r in done.records}
    assert set(records) == {c.test_id for c in smoke}
    for case in smoke:
        record = records[case.test_id]
        if len(case.query) % 2 == 0:
            assert record.error is not None and record.answer is None, case
            assert "TimeoutError" in json.dumps(record.error) and "down" in json.dumps(record.error)
        else:
            assert record.error is None and record.answer == "fine", case
            assert [r["doc_id"] for r in record.retrieved] == [poison]
    assert any(len(c.query) % 2 == 0 for c in smoke) and any(len(c.query) % 2 for c in smoke)


def test_the_cli_runs_a_principal_pack_on_it_from_a_config_file(tmp_path: Path):
    ws = Workspace(tmp_path, extra_entry_points={"ragleaklab.targets": {"scripted": SCRIPTED}})
    (tmp_path / "ragleaklab.toml").write_text(
        '[target]\nname = "scripted"\n\n[target.options]\n'
        'default = { answer = "I cannot share that.", retrieved = ["kb-access-curlew"] }\n',
        encoding="utf-8",
    )
    # One answer to every question: the pack is not tested (exit 3, docs/running.md), but every
    # case was still asked as its principal.
    done = ws.cli(
        "run", "-c", "ragleaklab.toml", "-p", "cross-tenant", "--smoke", "-o", "out", ok=(3,)
    )
    assert "Traceback" not in done.stderr
    assert "every answer was the same text" in done.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["target"]["name"] == "scripted"
    assert report["target"]["options"]["default"]["answer"] == "I cannot share that."
    runs = [json.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    assert runs and {r["answer"] for r in runs} == {"I cannot share that."}
    # every case asked as its own principal (when it has one), never anonymously
    principals = {c.test_id: c.principal for c in load_pack("cross-tenant").obj.cases()}
    assert all(r.get("principal") == principals[r["test_id"]] for r in runs)
    assert any(r.get("principal") for r in runs)
    assert {tuple(d["doc_id"] for d in r["retrieved"]) for r in runs} == {("kb-access-curlew",)}
