"""The python target against real vector stores, through their LangChain integrations, each
started by the test: Chroma (a directory), Qdrant (local mode) and Postgres with pgvector
(pgserver). A store whose packages are not installed is skipped.

For each: plants_into names it without a secret, a team document whose id is a pack's doc_id
survives ingest and reset unchanged, two runs never delete each other's documents, an id the
store already holds is refused, what is retrieved maps back to the pack's ids, and
remove_planted leaves nothing."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from ragleaklab_plugins.targets.python import PythonTarget

from ragleaklab_core import RUN_TAG, Document, ForeignPlanted
from tests.support.python_apps import app_module

APP = "rlk_real_store_app"
PACK = [
    Document("a1", "alpha poison page about the vault", kind="poison"),
    Document("a2", "beta page about refunds"),
    Document("a3", "gamma page about opening hours"),
]
TEAM_TEXT = "the team's own handbook page"


@pytest.fixture
def app(monkeypatch):
    """A module the test fills with apps; callable = "<APP>:NAME"."""
    return app_module(monkeypatch, APP)


def embeddings() -> Any:
    return pytest.importorskip("langchain_core.embeddings").DeterministicFakeEmbedding(size=16)


def ids(docs: list[Any]) -> set[str]:
    """The ids of documents ``get_by_ids`` returned (Qdrant's are in their metadata)."""
    return {d.id or d.metadata["_id"] for d in docs}


def check_lifecycle(app: types.ModuleType, store: Any, team_id: str) -> str | None:
    """Everything the issue asks of a store, through ``store.as_retriever()``; the store's
    identity (``plants_into``)."""
    from langchain_core.documents import Document as LcDocument

    store.add_documents([LcDocument(TEAM_TEXT, metadata={"source": "handbook"})], ids=[team_id])
    app.retriever = store.as_retriever(search_kwargs={"k": 4})
    first = PythonTarget(callable=f"{APP}:retriever")
    identity = first.plants_into
    assert identity is not None and first.ingest_scope == "system"
    mine = first.planted_ids(PACK, run="run-1:pack")
    first.ingest(PACK)
    assert ids(store.get_by_ids(mine)) == set(mine)
    assert {d.metadata[RUN_TAG] for d in store.get_by_ids(mine)} == {"run-1:pack"}
    response = asyncio.run(first.aanswer("alpha poison vault"))
    assert {r.doc_id for r in response.retrieved or ()} <= {"a1", "a2", "a3", "handbook"}
    assert not any(i in repr(response) for i in mine)  # the run's ids never reach a response
    # a second run on the same store: its own ids; each sees the other's as foreign
    second = PythonTarget(callable=f"{APP}:retriever")
    theirs = second.planted_ids(PACK, run="run-2:pack")
    second.ingest(PACK)
    with pytest.raises(ForeignPlanted):
        asyncio.run(first.aanswer("alpha poison vault"))
    # the same run again: every id it would plant is held, and nothing is added
    again = PythonTarget(callable=f"{APP}:retriever")
    again.planted_ids(PACK, run="run-2:pack")
    with pytest.raises(RuntimeError, match="already holds 3 of the 3 ids"):
        again.ingest(PACK)
    again.reset()
    assert ids(store.get_by_ids(theirs)) == set(theirs)
    first.reset()
    assert store.get_by_ids(mine) == []
    assert ids(store.get_by_ids(theirs)) == set(theirs)
    # a target built afresh (ragleaklab cleanup) removes what the second run left
    cleanup = PythonTarget(callable=f"{APP}:retriever")
    assert cleanup.plants_into == identity
    assert cleanup.remove_planted(theirs) == []
    assert store.get_by_ids(theirs) == []
    [team] = store.get_by_ids([team_id])
    assert (team.page_content, team.metadata.get("source")) == (TEAM_TEXT, "handbook")
    return identity


# ---- Chroma -------------------------------------------------------------------------------------


def test_chroma_in_a_directory(app, tmp_path):
    chroma = pytest.importorskip("langchain_chroma")
    directory = tmp_path / "chroma"
    store = chroma.Chroma("kb-main", embeddings(), persist_directory=str(directory))
    assert check_lifecycle(app, store, "a1") == f"Chroma collection='kb-main' path='{directory}'"


def test_an_ephemeral_chroma_lives_in_the_process(app):
    chroma = pytest.importorskip("langchain_chroma")
    app.store = chroma.Chroma("kb-ephemeral", embeddings())
    t = PythonTarget(callable=f"{APP}:store")
    assert (t.plants_into, t.ingest_scope) == (None, "process")
    app.store.delete_collection()


# ---- Qdrant (local mode) ------------------------------------------------------------------------


def qdrant_store(client: Any, name: str) -> Any:
    models = pytest.importorskip("qdrant_client.models")
    langchain_qdrant = pytest.importorskip("langchain_qdrant")
    params = models.VectorParams(size=16, distance=models.Distance.COSINE)
    client.create_collection(name, vectors_config=params)
    return langchain_qdrant.QdrantVectorStore(client, name, embeddings())


def test_qdrant_in_local_mode(app, tmp_path):
    qdrant_client = pytest.importorskip("qdrant_client")
    client = qdrant_client.QdrantClient(path=str(tmp_path / "qdrant"))
    try:
        store = qdrant_store(client, "kb")
        # Qdrant takes only UUIDs and integers as ids: the team's own is a UUID
        identity = check_lifecycle(app, store, "0b7c6f0e-4a44-4a55-9a51-6f7f3b1f2d10")
        assert identity == f"QdrantVectorStore collection='kb' path='{tmp_path / 'qdrant'}'"
    finally:
        client.close()


def test_qdrant_in_memory_lives_in_the_process_and_a_servers_url_has_no_credentials(app):
    qdrant_client = pytest.importorskip("qdrant_client")
    langchain_qdrant = pytest.importorskip("langchain_qdrant")
    client = qdrant_client.QdrantClient(":memory:")
    try:
        app.store = qdrant_store(client, "kb")
        assert PythonTarget(callable=f"{APP}:store").plants_into is None
    finally:
        client.close()
    # never contacted: the store is built without checking its collection
    remote = qdrant_client.QdrantClient(
        url="http://bob:s3cret@qdrant.example:6333", check_compatibility=False
    )
    try:
        app.remote = langchain_qdrant.QdrantVectorStore(
            remote, "kb", embeddings(), validate_collection_config=False
        )
        assert PythonTarget(callable=f"{APP}:remote").plants_into == (
            "QdrantVectorStore collection='kb' url='http://qdrant.example:6333'"
        )
    finally:
        remote.close()


# ---- Postgres with pgvector ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Postgres server (pgserver: the binaries and pgvector, from pip) for this module; its
    URL, with a password the server does not ask for (trust authentication)."""
    pgserver = pytest.importorskip("pgserver")
    pytest.importorskip("langchain_postgres")
    pytest.importorskip("psycopg")
    directory = tmp_path_factory.mktemp("pg")
    server = pgserver.get_server(directory, cleanup_mode="stop")
    try:
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        yield f"postgresql+psycopg://postgres:s3cret-pw@/postgres?host={directory}"
    finally:
        server.cleanup()


def test_pgvector_on_a_sync_engine(app, postgres, caplog):
    from langchain_postgres import PGVector

    store = PGVector(embeddings(), connection=postgres, collection_name="kb")
    socket = quote(postgres.rpartition("host=")[2], safe="")
    try:
        identity = check_lifecycle(app, store, "a1")
        assert (
            identity
            == f"PGVector collection='kb' url='postgresql+psycopg:///postgres?host={socket}'"
        )
        # its async search asserts (no async engine): the retriever is searched synchronously
        first = PythonTarget(callable=f"{APP}:retriever")
        first.planted_ids(PACK, run="run-3:pack")
        first.ingest(PACK)
        with caplog.at_level("INFO", logger="ragleaklab_plugins.targets.python"):
            response = asyncio.run(first.aanswer("alpha poison vault"))
        assert {r.doc_id for r in response.retrieved or ()} == {"a1", "a2", "a3", "handbook"}
        assert "python_target.answering_synchronously" in caplog.text
        first.reset()
    finally:
        store.delete_collection()
        store._engine.dispose()
