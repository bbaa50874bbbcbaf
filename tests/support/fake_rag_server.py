"""A loopback HTTP server that plays a RAG service, with faults on demand.

It wraps a real :class:`ReferenceTarget`, so answers over HTTP can be compared with the same
target in-process, and it can add latency, fail with any status (with ``Retry-After``), drop a
connection without answering, or hang past the client's timeout. It only ever binds 127.0.0.1.

It is a small HTTP/1.1 server (keep-alive, ``Content-Length`` bodies) on an asyncio event loop
running in a background thread: latency and hangs are ``asyncio.sleep``, so many slow requests
in flight cost nothing, and no handler threads fight over the interpreter lock.

Endpoints:

- ``POST /rag`` ``{"query": q}`` and ``GET /rag?q=...``: the reference target's answer, nested:
  ``{"data": {"answer": ..., "sources": [{"id", "text", "score", "chunk"}, ...]}}``;
- ``POST /simple``: the same answer shaped as HttpTarget's defaults expect,
  ``{"answer": ..., "sources": [{"id", "text", "score"}, ...]}``;
- ``POST /chunked``: as ``/simple``, but every id is a chunk id, ``<doc_id>::chunk-<n>`` (a
  chunked index that never returns the ids it was given);
- ``/echo`` (any method): what the server parsed: method, JSON body, query parameters, headers;
- ``POST /debug``: a debug build that echoes its credentials: the ``/simple`` answer followed
  by every request header value (as sent), each source's text followed by the values
  percent-encoded, and a ``debug`` object with the values JSON-escaped;
- ``/leak...``: 401 with the request's headers in the body (a service that echoes credentials);
- ``/text``: 200 with a plain-text body;
- ``/set-cookie``: 200 with a ``Set-Cookie`` header (a client that keeps cookies sends it back);
- ``/stream``, ``/ndjson``, ``/stream-untyped``: the ``/simple`` answer streamed, as
  server-sent events (``text/event-stream``), as JSON lines (``application/x-ndjson``), and as
  server-sent events labelled ``text/plain``;
- ``POST /ingest`` ``{"documents": [...]}`` and ``POST /reset``: plant documents, forget them;
- ``POST /v1/chat/completions``: an OpenAI-compatible completion whose content is
  :attr:`FakeRagServer.completion` applied to the request (by default it quotes the prompt).

Use it as a context manager in tests, or run ``python -m tests.support.fake_rag_server`` from the
repository root: it prints its base URL and serves until its standard input closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
from collections import Counter
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from attrs import define, field
from ragleaklab_plugins.targets.reference import ReferenceTarget

from ragleaklab_core import Document, Response


@define
class Fault:
    """What the server does instead of answering one request.

    Attributes:
        kind: ``"status"`` (answer with ``status``), ``"drop"`` (close the connection without a
            response) or ``"hang"`` (wait ``seconds`` before answering normally).
        status: The status of a ``"status"`` fault.
        retry_after: The ``Retry-After`` header of a ``"status"`` fault, if any.
        seconds: How long a ``"hang"`` fault waits.
        path: Only requests to this path meet the fault (``None``: any request).
    """

    kind: str
    status: int = 500
    retry_after: str | None = None
    seconds: float = 0.0
    path: str | None = None


@define
class Seen:
    """A request as the server parsed it."""

    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    json: Any


def echo_prompt(request: dict[str, Any]) -> str:
    """The default completion: quotes the system and user messages it was sent."""
    parts = [f"[{m.get('role')}] {m.get('content')}" for m in request.get("messages", [])]
    return "You sent: " + " || ".join(parts)


@define
class FakeRagServer:
    """The server; start it with ``with FakeRagServer() as server:`` (or :meth:`start`).

    Attributes:
        target: The RAG system behind ``/rag``, ``/simple``, ``/ingest`` and ``/reset``.
        latency: Seconds added to every request before it is handled.
        completion: Makes the chat-completion content from the parsed request.
        chat_reply: When set, the whole chat-completion reply, verbatim (malformed replies).
        chat_stream: Reply to chat completions with server-sent ``chat.completion.chunk``
            events, whatever the request asked (a server that streams by default).
        hits: Requests received, per path (faulted ones included).
        seen: Every request, in arrival order.
        faults: Pending faults; each request takes the first one that applies to its path.
        ingested_batches: The number of documents in each ``/ingest`` request.
        resets: How many times ``/reset`` was called.
        connections: How many connections clients opened.
    """

    target: ReferenceTarget = field(factory=ReferenceTarget, repr=False)
    latency: float = 0.0
    completion: Callable[[dict[str, Any]], str] = field(default=echo_prompt, repr=False)
    chat_reply: Any = field(default=None, repr=False)
    chat_stream: bool = False
    hits: Counter[str] = field(factory=Counter)
    seen: list[Seen] = field(factory=list, repr=False)  # holds headers: kept out of test output
    faults: list[Fault] = field(factory=list)
    ingested_batches: list[int] = field(factory=list)
    resets: int = 0
    connections: int = 0
    _lock: threading.Lock = field(factory=threading.Lock, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _port: int = field(default=0, repr=False)

    # ---- life cycle ---------------------------------------------------------------------------

    def start(self) -> FakeRagServer:
        """Bind 127.0.0.1 on a free port and serve from an event loop on a background thread."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failed: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                server = loop.run_until_complete(
                    asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=512)
                )
            except BaseException as exc:  # reported by start(), in the caller's thread
                failed.append(exc)
                ready.set()
                loop.close()
                return
            self._port = server.sockets[0].getsockname()[1]
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(_shutdown(server))
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="fake-rag-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failed:
            raise failed[0]
        return self

    def stop(self) -> None:
        """Stop serving: open connections are closed and hanging requests abandoned."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop = self._thread = None

    def __enter__(self) -> FakeRagServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        assert self._loop is not None, "the server is not started"
        return f"http://127.0.0.1:{self._port}"

    def url(self, path: str = "/rag") -> str:
        """The URL of *path* on this server."""
        return self.base_url + path

    def clear(self) -> None:
        """Forget faults, counters, requests and documents (a fresh server, same port)."""
        with self._lock:
            self.faults.clear()
            self.hits.clear()
            self.seen.clear()
            self.ingested_batches.clear()
            self.resets = 0
            self.connections = 0
            self.latency = 0.0
            self.completion = echo_prompt
            self.chat_reply = None
            self.chat_stream = False
            self.target.close()

    # ---- faults -------------------------------------------------------------------------------

    def fail(
        self, n: int = 1, status: int = 500, retry_after: str | None = None, path: str | None = None
    ) -> None:
        """Answer the next *n* requests (to *path*) with *status*."""
        self._add(n, Fault("status", status=status, retry_after=retry_after, path=path))

    def drop(self, n: int = 1, path: str | None = None) -> None:
        """Close the connection of the next *n* requests without a response."""
        self._add(n, Fault("drop", path=path))

    def hang(self, n: int = 1, seconds: float = 5.0, path: str | None = None) -> None:
        """Make the next *n* requests wait *seconds* (past the client's timeout) first."""
        self._add(n, Fault("hang", seconds=seconds, path=path))

    def _add(self, n: int, fault: Fault) -> None:
        with self._lock:
            self.faults.extend([fault] * n)

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for i, fault in enumerate(self.faults):
                if fault.path is None or fault.path == path:
                    return self.faults.pop(i)
        return None

    # ---- the application ----------------------------------------------------------------------

    def _answer(self, query: str) -> Response:
        with self._lock:  # one bm25s query at a time
            return self.target.answer(query)

    def handle(self, seen: Seen) -> tuple[int, dict[str, str], Any]:
        """Route one parsed request to (status, extra headers, JSON body)."""
        route = (seen.method, seen.path)
        body = seen.json if isinstance(seen.json, dict) else {}
        if route == ("POST", "/rag") or route == ("GET", "/rag"):
            query = body.get("query") if seen.method == "POST" else seen.params.get("q")
            if not isinstance(query, str):
                return 400, {}, {"error": "no query"}
            response = self._answer(query)
            return 200, {}, {"data": {"answer": response.answer, "sources": _sources(response)}}
        if route == ("POST", "/simple"):
            response = self._answer(str(body.get("query", "")))
            return 200, {}, {"answer": response.answer, "sources": _sources(response)}
        if route == ("POST", "/chunked"):
            response = self._answer(str(body.get("query", "")))
            sources = _sources(response)
            for source in sources:
                source["id"] = f"{source['id']}::chunk-{str(source['chunk']).rpartition('#')[2]}"
            return 200, {}, {"answer": response.answer, "sources": sources}
        if route == ("POST", "/debug"):  # a debug build echoing what it was sent
            response = self._answer(str(body.get("query", "")))
            sent = [v for _, v in sorted(seen.headers.items())]
            sources = _sources(response)
            encoded = " ".join(quote(v, safe="") for v in sent)
            for source in sources:
                source["text"] = f"{source['text']} [auth: {encoded}]"
            return (
                200,
                {},
                {
                    "answer": f"{response.answer} [debug: {' | '.join(sent)}]",
                    "sources": sources,
                    "debug": json.dumps(sent),
                },
            )
        if seen.path == "/echo":
            return (
                200,
                {},
                {
                    "answer": "echo",
                    "method": seen.method,
                    "json": seen.json,
                    "params": seen.params,
                    "headers": seen.headers,
                },
            )
        if seen.path.startswith("/leak"):  # a careless service echoing credentials in errors
            sent = {k: v for k, v in seen.headers.items() if k in ("authorization", "x-api-key")}
            return 401, {}, {"error": "unauthorized", "you_sent": sent, "params": seen.params}
        if seen.path == "/text":
            return 200, {}, b"plain text, not JSON"
        if seen.path == "/set-cookie":
            return 200, {"Set-Cookie": "session=s3ss10n; Path=/"}, {"answer": "cookie set"}
        if seen.path in ("/stream", "/ndjson", "/stream-untyped"):
            response = self._answer(str(body.get("query", "")))
            events = [
                {"answer": word + " ", "sources": []} for word in response.answer.split()[:3]
            ] + [{"answer": "", "sources": _sources(response)}]
            if seen.path == "/ndjson":
                lines = "".join(json.dumps(e) + "\n" for e in events)
                return 200, {"Content-Type": "application/x-ndjson"}, lines.encode()
            sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            kind = "text/event-stream" if seen.path == "/stream" else "text/plain"
            return 200, {"Content-Type": kind}, sse.encode()
        if route == ("POST", "/ingest"):
            docs = [
                Document(d["doc_id"], d["text"], d.get("kind", "legit"), d.get("metadata", {}))
                for d in body.get("documents", [])
            ]
            with self._lock:
                self.target.ingest(docs)
                self.ingested_batches.append(len(docs))
            return 200, {}, {"ingested": len(docs)}
        if route == ("POST", "/reset"):
            with self._lock:
                self.target.close()
                self.resets += 1
            return 200, {}, {"reset": True}
        if route == ("POST", "/v1/chat/completions"):
            if self.chat_reply is not None:
                return 200, {}, self.chat_reply
            content = self.completion(body)
            if self.chat_stream:
                chunks = [
                    {"object": "chat.completion.chunk", "choices": [{"delta": {"content": w}}]}
                    for w in content.split(" ")
                ]
                sse = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                return 200, {"Content-Type": "text/event-stream"}, sse.encode()
            return (
                200,
                {},
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )
        return 404, {}, {"error": f"no route {seen.method} {seen.path}"}

    # ---- HTTP ---------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one keep-alive connection, request after request."""
        with self._lock:
            self.connections += 1
        try:
            while True:
                line = await reader.readline()
                if not line.strip():
                    break
                method, target, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (header := await reader.readline()).strip():
                    name, _, value = header.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(length) if length else b""
                if not await self._request(method, target, headers, raw, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass  # the client went away or sent garbage: drop the connection
        finally:
            writer.close()

    async def _request(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        raw: bytes,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Handle one request; False to close the connection without a response."""
        parts = urlsplit(target)
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = {"unparsed": raw.decode("utf-8", "replace")}
        seen = Seen(
            method=method,
            path=parts.path,
            params=dict(parse_qsl(parts.query, keep_blank_values=True)),
            headers=headers,
            json=parsed,
        )
        with self._lock:
            self.hits[seen.path] += 1
            self.seen.append(seen)
        if self.latency:
            await asyncio.sleep(self.latency)
        fault = self._take_fault(seen.path)
        if fault is not None and fault.kind == "drop":
            return False
        if fault is not None and fault.kind == "hang":
            await asyncio.sleep(fault.seconds)
        if fault is not None and fault.kind == "status":
            extra = {} if fault.retry_after is None else {"Retry-After": fault.retry_after}
            reply = (fault.status, extra, {"error": f"injected {fault.status}"})
        else:
            reply = self.handle(seen)
        writer.write(_encode(*reply))
        await writer.drain()
        return True


def _encode(status: int, headers: dict[str, str], body: Any) -> bytes:
    """A whole HTTP/1.1 response in one buffer (one write: no Nagle stall between parts)."""
    raw = isinstance(body, bytes)
    data = body if raw else json.dumps(body).encode("utf-8")
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    extra = dict(headers)
    content_type = extra.pop("Content-Type", "text/plain" if raw else "application/json")
    lines = [
        f"HTTP/1.1 {status} {reason}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(data)}",
        *(f"{name}: {value}" for name, value in extra.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data


async def _shutdown(server: asyncio.Server) -> None:
    server.close()
    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await server.wait_closed()
    for _ in range(3):  # let the closed transports release their sockets
        await asyncio.sleep(0)


def _sources(response: Response) -> list[dict[str, Any]]:
    return [
        {"id": r.doc_id, "text": r.text, "score": r.score, "chunk": r.chunk_id}
        for r in response.retrieved or ()
    ]


def main(argv: list[str] | None = None) -> int:
    """Serve until standard input closes; print the base URL first (for benchmarks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    args = parser.parse_args(argv)
    with FakeRagServer(latency=args.latency) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
