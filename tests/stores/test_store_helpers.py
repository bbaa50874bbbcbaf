"""The stores themselves and the helpers that read them, with no ragleaklab in between: what the
end-to-end tests count is what the database holds."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from tests.stores.support import STORES, Doc, Store, pack_documents

# A real id of the relevance-hijack pack: the team happens to use it for a document of its own.
PACK_ID = pack_documents("relevance-hijack")[0]["doc_id"]


def test_a_fresh_store_holds_nothing(store: Store) -> None:
    assert store.count() == 0
    assert store.documents() == {}


def test_team_documents_are_added_counted_and_deleted(store: Store) -> None:
    first = store.add_team("handbook-1", "Expenses are filed by the fifth of the month.")
    second = store.add_team("handbook-2", "Laptops are returned on the last day.", {"v": 2})
    assert store.count() == 2
    assert store.documents() == {
        first: Doc("Expenses are filed by the fifth of the month.", {"owner": "team"}),
        second: Doc("Laptops are returned on the last day.", {"v": 2}),
    }
    assert store.holding([first, "not-there", second]) == [first, second]

    store.delete([first])
    assert store.count() == 1
    assert list(store.documents()) == [second]


def test_a_team_document_is_found_by_its_id(store: Store) -> None:
    doc_id = store.add_team(PACK_ID, "Our own page about access requests.")
    if store.kind == "qdrant":
        assert doc_id != PACK_ID  # Qdrant refuses such ids: the team's is a UUID
    else:
        assert doc_id == PACK_ID
    assert store.documents()[doc_id] == Doc(
        "Our own page about access requests.", {"owner": "team"}
    )


def test_the_app_module_retrieves_from_the_store(store: Store) -> None:
    doc_id = store.add_team("handbook-1", "Expenses are filed by the fifth of the month.")
    store.add_team("handbook-2", "Laptops are returned on the last day.")
    with store.app() as app:
        found = app["retriever"].invoke("Expenses are filed by the fifth of the month.")
    assert [d.page_content for d in found] == [
        "Expenses are filed by the fifth of the month.",
        "Laptops are returned on the last day.",
    ]
    if store.kind != "qdrant":  # langchain-qdrant keeps the id in metadata["_id"]
        assert found[0].id == doc_id


def test_another_process_s_writes_are_seen(store: Store) -> None:
    """What a ``ragleaklab run`` subprocess plants is counted here (no stale client state)."""
    assert store.count() == 0
    app, doc_id = str(STORES / f"{store.module}.py"), store.team_id("other")
    code = (
        f"import runpy; m = runpy.run_path({app!r}); "
        f"m['store'].add_texts(['from another process'], ids=[{doc_id!r}])"
    )
    env = {**os.environ, **store.env}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    assert store.count() == 1
    assert store.documents()[doc_id].text == "from another process"


def test_pgvector_app_is_sync_only(pg_url: str) -> None:
    """The PGVector app (a sync connection) cannot be searched asynchronously: what the issue
    saw fail. The end-to-end tests run it through ragleaklab, which must search it synchronously."""
    from tests.stores.support import PgvectorStore

    store = PgvectorStore(pg_url, "sync_only")
    store.add_team("handbook-1", "Expenses are filed by the fifth of the month.")
    with store.app() as app:
        assert app["retriever"].invoke("Expenses")
        with pytest.raises((AssertionError, ValueError)):
            asyncio.run(app["retriever"].ainvoke("Expenses"))
