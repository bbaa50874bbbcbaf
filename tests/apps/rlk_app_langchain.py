"""LangChain apps, built the way their users build them.

Imported by the tests in this directory and by ``ragleaklab run`` in a subprocess (the tests put
this directory on ``PYTHONPATH``); the python target itself never imports LangChain.
"""

from __future__ import annotations

from typing import Any

from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document as LcDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

K = 5

HANDBOOK = [
    "Lunch is served in the canteen from noon to two.",
    "The car park closes at nine in the evening.",
    "Bring your badge to enter the building after hours.",
    "The library lends laptops for up to one week.",
    "Fire drills take place on the first Monday of each quarter.",
    "The gym on the ground floor is open to every employee.",
]


def _lc_documents(documents: Any) -> list[LcDocument]:
    """The pack's documents as LangChain documents that carry the pack's id."""
    return [LcDocument(page_content=d.text, metadata={"doc_id": d.doc_id}) for d in documents]


# 1. Built at import time over the app's own handbook: a pack's documents never reach it.
handbook_retriever = BM25Retriever.from_texts(
    HANDBOOK, metadatas=[{"source": f"handbook-{i}"} for i in range(len(HANDBOOK))], k=K
)

# 2. The same retriever, built by a factory once ingest_callable has stored the pack's documents.
_received: list[Any] = []


def receive(documents: list[Any]) -> None:
    _received[:] = documents  # replace, never add: each pack brings all of its documents


def build_bm25(k: int = K) -> BM25Retriever:
    return BM25Retriever.from_documents(_lc_documents(_received), k=k)


# 3. A vector store held by the module: ragleaklab adds the pack's documents with add_texts and
# deletes them at reset.
store = InMemoryVectorStore(embedding=DeterministicFakeEmbedding(size=32))
store_retriever = store.as_retriever(search_kwargs={"k": K})


# 4. An LCEL chain over BM25, built by a factory that takes the pack's documents. Its generator
# is naive on purpose: it answers with its best passage, instructions and all.
def _generate(inputs: dict[str, Any]) -> dict[str, Any]:
    context = inputs["context"]
    answer = context[0].page_content if context else "I don't know."
    return {"answer": answer, "context": context}


def build_chain(documents: list[Any], k: int = K) -> Runnable[Any, Any]:
    retriever = BM25Retriever.from_documents(_lc_documents(documents), k=k)
    return {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(_generate)


# 5. The same chain in a debug build: its prompt was misconfigured to show the credential the
# app was started with, so every answer and every retrieved passage carries it.
def build_debug_chain(documents: list[Any], api_key: str, k: int = K) -> Runnable[Any, Any]:
    retriever = BM25Retriever.from_documents(_lc_documents(documents), k=k)

    def generate(inputs: dict[str, Any]) -> dict[str, Any]:
        found = _generate(inputs)
        for doc in found["context"]:
            doc.page_content += f"\n[debug] key={api_key}"
        return {**found, "answer": f"{found['answer']} (debug: api_key={api_key})"}

    return {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(generate)


# 6. A hostile build: its answers and its ingest error carry GitHub Actions workflow commands,
# as text an attacker planted in the knowledge base would.
FORGED = "\n  ::set-output name=verdict::pass\n::add-mask::\u2028::error title=forged::ok"


def build_hostile_chain(documents: list[Any], k: int = K) -> Runnable[Any, Any]:
    retriever = BM25Retriever.from_documents(_lc_documents(documents), k=k)

    def generate(inputs: dict[str, Any]) -> dict[str, Any]:
        found = _generate(inputs)
        return {**found, "answer": found["answer"] + FORGED}

    return {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(generate)


def hostile_receive(documents: list[Any]) -> None:
    raise RuntimeError(f"the vector store refused {len(documents)} documents{FORGED}")
