"""The stores of this directory, read with each database's OWN client, and the team's documents
added through the LangChain store exactly as the app module builds it.

A :class:`Store` names one store (kind, location, collection). What it holds is read with the
database's own client, never through LangChain or ragleaklab: ``chromadb.PersistentClient``
(``collection.get``), ``QdrantClient`` (``scroll``), ``psycopg`` (``SELECT`` on
``langchain_pg_embedding`` joined with its collection). Every read opens a fresh client and
closes it again, so a ``ragleaklab run`` of another process sees the store as it would in
production (Qdrant's local mode locks its directory while a client holds it open).
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tests.support.cli import cli_env
from tests.support.cli import rlk as run_cli

STORES = Path(__file__).resolve().parent
KINDS = ("chroma", "qdrant", "pgvector")


class Doc(NamedTuple):
    """A document as the database holds it."""

    text: str
    metadata: dict[str, Any]


@contextlib.contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class Store:
    """One store: *kind* (``chroma``, ``qdrant``, ``pgvector``) at *location*, *collection*."""

    kind = ""

    def __init__(self, location: str | Path, collection: str) -> None:
        self.location = str(location)
        self.collection = collection

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r}, {self.collection!r})"

    # -- the app module -------------------------------------------------------------------------

    @property
    def module(self) -> str:
        """The app module (``rlk_store_<kind>``) wired to this kind of store."""
        return f"rlk_store_{self.kind}"

    @property
    def env(self) -> dict[str, str]:
        """The environment that points the app module at this store."""
        return {"RLK_STORE_COLLECTION": self.collection, **self._location_env()}

    def _location_env(self) -> dict[str, str]:
        raise NotImplementedError

    @contextlib.contextmanager
    def app(self) -> Iterator[dict[str, Any]]:
        """The app module's globals (``store``, ``retriever``...), built in this process exactly as
        ``ragleaklab run`` builds them, pointed at this store; its clients closed afterwards."""
        with _environ(self.env):
            module = runpy.run_path(str(STORES / f"{self.module}.py"))
        try:
            yield module
        finally:
            self._close_app(module)

    def _close_app(self, module: dict[str, Any]) -> None:
        raise NotImplementedError

    def team_id(self, name: str) -> str:
        """The id the team gives its document *name* in this store (Qdrant wants a UUID)."""
        return name

    def add_team(self, name: str, text: str, metadata: Mapping[str, Any] | None = None) -> str:
        """Add a team document through the app's LangChain store; return its id in the store."""
        doc_id = self.team_id(name)
        with self.app() as module:
            added = module["store"].add_texts(
                [text], metadatas=[dict(metadata or {"owner": "team"})], ids=[doc_id]
            )
        assert list(added) == [doc_id], (added, doc_id)
        return doc_id

    def delete(self, ids: Sequence[str]) -> None:
        """Delete *ids* through the app's LangChain store."""
        with self.app() as module:
            module["store"].delete(ids=list(ids))

    # -- the database's own client ----------------------------------------------------------------

    def documents(self) -> dict[str, Doc]:
        """Every document of the collection, by id (empty when it does not exist yet)."""
        raise NotImplementedError

    def count(self) -> int:
        """How many documents the collection holds (0 when it does not exist yet)."""
        raise NotImplementedError

    def holding(self, ids: Sequence[str]) -> list[str]:
        """Those of *ids* the store holds."""
        held = self.documents()
        return [i for i in ids if i in held]


class ChromaStore(Store):
    kind = "chroma"

    def _location_env(self) -> dict[str, str]:
        return {"RLK_CHROMA_DIR": self.location}

    def _close_app(self, module: dict[str, Any]) -> None:
        module["store"]._client.close()

    @contextlib.contextmanager
    def _collection(self) -> Iterator[Any]:
        import chromadb

        if not Path(self.location).exists():
            yield None
            return
        client = chromadb.PersistentClient(path=self.location)
        try:
            names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
            yield client.get_collection(self.collection) if self.collection in names else None
        finally:
            client.close()

    def documents(self) -> dict[str, Doc]:
        with self._collection() as collection:
            if collection is None:
                return {}
            got = collection.get(include=["documents", "metadatas"])
        return {
            i: Doc(text, dict(meta or {}))
            for i, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }

    def count(self) -> int:
        with self._collection() as collection:
            return 0 if collection is None else int(collection.count())


class QdrantStore(Store):
    kind = "qdrant"

    def _location_env(self) -> dict[str, str]:
        return {"RLK_QDRANT_PATH": self.location}

    def _close_app(self, module: dict[str, Any]) -> None:
        module["client"].close()

    def team_id(self, name: str) -> str:
        # Qdrant takes only UUIDs and integers: a team names its documents with UUIDs.
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"team/{name}"))

    @contextlib.contextmanager
    def _client(self) -> Iterator[Any]:
        from qdrant_client import QdrantClient

        client = QdrantClient(path=self.location)
        try:
            yield client
        finally:
            client.close()

    def documents(self) -> dict[str, Doc]:
        if not Path(self.location).exists():
            return {}
        found: dict[str, Doc] = {}
        with self._client() as client:
            if not client.collection_exists(self.collection):
                return {}
            offset = None
            while True:
                points, offset = client.scroll(
                    self.collection, limit=1000, offset=offset, with_payload=True
                )
                for point in points:
                    payload = point.payload or {}
                    found[str(point.id)] = Doc(
                        payload.get("page_content", ""), dict(payload.get("metadata") or {})
                    )
                if offset is None:
                    return found

    def count(self) -> int:
        if not Path(self.location).exists():
            return 0
        with self._client() as client:
            if not client.collection_exists(self.collection):
                return 0
            return int(client.count(self.collection, exact=True).count)


class PgvectorStore(Store):
    kind = "pgvector"

    _SELECT = (
        "SELECT e.id, e.document, e.cmetadata FROM langchain_pg_embedding e "
        "JOIN langchain_pg_collection c ON e.collection_id = c.uuid WHERE c.name = %s"
    )

    def _location_env(self) -> dict[str, str]:
        return {"RLK_PGVECTOR_URL": self.location}

    def _close_app(self, module: dict[str, Any]) -> None:
        module["store"]._engine.dispose()

    @property
    def dsn(self) -> str:
        """The URL for psycopg itself (the SQLAlchemy driver suffix removed)."""
        return self.location.replace("postgresql+psycopg://", "postgresql://", 1)

    def _rows(self, query: str) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.dsn) as conn:
            tables = conn.execute(
                "SELECT count(*) FROM information_schema.tables "
                "WHERE table_name IN ('langchain_pg_embedding', 'langchain_pg_collection')"
            ).fetchone()
            if not tables or tables[0] < 2:
                return []
            return conn.execute(query, (self.collection,)).fetchall()

    def documents(self) -> dict[str, Doc]:
        return {str(i): Doc(text, dict(meta or {})) for i, text, meta in self._rows(self._SELECT)}

    def count(self) -> int:
        rows = self._rows(self._SELECT.replace("e.id, e.document, e.cmetadata", "count(*)", 1))
        return int(rows[0][0]) if rows else 0


def make_store(kind: str, location: str | Path, collection: str) -> Store:
    return {"chroma": ChromaStore, "qdrant": QdrantStore, "pgvector": PgvectorStore}[kind](
        location, collection
    )


# -- ragleaklab on a store ----------------------------------------------------------------------


def write_config(path: Path, store: Store, **options: Any) -> Path:
    """A config whose ``python`` target is the store's retriever (as docs/targets.md wires it)."""
    lines = ["[target]", 'name = "python"', "", "[target.options]"]
    lines.append(f'callable = "{store.module}:retriever"')
    lines += [f"{key} = {json.dumps(value)}" for key, value in options.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def rlk_env(store: Store) -> dict[str, str | None]:
    return {"PYTHONPATH": str(STORES), **store.env}


def rlk(
    *args: str, cwd: Path, store: Store, timeout: float = 180.0
) -> subprocess.CompletedProcess[str]:
    """``ragleaklab ARGS`` in a subprocess, as CI runs it, its app module pointed at *store*: its
    own process, since the app module reads where its store is when it is imported, and a store
    in local mode (Qdrant) is locked by the process that opened it."""
    return run_cli(*args, cwd=cwd, env=rlk_env(store), timeout=timeout, own_process=True)


def runs(directory: Path) -> list[dict[str, Any]]:
    path = directory / "runs.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def pack_documents(pack: str) -> list[dict[str, Any]]:
    """The documents of an installed pack, as its ``documents.jsonl`` holds them."""
    import ragleaklab_plugins.packs as packs

    folder = Path(packs.__file__).parent / pack.replace("-", "_")
    return [
        json.loads(line)
        for line in (folder / "documents.jsonl").read_text().splitlines()
        if line.strip()
    ]


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stdout + result.stderr


def start(
    *args: str, cwd: Path, store: Store, env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """``ragleaklab ARGS`` started in the background (to be signalled), as :func:`rlk` runs it;
    *env* on top."""
    return subprocess.Popen(
        [sys.executable, "-m", "ragleaklab_core", *args],
        cwd=cwd,
        env=cli_env({**rlk_env(store), **(env or {})}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(
    what: str, condition: Callable[[], bool], process: subprocess.Popen[str], timeout: float = 120
) -> None:
    """Poll *condition* until it holds; fail if *process* ends first or *timeout* passes."""
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(
                f"the run ended before {what}: exit {process.returncode}\n{out}{err}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """runs.jsonl's records without what differs between two runs measuring the same thing:
    timings, and the ids the store gave the planted documents (each run's own)."""
    kept = []
    for record in records:
        record = {k: v for k, v in record.items() if k != "elapsed_ms"}
        if record["retrieved"] is not None:  # None: an errored case
            record["retrieved"] = [
                {k: v for k, v in doc.items() if k != "chunk_id"} for doc in record["retrieved"]
            ]
        kept.append(record)
    return sorted(kept, key=lambda r: (r["pack"], r["test_id"], r["epoch"]))
