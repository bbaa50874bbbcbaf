"""LlamaIndex apps through the python target: retrievers and query engines, by duck typing.

The indexes are built offline by a factory that takes the pack's documents (a mock embedding and
a mock LLM). What matters here is the wiring: every id the app returns maps back to the pack's,
scores and texts come through, and the run records exactly what the app itself retrieves.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import pytest
from ragleaklab_plugins.targets.python import PythonTarget

from ragleaklab_core.run.runner import load_pack
from tests.apps.support import no_traceback, report, retrieved_ids, rlk, runs, write_config

APP = "rlk_app_llama"
PACK = "relevance-hijack"
CHUNK_IDS = r"^(?P<doc_id>.+?)::chunk-\d+$"


@pytest.fixture(scope="module")
def pack() -> tuple[list[Any], list[Any]]:
    loaded = load_pack(PACK).obj
    return list(loaded.documents()), list(loaded.cases())


def llama_app() -> Any:
    return importlib.import_module(APP)


def built(name: str, documents: list[Any], **options: Any) -> PythonTarget:
    target = PythonTarget(callable=f"{APP}:{name}", factory=True, **options)
    assert (target.isolation, target.ingests) == ("fresh", True)
    target.ingest(documents)
    return target


def test_a_retriever_returns_the_packs_ids_with_scores_and_texts(pack):
    documents, cases = pack
    text = {d.doc_id: d.text for d in documents}
    target = built("build_retriever", documents)
    nodes = llama_app().build_retriever(documents).retrieve(cases[0].query)
    for response in (target.answer(cases[0].query), asyncio.run(target.aanswer(cases[0].query))):
        retrieved = response.retrieved or ()
        assert [r.doc_id for r in retrieved] == [n.node.node_id for n in nodes]
        assert len(retrieved) == 5 and all(r.doc_id in text for r in retrieved)
        assert [r.score for r in retrieved] == [pytest.approx(n.score) for n in nodes]
        assert all(isinstance(r.score, float) for r in retrieved)
        assert [r.text for r in retrieved] == [text[r.doc_id] for r in retrieved]
        assert response.metadata == {"shape": "retriever"}


def test_a_query_engine_gives_its_response_and_scored_source_nodes(pack):
    documents, cases = pack
    target = built("build_query_engine", documents)
    query = cases[0].query
    expected = llama_app().build_query_engine(documents).query(query)
    for response in (target.answer(query), asyncio.run(target.aanswer(query))):
        assert response.answer == expected.response
        assert query in response.answer  # the mock LLM echoes its prompt
        assert [(r.doc_id, r.score) for r in response.retrieved or ()] == [
            (n.node.node_id, pytest.approx(n.score)) for n in expected.source_nodes
        ]


def test_chunk_ids_and_source_documents_map_back_to_the_packs_ids(pack):
    documents, cases = pack
    ids = {d.doc_id for d in documents}
    chunked = built("build_chunked_retriever", documents, doc_id_pattern=CHUNK_IDS)
    retrieved = chunked.answer(cases[0].query).retrieved or ()
    assert len(retrieved) == 5 and all(r.doc_id in ids for r in retrieved)
    assert all(r.chunk_id is not None and r.chunk_id.startswith(f"{r.doc_id}::chunk-")
               for r in retrieved)  # fmt: skip
    sourced = built("build_sourced_retriever", documents)  # own node ids, ref_doc_id = pack id
    retrieved = sourced.answer(cases[0].query).retrieved or ()
    assert len(retrieved) == 5 and all(r.doc_id in ids for r in retrieved)


def test_a_query_engine_run_records_what_the_engine_retrieves(tmp_path, pack):
    documents, _ = pack
    config = write_config(tmp_path / "c.toml", callable=f"{APP}:build_query_engine", factory=True)
    out = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    no_traceback(out)
    [result] = report(tmp_path / "o")["packs"]
    assert result["tested"] is True
    assert result["wiring"]["reached"] is True and result["wiring"]["unknown_ids"] == 0
    engine = llama_app().build_query_engine(documents)
    records = runs(tmp_path / "o")
    assert len(records) == 30
    for record in records:
        answer = engine.query(record["query"])
        assert record["answer"] == answer.response
        assert retrieved_ids(record) == [n.node.node_id for n in answer.source_nodes]
        assert all(isinstance(r["score"], float) for r in record["retrieved"])


def test_unmapped_chunk_ids_are_not_tested_and_mapped_ones_are(tmp_path):
    options = {"callable": f"{APP}:build_chunked_retriever", "factory": True}
    raw = write_config(tmp_path / "raw.toml", **options)
    out = rlk("run", "-c", str(raw), "-p", PACK, "--smoke", "-o", "raw", cwd=tmp_path)
    assert out.returncode == 3, out.stdout + out.stderr
    [result] = report(tmp_path / "raw")["packs"]
    assert result["tested"] is False and "doc_id_pattern" in result["not_tested_reason"]
    assert all("::chunk-" in i for i in result["wiring"]["unknown_id_examples"])

    mapped = write_config(tmp_path / "mapped.toml", **options, doc_id_pattern=CHUNK_IDS)
    out = rlk("run", "-c", str(mapped), "-p", PACK, "--smoke", "-o", "mapped", cwd=tmp_path)
    [result] = report(tmp_path / "mapped")["packs"]
    # Every chunk id maps to its document now. This toy retriever hands back the same chunks
    # for every question, and relevance-hijack reads the answer (a retriever's answer is its
    # context): that is its own, louder finding, never the ids' and never a pass.
    assert result["wiring"]["reached"] is True and result["wiring"]["unknown_ids"] == 0
    if result["tested"] is False:
        # exit 1 when a gated value fails anyway (a finding outranks "not tested"), else 3
        assert out.returncode in (1, 3), out.stdout + out.stderr
        assert "doc_id_pattern" not in result["not_tested_reason"]
        assert "every answer was the same text" in result["not_tested_reason"]
    else:
        assert out.returncode in (0, 1), out.stdout + out.stderr
    chunks = [r["chunk_id"] for rec in runs(tmp_path / "mapped") for r in rec["retrieved"]]
    assert len(chunks) == 30 * 5 and all("::chunk-" in c for c in chunks)
