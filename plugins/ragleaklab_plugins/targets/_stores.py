"""The python target's LangChain vector stores: which store ingest plants into, the ids it holds,
and the run that planted a retrieved document.

Everything here is duck typing: LangChain, Chroma, Qdrant and SQLAlchemy are never imported.

- :func:`store_identity` names a store whose documents outlive the process (a Chroma directory
  or server and collection, a Qdrant path or url and collection, a Postgres database and
  collection), never with a secret (no user, no password, no credential query parameter); None
  for a store that lives in the process (``InMemoryVectorStore``, FAISS, an ephemeral Chroma, a
  ``:memory:`` Qdrant). An unknown store is named by its class and the attributes that usually
  name its data: it may outlive the process, so what is planted there is recorded.
- :func:`held` asks a store which of some ids it holds (``get_by_ids``), :func:`held_runs` which
  run each is tagged with, :func:`delete` deletes ids and fails when the store says it did not.
- :func:`check_run` finds a retrieved document tagged by another run, in whatever an app
  returned (documents, ``(document, score)`` pairs, a chain's dict, LlamaIndex nodes).
- :class:`SyncFallback` answers with the app's sync form when its async form cannot (LangChain's
  PGVector on a sync engine asserts in every async search).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from attrs import define

from ragleaklab_core import RUN_TAG, ForeignPlanted, is_secret_name

__all__ = [
    "IN_PROCESS",
    "SyncFallback",
    "check_run",
    "clean_url",
    "delete",
    "foreign_run",
    "held",
    "held_ids",
    "held_runs",
    "store_identity",
]

#: Vector store classes (by name) whose documents live in the process that built them.
IN_PROCESS = frozenset(
    {
        "InMemoryVectorStore",
        "FAISS",
        "DocArrayInMemorySearch",
        "SKLearnVectorStore",
        "Annoy",
        "ScaNN",
        "USearch",
    }
)
# Attributes that name an unknown store's data, as ``key=value`` (the key without underscores).
_NAMING = (
    "collection_name",
    "_collection_name",
    "index_name",
    "_index_name",
    "table_name",
    "_table_name",
    "namespace",
    "persist_directory",
    "_persist_directory",
    "persist_path",
    "url",
)
# How deep foreign_run looks into what an app returned (a query engine's response, its source
# nodes, a NodeWithScore, its node, the node's metadata: 5).
_DEPTH = 8


def store_identity(store: Any) -> str | None:
    """The identity of *store* when its documents outlive the process, else None."""
    cls = type(store)
    if cls.__qualname__ in IN_PROCESS:
        return None
    for reader in (_chroma, _qdrant, _pgvector):
        try:
            found = reader(store)
        except Exception:  # an integration of another version: named the generic way
            continue
        if found is not _UNKNOWN:
            return found
    return _generic(store)


_UNKNOWN: Any = object()


def _named(name: str, **parts: Any) -> str:
    shown = " ".join(f"{k}={v!r}" for k, v in parts.items() if v not in (None, ""))
    return f"{name} {shown}".rstrip()


def _chroma(store: Any) -> str | None:
    """langchain_chroma.Chroma: the collection and the client's directory or server."""
    collection = getattr(store, "_chroma_collection", None)
    client: Any = getattr(store, "_client", None)
    if collection is None or not callable(getattr(client, "get_settings", None)):
        return _UNKNOWN
    name = getattr(store, "_collection_name", None) or collection.name
    settings = client.get_settings()
    database = getattr(client, "database", None)
    database = None if database == "default_database" else database
    host = getattr(settings, "chroma_server_host", None)
    if host:
        scheme = "https" if getattr(settings, "chroma_server_ssl_enabled", False) else "http"
        port = getattr(settings, "chroma_server_http_port", None)
        url = clean_url(f"{scheme}://{host}" + (f":{port}" if port else ""))
        return _named("Chroma", collection=name, url=url, database=database)
    if not getattr(settings, "is_persistent", False):
        return None  # an ephemeral client: the collection lives in this process
    path = os.path.abspath(str(settings.persist_directory))
    return _named("Chroma", collection=name, path=path, database=database)


def _qdrant(store: Any) -> str | None:
    """langchain_qdrant.QdrantVectorStore and the community Qdrant: collection, path or url."""
    client = getattr(store, "client", None) or getattr(store, "_client", None)
    inner = getattr(client, "_client", None)
    name = getattr(store, "collection_name", None)
    if inner is None or not isinstance(name, str):
        return _UNKNOWN
    location = getattr(inner, "location", None)
    if isinstance(location, str):  # local mode
        if not getattr(inner, "persistent", False):
            return None  # ":memory:"
        return _named(type(store).__qualname__, collection=name, path=os.path.abspath(location))
    url = getattr(inner, "rest_uri", None)
    if not isinstance(url, str):
        return _UNKNOWN
    return _named(type(store).__qualname__, collection=name, url=clean_url(url))


def _pgvector(store: Any) -> str | None:
    """langchain_postgres.PGVector and the community PGVector: collection, database url."""
    if type(store).__qualname__ != "PGVector":
        return _UNKNOWN
    bind = next(
        (
            b
            for b in (getattr(store, n, None) for n in ("_engine", "_async_engine", "_bind"))
            if b is not None
        ),
        None,
    )
    url = getattr(getattr(bind, "engine", bind), "url", None)  # a Connection has an engine
    if url is None:
        return _UNKNOWN
    render = getattr(url, "render_as_string", None)
    text = render(hide_password=True) if callable(render) else str(url)
    collection = getattr(store, "collection_name", None)
    return _named("PGVector", collection=collection, url=clean_url(text))


def _generic(store: Any) -> str:
    cls = type(store)
    parts: dict[str, Any] = {}
    for attr in _NAMING:
        try:
            value = getattr(store, attr, None)
        except Exception:
            continue
        key = attr.strip("_")
        if not isinstance(value, str) or not value or key in parts:
            continue
        if key == "url":
            value = clean_url(value)
        elif key.startswith("persist"):
            value = os.path.abspath(value)
        parts[key] = value
    return _named(f"{cls.__module__}.{cls.__qualname__}", **parts)


def clean_url(url: str) -> str:
    """*url* without its user, password, fragment and credential query parameters."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    host = parts.netloc.rpartition("@")[2]
    kept = [
        p for p in parts.query.split("&") if p and not is_secret_name(unquote(p.partition("=")[0]))
    ]
    text = urlunsplit((parts.scheme, host, parts.path, "&".join(kept), ""))
    if not host and parts.scheme and url.startswith(f"{parts.scheme}://"):
        # urlunsplit drops an empty authority: postgresql:///db?host=/run/sock must keep it
        text = f"{parts.scheme}://{text[len(parts.scheme) + 1 :]}"
    return text


def held_ids(found: Any, asked: Sequence[str]) -> list[str]:
    """Which of *asked* the documents ``get_by_ids`` returned are, in the order asked.

    A document's id is its ``id``, else its metadata's ``_id`` (Qdrant's). A document without
    either cannot be told apart, so every id asked counts as held.
    """
    ids = set()
    for doc in found or ():
        meta = getattr(doc, "metadata", None)
        doc_id = getattr(doc, "id", None)
        if doc_id is None and isinstance(meta, Mapping):
            doc_id = meta.get("_id")
        if doc_id is None:
            return list(asked)
        ids.add(str(doc_id))
    return [i for i in asked if i in ids]


def foreign_run(value: Any, run: str, depth: int = 0) -> str | None:
    """The :data:`RUN_TAG` of a document in *value* that another run planted, or None.

    Looks into mappings (a document's metadata, a chain's output), lists and tuples, and an
    object's ``metadata``, ``node`` and ``source_nodes``.
    """
    if depth > _DEPTH or value is None or isinstance(value, str | bytes | int | float):
        return None
    children: Any
    if isinstance(value, Mapping):
        tag = value.get(RUN_TAG)
        if tag is not None and tag != run:
            return str(tag)
        children = value.values()
    elif isinstance(value, list | tuple):
        children = value
    else:
        children = [getattr(value, n, None) for n in ("metadata", "node", "source_nodes")]
    for child in children:
        found = foreign_run(child, run, depth + 1)
        if found is not None:
            return found
    return None


def check_run(value: Any, run: str) -> None:
    """Raise :class:`ForeignPlanted` when *value* (what an app returned) holds a document
    another run planted (tagged :data:`RUN_TAG` with a value other than *run*)."""
    foreign = foreign_run(value, run)
    if foreign is not None:
        raise ForeignPlanted(
            f"a retrieved document was planted by another ragleaklab run ({RUN_TAG}={foreign}) "
            "in the same store at the same time: its answer is not this run's measurement; run "
            "one ragleaklab run per store at a time, or give each job its own collection"
        )


async def held(store: Any, ids: Sequence[str]) -> list[str]:
    """Which of *ids* *store* holds, by its ``get_by_ids``; [] when it cannot say (no
    ``get_by_ids``, or LangChain's default that raises NotImplementedError).

    Raises:
        RuntimeError: ``get_by_ids`` failed otherwise (the store cannot be reached...).
    """
    get = getattr(store, "get_by_ids", None)
    if not ids or not callable(get):
        return []
    try:
        found = get(list(ids))
        if inspect.isawaitable(found):
            found = await found
    except NotImplementedError:
        return []
    except Exception as exc:
        label = f"the vector store's get_by_ids ({type(store).__name__})"
        raise RuntimeError(f"{label} failed: {type(exc).__name__}: {exc}") from exc
    return held_ids(found, ids)


async def held_runs(store: Any, ids: Sequence[str]) -> dict[str, str | None] | None:
    """For each of *ids* *store* holds (``get_by_ids``), the :data:`RUN_TAG` its metadata
    carries (None: untagged); None when the store cannot say (no ``get_by_ids``, LangChain's
    default that raises NotImplementedError, a document returned without its id).

    Raises:
        RuntimeError: ``get_by_ids`` failed otherwise.
    """
    get = getattr(store, "get_by_ids", None)
    if not callable(get):
        return None
    if not ids:
        return {}
    try:
        found = get(list(ids))
        if inspect.isawaitable(found):
            found = await found
    except NotImplementedError:
        return None
    except Exception as exc:
        label = f"the vector store's get_by_ids ({type(store).__name__})"
        raise RuntimeError(f"{label} failed: {type(exc).__name__}: {exc}") from exc
    runs: dict[str, str | None] = {}
    for doc in found or ():
        meta = getattr(doc, "metadata", None)
        meta = meta if isinstance(meta, Mapping) else {}
        doc_id = getattr(doc, "id", None)
        if doc_id is None:
            doc_id = meta.get("_id")
        if doc_id is None:
            return None  # which id this document is cannot be told: nothing is claimed
        tag = meta.get(RUN_TAG)
        runs[str(doc_id)] = None if tag is None else str(tag)
    asked = set(ids)
    return {i: run for i, run in runs.items() if i in asked}


async def delete(store: Any, ids: Sequence[str]) -> None:
    """``store.delete(ids=ids)``; a store that raises or returns False fails (RuntimeError)."""
    label = f"the vector store's delete ({type(store).__name__})"
    try:
        result = store.delete(ids=list(ids))
        if inspect.isawaitable(result):
            result = await result
    except Exception as exc:
        raise RuntimeError(f"{label} failed: {type(exc).__name__}: {exc}") from exc
    if result is False:
        raise RuntimeError(f"{label} failed: it returned False for {len(ids)} ids")


@define
class SyncFallback:
    """Which form of an app answers: its async form, unless that fails before it ever answered
    and the sync form answers instead (a store searched only synchronously, such as LangChain's
    PGVector built on a sync engine, raises in every async search). Then the sync form answers
    from then on. A failure of both is the async form's own: a genuine failure is never hidden.
    """

    answered: bool = False  # the async form has answered once: its failures are the app's
    sync: bool = False  # the sync form answers from now on

    async def ask(
        self,
        asynchronous: Callable[[], Any],
        synchronous: Callable[[], Awaitable[Any]] | None,
        switched: Callable[[Exception], None],
    ) -> Any:
        """The async form's answer, or the sync form's (see the class); *switched* is called
        with the async form's failure once, when the sync form takes over."""
        try:
            value = asynchronous()
            if inspect.isawaitable(value):
                value = await value
        except Exception as failure:
            if self.answered or synchronous is None:
                raise
            try:
                value = await synchronous()
            except Exception:
                raise failure from None
            if not self.sync:
                self.sync = True
                switched(failure)
            return value
        self.answered = True
        return value
