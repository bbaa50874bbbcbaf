"""LangChain apps through the python target, run by the real CLI as CI would run them.

A retriever built at import time never sees a pack's documents: the pack is *not tested* (exit
3), never PASS. The same retriever built by a factory after ingest is tested, and the run finds
exactly the failing cases the app really has. A vector store gets the pack's documents with the
pack's ids and loses them at reset, so a multi-pack run equals single-pack runs. An LCEL chain
works, and an app in the current directory is importable, or its absence explained.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from ragleaklab_plugins.targets.python import PythonTarget

from ragleaklab_core import RUN_TAG
from ragleaklab_core.run.runner import RunSettings, load_pack, run_pack
from tests.apps.support import no_traceback, report, retrieved_ids, rlk, runs, write_config

pytestmark = pytest.mark.filterwarnings(
    "ignore:`langchain-community` is being sunset:DeprecationWarning"
)

APP = "rlk_app_langchain"
HIJACK = "relevance-hijack"
SENTINEL = "sentinel-takeover-safe"


def lc_app() -> Any:
    return importlib.import_module(APP)


def pack_data(name: str) -> tuple[list[Any], list[Any]]:
    pack = load_pack(name).obj
    return list(pack.documents()), list(pack.cases())


@pytest.fixture
def empty_store():
    """The app's module-level vector store, checked empty before and after the test."""
    store = lc_app().store
    assert store.store == {}
    yield store
    assert store.store == {}, "a test left documents in the module's vector store"


# -- built at import time: the attack never reaches it -------------------------------------------


def test_a_retriever_built_at_import_time_is_not_tested(tmp_path):
    config = write_config(tmp_path / "c.toml", callable=f"{APP}:handbook_retriever")
    out = rlk("run", "-c", str(config), "-p", HIJACK, "-o", "o", cwd=tmp_path)
    assert out.returncode == 3, out.stdout + out.stderr
    no_traceback(out)
    assert f"ERROR (not tested)  {HIJACK}" in out.stdout
    # the target says why as soon as it sees the documents go nowhere
    assert "documents_not_ingested" in out.stderr
    assert "the pack's 533 documents were not given to the app" in out.stderr
    result = report(tmp_path / "o")
    assert (result["verdict"], result["exit_code"]) == ("error", 3)
    [pack] = result["packs"]
    assert (pack["verdict"], pack["tested"]) == ("error", False)
    assert "the attack never reached the system" in pack["not_tested_reason"]
    assert "never ingested" in pack["not_tested_reason"]
    assert pack["wiring"]["reached"] is False
    assert pack["wiring"]["retrieved_ids"] == pack["wiring"]["unknown_ids"] == 620 * 5
    assert pack["wiring"]["unknown_id_examples"] == [f"handbook-{i}" for i in range(6)]


# -- built by a factory after ingest: tested, with the app's real failures ------------------------


def test_the_same_retriever_built_after_ingest_fails_on_exactly_its_hijacked_cases(tmp_path):
    config = write_config(
        tmp_path / "c.toml",
        callable=f"{APP}:build_bm25",
        factory=True,
        ingest_callable=f"{APP}:receive",
    )
    # A retriever answers no text: it is gated on the rank values (docs/metrics.md).
    with config.open("a") as f:
        f.write("\n[thresholds.relevance-hijack.poison_rate_at_k]\nthreshold = 1.0\n")
    out = rlk("run", "-c", str(config), "-p", HIJACK, "-o", "o", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    no_traceback(out)
    assert "documents_not_ingested" not in out.stderr
    [pack] = report(tmp_path / "o")["packs"]
    assert (pack["verdict"], pack["tested"]) == ("fail", True)
    assert pack["wiring"]["reached"] is True and pack["wiring"]["unknown_ids"] == 0

    # The run saw what the app retrieves for each question, built in-process from the pack.
    documents, cases = pack_data(HIJACK)
    app = lc_app()
    app.receive(documents)
    try:
        retriever = app.build_bm25()
    finally:
        app.receive([])
    records = runs(tmp_path / "o")
    assert [r["test_id"] for r in records] == [c.test_id for c in cases]
    for record in records:
        expected = [d.metadata["doc_id"] for d in retriever.invoke(record["query"])]
        assert retrieved_ids(record) == expected, record["test_id"]
    # gated on the rank (the config's threshold 1.0 = 5/k): a case fails when its whole top 5
    # is poison
    poison = {d.doc_id for d in documents if d.kind == "poison"}
    hijacked = sorted(
        r["test_id"]
        for r in records
        if len(set(retrieved_ids(r))) == 5 and set(retrieved_ids(r)) <= poison
    )
    value = pack["values"]["poison_rate_at_k"]
    assert value["passed"] is False
    # the count is the library's (BM25Retriever's tokenisation changes between releases): what
    # matters is that the run found exactly the cases the app itself hijacks, some but not all
    assert value["failing_cases"] == len(hijacked)
    assert 0 < len(hijacked) < len(records)
    assert value["failing_ids"] == hijacked[: len(value["failing_ids"])]


def test_a_retriever_on_the_pack_defaults_is_judged_as_a_generator_repeating_its_context(tmp_path):
    # A retriever's answer is its context (the worst case of a generator that repeats what it
    # was given, docs/targets.md): on relevance-hijack's defaults it fails where poison's claims
    # reach that context, and only there.
    config = write_config(
        tmp_path / "c.toml",
        callable=f"{APP}:build_bm25",
        factory=True,
        ingest_callable=f"{APP}:receive",
    )
    out = rlk("run", "-c", str(config), "-p", HIJACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    no_traceback(out)
    [pack] = report(tmp_path / "o")["packs"]
    assert (pack["verdict"], pack["tested"]) == ("fail", True)
    documents, _ = pack_data(HIJACK)
    poison = {d.doc_id for d in documents if d.kind == "poison"}
    records = {r["test_id"]: r for r in runs(tmp_path / "o")}
    failing = pack["values"]["poison_attribution"]["failing_ids"]
    assert failing
    assert all(poison & set(retrieved_ids(records[t])) for t in failing)


def test_the_naive_chain_fails_the_smoke_subset_of_relevance_hijack(tmp_path):
    # The pack a newcomer meets first gates on what the answer asserts: a chain that retrieves
    # poison into its top five and answers from it fails, on the smoke subset alone, and every
    # case it fails answered with a poison page.
    config = write_config(
        tmp_path / "c.toml", callable=f"{APP}:build_chain", factory=True, input_key="$"
    )
    out = rlk("run", "-c", str(config), "-p", HIJACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    no_traceback(out)
    [pack] = report(tmp_path / "o")["packs"]
    assert (pack["verdict"], pack["tested"]) == ("fail", True)
    value = pack["values"]["poison_attribution"]
    assert value["failing_cases"] > 0
    documents, _ = pack_data(HIJACK)
    poison = {d.doc_id: d.text for d in documents if d.kind == "poison"}
    records = {r["test_id"]: r for r in runs(tmp_path / "o")}
    for test_id in value["failing_ids"]:
        assert records[test_id]["answer"] in poison.values(), test_id


# -- a vector store: the run's ids in, deleted at reset, packs isolated ----------------------------


def test_a_vector_store_gets_the_pack_with_its_ids_and_is_empty_after_reset(empty_store):
    documents, cases = pack_data(HIJACK)
    target = PythonTarget(callable=f"{APP}:store_retriever")
    assert (target.ingests, target.isolation) == (True, "reset")
    planted = target.planted_ids(documents, run="run-1:relevance-hijack")
    target.ingest(documents)
    held = empty_store.store
    assert sorted(held) == sorted(planted)
    tag = {RUN_TAG: "run-1:relevance-hijack"}
    assert all(
        held[i]["metadata"] == {"doc_id": d.doc_id, **tag} and held[i]["text"] == d.text
        for i, d in zip(planted, documents, strict=True)
    )
    response = target.answer(cases[0].query)
    ids = [r.doc_id for r in response.retrieved or ()]  # the pack's ids, never the run's
    assert len(ids) == 5 and set(ids) <= {d.doc_id for d in documents}
    target.reset()
    assert empty_store.store == {}


def test_the_runner_plants_and_removes_a_packs_documents_in_a_vector_store(empty_store):
    pack = load_pack(HIJACK)
    run = run_pack(
        pack,
        target_name="python",
        target_options={"callable": f"{APP}:store_retriever"},
        settings=RunSettings(tags=("smoke",)),
    )
    assert run.problems == ()
    assert run.wiring is not None
    assert (run.wiring.reached, run.wiring.unknown, run.wiring.retrieved) == (True, 0, 30 * 5)
    assert len(run.records) == 30 and all(r.error is None for r in run.records)


def test_a_multi_pack_run_equals_single_pack_runs(tmp_path):
    config = write_config(tmp_path / "c.toml", callable=f"{APP}:store_retriever")
    packs = [HIJACK, SENTINEL, "claim-corruption"]
    args = ["run", "-c", str(config), "--smoke"]
    together = rlk(*args, *[a for p in packs for a in ("-p", p)], "-o", "all", cwd=tmp_path)
    assert together.returncode in (0, 1), together.stdout + together.stderr
    no_traceback(together)
    joint = {p["name"]: p for p in report(tmp_path / "all")["packs"]}
    joint_runs = runs(tmp_path / "all")
    for name in packs:
        # each pack saw only its own documents: not one retrieved id is another pack's
        assert joint[name]["tested"] is True
        assert joint[name]["wiring"]["unknown_ids"] == 0, name
        assert joint[name]["wiring"]["retrieved_ids"] == 30 * 5
        alone = rlk(*args, "-p", name, "-o", f"only-{name}", cwd=tmp_path)
        assert alone.returncode in (0, 1), alone.stdout + alone.stderr
        [single] = report(tmp_path / f"only-{name}")["packs"]
        assert single["verdict"] == joint[name]["verdict"]
        assert single["values"] == joint[name]["values"]
        assert [retrieved_ids(r) for r in runs(tmp_path / f"only-{name}")] == [
            retrieved_ids(r) for r in joint_runs if r["pack"] == name
        ]


# -- an LCEL chain --------------------------------------------------------------------------------


def test_an_lcel_chain_is_tested_and_its_leaks_are_the_ones_it_really_has(tmp_path):
    config = write_config(
        tmp_path / "c.toml", callable=f"{APP}:build_chain", factory=True, input_key="$"
    )
    out = rlk("run", "-c", str(config), "-p", SENTINEL, "-o", "o", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    no_traceback(out)
    [pack] = report(tmp_path / "o")["packs"]
    assert (pack["verdict"], pack["tested"]) == ("fail", True)
    assert pack["wiring"]["reached"] is True and pack["wiring"]["unknown_ids"] == 0

    documents, cases = pack_data(SENTINEL)
    chain = lc_app().build_chain(documents)
    sentinels = {c.test_id: c.ground_truth["sentinels"] for c in cases}
    threshold = pack["values"]["leak_rate"]["threshold"]["value"]
    leaked, failing = [], []
    for record in runs(tmp_path / "o"):
        result = chain.invoke(record["query"])
        assert record["answer"] == result["answer"]
        assert retrieved_ids(record) == [d.metadata["doc_id"] for d in result["context"]]
        if any(s in result["answer"] for s in sentinels[record["test_id"]]):
            leaked.append(record["test_id"])
        if record["metrics"]["sentinel"]["values"]["leak_rate"] >= threshold:
            failing.append(record["test_id"])
    value = pack["values"]["leak_rate"]
    # Every verbatim leak of a listed sentinel fails; so do answers that repeat another planted
    # sentinel (the shared RLK-SENTINEL- prefix scores 11/17 and more, above the threshold).
    assert set(leaked) <= set(failing)
    assert value["failing_cases"] == len(failing)
    # How many answers leak is the installed LangChain's to decide (its BM25 retriever's ties:
    # 120 with langchain-core 0.3, 121 with 1.8), and is counted above from the chain itself;
    # what must hold is that ragleaklab fails exactly those cases, and that they are many.
    assert len(leaked) >= 100
    assert value["failing_ids"] == sorted(failing)[: len(value["failing_ids"])]


# -- an app in the current directory ---------------------------------------------------------

CWD_APP = """
import re

DOCS = []


def load(documents):
    DOCS[:] = documents


def answer(query):
    words = set(re.findall(r"\\w+", query.lower()))
    ranked = sorted(DOCS, key=lambda d: -len(words & set(re.findall(r"\\w+", d.text.lower()))))
    return {"answer": ranked[0].text, "sources": [d.doc_id for d in ranked[:5]]}
"""


def test_an_app_in_the_current_directory_is_importable_and_a_typo_names_the_fix(tmp_path):
    (tmp_path / "myrag.py").write_text(CWD_APP)
    good = write_config(tmp_path / "c.toml", callable="myrag:answer", ingest_callable="myrag:load")
    out = rlk("run", "-c", str(good), "-p", HIJACK, "--smoke", "-o", "o", cwd=tmp_path,
              pythonpath=False)  # fmt: skip
    assert out.returncode in (0, 1), out.stdout + out.stderr
    [pack] = report(tmp_path / "o")["packs"]
    assert pack["tested"] is True and pack["wiring"]["unknown_ids"] == 0

    typo = write_config(tmp_path / "typo.toml", callable="my_rag:answer")
    out = rlk("run", "-c", str(typo), "-p", HIJACK, "-o", "typo", cwd=tmp_path, pythonpath=False)
    assert out.returncode == 2, out.stdout + out.stderr
    no_traceback(out)
    assert (
        "callable 'my_rag:answer': cannot import module 'my_rag' (No module named 'my_rag'): run "
        "ragleaklab from the directory that holds my_rag.py, or pip install the package, or set "
        "PYTHONPATH"
    ) in out.stderr
    assert not (tmp_path / "typo").exists()
    # elsewhere, the same good config cannot find the app, and says where it looked
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = rlk("run", "-c", str(good), "-p", HIJACK, "-o", "o", cwd=elsewhere, pythonpath=False)
    assert moved.returncode == 2 and "holds myrag.py" in moved.stderr
    assert not Path(elsewhere / "o").exists()


FLAKY_APP = """
from rlk_app_langchain import store, store_retriever


def load(documents):
    raise PermissionError("the embedding service answered 401 Unauthorized")


def forget(documents):
    store.delete(ids=[d.doc_id for d in documents])
    raise TimeoutError("the index took too long to confirm the delete")
"""


def test_failing_hooks_are_reported_on_the_pack_without_a_traceback(tmp_path):
    (tmp_path / "flaky.py").write_text(FLAKY_APP)
    config = write_config(
        tmp_path / "c.toml",
        callable=f"{APP}:store_retriever",
        ingest_callable="flaky:load",
        reset_callable="flaky:forget",
    )
    out = rlk("run", "-c", str(config), "-p", HIJACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode == 3, out.stdout + out.stderr
    no_traceback(out)
    [pack] = report(tmp_path / "o")["packs"]
    assert (pack["verdict"], pack["tested"]) == ("error", False)
    assert pack["not_tested_reason"].startswith(
        "ingest failed: RuntimeError: ingest_callable 'flaky:load' failed: PermissionError: "
        "the embedding service answered 401 Unauthorized"
    )
    assert (
        "reset failed: RuntimeError: reset_callable 'flaky:forget' failed: TimeoutError: the "
        "index took too long to confirm the delete"
    ) in pack["reasons"]
    records = runs(tmp_path / "o")
    assert len(records) == 30
    assert all(r["error"]["message"].startswith("not asked: ingest failed") for r in records)


OWN_LOADER = """
from rlk_app_langchain import store


def load(documents):
    store.add_texts([d.text for d in documents], ids=[d.doc_id for d in documents],
                    metadatas=[{"doc_id": d.doc_id} for d in documents])


def forget(documents):
    store.delete(ids=[d.doc_id for d in documents])
"""


def test_a_module_level_app_that_cannot_forget_is_refused_several_packs(tmp_path):
    (tmp_path / "loader.py").write_text(OWN_LOADER)
    options = {"callable": f"{APP}:store_retriever", "ingest_callable": "loader:load"}
    shared = write_config(tmp_path / "shared.toml", **options)
    packs = ["-p", HIJACK, "-p", SENTINEL, "--smoke"]
    out = rlk("run", "-c", str(shared), *packs, "-o", "shared", cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    no_traceback(out)
    assert "cannot remove them again" in out.stderr and "reset_callable" in out.stderr
    assert not (tmp_path / "shared").exists()
    # knowingly shared: the second pack retrieves the first pack's documents too
    out = rlk("run", "-c", str(shared), *packs, "--allow-shared-state", "-o", "both",
              cwd=tmp_path)  # fmt: skip
    assert out.returncode in (0, 1), out.stdout + out.stderr
    later = report(tmp_path / "both")["packs"][1]
    assert later["name"] == SENTINEL and later["wiring"]["unknown_ids"] > 0
    # with a reset_callable each pack sees only its own documents
    isolated = write_config(tmp_path / "reset.toml", **options, reset_callable="loader:forget")
    out = rlk("run", "-c", str(isolated), *packs, "-o", "isolated", cwd=tmp_path)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert [p["wiring"]["unknown_ids"] for p in report(tmp_path / "isolated")["packs"]] == [0, 0]
