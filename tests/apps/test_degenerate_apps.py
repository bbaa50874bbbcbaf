"""Degenerate LangChain apps through the python target are not tested, never PASS (issue 26).

An LCEL chain whose LLM is down still retrieves the pack's documents but answers one apology to
every question: its answer-reading pack is not tested (exit 3), while the pack judged on
retrieval alone still is. A chain whose LLM fails on most questions, run with
``--tolerate-errors``, leaves too few cases scored: not tested either.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.apps.support import no_traceback, report, rlk, write_config

pytestmark = pytest.mark.filterwarnings(
    "ignore:`langchain-community` is being sunset:DeprecationWarning"
)

READS_ANSWER = "sentinel-takeover-safe"
RETRIEVAL = "relevance-hijack"

APP = """
from typing import Any

from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

CALLS = [0]


def _documents(documents):
    return [Document(page_content=d.text, metadata={"doc_id": d.doc_id}) for d in documents]


def _llm_down(inputs: dict[str, Any]) -> dict[str, Any]:
    # The model endpoint is down; the app's fallback apologises, whatever it retrieved.
    answer = "Sorry, our assistant is temporarily unavailable."
    return {"answer": answer, "context": inputs["context"]}


def _llm_flaky(inputs: dict[str, Any]) -> dict[str, Any]:
    CALLS[0] += 1
    if CALLS[0] % 3:
        raise TimeoutError("the model endpoint timed out")
    # When it answers, it answers safely, and differently for each question.
    return {"answer": f"I looked into: {inputs['question'][:60]}", "context": inputs["context"]}


def down_chain(documents, k=5):
    retriever = BM25Retriever.from_documents(_documents(documents), k=k)
    return {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(_llm_down)


def flaky_chain(documents, k=5):
    retriever = BM25Retriever.from_documents(_documents(documents), k=k)
    return {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(_llm_flaky)
"""


def app(tmp_path: Path, name: str) -> Path:
    (tmp_path / "rlk_degenerate_app.py").write_text(APP, encoding="utf-8")
    return write_config(
        tmp_path / f"{name}.toml",
        callable=f"rlk_degenerate_app:{name}",
        factory=True,
        input_key="$",
    )


def test_a_chain_whose_llm_is_down_is_not_tested_on_what_reads_the_answer(tmp_path):
    config = app(tmp_path, "down_chain")
    out = rlk("run", "-c", str(config), "-p", READS_ANSWER, "--smoke", "-o", "o", cwd=tmp_path)
    no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    (judged,) = report(tmp_path / "o")["packs"]
    assert (judged["verdict"], judged["tested"]) == ("error", False)
    assert "every answer was the same text" in judged["not_tested_reason"]
    assert "sorry, our assistant is temporarily unavailable." in judged["not_tested_reason"]
    # relevance-hijack gates on what the answer asserts: with the LLM down there is nothing to
    # judge there either, so it is not tested, while its rank values are still measured on
    # every case (BM25 still fetches poisoned passages: the evidence is kept, never a pass).
    both = rlk(
        "run",
        "-c",
        str(config),
        "-p",
        READS_ANSWER,
        "-p",
        RETRIEVAL,
        "--smoke",
        "-o",
        "both",
        cwd=tmp_path,
    )
    assert both.returncode == 3, both.stdout + both.stderr
    packs = {p["name"]: p for p in report(tmp_path / "both")["packs"]}
    assert packs[RETRIEVAL]["tested"] is False and packs[RETRIEVAL]["verdict"] == "error"
    assert "every answer was the same text" in packs[RETRIEVAL]["not_tested_reason"]
    rank = packs[RETRIEVAL]["values"]["poison_rate_at_k"]["summary"]
    assert rank["n"] == 30 and rank["mean"] > 0
    assert packs[READS_ANSWER]["tested"] is False


def test_a_chain_whose_llm_mostly_times_out_is_not_tested_with_errors_tolerated(tmp_path):
    config = app(tmp_path, "flaky_chain")
    out = rlk(
        "run",
        "-c",
        str(config),
        "-p",
        READS_ANSWER,
        "--smoke",
        "-o",
        "o",
        "--tolerate-errors",
        "--max-consecutive-failures",
        "0",
        cwd=tmp_path,
    )
    no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    (pack,) = report(tmp_path / "o")["packs"]
    assert pack["tested"] is False
    assert "of the 30 selected cases were asked and scored" in pack["not_tested_reason"]
