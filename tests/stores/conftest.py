"""Real vector stores (Chroma on disk, Qdrant in local mode, Postgres with pgvector) wired to the
python target as docs/targets.md wires a LangChain vector store, and run through the real CLI.

The libraries are test dependencies only (the ``stores`` dependency group; ``tox -e stores``).
When they are missing these tests are skipped, except under ``RLK_STORES=1`` (set by the tox
env), where a missing library is an error: the env that exists to run them must never pass
having run nothing. Postgres is started by the tests themselves (pgserver: a pip-installed
Postgres with pgvector), listening on a unix socket in a temporary directory only. The app
modules (``rlk_store_*.py``) are imported by ``ragleaklab run`` in a subprocess, with this
directory on the path; each test points them at a fresh store through environment variables.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.optional import require, skip_folder

STORES = Path(__file__).resolve().parent
NEEDED = (
    "langchain_core",
    "chromadb",
    "langchain_chroma",
    "qdrant_client",
    "langchain_qdrant",
    "langchain_postgres",
    "psycopg",
    "pgserver",
)


MISSING = require(NEEDED, flag="RLK_STORES", group="stores")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_folder(STORES, MISSING, "stores", items)


def _start_postgres(pgdata: Path) -> Any:
    # pgserver looks up a per-user runtime directory when imported and warns when
    # XDG_RUNTIME_DIR is unset (as in CI): not this suite's concern.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    # Unix socket in pgdata only (pgserver starts postgres with -h ""): no TCP port at all.
    # As root, pgserver runs postgres as a system user of its own (created when missing).
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    # In the template, so every database created for a test has it.
    server.psql("\\c template1\nCREATE EXTENSION IF NOT EXISTS vector;")
    # A throwaway server: no fsync (its shutdown checkpoint otherwise takes seconds).
    server.psql(
        "ALTER SYSTEM SET fsync = off; ALTER SYSTEM SET synchronous_commit = off; "
        "ALTER SYSTEM SET full_page_writes = off; SELECT pg_reload_conf();"
    )
    return server


def _stop(server: Any) -> None:
    """Stop the server at once (its data is thrown away: no shutdown checkpoint to wait for),
    then let pgserver forget it."""
    import psutil  # a dependency of pgserver

    try:
        postmaster = psutil.Process(server.get_pid())
        postmaster.send_signal(signal.SIGQUIT)  # postgres: immediate shutdown
        postmaster.wait(timeout=30)
    except psutil.Error:
        pass
    server.cleanup()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A fresh Postgres with pgvector for the session: its libpq URL (unix socket)."""
    if MISSING:
        pytest.skip(f"needs {', '.join(MISSING)}")
    # Not under pytest's base temp: that is private to this user (0700), and as root postgres
    # runs as another user, who must reach its data directory.
    top = Path(tempfile.mkdtemp(prefix="rlk-pg-"))
    try:
        server = _start_postgres(top / "data")
        try:
            uri = server.get_uri()  # postgresql://postgres:@/postgres?host=<socket dir>
            assert uri.startswith("postgresql://") and "/postgres?" in uri, uri
            yield uri
        finally:
            _stop(server)
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A SQLAlchemy URL (psycopg 3, sync) of a fresh database with pgvector, for PGVector.

    A database per test, not a collection: PGVector's ids are unique across all the
    collections of a database (one table), so collections do not keep tests apart."""
    import psycopg

    name = f"rlk_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    uri = pg_server.replace("/postgres?", f"/{name}?", 1)
    return "postgresql+psycopg://" + uri.removeprefix("postgresql://")


@pytest.fixture
def collection() -> str:
    """A collection name of its own for every test."""
    return f"team_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def chroma_dir(tmp_path: Path) -> Path:
    """A fresh persist directory for a Chroma store."""
    return tmp_path / "chroma"


@pytest.fixture
def qdrant_path(tmp_path: Path) -> Iterator[Path]:
    """A fresh directory for a Qdrant store in local mode, in memory when the machine has a
    tmpfs: local mode commits (and syncs) every point on its own, so 533 documents take
    seconds to add and as long again to delete on a disk, a fraction of one in memory."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path / "qdrant"
        return
    top = Path(tempfile.mkdtemp(prefix="rlk-qdrant-", dir=shm))
    try:
        yield top / "qdrant"
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(params=("chroma", "qdrant", "pgvector"))
def store(request: pytest.FixtureRequest, collection: str) -> Any:
    """A fresh store of each kind (Postgres is started only for pgvector)."""
    from tests.stores.support import make_store

    kind = request.param
    fixture = {"chroma": "chroma_dir", "qdrant": "qdrant_path", "pgvector": "pg_url"}[kind]
    return make_store(kind, request.getfixturevalue(fixture), collection)


@pytest.fixture(autouse=True)
def _stores_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(STORES))
