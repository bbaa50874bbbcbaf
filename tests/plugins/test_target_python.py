"""The python target: every accepted shape, LangChain- and LlamaIndex-style duck types, when
each hook runs, isolation, id mapping, and its errors. Real LangChain and LlamaIndex apps are
tested end to end in tests/apps."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import types
from typing import Any

import pytest
from ragleaklab_plugins.targets.python import PythonTarget, to_response
from ragleaklab_plugins.targets.reference import ReferenceTarget

from ragleaklab_core import RUN_TAG, ConfigError, Document, Response, RetrievedDocument, planted_id
from ragleaklab_core import load_plugin as load
from tests.support.python_apps import FakeDoc, app_module, build

TARGETS = "ragleaklab.targets"
APP = "rlk_fake_app"
DOCS = [
    Document("vault", "The vault code is alpha seven. It rotates weekly."),
    Document("refund", "Refunds take ten business days after approval."),
]


@pytest.fixture
def app(monkeypatch):
    """A module the test fills with apps; callable = "<APP>:NAME"."""
    return app_module(monkeypatch, APP)


target = build


def run(coro):
    return asyncio.run(coro)


# ---- LangChain-style duck types (no langchain import) -------------------------------------------


LC_DOCS = [
    FakeDoc("The vault code is alpha seven.", {"source": "vault", "score": 0.9}),
    FakeDoc("Refunds take ten days.", {"doc_id": "refund", "id": "ignored"}),
    FakeDoc("Opening hours are nine to five.", {}, id="hours"),
]


class ModernRetriever:
    """Like a BaseRetriever subclass: _get_relevant_documents, used through invoke."""

    def __init__(self) -> None:
        self.queries: list[Any] = []

    def _get_relevant_documents(self, query: str) -> list[FakeDoc]:
        return LC_DOCS

    def invoke(self, query: str) -> list[FakeDoc]:
        self.queries.append(query)
        return self._get_relevant_documents(query)


class LegacyRetriever:
    def get_relevant_documents(self, query: str) -> list[FakeDoc]:
        return LC_DOCS[:1]


class AsyncOnlyRetriever:
    async def aget_relevant_documents(self, query: str) -> list[FakeDoc]:
        await asyncio.sleep(0)
        return LC_DOCS[1:]


class RetrievalQA:
    """Like a legacy chain: declares its input key and returns result + source_documents."""

    input_keys = ("question",)

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    def invoke(self, inputs: dict[str, str]) -> dict[str, Any]:
        self.inputs.append(inputs)
        return {
            "question": inputs["question"],
            "result": "alpha seven",
            "source_documents": LC_DOCS,
        }


class Message:
    def __init__(self, content: str) -> None:
        self.content = content


class LcelChain:
    """Like `{"context": retriever, "question": passthrough} | prompt | llm`: takes a string."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    def invoke(self, value: Any) -> Message:
        self.inputs.append(value)
        return Message(f"answer to {value}")

    async def ainvoke(self, value: Any) -> Message:
        return self.invoke(value)


# ---- shapes ---------------------------------------------------------------------------------


def test_the_default_wraps_the_reference_target_exactly():
    wrapped = PythonTarget()
    wrapped.ingest(DOCS)
    local = ReferenceTarget()
    local.ingest(DOCS)
    assert wrapped.answer("vault code") == local.answer("vault code")
    assert run(wrapped.aanswer("refunds")) == local.answer("refunds")
    run(wrapped.aclose())  # the reference target's close forgets its documents
    assert wrapped.answer("vault code").retrieved == ()


def test_a_class_is_built_with_kwargs():
    wrapped = PythonTarget(kwargs={"top_k": 1})
    wrapped.ingest(DOCS)
    retrieved = wrapped.answer("vault code refunds").retrieved
    assert retrieved is not None and len(retrieved) == 1


def test_a_function_returning_a_string_reports_no_retrieval(app):
    response = target(app, {"echo": lambda q: f"you said {q}"}, callable=f"{APP}:echo").answer("hi")
    assert response == Response(answer="you said hi", retrieved=None)


def test_a_function_returning_a_dict_with_sources(app):
    def rag(query):
        return {
            "answer": "A",
            "sources": [{"id": "d1", "text": "t1", "score": 2}, {"doc_id": "d2"}, "d3"],
            "metadata": {"model": "m"},
        }

    response = target(app, {"rag": rag}, callable=f"{APP}:rag").answer("q")
    assert response.answer == "A" and response.metadata == {"model": "m"}
    assert response.retrieved == (
        RetrievedDocument("d1", "t1", 2.0),
        RetrievedDocument("d2"),
        RetrievedDocument("d3"),
    )


def test_an_async_function_is_awaited_and_runs_concurrently(app):
    active = {"now": 0, "most": 0}

    async def rag(query):
        active["now"] += 1
        active["most"] = max(active["most"], active["now"])
        for _ in range(3):
            await asyncio.sleep(0)
        active["now"] -= 1
        return {"result": query.upper(), "source_documents": LC_DOCS[:1]}

    t = target(app, {"rag": rag}, callable=f"{APP}:rag")

    async def go():
        return await asyncio.gather(*(t.aanswer(f"q{i}") for i in range(8)))

    responses = run(go())
    assert [r.answer for r in responses] == [f"Q{i}" for i in range(8)]
    assert active["most"] == 8  # all eight were in flight at once
    assert responses[0].retrieved == (RetrievedDocument("vault", LC_DOCS[0].page_content, 0.9),)
    assert t.answer("sync").answer == "SYNC"  # the sync path runs it in its own loop


def test_a_pair_and_a_response_are_accepted(app):
    pair = target(app, {"f": lambda q: ("A", ["x", "y"])}, callable=f"{APP}:f").answer("q")
    assert pair.retrieved == (RetrievedDocument("x"), RetrievedDocument("y"))
    made = Response("B", (RetrievedDocument("z", score=1.0),), {"k": 1})
    assert target(app, {"g": lambda q: made}, callable=f"{APP}:g").answer("q") is made


def test_a_dotted_attribute_and_a_factory(app):
    class Apps:
        @staticmethod
        def build(prefix):
            return lambda q: f"{prefix}{q}"

    t = target(
        app, {"Apps": Apps}, callable=f"{APP}:Apps.build", factory=True, kwargs={"prefix": ">"}
    )
    assert t.answer("q").answer == ">q"


def test_a_target_object_gets_every_hook_async_first(app):
    calls: list[str] = []

    class AsyncApp:
        async def aanswer(self, query):
            calls.append("aanswer")
            return {"answer": query}

        def answer(self, query):
            calls.append("answer")
            return Response(query)

        async def aingest(self, documents):
            calls.append(f"aingest {[d.doc_id for d in documents]}")

        def ingest(self, documents):
            calls.append("ingest")

        async def areset(self):
            calls.append("areset")

        async def aclose(self):
            calls.append("aclose")

    t = target(app, {"AsyncApp": AsyncApp}, callable=f"{APP}:AsyncApp")

    async def go():
        await t.aingest(iter(DOCS))
        response = await t.aanswer("q")
        await t.areset()
        await t.aclose()
        return response

    assert run(go()) == Response("q")
    assert calls == ["aingest ['vault', 'refund']", "aanswer", "areset", "aclose"]
    calls.clear()
    t.ingest(DOCS)
    t.answer("q")
    t.reset()  # only areset exists: run in a fresh loop; a class's app lives for one pack
    assert calls == ["ingest", "answer", "areset", "aclose"]


def test_an_ingest_callable_feeds_a_function_app(app):
    planted: list[str] = []

    async def plant(documents):
        planted.extend(d.doc_id for d in documents)

    t = target(
        app,
        {"plant": plant, "rag": lambda q: "A"},
        callable=f"{APP}:rag",
        ingest_callable=f"{APP}:plant",
    )
    run(t.aingest(DOCS))
    t.ingest(DOCS[:1])
    assert planted == ["vault", "refund", "vault"]


def test_a_function_without_an_ingest_callable_ingests_nothing(app):
    t = target(app, {"rag": lambda q: "A"}, callable=f"{APP}:rag")
    t.ingest(DOCS)  # nothing to call, nothing raised
    run(t.aingest(DOCS))
    assert t.answer("q").answer == "A"


@pytest.mark.parametrize("thread_safe", [False, True])
def test_thread_safe_runs_a_sync_app_on_worker_threads(app, thread_safe):
    threads: list[int] = []

    def rag(query):
        threads.append(threading.get_ident())
        return "A"

    t = target(app, {"rag": rag}, callable=f"{APP}:rag", thread_safe=thread_safe)
    run(t.aanswer("q"))
    assert (threads[0] != threading.get_ident()) is thread_safe


# ---- LangChain-style objects ------------------------------------------------------------------


@pytest.mark.parametrize("cls", [ModernRetriever, LegacyRetriever, AsyncOnlyRetriever])
def test_a_retriever_answers_with_its_context(app, cls):
    t = target(app, {"R": cls}, callable=f"{APP}:R")
    expected = {
        ModernRetriever: LC_DOCS,
        LegacyRetriever: LC_DOCS[:1],
        AsyncOnlyRetriever: LC_DOCS[1:],
    }[cls]
    ids = {"The vault code is alpha seven.": "vault", "Refunds take ten days.": "refund"}
    for response in (t.answer("q"), run(t.aanswer("q"))):
        assert response.answer == "\n\n".join(d.page_content for d in expected)
        assert response.retrieved is not None
        assert [r.doc_id for r in response.retrieved] == [
            ids.get(d.page_content, "hours") for d in expected
        ]
        assert [r.text for r in response.retrieved] == [d.page_content for d in expected]


def test_the_retriever_gets_the_query_as_a_string(app):
    t = target(app, {"R": ModernRetriever}, callable=f"{APP}:R")
    t.answer("where is the vault")
    assert t._app.queries == ["where is the vault"]


def test_a_chain_gets_its_declared_input_key_and_reports_its_sources(app):
    t = target(app, {"C": RetrievalQA}, callable=f"{APP}:C")
    response = t.answer("what is the code?")
    assert t._app.inputs == [{"question": "what is the code?"}]
    assert response.answer == "alpha seven"
    assert response.retrieved is not None
    assert [r.doc_id for r in response.retrieved] == ["vault", "refund", "hours"]
    assert response.retrieved[0].score == 0.9


def test_a_chain_input_key_can_be_set_or_be_the_plain_query(app):
    t = target(app, {"C": LcelChain}, callable=f"{APP}:C", input_key="input")
    assert t.answer("q").answer == "answer to {'input': 'q'}"
    t = target(app, {"C": LcelChain}, callable=f"{APP}:C", input_key="$")
    assert t.answer("q") == Response("answer to q")
    assert run(t.aanswer("q2")) == Response("answer to q2")


def test_kind_settles_an_object_that_fits_several_shapes(app):
    class Both(ModernRetriever):
        def answer(self, query):
            return "as a target"

    assert target(app, {"B": Both}, callable=f"{APP}:B").answer("q").answer == "as a target"
    forced = target(app, {"B": Both}, callable=f"{APP}:B", kind="retriever").answer("q")
    assert forced.retrieved is not None and forced.retrieved[0].doc_id == "vault"


# ---- errors ---------------------------------------------------------------------------------


def test_an_unimportable_module_is_named(tmp_path, monkeypatch):
    (tmp_path / "rlk_broken_app.py").write_text("import rlk_missing_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match=r"cannot import module 'rlk_broken_app'.*rlk_missing"):
        PythonTarget(callable="rlk_broken_app:answer")
    with pytest.raises(ConfigError, match="cannot import module 'rlk_nowhere'"):
        load(TARGETS, "python", {"callable": "rlk_nowhere:f"})


def test_a_missing_attribute_is_named(app):
    with pytest.raises(ImportError, match=r"'rlk_fake_app:Nope.x'.*has no attribute 'Nope'"):
        PythonTarget(callable=f"{APP}:Nope.x")


@pytest.mark.parametrize("spec", ["no_colon", ":f", "mod:", ""])
def test_a_malformed_callable_is_a_config_error(spec):
    with pytest.raises(ConfigError, match=r"'callable' must look like 'package.module:attr'"):
        load(TARGETS, "python", {"callable": spec})


def test_an_unsupported_shape_is_refused_at_construction(app):
    app.NUMBER = 42
    with pytest.raises(TypeError, match=r"'rlk_fake_app:NUMBER': int is not a usable target"):
        PythonTarget(callable=f"{APP}:NUMBER")
    app.f = lambda q: q
    with pytest.raises(ValueError, match="set factory = true"):
        PythonTarget(callable=f"{APP}:f", kwargs={"x": 1})
    with pytest.raises(TypeError, match="which is not a chain"):
        PythonTarget(callable=f"{APP}:NUMBER", kind="chain")


def test_a_failing_factory_is_reported_as_the_apps_error(app):
    class Boom:
        def __init__(self, **kwargs):
            raise RuntimeError("no model file")

    app.Boom = Boom
    built = load(TARGETS, "python", {"callable": f"{APP}:Boom", "kwargs": {"x": 1}}).obj
    with pytest.raises(RuntimeError, match=r"the factory 'rlk_fake_app:Boom' failed: Runtime"):
        built.ingest(DOCS)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (42, "returned int; expected a str, a dict with an answer"),
        ({"sources": []}, "without a string answer under any of answer, result"),
        ({"answer": "A", "sources": [{"text": "no id"}]}, r"\['sources'\]\[0\] \(dict\) has no"),
        ({"answer": "A", "context": [FakeDoc("t", {})]}, r"\['context'\]\[0\] \(FakeDoc\) has no"),
    ],
)
def test_an_unusable_return_value_is_a_clear_error(app, value, message):
    t = target(app, {"f": lambda q: value}, callable=f"{APP}:f")
    with pytest.raises(TypeError, match=message):
        t.answer("q")


def test_a_string_context_is_not_mistaken_for_documents():
    response = to_response({"answer": "A", "context": "some text", "documents": ["d1"]})
    assert response.retrieved == (RetrievedDocument("d1"),)


# ---- a factory is called after ingest ---------------------------------------------------------


def test_a_factory_is_called_after_the_ingest_callable_and_never_at_construction(app):
    calls: list[str] = []
    held: list[Document] = []

    def store(documents):
        calls.append(f"ingest_callable {[d.doc_id for d in documents]}")
        held[:] = documents

    def build(prefix):
        calls.append("factory")
        ids = [d.doc_id for d in held]  # what the app sees is what it was built from
        return lambda query: {"answer": f"{prefix}{query}", "sources": ids}

    t = target(
        app,
        {"store": store, "build": build},
        callable=f"{APP}:build",
        factory=True,
        kwargs={"prefix": ">"},
        ingest_callable=f"{APP}:store",
    )
    assert calls == []  # constructing (also done to check a config) calls nothing
    assert (t.isolation, t.ingests) == ("fresh", True)
    t.ingest(DOCS)
    assert calls == ["ingest_callable ['vault', 'refund']", "factory"]
    response = t.answer("q")
    assert response.answer == ">q"
    assert [r.doc_id for r in response.retrieved or ()] == ["vault", "refund"]
    assert calls == ["ingest_callable ['vault', 'refund']", "factory"]  # built once


def test_a_factory_with_a_documents_parameter_gets_the_packs_documents(app):
    built: list[Any] = []

    def build(documents, k):
        built.append([d.doc_id for d in documents])
        return lambda query: ("A", [d.doc_id for d in documents][:k])

    options = {"callable": f"{APP}:build", "factory": True, "kwargs": {"k": 1}}
    first = target(app, {"build": build}, **options)
    second = PythonTarget(**options)  # the runner builds one target per pack
    assert (first.isolation, first.ingests) == ("fresh", True)
    run(first.aingest(DOCS))
    second.ingest(DOCS[1:])
    assert built == [["vault", "refund"], ["refund"]]
    assert first.answer("q").retrieved == (RetrievedDocument("vault"),)
    assert run(second.aanswer("q")).retrieved == (RetrievedDocument("refund"),)


def test_a_factory_app_lives_for_one_pack(app):
    closed: list[int] = []

    class App:
        def __init__(self):
            self.docs: list[str] = []

        def ingest(self, documents):
            self.docs.extend(d.doc_id for d in documents)

        def answer(self, query):
            return ("A", list(self.docs))

        def close(self):
            closed.append(len(self.docs))

    t = target(app, {"App": App}, callable=f"{APP}:App")
    assert t.answer("q").retrieved == ()  # no ingest: the first answer builds the app
    t.ingest(DOCS)
    assert [r.doc_id for r in t.answer("q").retrieved or ()] == ["vault", "refund"]
    t.reset()  # the app is closed and dropped; the next ingest builds a new one
    assert closed == [2]
    t.ingest(DOCS[1:])
    assert [r.doc_id for r in t.answer("q").retrieved or ()] == ["refund"]
    t.close()
    assert closed == [2, 1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 1, "nope": 2}, r"with kwargs \['k', 'nope'\]: got an unexpected keyword"),
        ({}, r"cannot be called with kwargs \[\]: missing a required argument: 'k'"),
        ({"k": 1, "documents": []}, "must not set 'documents'"),
    ],
)
def test_a_factorys_kwargs_are_checked_before_the_run(app, kwargs, message):
    app.build = lambda documents, k: lambda q: "A"
    options = {"callable": f"{APP}:build", "factory": True, "kwargs": kwargs}
    with pytest.raises(ConfigError, match=message):
        load(TARGETS, "python", options)


def test_a_factory_returning_no_usable_app_fails_at_ingest(app):
    app.build = lambda: 42
    t = PythonTarget(callable=f"{APP}:build", factory=True)
    with pytest.raises(TypeError, match=r"'rlk_fake_app:build': int is not a usable target"):
        t.ingest(DOCS)


# ---- LangChain vector stores ------------------------------------------------------------------


class FakeStore:
    """What a LangChain vector store looks like: add_texts, delete and similarity_search."""

    def __init__(self, own_ids: bool = False, delete_result: Any = None) -> None:
        self.docs: dict[str, FakeDoc] = {}
        self.added: list[tuple[list[str], Any, Any]] = []
        self.deleted: list[list[str]] = []
        self.own_ids = own_ids
        self.delete_result = delete_result

    def add_texts(self, texts, metadatas=None, *, ids=None):
        texts = list(texts)
        self.added.append((texts, metadatas, ids))
        ids = [f"uuid-{len(self.docs) + i}" for i in range(len(texts))] if self.own_ids else ids
        for doc_id, text, meta in zip(ids, texts, metadatas, strict=True):
            self.docs[doc_id] = FakeDoc(text, dict(meta), id=doc_id)
        return ids

    def delete(self, ids=None):
        self.deleted.append(list(ids))
        for doc_id in ids:
            self.docs.pop(doc_id, None)
        return self.delete_result

    def similarity_search(self, query, k=4):
        return list(self.docs.values())[:k]

    def similarity_search_with_score(self, query, k=4):
        return [(d, 1.0 / (i + 1)) for i, d in enumerate(list(self.docs.values())[:k])]


class StoreRetriever:
    """What ``vectorstore.as_retriever()`` looks like."""

    def __init__(self, store: FakeStore) -> None:
        self.vectorstore = store

    def _get_relevant_documents(self, query):
        return self.vectorstore.similarity_search(query, k=2)

    def invoke(self, query):
        return self._get_relevant_documents(query)


PACK = [
    Document("a1", "alpha", kind="poison", metadata={"sentinel": "RLK-SENTINEL-x"}),
    Document("a2", "beta"),
    Document("a3", "gamma"),
]


def test_a_vector_store_retriever_gets_the_documents_with_their_ids_and_loses_them(app):
    store = FakeStore()
    t = target(app, {"retriever": StoreRetriever(store)}, callable=f"{APP}:retriever")
    assert (t.isolation, t.ingests) == ("reset", True)
    ids = t.planted_ids(PACK, run="run-1:pack")
    assert ids == [planted_id("run-1:pack", d.doc_id) for d in PACK]
    run(t.aingest(PACK))
    # only the id (and the run's tag) goes in: the pack's metadata (kind, sentinels) must never
    # reach the app
    tag = {RUN_TAG: "run-1:pack"}
    assert store.added == [
        (["alpha", "beta", "gamma"],
         [{"doc_id": "a1", **tag}, {"doc_id": "a2", **tag}, {"doc_id": "a3", **tag}], ids),
    ]  # fmt: skip
    response = run(t.aanswer("q"))
    assert response.retrieved == (RetrievedDocument("a1", "alpha"), RetrievedDocument("a2", "beta"))
    assert response.answer == "alpha\n\nbeta"
    run(t.areset())
    assert store.deleted == [ids] and store.docs == {}
    run(t.areset())  # nothing left to delete
    assert store.deleted == [ids]


def test_a_store_that_picks_its_own_ids_is_emptied_and_mapped_by_metadata(app):
    store = FakeStore(own_ids=True)
    t = target(app, {"r": StoreRetriever(store)}, callable=f"{APP}:r", doc_id_field="pack_id")
    ids = t.planted_ids(PACK, run="r")
    t.ingest(PACK)
    assert store.added[0][1][0] == {"doc_id": "a1", "pack_id": "a1", RUN_TAG: "r"}
    assert [r.doc_id for r in t.answer("q").retrieved or ()] == ["a1", "a2"]
    t.reset()
    assert store.deleted == [[*ids, "uuid-0", "uuid-1", "uuid-2"]]
    assert store.docs == {}


def _refuse(ids=None):
    raise NotImplementedError("no delete")


@pytest.mark.parametrize(
    ("delete", "message"),
    [
        (lambda ids=None: False, r"delete \(FakeStore\) failed: it returned False for 3 ids"),
        (_refuse, r"delete \(FakeStore\) failed: NotImplementedError: no delete"),
    ],
)
def test_a_store_that_cannot_delete_fails_the_reset(app, delete, message):
    store = FakeStore()
    store.delete = delete
    t = target(app, {"r": StoreRetriever(store)}, callable=f"{APP}:r")
    t.ingest(PACK)
    with pytest.raises(RuntimeError, match=message):
        t.reset()


def test_a_vector_store_itself_is_searched_with_scores_and_top_k(app):
    store = FakeStore()
    t = target(app, {"store": store}, callable=f"{APP}:store", top_k=2)
    assert (t._shape, t.isolation) == ("vectorstore", "reset")
    t.ingest(PACK)
    response = t.answer("q")
    assert response.retrieved == (
        RetrievedDocument("a1", "alpha", 1.0),
        RetrievedDocument("a2", "beta", 0.5),
    )
    assert response.metadata == {"shape": "vectorstore"}


def test_an_ingest_callable_replaces_the_stores_route(app):
    store = FakeStore()
    apps = {"r": StoreRetriever(store), "load": lambda documents: None}
    t = target(app, apps, callable=f"{APP}:r", ingest_callable=f"{APP}:load")
    assert (t.ingests, t.isolation) == (True, "shared")  # nothing removes what load planted
    t.ingest(PACK)
    assert store.added == []
    app.forget = lambda: None
    assert (
        PythonTarget(
            callable=f"{APP}:r", ingest_callable=f"{APP}:load", reset_callable=f"{APP}:forget"
        ).isolation
        == "reset"
    )


# ---- LlamaIndex-style objects -----------------------------------------------------------------


class FakeNode:
    """What a LlamaIndex TextNode looks like."""

    def __init__(self, node_id, text, metadata=None, ref_doc_id=None):
        self.node_id = self.id_ = node_id
        self.text = text
        self.metadata = metadata or {}
        self.ref_doc_id = ref_doc_id

    def get_content(self):
        return self.text


class FakeNodeWithScore:
    def __init__(self, node, score):
        self.node = node
        self.score = score


NODES = [
    FakeNodeWithScore(FakeNode("vault", "The vault code is alpha seven."), 0.9),
    FakeNodeWithScore(FakeNode("n-7", "Refunds take ten days.", {"doc_id": "refund"}), 0.5),
    FakeNodeWithScore(FakeNode("n-8", "Open nine to five.", ref_doc_id="hours"), None),
]
NODE_IDS = [("vault", 0.9), ("refund", 0.5), ("hours", None)]


class LlamaRetriever:
    def __init__(self):
        self.calls: list[str] = []

    def retrieve(self, query):
        self.calls.append("retrieve")
        return NODES

    async def aretrieve(self, query):
        self.calls.append("aretrieve")
        return NODES


class LlamaResponse:
    def __init__(self, response, source_nodes):
        self.response = response
        self.source_nodes = source_nodes
        self.metadata = {"n-7": {"doc_id": "refund"}}


class QueryEngine:
    """Like LlamaIndex's RetrieverQueryEngine, which also has retrieve()."""

    def query(self, query):
        return LlamaResponse(f"sync: {query}", NODES)

    async def aquery(self, query):
        return LlamaResponse(f"async: {query}", NODES[:1])

    def retrieve(self, query_bundle):
        raise AssertionError("a query engine is asked with query()")


def test_a_llamaindex_retriever_is_read_through_its_nodes(app):
    t = target(app, {"r": LlamaRetriever()}, callable=f"{APP}:r")
    assert (t._shape, t.ingests, t.isolation) == ("retriever", False, "fresh")
    for response in (t.answer("q"), run(t.aanswer("q"))):
        assert [(r.doc_id, r.score) for r in response.retrieved or ()] == NODE_IDS
        assert response.retrieved is not None and response.retrieved[1].text == NODES[1].node.text
    assert t._app.calls == ["retrieve", "aretrieve"]


def test_a_llamaindex_query_engine_gives_its_response_and_source_nodes(app):
    t = target(app, {"qe": QueryEngine()}, callable=f"{APP}:qe")
    assert t._shape == "query_engine"
    response = t.answer("q")
    assert response.answer == "sync: q"
    assert [(r.doc_id, r.score) for r in response.retrieved or ()] == NODE_IDS
    assert response.metadata == {}  # the engine's metadata is not JSON-safe in general
    assert run(t.aanswer("q")).retrieved == (
        RetrievedDocument("vault", "The vault code is alpha seven.", 0.9),
    )


def test_a_streaming_or_empty_query_engine_response(app):
    streaming = types.SimpleNamespace(response_gen=iter(()), source_nodes=[])
    with pytest.raises(TypeError, match=r"streaming response .* streaming=False"):
        to_response(streaming)
    empty = to_response(types.SimpleNamespace(response=None, source_nodes=[]))
    assert empty == Response("", ())


# ---- mapping ids ------------------------------------------------------------------------------


def test_doc_id_pattern_maps_chunk_ids_back_and_keeps_the_chunk(app):
    def rag(query):
        return {"answer": "A", "sources": ["vault::chunk-0", "vault::chunk-3", "other"]}

    t = target(
        app, {"rag": rag}, callable=f"{APP}:rag", doc_id_pattern=r"^(?P<doc_id>.+?)::chunk-\d+$"
    )
    assert t.answer("q").retrieved == (
        RetrievedDocument("vault", chunk_id="vault::chunk-0"),
        RetrievedDocument("vault", chunk_id="vault::chunk-3"),
        RetrievedDocument("other"),  # unmatched: kept, so the wiring check counts it as unknown
    )


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(", "not a valid regular expression"), ("^(.+)::c$", r"named group \(\?P<doc_id>")],
)
def test_a_bad_doc_id_pattern_is_a_config_error(app, pattern, message):
    app.f = lambda q: "A"
    with pytest.raises(ConfigError, match=message):
        load(TARGETS, "python", {"callable": f"{APP}:f", "doc_id_pattern": pattern})


def test_doc_id_field_names_the_metadata_key_that_holds_the_packs_id(app):
    docs = [FakeDoc("t", {"source": "/kb/file.md", "pack": "vault"}, id="uuid-1")]
    t = target(app, {"rag": lambda q: {"answer": "A", "context": docs}}, callable=f"{APP}:rag")
    assert t.answer("q").retrieved == (RetrievedDocument("/kb/file.md", "t"),)
    mapped = PythonTarget(callable=f"{APP}:rag", doc_id_field="pack")
    assert mapped.answer("q").retrieved == (RetrievedDocument("vault", "t"),)


# ---- reset, isolation and hook failures ---------------------------------------------------------


def test_reset_callable_gets_the_ingested_documents_when_it_takes_them(app):
    seen: list[Any] = []

    async def forget(documents):
        seen.append([d.doc_id for d in documents])

    t = target(
        app,
        {"forget": forget, "rag": lambda q: "A", "load": lambda docs: None},
        callable=f"{APP}:rag",
        ingest_callable=f"{APP}:load",
        reset_callable=f"{APP}:forget",
    )
    assert (t.ingests, t.isolation) == (True, "reset")
    t.ingest(DOCS)
    run(t.aingest(DOCS[:1]))
    t.reset()
    run(t.areset())
    assert seen == [["vault", "refund", "vault"], []]
    app.clear = lambda: seen.append("cleared")
    PythonTarget(callable=f"{APP}:rag", reset_callable=f"{APP}:clear").reset()
    assert seen[-1] == "cleared"


def test_a_failing_reset_callable_is_named_and_the_store_is_still_emptied(app):
    def forget():
        raise ValueError("index is locked")

    store = FakeStore()
    t = target(
        app,
        {"r": StoreRetriever(store), "forget": forget},
        callable=f"{APP}:r",
        reset_callable=f"{APP}:forget",
    )
    t.ingest(PACK)
    with pytest.raises(RuntimeError) as raised:
        t.reset()
    assert str(raised.value) == (
        "reset_callable 'rlk_fake_app:forget' failed: ValueError: index is locked"
    )
    assert store.docs == {}


def test_a_failing_ingest_hook_names_the_hook_and_the_cause(app):
    def load(documents):
        raise ValueError("HTTP 401 from the index")

    class App:
        def ingest(self, documents):
            raise OSError("disk full")

        def answer(self, query):
            return "A"

    app.App = App()
    t = target(app, {"load": load, "rag": lambda q: "A"}, callable=f"{APP}:rag",
               ingest_callable=f"{APP}:load")  # fmt: skip
    with pytest.raises(RuntimeError) as raised:
        run(t.aingest(DOCS))
    assert str(raised.value) == (
        "ingest_callable 'rlk_fake_app:load' failed: ValueError: HTTP 401 from the index"
    )
    with pytest.raises(RuntimeError, match=r"the app's ingest \(rlk_fake_app:App\) failed: OSErr"):
        PythonTarget(callable=f"{APP}:App").ingest(DOCS)


class Resettable:
    def answer(self, query):
        return "A"

    def ingest(self, documents):
        pass

    def reset(self):
        pass


class NoReset:
    def answer(self, query):
        return "A"

    def ingest(self, documents):
        pass


@pytest.mark.parametrize(
    ("apps", "options", "expected"),
    [
        ({"f": lambda q: "A"}, {}, ("fresh", False)),
        ({"f": lambda q: "A", "load": print}, {"ingest_callable": "load"}, ("shared", True)),
        ({"f": Resettable()}, {}, ("reset", True)),
        ({"f": NoReset()}, {}, ("shared", True)),
        ({"f": NoReset}, {}, ("fresh", True)),  # a class: a new app per target
        ({"f": lambda: lambda q: "A"}, {"factory": True}, ("fresh", False)),
        ({"f": StoreRetriever(FakeStore())}, {}, ("reset", True)),
        ({"f": LlamaRetriever()}, {}, ("fresh", False)),
    ],
)
def test_isolation_and_ingests(app, apps, options, expected):
    options = {k: f"{APP}:{v}" if k.endswith("_callable") else v for k, v in options.items()}
    t = target(app, apps, callable=f"{APP}:f", **options)
    assert (t.isolation, t.ingests) == expected


def test_a_warning_says_once_that_the_documents_reached_nothing(app, caplog):
    t = target(app, {"rag": lambda q: "A"}, callable=f"{APP}:rag")
    with caplog.at_level(logging.WARNING, logger="ragleaklab_plugins.targets.python"):
        t.ingest([])  # a pack without documents: nothing to say
        assert caplog.records == []
        t.ingest(DOCS)
        run(t.aingest(DOCS))
    [record] = caplog.records
    message = record.getMessage()
    assert message.startswith("python_target.documents_not_ingested")
    assert "the pack's 2 documents were not given to the app" in message
    assert "ingest_callable" in message and "factory" in message
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ragleaklab_plugins.targets.python"):
        target(app, {"r": StoreRetriever(FakeStore())}, callable=f"{APP}:r").ingest(DOCS)
    assert caplog.records == []


def test_the_sync_hooks_work_inside_a_running_event_loop(app):
    store = FakeStore()
    t = target(app, {"r": StoreRetriever(store)}, callable=f"{APP}:r")

    async def go():
        t.ingest(PACK)  # a notebook, an async test: no "asyncio.run() cannot be called" error
        return t.answer("q")

    assert [r.doc_id for r in run(go()).retrieved or ()] == ["a1", "a2"]


def test_sync_hooks_in_a_running_loop_never_use_a_patched_asyncio_run(app, monkeypatch):
    # nest_asyncio (applied by inspect_ai when it runs inside a loop) replaces asyncio.run with
    # one that never closes its loop: the target must not depend on it in its worker thread.
    leaked: list[asyncio.AbstractEventLoop] = []

    def leaky_run(coroutine, **kwargs):
        loop = asyncio.new_event_loop()
        leaked.append(loop)
        return loop.run_until_complete(coroutine)

    store = FakeStore()
    t = target(app, {"r": StoreRetriever(store)}, callable=f"{APP}:r")

    async def go():
        with monkeypatch.context() as patched:
            patched.setattr(asyncio, "run", leaky_run)
            t.ingest(PACK)
            return t.answer("q")

    response = run(go())
    for loop in leaked:
        loop.close()
    assert leaked == []
    assert [r.doc_id for r in response.retrieved or ()] == ["a1", "a2"]


# ---- importing the app ------------------------------------------------------------------------


def test_the_current_directory_is_importable(tmp_path, monkeypatch):
    (tmp_path / "rlk_cwd_app.py").write_text("def answer(query):\n    return 'from cwd'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", os.curdir)])
    assert PythonTarget(callable="rlk_cwd_app:answer").answer("q").answer == "from cwd"
    assert str(tmp_path) in sys.path
    sys.modules.pop("rlk_cwd_app", None)


@pytest.mark.parametrize(
    ("spec", "files", "message"),
    [
        ("rlk_absent:answer", {}, (
            "callable 'rlk_absent:answer': cannot import module 'rlk_absent' (No module named "
            "'rlk_absent'): run ragleaklab from the directory that holds rlk_absent.py, or pip "
            "install the package, or set PYTHONPATH"
        )),
        ("rlk_absent.sub:answer", {}, "the directory that holds the package rlk_absent/"),
        ("rlk_needs:answer", {"rlk_needs.py": "import rlk_not_installed\n"}, (
            "it imports a module that is not installed (No module named 'rlk_not_installed'); "
            "install it in the environment ragleaklab runs in"
        )),
        ("rlk_bad:answer", {"rlk_bad.py": "raise RuntimeError('needs OPENAI_API_KEY')\n"},
         "importing it raised RuntimeError: needs OPENAI_API_KEY"),
        ("rlk_has:anwser", {"rlk_has.py": "import os\nK = 1\ndef answer(q): ...\n"},
         "module 'rlk_has' has no attribute 'anwser'; it has: K, answer"),
    ],
)  # fmt: skip
def test_an_app_that_does_not_import_is_a_config_error_naming_the_fix(
    tmp_path, monkeypatch, spec, files, message
):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        load(TARGETS, "python", {"callable": spec})
    assert message in str(raised.value)
    for name in files:
        sys.modules.pop(name.removesuffix(".py"), None)


def test_a_document_a_store_names_only_in_its_metadata_is_named_by_that_id():
    """Qdrant's LangChain store returns a team document with no id but metadata ``_id``: it is
    the team's page, named by the store's id, never an error; a pack's ``doc_id`` still wins."""
    from ragleaklab_plugins.targets.python import to_retrieved

    team = FakeDoc("the team's page", {"owner": "team", "_id": "3f2b6c1e-0000-5000-8000-1"})
    planted = FakeDoc("a pack page", {"doc_id": "p-01", "_id": "9a9a9a9a-0000-5000-8000-2"})
    bare = FakeDoc("no id anywhere", {"owner": "team"})
    got = to_retrieved([team, planted], "the retriever's result")
    assert [d.doc_id for d in got] == ["3f2b6c1e-0000-5000-8000-1", "p-01"]
    with pytest.raises(TypeError, match="has no document id"):
        to_retrieved([bare], "the retriever's result")
