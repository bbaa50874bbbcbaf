"""The network targets' transport (aiohttp) against loopback servers: the connection pool, every
timeout (connect, a free connection, writing, reading), proxies from the environment, cookies,
the synchronous path's own event loop, and the request log line."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import logging
import socket
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from ragleaklab_plugins.targets._net import (
    HttpCaller,
    Request,
    RetryPolicy,
    TargetRequestError,
    _decode,
)
from ragleaklab_plugins.targets.http import HttpTarget
from ragleaklab_plugins.targets.openai_compatible import OpenAICompatibleTarget

from ragleaklab_core import Document
from ragleaklab_core.run.runner import is_transport_failure
from tests.support.fake_rag_server import FakeRagServer

SENTINEL = "pr0xy-SENTINEL-4d2e"
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch):
    """Each test sets the proxies it wants; none comes from the machine's environment."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


class Waits:
    """Stands in for asyncio.sleep: records the waits, waits for nothing."""

    def __init__(self) -> None:
        self.seen: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seen.append(seconds)


def caller(timeout: float = 5.0, retries: int = 0, **options: Any) -> HttpCaller:
    return HttpCaller(RetryPolicy(retries, 0.001), timeout, **options)


def post(url: str, body: Any = None, **options: Any) -> Request:
    return Request("POST", url, url, json={"query": "q"} if body is None else body, **options)


async def send_and_close(http: HttpCaller, request: Request) -> Any:
    try:
        async with asyncio.timeout(30):  # a timeout that does not work fails, never hangs
            return await http.send(request)
    finally:
        await http.aclose()


def failure(http: HttpCaller, request: Request) -> TargetRequestError:
    with pytest.raises(TargetRequestError) as info:
        asyncio.run(send_and_close(http, request))
    return info.value


# ---- the pool ----------------------------------------------------------------------------------


def test_concurrent_requests_share_at_most_max_connections(server):
    server.latency = 0.05  # every request is still in flight when the next ones start
    http = caller(max_connections=3)

    async def go() -> list[Any]:
        try:
            sends = [http.send(post(server.url("/simple"))) for _ in range(12)]
            return await asyncio.gather(*sends)
        finally:
            await http.aclose()

    replies = asyncio.run(go())
    assert [r.status for r in replies] == [200] * 12
    assert server.hits["/simple"] == 12
    assert server.connections == 3  # opened up to the limit, then reused


def test_one_pool_serves_sequential_requests_on_one_connection(server):
    target = HttpTarget(url=server.url("/simple"))

    async def go() -> None:
        try:
            for q in ("a", "b", "c", "d"):
                await target.aanswer(q)
        finally:
            await target.aclose()

    asyncio.run(go())
    assert server.hits["/simple"] == 4 and server.connections == 1


# ---- timeouts ----------------------------------------------------------------------------------


@contextlib.contextmanager
def full_backlog() -> Iterator[str]:
    """A listening socket that never accepts, its queue already full: Linux drops further
    connection attempts, so connecting hangs until the client gives up."""
    listener = socket.socket()
    fillers: list[socket.socket] = []
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        for _ in range(3):
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
            fillers.append(filler)
        yield f"http://127.0.0.1:{port}/simple"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


@pytest.mark.skipif(sys.platform != "linux", reason="relies on Linux dropping SYNs to a full queue")
def test_a_connection_that_never_completes_times_out_and_is_retried():
    with full_backlog() as url:
        http = caller(timeout=0.2, retries=1)
        waits = Waits()
        http._sleep = waits
        error = failure(http, post(url))
    assert error.attempts == 2 and len(waits.seen) == 1
    assert error.reason == "timed out after 0.2 s (ConnectTimeout)"
    assert error.status is None and is_transport_failure(error) is True


def test_waiting_for_a_free_connection_is_bounded_by_the_timeout(server):
    # One connection, three requests, each answered after 0.5 s: the second waits 0.5 s for
    # the connection (less than the timeout), the third would wait 1.0 s and gives up at 0.8.
    server.hang(3, seconds=0.5)
    http = caller(timeout=0.8, max_connections=1)

    async def go() -> list[Any]:
        try:
            sends = [http.send(post(server.url("/simple"))) for _ in range(3)]
            return await asyncio.gather(*sends, return_exceptions=True)
        finally:
            await http.aclose()

    first, second, third = asyncio.run(go())
    assert (first.status, second.status) == (200, 200)
    assert isinstance(third, TargetRequestError)
    assert third.reason == "timed out after 0.8 s (ConnectTimeout)"
    assert third.transport_failure is True
    assert server.hits["/simple"] == 2 and server.connections == 1


@contextlib.contextmanager
def deaf_server() -> Iterator[str]:
    """Accepts connections and never reads from them."""
    listener = socket.socket()
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                accepted.append(listener.accept()[0])

    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/ingest"
    finally:
        stop.set()
        thread.join()
        for sock in accepted:
            sock.close()
        listener.close()


def test_a_server_that_stops_reading_a_large_body_times_out_writing():
    # Larger than any loopback socket buffers, so the write must wait for the server.
    body = {"documents": [{"doc_id": "big", "text": "x" * 64_000_000}]}
    with deaf_server() as url:
        error = failure(caller(timeout=0.3), post(url, body))
    assert error.reason == "timed out after 0.3 s (WriteTimeout)"
    assert error.transport_failure is True


def test_a_small_body_to_a_server_that_never_answers_times_out_reading():
    with deaf_server() as url:
        error = failure(caller(timeout=0.2), post(url))
    assert error.reason == "timed out after 0.2 s (ReadTimeout)"


def test_a_large_body_is_sent_whole_and_again_on_a_retry(server):
    docs = [Document(f"d{i}", f"document {i} " + "word " * 200) for i in range(120)]
    server.fail(1, 500, path="/ingest")
    target = HttpTarget(
        url=server.url("/simple"),
        ingest_url=server.url("/ingest"),
        ingest_batch_size=len(docs),
        backoff=0.001,
    )

    async def go() -> None:
        try:
            await target.aingest(docs)
        finally:
            await target.aclose()

    asyncio.run(go())
    sent = [s.json for s in server.seen if s.path == "/ingest"]
    assert len(sent) == 2 and sent[0] == sent[1]  # the body was bigger than one 64 KiB block
    assert sent[1]["documents"] == [{"doc_id": d.doc_id, "text": d.text} for d in docs]
    assert server.ingested_batches == [len(docs)]


# ---- Retry-After and the synchronous path -------------------------------------------------------


def test_the_sync_path_honours_retry_after_through_the_same_code(server):
    server.fail(1, 429, retry_after="3")
    server.fail(1, 503, retry_after=format_datetime(datetime.now(UTC) - timedelta(minutes=5)))
    target = HttpTarget(url=server.url("/simple"), backoff=100.0, max_wait=10.0)
    waits = Waits()
    target._caller._sleep = waits
    try:
        response = target.answer("q")
    finally:
        target.close()
    assert response.metadata == {"status": 200, "attempts": 3}
    assert waits.seen == [3.0, 0.0]


def http_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ragleaklab-http"]


def test_the_sync_path_keeps_one_connection_and_close_ends_its_thread(server):
    before = len(http_threads())
    target = HttpTarget(url=server.url("/simple"))
    for q in ("a", "b", "c"):
        target.answer(q)
    assert len(http_threads()) == before + 1 and server.connections == 1
    target.close()
    assert len(http_threads()) == before
    target.answer("again")  # usable after close: a new loop, a new connection
    assert server.connections == 2
    del target
    gc.collect()  # a target dropped without close() ends its thread too
    assert len(http_threads()) == before


def test_sync_calls_from_many_threads_share_one_loop_and_pool(server):
    server.latency = 0.05
    before = len(http_threads())
    target = HttpTarget(url=server.url("/simple"), max_connections=4)
    try:
        with ThreadPoolExecutor(8) as pool:
            responses = list(pool.map(target.answer, [f"q{i}" for i in range(16)]))
        assert len(http_threads()) == before + 1
    finally:
        target.close()
    assert [r.metadata["status"] for r in responses] == [200] * 16
    assert server.connections <= 4  # one pool, whichever thread asked


def test_sync_and_async_calls_of_one_target_each_use_their_own_loop(server):
    target = HttpTarget(url=server.url("/simple"))

    async def go() -> str:
        try:
            return (await target.aanswer("vault")).answer
        finally:
            await target.aclose()

    try:
        assert target.answer("vault").answer == asyncio.run(go())
        assert asyncio.run(go()) == target.answer("vault").answer  # a new loop after aclose
    finally:
        target.close()


# ---- what a server sees -----------------------------------------------------------------------


def test_cookies_a_server_sets_are_never_sent_back(server, monkeypatch):
    # Through the fake server as a proxy, so the cookie comes from a host name: a cookie jar
    # would keep it (cookies from an IP address are refused anyway).
    monkeypatch.setenv("HTTP_PROXY", server.base_url)
    http = caller()

    async def go() -> None:
        try:
            await http.send(post("http://rag.invalid/set-cookie"))
            await http.send(post("http://rag.invalid/echo"))
        finally:
            await http.aclose()

    asyncio.run(go())
    assert [s.path for s in server.seen] == ["/set-cookie", "/echo"]
    assert "cookie" not in server.seen[-1].headers


def test_the_body_is_compact_utf8_json_and_a_content_type_given_wins(server):
    http = caller()
    query = 'naïve ½ \u2028 "quoted"'

    async def go() -> None:
        try:
            await http.send(post(server.url("/echo"), {"query": query}))
            headers = {"Content-Type": "application/vnd.api+json"}
            await http.send(post(server.url("/echo"), {"query": query}, headers=headers))
        finally:
            await http.aclose()

    asyncio.run(go())
    plain, custom = server.seen
    assert plain.json == {"query": query} and custom.json == {"query": query}
    assert plain.headers["content-type"] == "application/json"
    assert custom.headers["content-type"] == "application/vnd.api+json"
    # No spaces and no \u escapes: "na\u00efve" would be 5 bytes longer than "naïve".
    compact = '{"query":"naïve ½ \u2028 \\"quoted\\""}'
    assert int(plain.headers["content-length"]) == len(compact.encode())


def test_response_text_uses_the_declared_charset_and_never_fails_to_decode():
    assert _decode("café".encode("latin-1"), "latin-1") == "café"
    assert _decode("café".encode(), None) == "café"
    assert _decode(b"caf\xe9", None) == "caf\ufffd"  # not UTF-8: replaced, not an error
    assert _decode("café".encode(), "no-such-charset") == "café"


# ---- proxies from the environment ---------------------------------------------------------------


def test_an_http_proxy_from_the_environment_carries_the_request(server, monkeypatch):
    # The fake server plays the proxy: it is sent the absolute URL and the original Host.
    host = server.base_url.removeprefix("http://")
    monkeypatch.setenv("HTTP_PROXY", f"http://ragleaklab:{SENTINEL}@{host}")
    target = HttpTarget(url="http://rag.invalid/simple", backoff=0.001)
    try:
        response = target.answer("what is the vault code")
    finally:
        target.close()
    assert response.metadata["status"] == 200
    (seen,) = server.seen
    assert seen.path == "/simple" and seen.headers["host"] == "rag.invalid"
    credentials = base64.b64encode(f"ragleaklab:{SENTINEL}".encode()).decode()
    assert seen.headers["proxy-authorization"] == f"Basic {credentials}"


def test_no_proxy_bypasses_the_proxy(server, monkeypatch):
    with FakeRagServer() as gone:
        dead_proxy = gone.base_url
    monkeypatch.setenv("ALL_PROXY", dead_proxy)
    through = HttpTarget(url=server.url("/simple"), retries=0)
    with pytest.raises(TargetRequestError) as info:
        through.answer("q")
    through.close()
    assert "ConnectError" in info.value.reason and info.value.transport_failure is True
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    direct = HttpTarget(url=server.url("/simple"), retries=0)
    try:
        assert direct.answer("q").metadata["status"] == 200
    finally:
        direct.close()


def test_proxy_credentials_never_show_in_errors(server, monkeypatch):
    host = server.base_url.removeprefix("http://")
    monkeypatch.setenv("HTTP_PROXY", f"http://ragleaklab:{SENTINEL}@{host}")
    server.fail(1, 401)
    target = HttpTarget(url="http://rag.invalid/leak", retries=0)
    with pytest.raises(TargetRequestError) as info:
        target.answer("q")
    target.close()
    assert "HTTP 401" in str(info.value) and SENTINEL not in str(info.value)


@pytest.mark.parametrize("target", [HttpTarget, OpenAICompatibleTarget])
def test_a_proxy_aiohttp_cannot_use_is_refused_when_the_target_is_built(monkeypatch, target):
    monkeypatch.setenv("ALL_PROXY", f"socks5://ragleaklab:{SENTINEL}@127.0.0.1:1080")
    options = {"url": "https://rag.example/ask"} if target is HttpTarget else {"model": "m"}
    with pytest.raises(ValueError, match=r"is not supported: use an http:// or https:// proxy"):
        target(**options)
    with pytest.raises(ValueError) as info:
        target(**options)
    assert SENTINEL not in str(info.value) and "socks5://ragleaklab:***@127.0.0.1:1080" in str(
        info.value
    )


# ---- the request log ----------------------------------------------------------------------------


def test_each_attempt_is_logged_at_info_with_the_url_redacted(server, monkeypatch, caplog):
    monkeypatch.setenv("RAG_KEY", SENTINEL)
    server.fail(1, 503)
    target = HttpTarget(url=server.url("/simple") + "?api_key=${RAG_KEY}", backoff=0.001)
    with caplog.at_level(logging.INFO, logger="ragleaklab.http"):
        try:
            target.answer("q")
        finally:
            target.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "ragleaklab.http"]
    url = server.url("/simple") + "?api_key=***"
    assert lines == [
        f'HTTP Request: POST {url} "HTTP/1.1 503 Service Unavailable"',
        f'HTTP Request: POST {url} "HTTP/1.1 200 OK"',
    ]
    assert server.seen[-1].params == {"api_key": SENTINEL}  # sent, never shown
