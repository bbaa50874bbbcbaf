"""A case asked as a principal: the case key, the runner's plumbing, record and replay.

Targets written before principals existed (``answer(query)``) keep answering anonymous cases;
a case with a principal is errored on them, naming the target, never asked without it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ragleaklab_core import Case, Response
from ragleaklab_core._discovery import TARGETS, LoadedPlugin
from ragleaklab_core.errors import InputError
from ragleaklab_core.packs.manifest import load_manifest
from ragleaklab_core.run.executor import Ask, PackTarget, answer_asks
from ragleaklab_core.run.principal import (
    PrincipalUnsupported,
    accepts_principal,
    principal_support,
)
from ragleaklab_core.run.recording import Recorder, Replay
from ragleaklab_core.run.records import CaseRecord, RunSettings
from ragleaklab_core.values import PackInfo


class Legacy:
    """A third-party target from before principals: answer(query) only."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def ingest(self, documents):
        pass

    def answer(self, query):
        self.asked.append(query)
        return Response(f"anon: {query}")


class Aware:
    """Asks as a principal when given one."""

    def ingest(self, documents):
        pass

    def answer(self, query, *, principal=None):
        return Response(f"{principal or 'anon'}: {query}")


class AsyncAware(Aware):
    async def aanswer(self, query, principal=None):
        return Response(f"async {principal or 'anon'}: {query}")


class Forwarding(Legacy):
    """**kwargs is not a declaration: a wrapper that forwards everything may drop it."""

    def answer(self, query, **kwargs):
        return Response("forwarded")


def _session(obj, name="acme") -> PackTarget:
    plugin = LoadedPlugin(TARGETS, name, "acme:T", "acme 1.0", obj, {})
    return PackTarget(plugin, RunSettings())


def _ask(session: PackTarget, case: Case) -> Response:
    return asyncio.run(session.answer(case, 0))


def test_the_signature_is_the_declaration():
    assert not accepts_principal(Legacy())
    assert accepts_principal(Aware())
    assert accepts_principal(AsyncAware())
    assert not accepts_principal(Forwarding())


class Declared(Aware):
    def __init__(self, carries):
        self.carries_principal = carries


def test_what_the_runner_knows_before_the_run():
    assert principal_support(Legacy()) is False
    assert principal_support(Forwarding()) is False
    assert principal_support(Aware()) is None  # only the target can judge, per case
    assert principal_support(Declared(True)) is True
    assert principal_support(Declared(False)) is False
    assert principal_support(Declared("yes")) is None  # not a declaration
    # A declaration never grants what the signature does not have.
    legacy = Legacy()
    legacy.carries_principal = True  # type: ignore[attr-defined]
    assert principal_support(legacy) is False


def test_the_python_target_says_whether_its_app_carries_a_principal(app_module):
    def named(query, principal=None):
        return "x"

    def plain(query):
        return "x"

    assert _python(app_module, named=named).carries_principal is True
    assert _python(app_module, plain=plain).carries_principal is False
    assert _python(app_module, app=Aware()).carries_principal is True
    assert _python(app_module, app=Legacy()).carries_principal is False


def test_a_legacy_target_answers_anonymous_cases_as_before():
    target = Legacy()
    assert _ask(_session(target), Case("c1", "hello")).answer == "anon: hello"
    assert target.asked == ["hello"]


def test_a_case_with_a_principal_is_refused_on_a_legacy_target_and_never_asked():
    target = Legacy()
    with pytest.raises(PrincipalUnsupported, match=r"target 'acme' cannot ask as one"):
        _ask(_session(target), Case("c1", "hello", principal="alice"))
    assert target.asked == []


def test_the_principal_reaches_a_target_that_accepts_it():
    assert _ask(_session(Aware()), Case("c1", "q", principal="alice")).answer == "alice: q"
    assert _ask(_session(Aware()), Case("c1", "q")).answer == "anon: q"
    assert _ask(_session(AsyncAware()), Case("c1", "q", principal="bob")).answer == "async bob: q"


def test_a_refused_case_is_an_errored_record_naming_the_target():
    session = _session(Legacy(), name="legacy-rag")
    cases = [Case("anon", "q"), Case("as-alice", "q", principal="alice")]
    records: dict[str, CaseRecord] = {}

    async def asks():
        for i, case in enumerate(cases):
            yield Ask(i, i, 0, case)

    asyncio.run(
        answer_asks(
            "p", session, (), RunSettings(), asks(), lambda a, r: records.update({r.test_id: r})
        )
    )
    assert records["anon"].error is None and records["anon"].principal is None
    error = records["as-alice"].error
    assert error is not None and error["plugin"] == "legacy-rag"
    assert "cannot ask as one" in error["message"]
    assert records["as-alice"].principal == "alice"
    assert records["as-alice"].to_dict()["principal"] == "alice"
    assert "principal" not in records["anon"].to_dict()  # anonymous lines unchanged


def test_case_values_refuse_an_empty_or_non_string_principal():
    with pytest.raises(ValueError):
        Case("c", "q", principal="")
    with pytest.raises(TypeError):
        Case("c", "q", principal=7)  # type: ignore[arg-type]


def _pack(tmp_path: Path, *case_lines: dict) -> Path:
    (tmp_path / "pack.toml").write_text(
        'name = "p"\nversion = "1"\npack_type = "t"\nmetrics = ["m"]\n'
        'documents = ["docs.jsonl"]\ncases = "cases.jsonl"\n'
    )
    (tmp_path / "docs.jsonl").write_text(
        json.dumps(
            {
                "doc_id": "d1",
                "text": "payroll",
                "metadata": {"access": {"owner": "alice", "groups": ["finance"]}},
            }
        )
        + "\n"
    )
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in case_lines))
    return tmp_path


def test_cases_jsonl_carries_an_optional_principal(tmp_path):
    pack = _pack(
        tmp_path,
        {"test_id": "a", "query": "q"},
        {"test_id": "b", "query": "q", "principal": "tenant-7"},
    )
    cases = list(load_manifest(pack).cases)
    assert [c.principal for c in cases] == [None, "tenant-7"]


@pytest.mark.parametrize("bad", ["", "  ", 7, ["alice"]])
def test_a_malformed_principal_names_the_file_and_line(tmp_path, bad):
    pack = _pack(
        tmp_path,
        {"test_id": "a", "query": "q"},
        {"test_id": "b", "query": "q", "principal": bad},
    )
    with pytest.raises(InputError) as info:
        load_manifest(pack)
    message = str(info.value)
    assert "cases.jsonl:2:" in message and "@ $.principal" in message


def _recorded(tmp_path: Path, case: Case) -> Replay:
    recorder = Recorder(tmp_path)
    recorder.start_pack("p")
    recorder.add(case, 0, Response("the answer"))
    recorder.finish_pack(
        PackInfo(name="p", version="1", pack_type="t", metrics=("m",)),
        LoadedPlugin(TARGETS, "acme", "acme:T", "acme 1.0", None, {}),
    )
    return Replay.open(tmp_path)


def _replayed(replay: Replay, case: Case) -> Response:
    target = replay.target_for("p")
    session = PackTarget(target, RunSettings())
    return asyncio.run(session.answer(case, 0))


def test_the_principal_is_part_of_the_recording(tmp_path):
    replay = _recorded(tmp_path, Case("c", "q", principal="alice"))
    line = json.loads((tmp_path / "p.jsonl").read_text())
    assert line["principal"] == "alice"
    assert _replayed(replay, Case("c", "q", principal="alice")).answer == "the answer"
    with pytest.raises(LookupError, match="principal 'alice' recorded, principal 'bob' now"):
        _replayed(replay, Case("c", "q", principal="bob"))
    with pytest.raises(LookupError, match="principal 'alice' recorded, no principal now"):
        _replayed(replay, Case("c", "q"))


def test_an_anonymous_recording_does_not_answer_a_case_asked_as_a_principal(tmp_path):
    replay = _recorded(tmp_path, Case("c", "q"))
    assert "principal" not in json.loads((tmp_path / "p.jsonl").read_text())
    assert _replayed(replay, Case("c", "q")).answer == "the answer"
    with pytest.raises(LookupError, match="no principal recorded"):
        _replayed(replay, Case("c", "q", principal="alice"))


# ---- the built-in targets ------------------------------------------------------------------------


def test_the_reference_target_reports_the_principal_it_was_asked_as():
    from ragleaklab_plugins.targets.reference import ReferenceTarget

    from ragleaklab_core import Document

    target = ReferenceTarget()
    target.ingest([Document("d1", "Payroll for March is in the finance share.")])
    anonymous = target.answer("payroll march")
    asked = _ask(_session(target), Case("c", "payroll march", principal="alice"))
    assert asked.metadata["principal"] == "alice"
    assert "principal" not in anonymous.metadata
    # Asked as a principal, the model's record also says what that principal may see (here
    # everything: no document is restricted); nothing else differs.
    access = asked.metadata["simulated"]["access"]
    assert access["principal"] == "alice" and access["forbidden_in_answer"] == []
    simulated = {k: v for k, v in asked.metadata["simulated"].items() if k != "access"}
    assert simulated == anonymous.metadata["simulated"]
    rest = {k: v for k, v in asked.metadata.items() if k not in ("principal", "simulated")}
    assert rest == {k: v for k, v in anonymous.metadata.items() if k != "simulated"}


@pytest.fixture
def app_module(monkeypatch):
    import sys
    import types

    monkeypatch.setattr(sys, "path", list(sys.path))  # the target adds the cwd to sys.path
    module = types.ModuleType("rlk_principal_app")
    monkeypatch.setitem(sys.modules, "rlk_principal_app", module)
    return module


def _python(app_module, **apps):
    from ragleaklab_plugins.targets.python import PythonTarget

    for name, value in apps.items():
        setattr(app_module, name, value)
    (name,) = apps
    return PythonTarget(callable=f"rlk_principal_app:{name}")


def test_the_python_target_passes_the_principal_to_a_function_that_names_it(app_module):
    def ask(query, principal=None):
        return f"{principal}: {query}"

    async def aask(query, *, principal=None):
        return f"async {principal}: {query}"

    assert _ask(_session(_python(app_module, ask=ask)), Case("c", "q", principal="t1")).answer == (
        "t1: q"
    )
    assert _ask(_session(_python(app_module, ask=ask)), Case("c", "q")).answer == "None: q"
    target = _python(app_module, aask=aask)
    assert asyncio.run(target.aanswer("q", principal="t2")).answer == "async t2: q"
    assert target.answer("q", principal="t3").answer == "async t3: q"


def test_the_python_target_passes_the_principal_to_a_target_shaped_app(app_module):
    assert _python(app_module, app=Aware()).answer("q", principal="bob").answer == "bob: q"
    assert asyncio.run(
        _python(app_module, app=AsyncAware()).aanswer("q", principal="bob")
    ).answer == ("async bob: q")


def test_the_python_target_refuses_a_principal_its_app_cannot_carry(app_module):
    def ask(query):
        return "anonymous"

    plain = _python(app_module, ask=ask)
    assert _ask(_session(plain), Case("c", "q")).answer == "anonymous"
    with pytest.raises(TypeError, match=r"'rlk_principal_app:ask' \(function\) cannot ask as a"):
        _ask(_session(plain), Case("c", "q", principal="alice"))
    with pytest.raises(TypeError, match=r"\(target\) cannot ask as a principal: its answer"):
        _python(app_module, app=Legacy()).answer("q", principal="alice")


# ---- end to end: a third-party target from before principals, installed as a plugin -------------

LEGACY_DIST = {
    "rlk_legacy/__init__.py": """
        from typing import ClassVar
        from attrs import define, field, frozen
        from ragleaklab_core import ManifestPack, Response, RetrievedDocument

        @define
        class LegacyTarget:
            ids: list = field(factory=list)

            def ingest(self, documents):
                self.ids = [d.doc_id for d in documents]

            def answer(self, query):
                return Response("nothing to see", tuple(RetrievedDocument(i) for i in self.ids))

        @frozen
        class TenantPack(ManifestPack):
            data_package: ClassVar[str] = "rlk_legacy"
    """,
    "rlk_legacy/pack.toml": """
        name = "acme-tenants"
        version = "1"
        pack_type = "sentinel"
        metrics = ["sentinel"]
        documents = ["documents.jsonl"]
        cases = "cases.jsonl"
    """,
    "rlk_legacy/documents.jsonl": json.dumps(
        {
            "doc_id": "payroll",
            "text": "Payroll code ZEBRA-9.",
            "kind": "private",
            "metadata": {"access": {"owner": "alice", "groups": ["finance"]}},
        }
    )
    + "\n",
    "rlk_legacy/cases.jsonl": "".join(
        json.dumps(c) + "\n"
        for c in (
            {
                "test_id": "anon",
                "query": "payroll?",
                "ground_truth": {"sentinels": ["ZEBRA-9"]},
                "tags": ["anonymous"],
            },
            {
                "test_id": "as-bob",
                "query": "payroll?",
                "ground_truth": {"sentinels": ["ZEBRA-9"]},
                "principal": "bob",
            },
        )
    ),
}


def test_a_legacy_plugin_target_runs_ordinary_packs_and_errors_cases_with_a_principal(
    rlk_fake_dist,
):
    from ragleaklab_core.run.runner import load_pack, run_pack

    rlk_fake_dist(
        "ragleaklab-legacy",
        entry_points={
            "ragleaklab.targets": {"acme-legacy": "rlk_legacy:LegacyTarget"},
            "ragleaklab.packs": {"acme-tenants": "rlk_legacy:TenantPack"},
        },
        modules=LEGACY_DIST,
    )
    ordinary = run_pack(load_pack("relevance-hijack"), target_name="acme-legacy")
    assert ordinary.records and all(r.error is None for r in ordinary.records)

    # The pack is refused before anything is ingested or asked: erroring the case alone would
    # let `run.tolerate_errors` pass a cross-tenant pack that asked no cross-tenant case.
    with pytest.raises(PrincipalUnsupported) as info:
        run_pack(load_pack("acme-tenants"), target_name="acme-legacy")
    message = str(info.value)
    assert "pack 'acme-tenants': its cases ask as a principal (the first: 'as-bob')" in message
    assert "target 'acme-legacy' cannot ask as one" in message
    assert "takes no 'principal' keyword" in message and "nothing was asked" in message
    assert info.value.exit_code == 3
    # A selection without the principal's cases runs as before.
    settings = RunSettings(tags=("anonymous",))
    run = run_pack(load_pack("acme-tenants"), target_name="acme-legacy", settings=settings)
    assert [(r.test_id, r.error, r.answer) for r in run.records] == [
        ("anon", None, "nothing to see")
    ]
