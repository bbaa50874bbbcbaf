"""The python target: every accepted shape, LangChain-style duck types, and its errors."""

from __future__ import annotations

import asyncio
import sys
import threading
import types
from typing import Any

import pytest
from ragleaklab_plugins.targets.python import PythonTarget, to_response
from ragleaklab_plugins.targets.reference import ReferenceTarget

from ragleaklab_core import ConfigError, Document, Response, RetrievedDocument
from ragleaklab_core import load_plugin as load

TARGETS = "ragleaklab.targets"
APP = "rlk_fake_app"
DOCS = [
    Document("vault", "The vault code is alpha seven. It rotates weekly."),
    Document("refund", "Refunds take ten business days after approval."),
]


@pytest.fixture
def app(monkeypatch):
    """A module ``rlk_fake_app`` the test fills with apps; callable = "rlk_fake_app:NAME"."""
    module = types.ModuleType(APP)
    monkeypatch.setitem(sys.modules, APP, module)
    return module


def target(module: types.ModuleType, apps: dict[str, Any], **options: Any) -> PythonTarget:
    """Put *apps* into *module* as attributes, then build the target from *options*."""
    for name, value in apps.items():
        setattr(module, name, value)
    return PythonTarget(**options)


def run(coro):
    return asyncio.run(coro)


# ---- LangChain-style duck types (no langchain import) -------------------------------------------


class FakeDoc:
    """What a LangChain Document looks like: page_content, metadata and maybe an id."""

    def __init__(self, text: str, metadata: dict[str, Any], id: str | None = None) -> None:
        self.page_content = text
        self.metadata = metadata
        self.id = id


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
