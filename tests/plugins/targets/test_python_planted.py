"""The python target's planted documents (issue 27): ids of the run's own and a tag naming the
run, a store's existing ids never planted over, remove_planted, plants_into and ingest_scope,
another run's documents refused, a sync-only store searched synchronously.

Fakes (duck types, no LangChain) prove each rule; langchain_core's InMemoryVectorStore, and real
Chroma, Qdrant (local mode) and Postgres with pgvector when they are installed, prove it holds
for the stores as they come."""

from __future__ import annotations

import asyncio
import json
import logging
import types
import uuid
from typing import Any

import attrs
import pytest
from ragleaklab_plugins.targets._stores import clean_url, store_identity
from ragleaklab_plugins.targets.python import PythonTarget

from ragleaklab_core import RUN_TAG, Document, ForeignPlanted, RetrievedDocument, planted_id
from tests.support.python_apps import FakeDoc as Doc
from tests.support.python_apps import app_module, build

APP = "rlk_planted_app"
PACK = [
    Document("a1", "alpha poison", kind="poison", metadata={"sentinel": "RLK-SENTINEL-x"}),
    Document("a2", "beta"),
    Document("a3", "gamma"),
]
FOREIGN = (
    "a retrieved document was planted by another ragleaklab run (ragleaklab_run=other-run:pack) "
    "in the same store at the same time: its answer is not this run's measurement; run one "
    "ragleaklab run per store at a time, or give each job its own collection"
)


@pytest.fixture
def app(monkeypatch):
    """A module the test fills with apps; callable = "<APP>:NAME"."""
    return app_module(monkeypatch, APP)


target = build


def run(coro):
    return asyncio.run(coro)


# ---- fakes --------------------------------------------------------------------------------------


class Store:
    """A vector store whose documents outlive the process, as far as the target can tell: a
    collection name, add_texts, get_by_ids, delete and similarity_search (in insertion order)."""

    def __init__(self, collection_name: str = "kb", docs: dict[str, Doc] | None = None) -> None:
        self.collection_name = collection_name
        self.docs: dict[str, Doc] = dict(docs or {})
        self.added: list[tuple[list[str], Any, Any]] = []
        self.deleted: list[list[str]] = []
        self.asked: list[list[str]] = []

    def add_texts(self, texts, metadatas=None, *, ids=None):
        texts = list(texts)
        self.added.append((texts, metadatas, ids))
        for doc_id, text, meta in zip(ids, texts, metadatas, strict=True):
            self.docs[doc_id] = Doc(text, dict(meta), id=doc_id)
        return ids

    def get_by_ids(self, ids, /):
        self.asked.append(list(ids))
        return [self.docs[i] for i in ids if i in self.docs]

    def delete(self, ids=None):
        self.deleted.append(list(ids))
        for doc_id in ids:
            self.docs.pop(doc_id, None)

    def similarity_search(self, query, k=4):
        return list(self.docs.values())[:k]


class StoreRetriever:
    """What ``vectorstore.as_retriever()`` looks like."""

    def __init__(self, store: Any) -> None:
        self.vectorstore = store

    def _get_relevant_documents(self, query):
        return self.vectorstore.similarity_search(query, k=10)

    def invoke(self, query):
        return self._get_relevant_documents(query)


def team_doc() -> Doc:
    """The team's own document, whose id happens to be a pack's doc_id."""
    return Doc("the team's handbook page", {"source": "handbook.md"}, id="a1")


# ---- ids of the run's own, tagged with the run ------------------------------------------------


def test_planted_ids_are_uuids_of_the_run_and_ingest_plants_exactly_them(app):
    store = Store()
    t = target(app, {"store": store}, callable=f"{APP}:store", doc_id_field="pack_id")
    ids = t.planted_ids(iter(PACK), run="run-1:pack")
    assert ids == [planted_id("run-1:pack", d.doc_id) for d in PACK]
    assert all(str(uuid.UUID(i)) == i for i in ids) and not {d.doc_id for d in PACK} & set(ids)
    t.ingest(PACK)
    [(texts, metadatas, planted)] = store.added
    assert planted == ids and texts == [d.text for d in PACK]
    assert metadatas == [
        {"doc_id": d.doc_id, "pack_id": d.doc_id, RUN_TAG: "run-1:pack"} for d in PACK
    ]
    # another run, or another pack of the same run, plants under other ids
    assert not set(t.planted_ids(PACK, run="run-2:pack")) & set(ids)
    assert not set(t.planted_ids(PACK, run="run-1:other")) & set(ids)


@pytest.mark.parametrize("run_value", ["", None, 3])
def test_planted_ids_needs_a_run(app, run_value):
    t = target(app, {"store": Store()}, callable=f"{APP}:store")
    with pytest.raises(ValueError, match="'run' must be a non-empty string"):
        t.planted_ids(PACK, run=run_value)


def test_without_planted_ids_each_target_plants_under_ids_of_its_own(app):
    store = Store()
    first = target(app, {"store": store}, callable=f"{APP}:store")
    second = PythonTarget(callable=f"{APP}:store")
    first.ingest(PACK)
    first.ingest(PACK)  # its own documents again: replaced, not refused
    second.ingest(PACK)
    [a, again, b] = [planted for _, _, planted in store.added]
    assert a == again and not set(a) & set(b)
    assert not set(a) & {d.doc_id for d in PACK}
    runs = {m[RUN_TAG] for _, metadatas, _ in store.added for m in metadatas}
    assert len(runs) == 2 and all(len(r) == 32 for r in runs)


def test_a_team_document_with_a_packs_id_survives_ingest_and_reset_unchanged(app):
    team = team_doc()
    store = Store(docs={"a1": team})
    t = target(app, {"r": StoreRetriever(store)}, callable=f"{APP}:r")
    ids = t.planted_ids(PACK, run="run-1:pack")
    t.ingest(PACK)
    assert store.docs["a1"] is team and len(store.docs) == 4
    t.reset()
    assert store.deleted == [ids]
    assert store.docs == {"a1": team}
    assert (team.page_content, team.metadata) == (
        "the team's handbook page",
        {"source": "handbook.md"},
    )


def test_an_id_the_store_already_holds_is_refused_and_nothing_is_added(app):
    taken = planted_id("run-1:pack", "a2")
    held = Doc("someone else's", {}, id=taken)
    store = Store(docs={taken: held})
    t = target(app, {"store": store}, callable=f"{APP}:store")
    t.planted_ids(PACK, run="run-1:pack")
    with pytest.raises(RuntimeError) as raised:
        t.ingest(PACK)
    assert str(raised.value) == (
        f"the vector store (Store) already holds 1 of the 3 ids this pack would plant (e.g. "
        f"'{taken}', for the pack's 'a2'): nothing was added, so nothing of the store's is "
        "overwritten or deleted"
    )
    assert store.added == []
    t.reset()  # what it did not plant, it does not delete
    assert store.deleted == [] and store.docs == {taken: held}


@pytest.mark.parametrize("get_by_ids", ["absent", "not implemented"])
def test_a_store_that_cannot_say_what_it_holds_is_planted_unchecked(app, get_by_ids):
    store = Store()
    if get_by_ids == "absent":
        store.get_by_ids = None
    else:

        def refuse(ids, /):
            raise NotImplementedError("Store does not yet support get_by_ids.")

        store.get_by_ids = refuse
    t = target(app, {"store": store}, callable=f"{APP}:store")
    ids = t.planted_ids(PACK, run="r")
    t.ingest(PACK)
    assert sorted(store.docs) == sorted(ids)
    assert t.remove_planted(ids) == []  # removed; the store cannot say more
    assert store.docs == {}


def test_a_store_that_fails_to_say_what_it_holds_fails_the_ingest(app):
    store = Store()

    def unreachable(ids, /):
        raise ConnectionError("connection refused")

    store.get_by_ids = unreachable
    t = target(app, {"store": store}, callable=f"{APP}:store")
    with pytest.raises(RuntimeError, match=r"get_by_ids \(Store\) failed: ConnectionError: conn"):
        t.ingest(PACK)
    assert store.added == []


def test_two_runs_on_one_store_never_delete_each_others_documents(app):
    store = Store()
    first = target(app, {"store": store}, callable=f"{APP}:store")
    second = PythonTarget(callable=f"{APP}:store")
    mine = first.planted_ids(PACK, run="run-1:pack")
    theirs = second.planted_ids(PACK, run="run-2:pack")
    first.ingest(PACK)
    second.ingest(PACK)
    first.reset()
    assert sorted(store.docs) == sorted(theirs)
    assert all(d.metadata[RUN_TAG] == "run-2:pack" for d in store.docs.values())
    assert first.remove_planted(mine) == []
    assert sorted(store.docs) == sorted(theirs)
    second.reset()
    assert store.docs == {}


# ---- another run's documents ------------------------------------------------------------------


def tagged(run_value: str) -> list[Doc]:
    return [
        Doc("alpha poison", {"doc_id": "a1", RUN_TAG: run_value}),
        Doc("team", {"source": "handbook.md"}),
    ]


class FakeNode:
    def __init__(self, text: str, metadata: dict[str, Any]) -> None:
        self.text, self.metadata, self.node_id = text, metadata, "node-1"


class NodeWithScore:
    def __init__(self, node: FakeNode, score: float) -> None:
        self.node, self.score = node, score


class QueryEngine:
    def __init__(self, run_value: str) -> None:
        self.run_value = run_value

    def query(self, query):
        nodes = [NodeWithScore(FakeNode("t", {"doc_id": "a1", RUN_TAG: self.run_value}), 0.5)]
        return types.SimpleNamespace(response="A", source_nodes=nodes)


class Chain:
    def __init__(self, run_value: str, key: str) -> None:
        self.run_value, self.key = run_value, key

    def invoke(self, inputs):
        return {"answer": "A", self.key: tagged(self.run_value)}


SHAPES = {
    "vectorstore": lambda r: Store(docs={d.metadata.get("doc_id", "t"): d for d in tagged(r)}),
    "retriever": lambda r: StoreRetriever(
        Store(docs={d.metadata.get("doc_id", "t"): d for d in tagged(r)})
    ),
    "chain source_documents": lambda r: Chain(r, "source_documents"),
    "chain context": lambda r: Chain(r, "context"),
    "function pair": lambda r: lambda q: ("A", tagged(r)),
    "function scored pairs": lambda r: lambda q: {"answer": "A", "docs": [(tagged(r)[0], 0.9)]},
    "query engine": QueryEngine,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_document_another_run_planted_raises_foreign_planted(app, shape):
    t = target(app, {"rag": SHAPES[shape]("other-run:pack")}, callable=f"{APP}:rag")
    t.planted_ids(PACK, run="run-1:pack")
    with pytest.raises(ForeignPlanted) as raised:
        run(t.aanswer("q"))
    assert str(raised.value) == FOREIGN
    assert isinstance(raised.value, RuntimeError)
    with pytest.raises(ForeignPlanted):
        t.answer("q")
    own = target(app, {"rag": SHAPES[shape]("run-1:pack")}, callable=f"{APP}:rag")
    own.planted_ids(PACK, run="run-1:pack")
    assert "a1" in [r.doc_id for r in run(own.aanswer("q")).retrieved or ()]


def test_a_target_told_no_run_takes_every_tagged_document_for_another_runs(app):
    # its run is its own (drawn once): a document some run planted is not its measurement
    t = target(app, {"rag": lambda q: ("A", tagged("run-1:pack"))}, callable=f"{APP}:rag")
    with pytest.raises(ForeignPlanted, match=r"\(ragleaklab_run=run-1:pack\)"):
        t.answer("q")


# ---- what reaches the response ----------------------------------------------------------------


class MetadataDroppingStore(Store):
    """A store that returns its documents without their metadata: only its own ids."""

    def similarity_search(self, query, k=4):
        return [Doc(d.page_content, {}, id=i) for i, d in list(self.docs.items())[:k]]


@pytest.mark.parametrize("cls", [Store, MetadataDroppingStore])
@pytest.mark.parametrize("pattern", [None, r"^(?P<doc_id>.+?)::chunk-\d+$"])
def test_responses_carry_the_packs_ids_and_never_the_runs(app, cls, pattern):
    responses = []
    for run_value in ("run-1:pack", "run-2:pack"):
        store = cls()
        t = target(app, {"store": store}, callable=f"{APP}:store", doc_id_pattern=pattern)
        ids = t.planted_ids(PACK, run=run_value)
        t.ingest(PACK)
        response = t.answer("q")
        assert not any(i in repr(response) for i in ids)
        t.reset()
        responses.append(json.dumps(attrs.asdict(response), sort_keys=True))
    assert responses[0] == responses[1]
    assert json.loads(responses[0])["retrieved"] == [
        attrs.asdict(RetrievedDocument(d.doc_id, d.text)) for d in PACK
    ]


# ---- remove_planted -----------------------------------------------------------------------------


def test_remove_planted_deletes_the_ids_and_says_what_is_left(app):
    store = Store()
    t = target(app, {"r": StoreRetriever(store)}, callable=f"{APP}:r")
    ids = t.planted_ids(PACK, run="run-1:pack")
    t.ingest(PACK)
    # a target built afresh (ragleaklab cleanup, a later run) removes what another planted
    fresh = PythonTarget(callable=f"{APP}:r")
    assert fresh.plants_into == t.plants_into
    assert fresh.remove_planted([*ids, "never-planted"]) == []
    assert store.deleted == [[*ids, "never-planted"]] and store.docs == {}
    assert run(fresh.aremove_planted([])) == [] and fresh.remove_planted(()) == []
    assert len(store.deleted) == 1  # never delete(ids=[]): some stores read it as "everything"


def test_remove_planted_returns_what_the_store_still_holds(app):
    store = Store()
    store.delete = lambda ids=None: None  # says nothing, deletes nothing
    t = target(app, {"store": store}, callable=f"{APP}:store")
    ids = t.planted_ids(PACK, run="r")
    t.ingest(PACK)
    assert run(t.aremove_planted(ids[:2])) == ids[:2]


@pytest.mark.parametrize(
    ("delete", "message"),
    [
        (lambda ids=None: False, r"delete \(Store\) failed: it returned False for 3 ids"),
        (lambda ids=None: 1 / 0, r"delete \(Store\) failed: ZeroDivisionError"),
    ],
)
def test_remove_planted_raises_when_the_store_fails(app, delete, message):
    store = Store()
    t = target(app, {"store": store}, callable=f"{APP}:store")
    ids = t.planted_ids(PACK, run="r")
    t.ingest(PACK)
    store.delete = delete
    with pytest.raises(RuntimeError, match=message):
        t.remove_planted(ids)


def test_remove_planted_without_a_vector_store_raises(app):
    t = target(app, {"rag": lambda q: "A"}, callable=f"{APP}:rag")
    with pytest.raises(RuntimeError, match="has no vector store to remove them from"):
        t.remove_planted(["x"])


def test_planted_runs_reads_back_each_held_ids_run_tag(app):
    """What cleanup checks before removing a ledger's ids: the run each id the store holds is
    tagged with, None for a document without the tag (a team's), nothing for an id not held."""
    store = Store(docs={"team-1": Doc("the team's page", {"source": "a.md"}, id="team-1")})
    t = target(app, {"store": store}, callable=f"{APP}:store")
    ids = t.planted_ids(PACK, run="run-1:pack")
    t.ingest(PACK)
    fresh = PythonTarget(callable=f"{APP}:store")  # built afresh, as cleanup builds it
    asked = [ids[0], "team-1", "never-planted", ids[2]]
    assert fresh.planted_runs(asked) == {ids[0]: "run-1:pack", "team-1": None, ids[2]: "run-1:pack"}
    assert run(fresh.aplanted_runs(asked)) == fresh.planted_runs(asked)
    assert store.docs.keys() >= {"team-1", *ids}  # reading removes nothing


@pytest.mark.parametrize(
    "store_change",
    [
        lambda store: setattr(store, "get_by_ids", None),  # no get_by_ids
        lambda store: setattr(store, "get_by_ids", _not_implemented),  # LangChain's default
        lambda store: setattr(store, "get_by_ids", lambda ids: [Doc("t", {RUN_TAG: "x"})]),
    ],
    ids=["no-get_by_ids", "not-implemented", "documents-without-ids"],
)
def test_planted_runs_is_none_when_the_store_cannot_say(app, store_change):
    store = Store()
    store_change(store)
    t = target(app, {"store": store}, callable=f"{APP}:store")
    assert t.planted_runs(["a", "b"]) is None


def test_planted_runs_raises_when_the_store_fails(app):
    store = Store()
    store.get_by_ids = lambda ids: 1 / 0
    t = target(app, {"store": store}, callable=f"{APP}:store")
    with pytest.raises(RuntimeError, match=r"get_by_ids \(Store\) failed: ZeroDivisionError"):
        t.planted_runs(["a"])


def _not_implemented(ids):
    raise NotImplementedError


# ---- plants_into and ingest_scope -------------------------------------------------------------


class InMemoryVectorStore(Store):
    """Named like langchain_core's: its documents live in the process."""


def test_plants_into_names_a_store_outliving_the_process(app, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = f"{Store.__module__}"
    store = Store("kb")
    t = target(app, {"s": store, "r": StoreRetriever(store)}, callable=f"{APP}:s")
    assert t.plants_into == f"{module}.Store collection_name='kb'"
    assert PythonTarget(callable=f"{APP}:r").plants_into == t.plants_into
    assert t.ingest_scope == "system"
    store.persist_directory = "data/chroma"
    store.url = "https://bob:s3cret@db.example:8000/v1?api_key=k3y&tenant=t#frag"
    assert t.plants_into == (
        f"{module}.Store collection_name='kb' persist_directory='{tmp_path / 'data' / 'chroma'}' "
        "url='https://db.example:8000/v1?tenant=t'"
    )


def test_plants_into_is_none_when_nothing_planted_outlives_the_process(app):
    apps = {
        "memory": InMemoryVectorStore(),
        "store": Store(),
        "load": lambda documents: None,
        "build": lambda: Store(),
        "rag": lambda q: "A",
    }
    for options in (
        {"callable": f"{APP}:memory"},  # a store in the process
        {"callable": f"{APP}:store", "ingest_callable": f"{APP}:load"},  # the team's ids
        {"callable": f"{APP}:build", "factory": True},  # a store per pack
        {"callable": f"{APP}:rag"},  # nothing ingests
    ):
        t = target(app, apps, **options)
        assert (t.plants_into, t.ingest_scope) == (None, "process"), options
    assert PythonTarget(callable=f"{APP}:store").ingest_scope == "system"


def test_plants_into_never_holds_a_database_password():
    sqlalchemy = pytest.importorskip("sqlalchemy")
    url = "postgresql+psycopg://bob:s3cret@db.example:5433/kb?sslmode=require&password=pw2"
    engine = types.SimpleNamespace(url=sqlalchemy.engine.make_url(url))
    # langchain_postgres.PGVector keeps its engine in _engine (or _async_engine), the community
    # one its engine or connection in _bind, next to the connection string it was given
    PGVector = type("PGVector", (), {})
    for attribute, bind in [
        ("_engine", engine),
        ("_async_engine", engine),
        ("_bind", engine),
        ("_bind", types.SimpleNamespace(engine=engine)),
    ]:
        store = PGVector()
        store.collection_name = "kb"
        store.connection_string = url
        setattr(store, attribute, bind)
        assert store_identity(store) == (
            "PGVector collection='kb' url='postgresql+psycopg://db.example:5433/kb?sslmode=require'"
        )


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("postgresql://u:p@h/db", "postgresql://h/db"),
        ("http://token@h:1/x?key=1&keyword=2&access_token=3#f", "http://h:1/x?keyword=2"),
        ("postgresql://u:p@/db?host=/run/pg&sslpassword=x", "postgresql:///db?host=/run/pg"),
        ("http://[::1:8000", "<unparseable url>"),
    ],
)
def test_clean_url(url, clean):
    assert clean_url(url) == clean


# ---- a sync-only store --------------------------------------------------------------------------


class SyncOnlyRetriever(StoreRetriever):
    """LangChain's PGVector on a sync engine: every async search asserts."""

    def __init__(self, store: Any, sync_fails: bool = False) -> None:
        super().__init__(store)
        self.sync_fails = sync_fails
        self.calls: list[str] = []

    async def ainvoke(self, query):
        self.calls.append("ainvoke")
        raise AssertionError("This method must be called with async_mode")

    def invoke(self, query):
        self.calls.append("invoke")
        if self.sync_fails:
            raise ConnectionError("server closed the connection")
        return super().invoke(query)


def test_a_sync_only_store_is_searched_synchronously_from_then_on(app, caplog):
    retriever = SyncOnlyRetriever(Store())
    t = target(app, {"r": retriever}, callable=f"{APP}:r")
    t.planted_ids(PACK, run="r")
    t.ingest(PACK)
    with caplog.at_level(logging.INFO, logger="ragleaklab_plugins.targets.python"):
        first = run(t.aanswer("q"))
        second = run(t.aanswer("q"))
    assert first == second and [r.doc_id for r in first.retrieved or ()] == ["a1", "a2", "a3"]
    assert retriever.calls == ["ainvoke", "invoke", "invoke"]
    [record] = caplog.records
    assert record.levelno == logging.INFO
    message = record.getMessage()
    assert message.startswith("python_target.answering_synchronously")
    assert "failed=ainvoke" in message and "using=invoke" in message
    assert "This method must be called with async_mode" in message


def test_when_the_sync_form_fails_too_the_async_error_is_raised(app):
    retriever = SyncOnlyRetriever(Store(), sync_fails=True)
    t = target(app, {"r": retriever}, callable=f"{APP}:r")
    with pytest.raises(AssertionError, match=r"^This method must be called with async_mode$"):
        run(t.aanswer("q"))
    with pytest.raises(AssertionError):
        run(t.aanswer("q"))  # still undecided: the async form is tried again, and fails again
    assert retriever.calls == ["ainvoke", "invoke", "ainvoke", "invoke"]


class FlakyAsync:
    """An app whose async form answered, then failed: a genuine failure, never hidden."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def ainvoke(self, query):
        self.calls.append("ainvoke")
        if len(self.calls) > 1:
            raise TimeoutError("the model timed out")
        return [Doc("t", {"doc_id": "a1"})]

    def invoke(self, query):
        self.calls.append("invoke")
        return [Doc("t", {"doc_id": "a1"})]


def test_an_async_form_that_answered_once_keeps_its_failures(app):
    flaky = FlakyAsync()
    t = target(app, {"r": flaky}, callable=f"{APP}:r", kind="retriever")
    run(t.aanswer("q"))
    with pytest.raises(TimeoutError, match="the model timed out"):
        run(t.aanswer("q"))
    assert flaky.calls == ["ainvoke", "ainvoke"]


def test_an_async_only_app_raises_its_own_error(app):
    async def rag(query):
        raise AssertionError("broken")

    class AsyncOnly:
        ainvoke = staticmethod(rag)

    t = target(app, {"r": AsyncOnly()}, callable=f"{APP}:r", kind="chain")
    with pytest.raises(AssertionError, match="broken"):
        run(t.aanswer("q"))


# ---- langchain_core's InMemoryVectorStore -------------------------------------------------------


@pytest.fixture
def memory_store():
    vectorstores = pytest.importorskip("langchain_core.vectorstores")
    embeddings = pytest.importorskip("langchain_core.embeddings")
    return vectorstores.InMemoryVectorStore(
        embedding=embeddings.DeterministicFakeEmbedding(size=16)
    )


def test_an_in_memory_store_keeps_the_teams_document_and_gets_the_runs_ids(app, memory_store):
    from langchain_core.documents import Document as LcDocument

    memory_store.add_documents([LcDocument("the team's page", metadata={"k": 1})], ids=["a1"])
    t = target(app, {"r": memory_store.as_retriever()}, callable=f"{APP}:r")
    assert (t.plants_into, t.ingest_scope) == (None, "process")
    ids = t.planted_ids(PACK, run="run-1:pack")
    t.ingest(PACK)
    assert {d.id for d in memory_store.get_by_ids(ids)} == set(ids)
    response = run(t.aanswer("alpha poison"))
    assert {r.doc_id for r in response.retrieved or ()} <= {"a1", "a2", "a3"}
    t.reset()
    [team] = memory_store.get_by_ids(["a1"])
    assert (team.page_content, team.metadata) == ("the team's page", {"k": 1})
    assert memory_store.get_by_ids(ids) == []
    other = PythonTarget(callable=f"{APP}:r")
    mine = other.planted_ids(PACK, run="run-2:pack")
    other.ingest(PACK)
    same_run = PythonTarget(callable=f"{APP}:r")  # every id it would plant is held
    same_run.planted_ids(PACK, run="run-2:pack")
    with pytest.raises(RuntimeError, match="already holds 3 of the 3 ids"):
        same_run.ingest(PACK)
    assert other.remove_planted(mine) == []
    assert [d.id for d in memory_store.get_by_ids(["a1", *mine])] == ["a1"]


def test_responses_from_an_in_memory_store_are_identical_across_runs(app, memory_store):
    app.store = memory_store
    seen = []
    for run_value in ("run-1:pack", "run-2:pack"):
        t = PythonTarget(callable=f"{APP}:store", top_k=3)
        t.planted_ids(PACK, run=run_value)
        t.ingest(PACK)
        seen.append([json.dumps(attrs.asdict(t.answer(d.text))) for d in PACK])
        t.reset()
    assert seen[0] == seen[1]
    assert "a1" in seen[0][0]
