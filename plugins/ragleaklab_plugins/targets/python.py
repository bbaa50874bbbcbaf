"""PythonTarget: a RAG app written in Python, called in-process (``ragleaklab.targets:python``).

``callable = "module:attr"`` names the app (``attr`` may be dotted, ``Class.method``). Accepted
shapes, detected when the target is built:

- **target**: an object with ``answer(query)`` and/or ``aanswer(query)`` (and optionally
  ``ingest``/``aingest``, ``reset``/``areset``, ``close``/``aclose``), such as a ragleaklab
  target; its answers may take any form a function's may;
- **retriever** (LangChain-style, duck typed): ``get_relevant_documents(query)`` or
  ``invoke(query)`` returning documents with ``page_content`` and ``metadata``;
- **chain** (LangChain-style): ``invoke({input_key: query})`` returning a string or a dict with
  ``answer``/``result``/``output`` and ``source_documents``/``context``;
- **function**: ``f(query)``, plain or ``async``, returning a string, a :class:`Response`, a
  dict (``answer`` plus ``retrieved``/``sources``/``source_documents``/``documents``/``context``)
  or an ``(answer, documents)`` pair.

A class (or any attribute when ``factory = true``) is first called with ``kwargs`` and the
shapes apply to what it returns. LangChain is never imported. See docs/targets.md.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import math
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any

import attrs
from attrs import define, field
from attrs import validators as v

from ragleaklab_core import Document, Response, RetrievedDocument

__all__ = ["SHAPES", "PythonTarget", "to_response", "to_retrieved"]

#: The shapes ``kind`` accepts; ``"auto"`` detects one.
SHAPES = ("auto", "target", "retriever", "chain", "function")
#: Keys of a returned dict that hold the answer, tried in order.
ANSWER_KEYS = ("answer", "result", "output", "output_text", "text", "response")
#: Keys of a returned dict that hold the retrieved documents, tried in order.
RETRIEVED_KEYS = ("retrieved", "sources", "source_documents", "documents", "context", "docs")
#: Metadata keys that hold a document's id, tried in order.
ID_KEYS = ("doc_id", "id", "source")
#: Metadata keys that hold a retrieval score, tried in order.
SCORE_KEYS = ("score", "relevance_score", "similarity")


# What marks a LangChain-style retriever (``_get_relevant_documents`` is what subclasses of
# LangChain's BaseRetriever implement; the public names are older).
_RETRIEVER_METHODS = (
    "_get_relevant_documents",
    "get_relevant_documents",
    "aget_relevant_documents",
)


def _spec(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    module, colon, attr = value.partition(":")
    if not (colon and module.strip() and attr.strip()):
        raise ValueError(f"'{attribute.name}' must look like 'package.module:attr': {value!r}")


def _optional_spec(instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None:
        _spec(instance, attribute, value)


def resolve(spec: str, *, option: str = "callable") -> Any:
    """Import ``module:attr`` (attr may be dotted); errors name the module or attribute."""
    module_name, _, attr_path = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"{option} {spec!r}: cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ImportError(
                f"{option} {spec!r}: {type(obj).__name__} {getattr(obj, '__name__', '')!r} "
                f"has no attribute {part!r}"
            ) from None
    return obj


def _has(obj: Any, name: str) -> bool:
    return callable(getattr(obj, name, None))


def detect_shape(obj: Any) -> str:
    """The shape of *obj*: ``"target"``, ``"retriever"``, ``"chain"`` or ``"function"``.

    Raises:
        TypeError: *obj* has none of the accepted shapes (the message lists them).
    """
    if _has(obj, "answer") or _has(obj, "aanswer"):
        return "target"
    if any(_has(obj, n) for n in _RETRIEVER_METHODS):
        return "retriever"
    if _has(obj, "invoke") or _has(obj, "ainvoke"):
        return "chain"
    if callable(obj):
        return "function"
    raise TypeError(
        f"{type(obj).__name__} is not a usable target: expected a function f(query), an object "
        "with answer()/aanswer(), a retriever with get_relevant_documents()/invoke() or a "
        "chain with invoke()"
    )


@define
class PythonTarget:
    """A RAG app in Python: a function, a target object, or a LangChain-style retriever or chain.

    Attributes:
        callable: ``"package.module:attr"``; ``attr`` may be dotted (``"app:App.build"``). The
            default wraps the reference target, which is a handy smoke test.
        factory: Call the attribute with ``kwargs`` and use what it returns (always done for a
            class).
        kwargs: Keyword arguments for the factory (JSON-compatible config values).
        kind: ``"auto"`` (detect) or one of ``"target"``, ``"retriever"``, ``"chain"``,
            ``"function"``: needed when an object fits several shapes (say, a retriever whose
            ``invoke`` takes a string is also a chain).
        input_key: The key a chain's input dict holds the query under; ``""`` detects it (the
            chain's ``input_keys`` when it lists exactly one, else ``"query"``); ``"$"`` passes
            the query itself, a plain string (LCEL chains that start with a retriever).
        ingest_callable: ``"module:attr"`` of a function (plain or async) called with the pack's
            documents (a list of :class:`ragleaklab_core.Document`) before the cases run, for
            shapes that cannot ingest themselves; a target object's own ``ingest`` is used when
            this is not set.
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
    thread_safe: bool = field(default=False, validator=v.instance_of(bool))

    _app: Any = field(default=None, init=False, repr=False)
    _shape: str = field(default="function", init=False, repr=False)
    _ingest_fn: Any = field(default=None, init=False, repr=False)
    _key: str = field(default="query", init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        obj = resolve(self.callable)
        if inspect.isclass(obj) or self.factory:
            if not _is_callable(obj):
                raise TypeError(f"callable {self.callable!r} is not callable, so not a factory")
            try:
                obj = obj(**self.kwargs)
            except Exception as exc:  # the app's own constructor: report it as the app's
                raise RuntimeError(
                    f"callable {self.callable!r}: the factory failed with kwargs "
                    f"{sorted(self.kwargs)}: {type(exc).__name__}: {exc}"
                ) from exc
        elif self.kwargs:
            raise ValueError(
                f"'kwargs' are only passed to a factory: set factory = true for {self.callable!r}"
            )
        try:
            shape = detect_shape(obj) if self.kind == "auto" else self.kind
        except TypeError as exc:
            raise TypeError(f"callable {self.callable!r}: {exc}") from None
        _check_shape(obj, shape, self.callable)
        self._app, self._shape = obj, shape
        if self.ingest_callable is not None:
            self._ingest_fn = resolve(self.ingest_callable, option="ingest_callable")
            if not _is_callable(self._ingest_fn):
                raise TypeError(f"ingest_callable {self.ingest_callable!r} is not callable")
        if shape == "chain":
            self._key = self.input_key or _chain_input_key(obj)

    # ---- the Target protocol ----------------------------------------------------------------

    async def aanswer(self, query: str) -> Response:
        """Ask the app; what it returns becomes a :class:`Response` (see :func:`to_response`)."""
        app, shape = self._app, self._shape
        if shape == "target" and _has(app, "aanswer"):
            return to_response(await app.aanswer(query), self.callable)
        if shape == "retriever":
            for name in ("ainvoke", "aget_relevant_documents"):
                if _has(app, name):
                    return _retriever_response(await getattr(app, name)(query))
        if shape == "chain" and _has(app, "ainvoke"):
            return to_response(await app.ainvoke(self._chain_input(query)), self.callable)
        if self.thread_safe:
            value = await asyncio.to_thread(self._call, query)
        else:
            value = self._call(query)
        if inspect.isawaitable(value):
            value = await value
        return self._convert(value)

    def answer(self, query: str) -> Response:
        """The synchronous form of :meth:`aanswer` (an async app runs in a fresh event loop)."""
        value = self._call(query)
        if inspect.isawaitable(value):
            value = _run(value)
        return self._convert(value)

    async def aingest(self, documents: Iterable[Document]) -> None:
        """Hand *documents* to ``ingest_callable``, else to the app's own ``aingest``/``ingest``
        (a function, retriever or chain without ``ingest_callable`` ingests nothing)."""
        value = self._ingest_call(list(documents), ("aingest", "ingest"))
        if inspect.isawaitable(value):
            await value

    def ingest(self, documents: Iterable[Document]) -> None:
        """The synchronous form of :meth:`aingest`."""
        value = self._ingest_call(list(documents), ("ingest", "aingest"))
        if inspect.isawaitable(value):
            _run(value)

    async def areset(self) -> None:
        """The app's ``areset``/``reset``, when it has one."""
        await self._lifecycle("reset")

    def reset(self) -> None:
        """The app's ``reset``, when it has one."""
        self._lifecycle_sync("reset")

    async def aclose(self) -> None:
        """The app's ``aclose``/``close``, when it has one."""
        await self._lifecycle("close")

    def close(self) -> None:
        """The app's ``close``, when it has one."""
        self._lifecycle_sync("close")

    # ---- helpers ------------------------------------------------------------------------------

    def _ingest_call(self, docs: list[Document], names: tuple[str, str]) -> Any:
        if self._ingest_fn is not None:
            return self._ingest_fn(docs)
        if self._shape == "target":
            for name in names:
                if _has(self._app, name):
                    return getattr(self._app, name)(docs)
        return None

    async def _lifecycle(self, name: str) -> None:
        if self._shape != "target":
            return
        if _has(self._app, f"a{name}"):
            await getattr(self._app, f"a{name}")()
        elif _has(self._app, name):
            value = getattr(self._app, name)()
            if inspect.isawaitable(value):
                await value

    def _lifecycle_sync(self, name: str) -> None:
        if self._shape != "target":
            return
        if _has(self._app, name):
            value = getattr(self._app, name)()
        elif _has(self._app, f"a{name}"):
            value = getattr(self._app, f"a{name}")()
        else:
            return
        if inspect.isawaitable(value):
            _run(value)

    def _call(self, query: str) -> Any:
        """Call the app the way its shape says; may return an awaitable."""
        app = self._app
        if self._shape == "target":
            return app.answer(query) if _has(app, "answer") else app.aanswer(query)
        if self._shape == "retriever":
            for name in ("invoke", "get_relevant_documents"):
                if _has(app, name):
                    return _Docs(getattr(app, name)(query))
            return _docs_later(app, query)
        if self._shape == "chain":
            name = "invoke" if _has(app, "invoke") else "ainvoke"
            return getattr(app, name)(self._chain_input(query))
        return app(query)

    def _chain_input(self, query: str) -> Any:
        return query if self._key == "$" else {self._key: query}

    def _convert(self, value: Any) -> Response:
        if isinstance(value, _Docs):
            return _retriever_response(value.docs)
        return to_response(value, self.callable)


@attrs.frozen
class _Docs:
    """A retriever's result, to be turned into a response."""

    docs: Any


async def _docs_later(app: Any, query: str) -> _Docs:
    return _Docs(await app.aget_relevant_documents(query))


def _is_callable(obj: Any) -> bool:
    return callable(obj)


def _run(awaitable: Awaitable[Any]) -> Any:
    async def wait() -> Any:
        return await awaitable

    return asyncio.run(wait())


def _check_shape(obj: Any, shape: str, spec: str) -> None:
    needs = {
        "target": ("answer", "aanswer"),
        "retriever": ("invoke", "ainvoke", "get_relevant_documents", "aget_relevant_documents"),
        "chain": ("invoke", "ainvoke"),
    }.get(shape)
    if needs is None:
        if not callable(obj):
            raise TypeError(f"callable {spec!r} gives {type(obj).__name__}, which is not callable")
        return
    if not any(_has(obj, name) for name in needs):
        raise TypeError(
            f"callable {spec!r} gives {type(obj).__name__}, which is not a {shape}: it has none "
            f"of {', '.join(needs)}"
        )


def _chain_input_key(chain: Any) -> str:
    keys = getattr(chain, "input_keys", None)
    if isinstance(keys, list | tuple) and len(keys) == 1 and isinstance(keys[0], str):
        return keys[0]
    return "query"


def _retriever_response(docs: Any) -> Response:
    """A retriever has no generator: its answer is its context, the texts joined by blank lines
    (the worst case of a generator that repeats what it was given)."""
    retrieved = to_retrieved(docs, "the retriever's result")
    answer = "\n\n".join(r.text for r in retrieved if r.text)
    return Response(answer=answer, retrieved=retrieved, metadata={"shape": "retriever"})


def to_response(value: Any, spec: str = "the app") -> Response:
    """Turn what an app returned into a :class:`Response`.

    Accepted: a ``Response``; a string or a message with a string ``content`` (no retrieval
    reported); an ``(answer, documents)`` pair;
    a mapping with an answer under one of :data:`ANSWER_KEYS` and, optionally, documents under
    one of :data:`RETRIEVED_KEYS` (the first that holds a list) and a ``metadata`` mapping.

    Raises:
        TypeError: Anything else, naming what was returned.
    """
    if isinstance(value, Response):
        return value
    if isinstance(value, str):
        return Response(answer=value)
    content = getattr(value, "content", None)
    if isinstance(content, str) and not isinstance(value, Mapping):
        return Response(answer=content)  # a chat model's message (LangChain's AIMessage)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return Response(answer=value[0], retrieved=to_retrieved(value[1], f"{spec} [1]"))
    if isinstance(value, Mapping):
        key = next((k for k in ANSWER_KEYS if isinstance(value.get(k), str)), None)
        if key is None:
            raise TypeError(
                f"{spec} returned a dict without a string answer under any of "
                f"{', '.join(ANSWER_KEYS)} (keys: {', '.join(sorted(map(str, value)))})"
            )
        docs_key = next((k for k in RETRIEVED_KEYS if _is_list(value.get(k))), None)
        retrieved = (
            None if docs_key is None else to_retrieved(value[docs_key], f"{spec}[{docs_key!r}]")
        )
        extra = value.get("metadata")
        metadata = dict(extra) if isinstance(extra, Mapping) else {}
        return Response(answer=value[key], retrieved=retrieved, metadata=metadata)
    raise TypeError(
        f"{spec} returned {type(value).__name__}; expected a str, a dict with an answer, an "
        "(answer, documents) pair or a ragleaklab_core.Response"
    )


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def to_retrieved(docs: Any, where: str) -> tuple[RetrievedDocument, ...]:
    """Turn a list of documents into :class:`RetrievedDocument` s, in order.

    Each item may be a ``RetrievedDocument``, a ``Document``, a string (an id), a mapping (id
    under ``doc_id``/``id``/``source``, text under ``text``/``page_content``/``content``, score
    under ``score``) or a LangChain-style document (``page_content`` and ``metadata``, the id in
    its metadata under ``doc_id``/``id``/``source``, or its ``id`` attribute).

    Raises:
        TypeError: An item has no id; the message gives its position.
    """
    if not isinstance(docs, Sequence) or isinstance(docs, str | bytes):
        raise TypeError(f"{where} is {type(docs).__name__}, not a list of documents")
    return tuple(_one(item, f"{where}[{i}]") for i, item in enumerate(docs))


def _one(item: Any, where: str) -> RetrievedDocument:
    if isinstance(item, RetrievedDocument):
        return item
    if isinstance(item, Document):
        return RetrievedDocument(doc_id=item.doc_id, text=item.text)
    if isinstance(item, str):
        return RetrievedDocument(doc_id=item)
    if isinstance(item, Mapping):
        meta = item.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        doc_id = _first(item, ID_KEYS) or _first(meta, ID_KEYS)
        text = _first(item, ("text", "page_content", "content"))
        score = _score(item, meta)
    else:
        meta = getattr(item, "metadata", None)
        meta = meta if isinstance(meta, Mapping) else {}
        doc_id = _first(meta, ID_KEYS) or _attr_id(item)
        text = getattr(item, "page_content", None)
        score = _score({}, meta)
    if doc_id is None:
        raise TypeError(
            f"{where} ({type(item).__name__}) has no document id: put it in metadata under "
            f"{', '.join(ID_KEYS)}"
        )
    return RetrievedDocument(
        doc_id=doc_id, text=text if isinstance(text, str) else None, score=score
    )


def _first(mapping: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _attr_id(item: Any) -> str | None:
    value = getattr(item, "id", None)
    return value if isinstance(value, str) and value else None


def _score(item: Mapping[str, Any], meta: Mapping[str, Any]) -> float | None:
    for source in (item, meta):
        for key in SCORE_KEYS:
            value: Any = source.get(key)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if number and math.isfinite(value):
                return float(value)
    return None
