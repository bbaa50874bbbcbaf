"""PythonTarget: a RAG app written in Python, called in-process (``ragleaklab.targets:python``).

``callable = "module:attr"`` names the app (``attr`` may be dotted, ``Class.method``). The
current directory is importable, as with ``python -m``. Accepted shapes, detected by duck typing
(neither LangChain nor LlamaIndex is ever imported), checked in this order:

- **target**: ``answer(query)`` and/or ``aanswer(query)`` (and optionally ``ingest``/``aingest``,
  ``reset``/``areset``, ``close``/``aclose``), such as a ragleaklab target;
- **query_engine** (LlamaIndex): ``query``/``aquery`` returning an object with a ``response``
  string and ``source_nodes`` (``NodeWithScore``: ``.node`` and ``.score``);
- **retriever**: LangChain's ``invoke``/``get_relevant_documents`` (and async forms) returning
  documents with ``page_content`` and ``metadata``, or LlamaIndex's ``retrieve``/``aretrieve``
  returning ``NodeWithScore``;
- **vectorstore** (LangChain): ``similarity_search`` (``_with_score`` when it has it) and
  ``add_texts``;
- **chain** (LangChain): ``invoke({input_key: query})`` returning a string, a message or a dict
  with ``answer``/``result``/``output`` and ``source_documents``/``context``;
- **function**: ``f(query)``, plain or ``async``, returning a string, a :class:`Response`, a
  dict (``answer`` plus ``retrieved``/``sources``/...) or an ``(answer, documents)`` pair.

When each hook runs. The runner builds one ``PythonTarget`` per pack (and one more, never
ingested, to check the options before the run), then calls ``ingest``, asks the cases, and calls
``reset`` then ``close``:

1. **Construction**: ``callable``, ``ingest_callable`` and ``reset_callable`` are imported, a
   factory's ``kwargs`` are checked against its signature, and an app that is not a factory has
   its shape detected. Nothing of the user's is called, so a bad spec is a configuration error
   (exit 2) before anything runs.
2. **ingest(documents)**, once per pack, before its cases, in this order:

   a. ``ingest_callable(documents)``, when set (a list of :class:`Document`);
   b. the factory (``factory = true``, or a class), called with ``kwargs``, plus
      ``documents=<the pack's documents>`` when it has a parameter named ``documents``: what it
      returns is this pack's app. A fresh target per pack therefore means a fresh app per pack;
   c. unless a. or b. took the documents, the app's own route: a target's ``aingest``/``ingest``,
      or, for a LangChain vector store or a retriever over one (``.vectorstore``),
      ``add_texts(texts, metadatas=[{"doc_id": id, RUN_TAG: run}], ids=[planted id, ...])``
      (only the pack's id and the run's tag go into the metadata: the pack's own metadata names
      poisons and sentinels, and must not reach the app). See *Planted documents* below;
   d. when none of these took the documents, a warning says so (the runner's wiring check then
      marks the pack not tested if no retrieved id is the pack's).

3. **Answers**: a factory's app not built yet (no ingest) is built by the first answer.
4. **reset()**, once per pack after its cases (also after a failed ingest): ``reset_callable``
   (with the list of documents ingested when it takes an argument, else with none), the vector
   store's ``delete(ids=[...])`` for what step 2c added, the app's own ``areset``/``reset``;
   a factory's app is then closed and dropped (the next ingest or answer builds a new one).
5. **close()**: the app's ``aclose``/``close``.

A hook that raises (``ingest_callable``, ``reset_callable``, the factory, the app's own hooks,
the vector store) raises :class:`RuntimeError` naming the hook and the original message; the
runner reports it on the pack.

**Planted documents** (step 2c). A document goes into the store under an id of the run's own,
``planted_id(run, doc_id)`` (a UUID, which every store takes), tagged ``RUN_TAG = run`` in its
metadata: ``run`` is the string the core passes to ``planted_ids`` before ingest (unique to the
run and the pack), else one drawn once per target. So two runs never touch each other's
documents, and a team document that has a pack's ``doc_id`` as its id is never overwritten or
deleted; an id the store already holds (``get_by_ids``) is refused before anything is added.
``reset`` and ``remove_planted`` delete exactly the ids planted; ``planted_runs`` reads back
(``get_by_ids``) the run each held id is tagged with, so ``cleanup`` leaves a document untagged
or tagged by another run alone. What is retrieved is mapped
back to the pack's ``doc_id`` (metadata, or the planted id itself), so the run's ids never reach
a response; a retrieved document tagged by *another* run raises
:class:`~ragleaklab_core.ForeignPlanted`. ``plants_into`` names the store when its documents
outlive the process (then ``ingest_scope`` is ``"system"``); ids planted through
``ingest_callable``, a factory or the app's own ``ingest`` are the app's to choose, and
``plants_into`` is None. An app whose async form raises before it ever answered (LangChain's
PGVector on a sync engine) is asked through its sync form from then on, when that answers.

``isolation`` tells the runner how packs are kept apart: ``"fresh"`` with a factory (a new app
per pack) or when nothing ingests; ``"reset"`` when what is ingested is removed again (the
vector store's delete, ``reset_callable``, the app's own reset); ``"shared"`` for a module-level
app that ingests and cannot be reset (several ingesting packs are then refused unless the run
allows shared state). Ids the system returns are mapped back to the pack's with
``doc_id_field`` and ``doc_id_pattern``. See docs/targets.md.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import inspect
import logging
import math
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any

import attrs
import structlog
from attrs import define, field
from attrs import validators as v

from ragleaklab_core import RUN_TAG, Document, Response, RetrievedDocument, planted_id
from ragleaklab_plugins.targets._ids import IdPattern, check_id_pattern
from ragleaklab_plugins.targets._stores import (
    SyncFallback,
    check_run,
    delete,
    held,
    held_runs,
    store_identity,
)

__all__ = ["SHAPES", "AppImportError", "PythonTarget", "to_response", "to_retrieved"]

_logfmt = structlog.processors.LogfmtRenderer(sort_keys=True)


def _event_line(logger: Any, method: str, event_dict: Any) -> str:
    """'event key=value ...', the form ragleaklab's own log lines take."""
    event = str(event_dict.pop("event"))
    return f"{event} {_logfmt(logger, method, event_dict)}".rstrip()


# Through the standard library, configuring nothing: the host application (the CLI) decides
# what is shown, as for the core's own loggers.
log = structlog.wrap_logger(
    logging.getLogger(__name__),
    processors=[structlog.stdlib.filter_by_level, _event_line],
    wrapper_class=structlog.stdlib.BoundLogger,
)

#: The shapes ``kind`` accepts; ``"auto"`` detects one.
SHAPES = ("auto", "target", "query_engine", "retriever", "vectorstore", "chain", "function")
#: Keys of a returned dict that hold the answer, tried in order.
ANSWER_KEYS = ("answer", "result", "output", "output_text", "text", "response")
#: Keys of a returned dict that hold the retrieved documents, tried in order.
RETRIEVED_KEYS = ("retrieved", "sources", "source_documents", "documents", "context", "docs")
#: Metadata keys that hold a document's id, tried in order.
ID_KEYS = ("doc_id", "id", "source")
#: Metadata keys where a store puts its own id when its documents carry none (Qdrant's
#: ``_id``), tried last: a team's own document retrieved from such a store is still named.
STORE_ID_KEYS = ("_id",)
#: Metadata keys that hold a retrieval score, tried in order.
SCORE_KEYS = ("score", "relevance_score", "similarity")

# The methods that answer a query, per shape: (synchronous, asynchronous), each tried in order.
# ``_get_relevant_documents`` is what LangChain's BaseRetriever subclasses implement; they are
# called through ``invoke``. ``retrieve``/``aretrieve`` are LlamaIndex's.
_METHODS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "target": (("answer",), ("aanswer",)),
    "query_engine": (("query",), ("aquery",)),
    "retriever": (
        ("invoke", "get_relevant_documents", "retrieve"),
        ("ainvoke", "aget_relevant_documents", "aretrieve"),
    ),
    "vectorstore": (
        ("similarity_search_with_score", "similarity_search"),
        ("asimilarity_search_with_score", "asimilarity_search"),
    ),
    "chain": (("invoke",), ("ainvoke",)),
}
# What marks a retriever besides the methods above (a BaseRetriever subclass may define only it).
_RETRIEVER_MARKS = ("_get_relevant_documents", "get_relevant_documents", "aget_relevant_documents")
# Shapes whose result is a list of documents, not an answer.
_DOCUMENT_SHAPES = frozenset({"retriever", "vectorstore"})
_IMPORT_FIX = "run ragleaklab from the directory that holds {where}, or pip install the package, "
_IMPORT_FIX += "or set PYTHONPATH"


class AppImportError(ImportError, ValueError):
    """A ``module:attr`` option names something that cannot be imported.

    A ValueError too: it is a configuration error (exit 2), not a broken plugin.
    """


def _spec(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    module, colon, attr = value.partition(":")
    if not (colon and module.strip() and attr.strip()):
        raise ValueError(f"'{attribute.name}' must look like 'package.module:attr': {value!r}")


def _optional_spec(instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None:
        _spec(instance, attribute, value)


# ---- resolving ``module:attr`` -------------------------------------------------------------------


def _cwd_importable() -> None:
    """Put the current directory on ``sys.path``, as ``python -m`` does (last, so it never
    shadows an installed package)."""
    cwd = os.getcwd()
    if not any(os.path.abspath(p or os.curdir) == cwd for p in sys.path):
        sys.path.append(cwd)


def resolve(spec: str, *, option: str = "callable") -> Any:
    """Import ``module:attr`` (attr may be dotted) with the current directory importable.

    Raises:
        AppImportError: The module does not import (the message names the fix) or the attribute
            is missing (the message lists what is there).
    """
    _cwd_importable()
    module_name, _, attr_path = spec.partition(":")
    obj = _import_module(module_name, f"{option} {spec!r}")
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            kind = "module" if inspect.ismodule(obj) else type(obj).__name__
            raise AppImportError(
                f"{option} {spec!r}: {kind} {getattr(obj, '__name__', '')!r} has no attribute "
                f"{part!r}; it has: {_public_names(obj)}"
            )
        obj = getattr(obj, part)
    return obj


def _import_module(name: str, where: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(f"{exc.name}.")):
            top = name.partition(".")[0]
            holder = f"{top}.py" if top == name else f"the package {top}/"
            raise AppImportError(
                f"{where}: cannot import module {name!r} ({exc}): "
                + _IMPORT_FIX.format(where=holder)
            ) from None
        raise AppImportError(
            f"{where}: cannot import module {name!r}: it imports a module that is not installed "
            f"({exc}); install it in the environment ragleaklab runs in ({sys.executable})"
        ) from None
    except Exception as exc:  # the module's own code failed: a syntax error, a missing file...
        raise AppImportError(
            f"{where}: cannot import module {name!r}: importing it raised "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _public_names(obj: Any, limit: int = 30) -> str:
    names = [
        n for n in dir(obj) if not n.startswith("_") and not inspect.ismodule(getattr(obj, n, None))
    ]
    shown = ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
    return shown or "nothing public"


# ---- shapes --------------------------------------------------------------------------------------


def _has(obj: Any, name: str) -> bool:
    return callable(getattr(obj, name, None))


def detect_shape(obj: Any) -> str:
    """The shape of *obj*: one of :data:`SHAPES` other than ``"auto"``.

    Raises:
        TypeError: *obj* has none of the accepted shapes (the message lists them).
    """
    if _has(obj, "answer") or _has(obj, "aanswer"):
        return "target"
    if _has(obj, "query") or _has(obj, "aquery"):
        return "query_engine"
    if any(_has(obj, n) for n in (*_RETRIEVER_MARKS, "retrieve", "aretrieve")):
        return "retriever"
    if _has(obj, "similarity_search") and _has(obj, "add_texts"):
        return "vectorstore"
    if _has(obj, "invoke") or _has(obj, "ainvoke"):
        return "chain"
    if callable(obj):
        return "function"
    hint = ""
    if _has(obj, "as_retriever"):
        hint = (
            " (an index? point callable at a function returning index.as_retriever() or "
            "index.as_query_engine(), with factory = true)"
        )
    raise TypeError(
        f"{type(obj).__name__} is not a usable target{hint}: expected a function f(query), an "
        "object with answer()/aanswer(), a retriever (invoke, get_relevant_documents, retrieve), "
        "a query engine (query), a vector store (similarity_search) or a chain (invoke)"
    )


def _check_shape(obj: Any, shape: str, spec: str) -> None:
    if shape == "function":
        if not callable(obj):
            raise TypeError(f"callable {spec!r} gives {type(obj).__name__}, which is not callable")
        return
    sync, asynchronous = _METHODS[shape]
    needs = (*sync, *asynchronous)
    if not any(_has(obj, name) for name in needs):
        raise TypeError(
            f"callable {spec!r} gives {type(obj).__name__}, which is not a {shape}: it has none "
            f"of {', '.join(needs)}"
        )


def _vector_store(app: Any, shape: str) -> Any:
    """The LangChain vector store the app searches, when documents can be added to it."""
    if shape == "vectorstore":
        return app
    store = getattr(app, "vectorstore", None) if shape == "retriever" else None
    return store if _has(store, "add_texts") else None


def _chain_input_key(chain: Any) -> str:
    keys = getattr(chain, "input_keys", None)
    if isinstance(keys, list | tuple) and len(keys) == 1 and isinstance(keys[0], str):
        return keys[0]
    return "query"


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):  # some builtins and C extensions have none
        return None


def _takes_keyword(fn: Any, name: str) -> bool:
    sig = _signature(fn)
    param = None if sig is None else sig.parameters.get(name)
    return param is not None and param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)


def _takes_documents(factory: Any) -> bool:
    return _takes_keyword(factory, "documents")


def _takes_an_argument(fn: Any) -> bool:
    sig = _signature(fn)
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sig is not None and any(
        p.kind in positional or p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()
    )


async def _guarded(label: str, call: Callable[[], Any]) -> Any:
    """Call a hook of the user's; a failure becomes a RuntimeError naming *label*."""
    try:
        value = call()
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        raise RuntimeError(f"{label} failed: {type(exc).__name__}: {exc}") from exc
    return value


def _run(awaitable: Awaitable[Any]) -> Any:
    """Wait for *awaitable* from synchronous code (on a worker thread inside a running loop)."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_in_a_fresh_loop, wait()).result()


def _in_a_fresh_loop(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run *coroutine* on a new event loop of this (worker) thread, then close the loop.

    Not ``asyncio.run``: a host that patched it (``nest_asyncio``, which inspect_ai applies when
    it is called inside a running loop) reuses the thread's loop and never closes it, so each
    call would leak an event loop and its sockets.
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


# ---- the target ----------------------------------------------------------------------------------


@define
class PythonTarget:
    """A RAG app in Python: a function, a target object, or a LangChain/LlamaIndex object.

    Attributes:
        callable: ``"package.module:attr"``; ``attr`` may be dotted (``"app:App.build"``). The
            default wraps the reference target, which is a handy smoke test.
        factory: Call the attribute with ``kwargs`` and use what it returns (always done for a
            class). It is called at ingest, after ``ingest_callable``, so the app it builds
            sees the pack's documents; with a parameter named ``documents`` it receives them.
        kwargs: Keyword arguments for the factory (JSON-compatible config values).
        kind: ``"auto"`` (detect) or one of :data:`SHAPES`: needed when an object fits several
            shapes (say, a retriever whose ``invoke`` takes a string is also a chain).
        input_key: The key a chain's input dict holds the query under; ``""`` detects it (the
            chain's ``input_keys`` when it lists exactly one, else ``"query"``); ``"$"`` passes
            the query itself, a plain string (LCEL chains that start with a retriever).
        ingest_callable: ``"module:attr"`` of a function (plain or async) called with the pack's
            documents (a list of :class:`ragleaklab_core.Document`) before the factory, instead
            of the app's own ingest route.
        reset_callable: ``"module:attr"`` of a function (plain or async) called at reset, with
            the list of documents ingested when it takes an argument, else with none.
        doc_id_field: The metadata key that holds the pack's document id, tried before
            ``doc_id``, ``id`` and ``source``.
        doc_id_pattern: A regular expression with a named group ``doc_id``, searched in every
            returned id (``^(?P<doc_id>.+?)::chunk-\\d+$``); the group is the pack's id and the
            whole id is kept as the chunk id.
        top_k: How many documents to ask a vector store given directly for (None: its default).
        thread_safe: Run a synchronous app on worker threads, so up to ``run.concurrency`` cases
            run at once; only for apps that are safe to call from several threads.
    """

    callable: str = field(
        default="ragleaklab_plugins.targets.reference:ReferenceTarget", validator=_spec
    )
    factory: bool = field(default=False, validator=v.instance_of(bool))
    kwargs: dict[str, Any] = field(factory=dict)
    kind: str = field(default="auto", validator=v.in_(SHAPES))
    input_key: str = field(default="", validator=v.instance_of(str))
    ingest_callable: str | None = field(default=None, validator=_optional_spec)
    reset_callable: str | None = field(default=None, validator=_optional_spec)
    doc_id_field: str | None = field(default=None, validator=v.optional(v.min_len(1)))
    doc_id_pattern: str | None = field(default=None, validator=check_id_pattern)
    top_k: int | None = field(default=None, validator=v.optional([v.instance_of(int), v.ge(1)]))
    thread_safe: bool = field(default=False, validator=v.instance_of(bool))

    _factory: Any = field(default=None, init=False, repr=False)
    _takes_docs: bool = field(default=False, init=False, repr=False)
    _app: Any = field(default=None, init=False, repr=False)
    _shape: str = field(default="function", init=False, repr=False)
    _key: str = field(default="query", init=False, repr=False)
    _ingest_fn: Any = field(default=None, init=False, repr=False)
    _reset_fn: Any = field(default=None, init=False, repr=False)
    _ids: IdPattern | None = field(default=None, init=False, repr=False)
    _ingested: list[Document] = field(factory=list, init=False, repr=False)
    _store: Any = field(default=None, init=False, repr=False)
    _planted: list[str] = field(factory=list, init=False, repr=False)
    _warned: bool = field(default=False, init=False, repr=False)
    # The run the documents are planted for (planted_ids sets it; else one of this instance's)
    # and each planted id's pack doc_id.
    _run: str = field(factory=lambda: uuid.uuid4().hex, init=False, repr=False)
    _pack_ids: dict[str, str] = field(factory=dict, init=False, repr=False)
    _answers: SyncFallback = field(factory=SyncFallback, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        obj = resolve(self.callable)
        if inspect.isclass(obj) or self.factory:
            self._check_factory(obj)
            self._factory, self._takes_docs = obj, _takes_documents(obj)
        elif self.kwargs:
            raise ValueError(
                f"'kwargs' are only passed to a factory: set factory = true for {self.callable!r}"
            )
        else:
            self._adopt(obj)
        self._ingest_fn = self._hook_option("ingest_callable")
        self._reset_fn = self._hook_option("reset_callable")
        if self.doc_id_pattern is not None:
            self._ids = IdPattern.compile(self.doc_id_pattern)

    def _check_factory(self, obj: Any) -> None:
        if not callable(obj):
            raise TypeError(f"callable {self.callable!r} is not callable, so not a factory")
        sig = _signature(obj)
        extra: dict[str, Any] = {"documents": []} if _takes_documents(obj) else {}
        if "documents" in self.kwargs and extra:
            raise ValueError(
                f"'kwargs' of {self.callable!r} must not set 'documents': the factory receives "
                "the pack's documents under that name"
            )
        try:
            if sig is not None:
                sig.bind(**self.kwargs, **extra)
        except TypeError as exc:
            raise TypeError(
                f"callable {self.callable!r}: the factory cannot be called with kwargs "
                f"{sorted(self.kwargs)}: {exc}"
            ) from None

    def _hook_option(self, option: str) -> Any:
        spec = getattr(self, option)
        if spec is None:
            return None
        fn = resolve(spec, option=option)
        if not callable(fn):
            raise TypeError(f"{option} {spec!r} is not callable")
        return fn

    def _adopt(self, obj: Any) -> None:
        """Make *obj* the app: detect and check its shape."""
        try:
            shape = detect_shape(obj) if self.kind == "auto" else self.kind
        except TypeError as exc:
            raise TypeError(f"callable {self.callable!r}: {exc}") from None
        _check_shape(obj, shape, self.callable)
        self._app, self._shape = obj, shape
        if shape == "chain":
            self._key = self.input_key or _chain_input_key(obj)

    # ---- what the core reads ---------------------------------------------------------------------

    @property
    def ingests(self) -> bool:
        """True when the pack's documents reach the app (known for a function factory only once
        it has built the app)."""
        if self._ingest_fn is not None or self._takes_docs:
            return True
        app = self._app
        if app is None and inspect.isclass(self._factory):
            app = self._factory  # a class shows its methods before it is built
        if app is None:
            return False
        shape = self._shape if self._app is not None else _safe_shape(app, self.kind)
        return self._own_route(app, shape) is not None

    @property
    def isolation(self) -> str:
        """``"fresh"``, ``"reset"`` or ``"shared"`` (see the module docstring)."""
        if self._factory is not None or not self.ingests:
            return "fresh"
        if self._reset_fn is not None:
            return "reset"
        if self._ingest_fn is None and _vector_store(self._app, self._shape) is not None:
            return "reset"  # what add_texts planted, delete removes
        if self._shape == "target" and (_has(self._app, "reset") or _has(self._app, "areset")):
            return "reset"
        return "shared"

    @property
    def carries_principal(self) -> bool | None:
        """Whether the app can be asked as a principal: a function, or a target-shaped app's
        answer method, naming a ``principal`` keyword. ``None`` while a factory has not built
        the app yet (each case is then judged when asked)."""
        if self._app is None:
            return None
        if self._shape == "function":
            return _takes_keyword(self._app, "principal")
        if self._shape == "target":
            name = self._method(asynchronous=True) or self._method(asynchronous=False)
            return name is not None and _takes_keyword(getattr(self._app, name), "principal")
        return False

    @property
    def plants_into(self) -> str | None:
        """The store ``add_texts`` plants into, when what it plants outlives the process: its
        class and what names its data (collection, directory, url without credentials). None
        for a store in the process, a factory, an ``ingest_callable`` (your code picks the ids)
        and an app that ingests nothing."""
        store = self._planting_store()
        return None if store is None else store_identity(store)

    @property
    def ingest_scope(self) -> str:
        """``"system"`` when ingest plants into a store every process reaches (``plants_into``
        is set: the Ray driver ingests once), else ``"process"``."""
        return "system" if self.plants_into is not None else "process"

    def _planting_store(self) -> Any:
        """The vector store ingest plants into with ``add_texts``, or None."""
        if self._factory is not None or self._ingest_fn is not None:
            return None
        return _vector_store(self._app, self._shape)

    # ---- the Target protocol ---------------------------------------------------------------------

    async def aanswer(self, query: str, *, principal: str | None = None) -> Response:
        """Ask the app (its async form when it has one); what it returns becomes a
        :class:`Response` (see :func:`to_response`).

        *principal* is passed as the keyword ``principal=`` to a function, or to a target's
        ``aanswer``/``answer``, that names that parameter; any other app cannot carry it, and
        a case with a principal raises (the case is errored, never asked anonymously).
        """
        app = self._app if self._app is not None else await self._abuild([])
        name = None if self._answers.sync else self._method(asynchronous=True)
        if name is None:
            return self._convert(await self._acall(query, principal))
        args, kwargs = self._arguments(query, getattr(app, name), principal)
        sync = self._method(asynchronous=False)
        value = await self._answers.ask(
            lambda: getattr(app, name)(*args, **kwargs),
            None if sync is None else lambda: self._acall(query, principal),
            lambda failure: log.info(
                "python_target.answering_synchronously",
                callable=self.callable,
                failed=name,
                reason=f"{type(failure).__name__}: {failure}",
                using=sync,
            ),
        )
        return self._convert(value)

    async def _acall(self, query: str, principal: str | None) -> Any:
        """The app's synchronous form (on a worker thread when ``thread_safe``), awaited."""
        if self.thread_safe:
            value = await asyncio.to_thread(self._call, query, principal)
        else:
            value = self._call(query, principal)
        return await value if inspect.isawaitable(value) else value

    def answer(self, query: str, *, principal: str | None = None) -> Response:
        """The synchronous form of :meth:`aanswer` (an async app runs in a fresh event loop)."""
        if self._app is None:
            _run(self._abuild([]))
        value = self._call(query, principal)
        if inspect.isawaitable(value):
            value = _run(value)
        return self._convert(value)

    async def aingest(self, documents: Iterable[Document]) -> None:
        """Hand *documents* to the app, in the order the module docstring gives."""
        await self._ingest(list(documents), sync_first=False)

    def ingest(self, documents: Iterable[Document]) -> None:
        """The synchronous form of :meth:`aingest`."""
        _run(self._ingest(list(documents), sync_first=True))

    async def areset(self) -> None:
        """Remove what ingest planted: ``reset_callable``, the vector store, the app's reset."""
        await self._reset(sync_first=False)

    def reset(self) -> None:
        """The synchronous form of :meth:`areset`."""
        _run(self._reset(sync_first=True))

    def planted_ids(self, documents: Iterable[Document], *, run: str) -> list[str]:
        """The ids the next ``add_texts`` ingest gives *documents*, in order: ``planted_id(run,
        doc_id)``, UUIDs unique to *run* (opaque: unique to the run and the pack). Their metadata
        is tagged ``RUN_TAG = run``; a retrieved document tagged by another run raises
        :class:`ForeignPlanted`."""
        if not isinstance(run, str) or not run:
            raise ValueError(f"planted_ids: 'run' must be a non-empty string, not {run!r}")
        self._run = run
        return self._ids_for(list(documents))

    async def aremove_planted(self, ids: Sequence[str]) -> list[str]:
        """Delete *ids* from the vector store; the ids it still holds afterwards ([] when it
        cannot tell). Raises when the store fails or there is no vector store."""
        return await self._remove_planted([str(i) for i in ids])

    def remove_planted(self, ids: Sequence[str]) -> list[str]:
        """The synchronous form of :meth:`aremove_planted`."""
        return list(_run(self._remove_planted([str(i) for i in ids])))

    async def aplanted_runs(self, ids: Sequence[str]) -> dict[str, str | None] | None:
        """For each of *ids* the vector store holds, the run its metadata is tagged with
        (``RUN_TAG``; None: untagged); None when the store cannot say (no ``get_by_ids``) or
        there is no vector store. Read before a ledger's ids are removed: an id held untagged
        or tagged by another run is left alone."""
        store = self._store if self._store is not None else self._planting_store()
        if store is None:
            return None
        return await held_runs(store, [str(i) for i in ids])

    def planted_runs(self, ids: Sequence[str]) -> dict[str, str | None] | None:
        """The synchronous form of :meth:`aplanted_runs`."""
        found: dict[str, str | None] | None = _run(self.aplanted_runs(ids))
        return found

    async def aclose(self) -> None:
        """The app's ``aclose``/``close``, when it has one."""
        await self._close(sync_first=False)

    def close(self) -> None:
        """The synchronous form of :meth:`aclose`."""
        _run(self._close(sync_first=True))

    # ---- ingest, build, reset, close -------------------------------------------------------------

    async def _ingest(self, docs: list[Document], *, sync_first: bool) -> None:
        self._ingested.extend(docs)  # before anything runs: reset also undoes a partial ingest
        taken = False
        if self._ingest_fn is not None:
            label = f"ingest_callable {self.ingest_callable!r}"
            await _guarded(label, lambda: self._ingest_fn(docs))
            taken = True
        if self._app is None and self._factory is not None:
            await self._abuild(docs)
            taken = taken or self._takes_docs
        if not taken:
            taken = await self._route(docs, sync_first)
        if docs and not taken:
            self._warn_not_ingested(len(docs))

    async def _abuild(self, docs: list[Document]) -> Any:
        """Call the factory (with *docs* when it takes ``documents``) and adopt its result."""
        kwargs = {**self.kwargs, **({"documents": docs} if self._takes_docs else {})}
        label = f"the factory {self.callable!r}"
        obj = await _guarded(label, lambda: self._factory(**kwargs))
        self._adopt(obj)
        return obj

    def _own_route(self, app: Any, shape: str) -> str | None:
        """How the app takes documents itself: an ingest method's name, ``"add_texts"``, None."""
        if shape == "target":
            return next((n for n in ("aingest", "ingest") if _has(app, n)), None)
        return "add_texts" if _vector_store(app, shape) is not None else None

    async def _route(self, docs: list[Document], sync_first: bool) -> bool:
        """Give *docs* to the app's own route; False when it has none."""
        app, shape = self._app, self._shape
        if self._own_route(app, shape) is None:
            return False
        name = self._app_hook("ingest", sync_first) if shape == "target" else None
        if name is not None:
            await _guarded(f"the app's {name} ({self.callable})", lambda: getattr(app, name)(docs))
            return True
        await self._add_texts(_vector_store(app, shape), docs)
        return True

    def _ids_for(self, docs: list[Document]) -> list[str]:
        ids = [planted_id(self._run, d.doc_id) for d in docs]
        self._pack_ids.update(zip(ids, (d.doc_id for d in docs), strict=True))
        return ids

    async def _add_texts(self, store: Any, docs: list[Document]) -> None:
        if not docs:
            return
        self._store = store
        ids = self._ids_for(docs)
        ours = set(self._planted)  # planted again by this target: replacing its own is fine
        taken = await held(store, [i for i in dict.fromkeys(ids) if i not in ours])
        if taken:
            raise RuntimeError(
                f"the vector store ({type(store).__name__}) already holds {len(taken)} of the "
                f"{len(ids)} ids this pack would plant (e.g. {taken[0]!r}, for the pack's "
                f"{self._pack_ids[taken[0]]!r}): nothing was added, so nothing of the store's "
                "is overwritten or deleted"
            )
        # what reset deletes, even when add_texts fails part-way
        self._planted.extend(i for i in dict.fromkeys(ids) if i not in ours)
        keys = dict.fromkeys(("doc_id", self.doc_id_field or "doc_id"))  # in order, once each
        metadatas = [{**dict.fromkeys(keys, d.doc_id), RUN_TAG: self._run} for d in docs]
        label = f"the vector store's add_texts ({type(store).__name__})"
        added = await _guarded(
            label, lambda: store.add_texts([d.text for d in docs], metadatas=metadatas, ids=ids)
        )
        asked = set(ids)
        # a store that picks ids of its own: delete those too
        self._planted.extend(i for i in added or () if isinstance(i, str) and i not in asked)

    def _warn_not_ingested(self, count: int) -> None:
        if self._warned:
            return
        self._warned = True
        log.warning(
            "python_target.documents_not_ingested",
            callable=self.callable,
            documents=count,
            shape=self._shape,
            reason=(
                f"the pack's {count} documents were not given to the app: it has no ingest "
                "route, so the attack cases test only what the app already holds"
            ),
            fix=(
                "set ingest_callable, use a LangChain vector store (or a retriever over one), "
                "give the app ingest(), or build it in a factory that takes 'documents'"
            ),
        )

    async def _reset(self, *, sync_first: bool) -> None:
        """Every reset step runs even when one fails; the failures are raised together."""
        failures = []
        for step in (self._reset_callable, self._delete_planted, self._reset_app):
            try:
                await step(sync_first)
            except RuntimeError as exc:
                failures.append(str(exc))
        self._ingested.clear()
        if failures:
            raise RuntimeError("; ".join(failures))

    async def _reset_callable(self, sync_first: bool) -> None:
        fn = self._reset_fn
        if fn is None:
            return
        args = (list(self._ingested),) if _takes_an_argument(fn) else ()
        await _guarded(f"reset_callable {self.reset_callable!r}", lambda: fn(*args))

    async def _remove_planted(self, ids: list[str]) -> list[str]:
        store = self._store if self._store is not None else self._planting_store()
        if not ids:
            return []  # never delete(ids=[]): some stores read it as "everything"
        if store is None:
            raise RuntimeError(
                f"cannot remove planted documents: the python target's app {self.callable!r} "
                "has no vector store to remove them from"
            )
        await delete(store, ids)
        left = await held(store, ids)
        gone = set(ids) - set(left)
        self._planted = [i for i in self._planted if i not in gone]
        return left

    async def _delete_planted(self, sync_first: bool) -> None:
        store, ids = self._store, list(self._planted)
        if store is None or not ids:
            return
        await delete(store, ids)
        self._planted.clear()

    async def _reset_app(self, sync_first: bool) -> None:
        try:
            await self._app_lifecycle("reset", sync_first)
        finally:
            if self._factory is not None and self._app is not None:
                await self._close(sync_first=sync_first)  # a factory's app lives for one pack

    async def _close(self, *, sync_first: bool) -> None:
        try:
            await self._app_lifecycle("close", sync_first)
        finally:
            if self._factory is not None:
                self._app = None  # the next ingest or answer builds a new one

    async def _app_lifecycle(self, name: str, sync_first: bool) -> None:
        if self._shape != "target" or self._app is None:
            return
        app, found = self._app, self._app_hook(name, sync_first)
        if found is not None:
            await _guarded(f"the app's {found} ({self.callable})", getattr(app, found))

    def _app_hook(self, name: str, sync_first: bool) -> str | None:
        """The app's ``name`` or ``aname`` (the synchronous one first when *sync_first*)."""
        names = (name, f"a{name}") if sync_first else (f"a{name}", name)
        return next((n for n in names if _has(self._app, n)), None)

    # ---- answering -------------------------------------------------------------------------------

    def _method(self, *, asynchronous: bool) -> str | None:
        """The first method of the app's shape it has, or None (a function)."""
        methods = _METHODS.get(self._shape)
        if methods is None:
            return None
        return next((n for n in methods[1 if asynchronous else 0] if _has(self._app, n)), None)

    def _arguments(
        self, query: str, fn: Any, principal: str | None = None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if principal is not None:
            # Only what names the keyword can carry it: a chain, retriever or vector store
            # would answer the same for everyone, and that answer is not the case's.
            if self._shape not in ("function", "target") or not _takes_keyword(fn, "principal"):
                method = getattr(fn, "__name__", "method")
                called = self.callable if self._shape == "function" else f"its {method}"
                raise TypeError(
                    f"the python target's app {self.callable!r} ({self._shape}) cannot ask as a "
                    f"principal: {called} takes no 'principal' keyword"
                )
            return (query,), {"principal": principal}
        if self._shape == "chain":
            return (query if self._key == "$" else {self._key: query},), {}
        if self._shape == "vectorstore" and self.top_k is not None:
            return (query,), {"k": self.top_k}
        return (query,), {}

    def _call(self, query: str, principal: str | None = None) -> Any:
        """Call the app the way its shape says, synchronously when it can; may return an
        awaitable."""
        if self._shape == "function":
            args, kwargs = self._arguments(query, self._app, principal)
            return self._app(*args, **kwargs)
        # _check_shape made sure the app has one of its shape's methods
        name = self._method(asynchronous=False) or self._method(asynchronous=True) or ""
        method = getattr(self._app, name)
        args, kwargs = self._arguments(query, method, principal)
        return method(*args, **kwargs)

    def _convert(self, value: Any) -> Response:
        check_run(value, self._run)
        keys = ID_KEYS if self.doc_id_field is None else (self.doc_id_field, *ID_KEYS)
        if self._shape in _DOCUMENT_SHAPES:
            response = _retriever_response(value, self._shape, keys)
        else:
            response = to_response(value, self.callable, id_keys=keys)
        return self._mapped(response)

    def _mapped(self, response: Response) -> Response:
        """The pack's id for an id this target planted under (a store that keeps no metadata
        returns its own), then ``doc_id_pattern`` on every retrieved id: the planted ids are
        the run's, and must not reach a report."""
        if response.retrieved is None or (self._ids is None and not self._pack_ids):
            return response
        return attrs.evolve(response, retrieved=tuple(self._map(r) for r in response.retrieved))

    def _map(self, item: RetrievedDocument) -> RetrievedDocument:
        planted = self._pack_ids
        if item.doc_id in planted or item.chunk_id in planted:
            item = attrs.evolve(item, doc_id=planted.get(item.doc_id, item.doc_id), chunk_id=None)
        if self._ids is None:
            return item
        doc_id, chunk_id = self._ids.split(item.doc_id)
        return attrs.evolve(item, doc_id=doc_id, chunk_id=item.chunk_id or chunk_id)


def _safe_shape(obj: Any, kind: str) -> str:
    try:
        return detect_shape(obj) if kind == "auto" else kind
    except TypeError:
        return "function"


# ---- converting what an app returns --------------------------------------------------------------


def _retriever_response(
    docs: Any, shape: str = "retriever", id_keys: Sequence[str] = ID_KEYS
) -> Response:
    """A retriever has no generator: its answer is its context, the texts joined by blank lines
    (the worst case of a generator that repeats what it was given)."""
    retrieved = to_retrieved(docs, f"the {shape}'s result", id_keys=id_keys)
    answer = "\n\n".join(r.text for r in retrieved if r.text)
    return Response(answer=answer, retrieved=retrieved, metadata={"shape": shape})


def to_response(value: Any, spec: str = "the app", *, id_keys: Sequence[str] = ID_KEYS) -> Response:
    """Turn what an app returned into a :class:`Response`.

    Accepted: a ``Response``; a string or a message with a string ``content`` (no retrieval
    reported); a LlamaIndex-style response (``response`` and ``source_nodes``); an
    ``(answer, documents)`` pair; a mapping with an answer under one of :data:`ANSWER_KEYS`
    and, optionally, documents under one of :data:`RETRIEVED_KEYS` (the first that holds a
    list) and a ``metadata`` mapping.

    Raises:
        TypeError: Anything else, naming what was returned.
    """
    if isinstance(value, Response):
        return value
    if isinstance(value, str):
        return Response(answer=value)
    if isinstance(value, Mapping):
        return _mapping_response(value, spec, id_keys)
    if hasattr(value, "source_nodes"):
        return _llama_response(value, spec, id_keys)
    content = getattr(value, "content", None)
    if isinstance(content, str):
        return Response(answer=content)  # a chat model's message (LangChain's AIMessage)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return Response(
            answer=value[0], retrieved=to_retrieved(value[1], f"{spec} [1]", id_keys=id_keys)
        )
    raise TypeError(
        f"{spec} returned {type(value).__name__}; expected a str, a dict with an answer, an "
        "(answer, documents) pair, a query engine's response or a ragleaklab_core.Response"
    )


def _mapping_response(value: Mapping[str, Any], spec: str, id_keys: Sequence[str]) -> Response:
    key = next((k for k in ANSWER_KEYS if isinstance(value.get(k), str)), None)
    if key is None:
        raise TypeError(
            f"{spec} returned a dict without a string answer under any of "
            f"{', '.join(ANSWER_KEYS)} (keys: {', '.join(sorted(map(str, value)))})"
        )
    docs_key = next((k for k in RETRIEVED_KEYS if _is_list(value.get(k))), None)
    retrieved = (
        None
        if docs_key is None
        else to_retrieved(value[docs_key], f"{spec}[{docs_key!r}]", id_keys=id_keys)
    )
    extra = value.get("metadata")
    metadata = dict(extra) if isinstance(extra, Mapping) else {}
    return Response(answer=value[key], retrieved=retrieved, metadata=metadata)


def _llama_response(value: Any, spec: str, id_keys: Sequence[str]) -> Response:
    """A LlamaIndex query engine's (or chat engine's) response."""
    answer = getattr(value, "response", None)
    if answer is None and hasattr(value, "response_gen"):
        raise TypeError(
            f"{spec} returned a streaming response ({type(value).__name__}); build the query "
            "engine with streaming=False"
        )
    nodes = list(getattr(value, "source_nodes", None) or [])
    retrieved = to_retrieved(nodes, f"{spec}.source_nodes", id_keys=id_keys)
    return Response(answer="" if answer is None else str(answer), retrieved=retrieved)


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def to_retrieved(
    docs: Any, where: str, *, id_keys: Sequence[str] = ID_KEYS
) -> tuple[RetrievedDocument, ...]:
    """Turn a list of documents into :class:`RetrievedDocument` s, in order.

    Each item may be a ``RetrievedDocument``, a ``Document``, a string (an id), a mapping (id
    under one of *id_keys*, text under ``text``/``page_content``/``content``, score under
    ``score``), a LangChain-style document (``page_content`` and ``metadata``; id in its
    metadata, else its ``id``), a ``(document, score)`` pair (``similarity_search_with_score``)
    or a LlamaIndex ``NodeWithScore``/node (id in its metadata, else its ``ref_doc_id``, else
    its ``node_id``; text from ``text``/``get_content()``).

    Raises:
        TypeError: An item has no id; the message gives its position.
    """
    if not isinstance(docs, Sequence) or isinstance(docs, str | bytes):
        raise TypeError(f"{where} is {type(docs).__name__}, not a list of documents")
    return tuple(_one(item, f"{where}[{i}]", id_keys) for i, item in enumerate(docs))


def _one(item: Any, where: str, id_keys: Sequence[str]) -> RetrievedDocument:
    if isinstance(item, RetrievedDocument):
        return item
    item, score = _unwrap_score(item)
    if isinstance(item, Document):
        return RetrievedDocument(doc_id=item.doc_id, text=item.text, score=score)
    if isinstance(item, str):
        return RetrievedDocument(doc_id=item, score=score)
    if isinstance(item, Mapping):
        meta = item.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        doc_id = _first(item, id_keys) or _first(meta, id_keys)
        text = _first(item, ("text", "page_content", "content"))
        score = _score(item, meta) if score is None else score
    else:
        meta = getattr(item, "metadata", None)
        meta = meta if isinstance(meta, Mapping) else {}
        doc_id = _first(meta, id_keys) or _attr_id(item) or _first(meta, STORE_ID_KEYS)
        text = _text_of(item)
        score = _score({}, meta) if score is None else score
    if doc_id is None:
        raise TypeError(
            f"{where} ({type(item).__name__}) has no document id: put it in metadata under "
            f"{', '.join(id_keys)} (or set doc_id_field)"
        )
    return RetrievedDocument(
        doc_id=doc_id, text=text if isinstance(text, str) else None, score=score
    )


def _unwrap_score(item: Any) -> tuple[Any, float | None]:
    """``(document, score)`` pairs and LlamaIndex ``NodeWithScore`` hold the score outside."""
    if isinstance(item, tuple) and len(item) == 2 and _number(item[1]) is not None:
        return item[0], _number(item[1])
    node = getattr(item, "node", None)
    if node is not None and not isinstance(item, Mapping) and hasattr(item, "score"):
        return node, _number(item.score)
    return item, None


def _text_of(item: Any) -> Any:
    for name in ("page_content", "text"):
        value = getattr(item, name, None)
        if isinstance(value, str):
            return value
    return item.get_content() if _has(item, "get_content") else None


def _first(mapping: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _attr_id(item: Any) -> str | None:
    """A LangChain document's ``id``; a LlamaIndex node's source document, else its own id."""
    for name in ("ref_doc_id", "id", "node_id", "id_"):
        value = getattr(item, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def _number(value: Any) -> float | None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if number and math.isfinite(value) else None


def _score(item: Mapping[str, Any], meta: Mapping[str, Any]) -> float | None:
    for source in (item, meta):
        for key in SCORE_KEYS:
            value = _number(source.get(key))
            if value is not None:
                return value
    return None
