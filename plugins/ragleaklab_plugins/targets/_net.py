"""What the network targets share: secrets from the environment, redaction, and HTTP with retries.

- ``${NAME}`` references in option values are replaced by environment variables when a target is
  built; a missing (or empty) variable is an error naming it, never an empty string. Every value
  taken from the environment is a secret.
- Secrets never leave a target: exception messages, ``repr()``, ``Response.metadata`` and the
  options ragleaklab reports go through :class:`Secrets` / :func:`redact_url`.
- :class:`HttpCaller` sends one request with a timeout, retrying connection errors, timeouts, 429
  and 5xx with capped exponential backoff and full jitter (or the server's ``Retry-After``), and
  never retrying any other status. A request that still fails raises :class:`TargetRequestError`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import email.utils
import errno
import functools
import json
import logging
import os
import random
import re
import socket
import ssl
import threading
import urllib.request
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

import aiohttp
import certifi
import yarl
from attrs import define, field, frozen

# One rule for what is a secret, shared with the core (reports, recordings, logs).
from ragleaklab_core import (
    REDACTED,
    env_references,
    is_env_reference,
    is_secret_name,
    redact_forms,
    redact_url,
    register_secrets,
    secret_forms,
)

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: Statuses worth another attempt: rate limited, or a server-side failure.
RETRY_STATUSES = frozenset({429}) | frozenset(range(500, 600))


class MissingEnvironmentVariable(ValueError):
    """An option references ``${NAME}`` and the environment has no (or an empty) ``NAME``."""


#: Final statuses that mean the system itself was not reached: a gateway or proxy in front of it
#: answered that it is down (bad gateway, unavailable, gateway timeout).
GATEWAY_STATUSES = frozenset({502, 503, 504})


class TargetRequestError(RuntimeError):
    """A request to the system under test failed for good (after any retries).

    Attributes:
        method: The HTTP method.
        url: The URL with credentials redacted.
        attempts: How many times the request was sent.
        status: The last HTTP status, or ``None`` when no response came back.
        reason: What went wrong on the last attempt (secrets redacted).
        call: Which call of the target failed (``"ingest"``, ``"reset"``; ``""`` for a query),
            the first word of the message.
        transport_failure: True when the system could not be reached: no response came back
            (connection refused or dropped, a timeout) or the last status was 502, 503 or 504.
            False when the system answered with an error of its own (401, 404, 500...). The
            runner stops a pack after several transport failures in a row.
    """

    def __init__(
        self,
        method: str,
        url: str,
        attempts: int,
        status: int | None,
        reason: str,
        *,
        call: str = "",
    ) -> None:
        self.method = method
        self.url = url
        self.attempts = attempts
        self.status = status
        self.reason = reason
        self.call = call
        self.transport_failure = status is None or status in GATEWAY_STATUSES
        retried = "" if status is None or status in RETRY_STATUSES else " (not retried)"
        plural = "" if attempts == 1 else "s"
        prefix = f"{call} " if call else ""
        super().__init__(
            f"{prefix}{method} {url} failed after {attempts} attempt{plural}{retried}: {reason}"
        )


class TargetResponseError(ValueError):
    """The system under test answered, but not in the shape the target's options describe."""


def expand_env(
    text: str, *, where: str, environ: Mapping[str, str] | None = None
) -> tuple[str, tuple[str, ...]]:
    """Replace every ``${NAME}`` in *text* by the environment variable ``NAME``.

    Args:
        text: An option value.
        where: Which option holds it, for the error message (e.g. ``"headers.Authorization"``).
        environ: The environment (default ``os.environ``).

    Returns:
        The expanded text and the values substituted (secrets, to redact wherever text goes).

    Raises:
        MissingEnvironmentVariable: A referenced variable is unset or empty; the message names it
            and *where*, never a value.
    """
    env = os.environ if environ is None else environ
    used: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        value = env.get(name, "")
        if not value:
            state = "empty" if name in env else "not set"
            raise MissingEnvironmentVariable(
                f"environment variable {name} is {state} ({where} references ${{{name}}})"
            )
        used.append(value)
        return value

    return _ENV_REF.sub(substitute, text), tuple(used)


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials *url* carries literally (what :func:`redact_url` hides), raw and decoded."""
    if redact_url(url) == url:
        return ()
    try:
        parts = urlsplit(url)
    except ValueError:
        return (url,)  # cannot tell the parts apart: hide the whole thing
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, colon, password = userinfo.partition(":")
        found.append(password if colon else user)
    for pair in parts.query.split("&"):
        name, eq, value = pair.partition("=")
        if eq and value and is_secret_name(unquote(name)):
            found.append(value)
    return tuple(s for f in found if f for s in {f, unquote(f)} if not is_env_reference(s))


@frozen
class Secrets:
    """Values that must never leave the target; :meth:`redact` hides them in any text."""

    values: tuple[str, ...] = ()
    #: Their forms as written, JSON-escaped and percent-encoded, longest first.
    forms: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str]) -> Secrets:
        """Distinct non-empty values, longest first (a secret holding another is hidden whole).

        They are registered with the core too (:func:`ragleaklab_core.register_secrets`),
        so the CLI's log handler hides them in every line, whoever logs it (any library too).
        Here every value is hidden, however short: an error message names no ordinary words
        that a one-letter secret could be mistaken for, unlike a log line.
        """
        distinct = {v for v in values if v}
        register_secrets(distinct)
        return cls(tuple(sorted(distinct, key=lambda s: (-len(s), s))), secret_forms(distinct))

    def __add__(self, other: Secrets) -> Secrets:
        return Secrets.of((*self.values, *other.values))

    def redact(self, text: str) -> str:
        """*text* with every secret (also JSON-escaped or percent-encoded) replaced by ``***``,
        by the core's one rule (:func:`ragleaklab_core.redact_forms`)."""
        return redact_forms(text, self.forms)


@frozen
class RetryPolicy:
    """When and how long to wait before another attempt.

    Attributes:
        retries: Attempts after the first one (0: never retry).
        backoff: The first wait's upper bound, in seconds; it doubles with every attempt.
        max_wait: The cap on any single wait. A ``Retry-After`` longer than this ends the retries
            with an error instead of stalling the run.
    """

    retries: int = 3
    backoff: float = 0.5
    max_wait: float = 60.0

    def backoff_delay(self, retry: int, rng: random.Random) -> float:
        """Full jitter: uniform in [0, min(max_wait, backoff * 2**retry)], retry counting from 0."""
        return rng.uniform(0.0, min(self.max_wait, self.backoff * 2.0 ** min(retry, 62)))


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP-date.

    Returns ``None`` when the header is absent or unreadable; a date in the past gives 0.
    """
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@frozen
class Request:
    """One request as the caller sends it; ``url`` may hold secrets, ``shown_url`` does not."""

    method: str
    url: str
    shown_url: str
    headers: Mapping[str, str] = field(factory=dict)
    json: Any = None
    params: Mapping[str, str] | None = None
    #: Which call of the target this is, for error messages (``"ingest"``, ``"reset"``).
    call: str = ""


#: Content types of streamed replies: server-sent events and JSON lines.
STREAM_TYPES = frozenset(
    {
        "text/event-stream",
        "application/x-ndjson",
        "application/ndjson",
        "application/jsonl",
        "application/x-jsonlines",
        "application/jsonlines",
    }
)
_SSE_LINE = re.compile(r"^(?:data|event|id|retry):", re.MULTILINE)


@frozen
class Reply:
    """A successful (2xx) response."""

    status: int
    attempts: int
    text: str
    content_type: str = ""

    def json(self, secrets: Secrets, what: str) -> Any:
        """The body parsed as JSON, or :class:`TargetResponseError` saying what it was (a
        streamed reply is named as such, not reported as broken JSON)."""
        media = self.content_type.partition(";")[0].strip().lower()
        if media in STREAM_TYPES:
            raise TargetResponseError(self._stream_message(what, media))
        try:
            return json.loads(self.text)
        except ValueError:
            stream = _looks_streamed(self.text)
            if stream is not None:
                raise TargetResponseError(self._stream_message(what, stream)) from None
            raise TargetResponseError(
                f"{what} is not JSON: {snippet(self.text, secrets)!r}"
            ) from None

    @staticmethod
    def _stream_message(what: str, kind: str) -> str:
        return (
            f"{what} is a stream ({kind}); ragleaklab reads one JSON object: turn streaming off "
            'in the request (for example "stream": false in the body)'
        )


def _looks_streamed(text: str) -> str | None:
    """What kind of stream a body that is not one JSON value is, by its lines (no content type
    said so): server-sent events, or one JSON value per line; None for anything else."""
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and _SSE_LINE.match(lines[0]):
        return "text/event-stream"
    if len(lines) > 1:
        try:
            for line in lines:
                json.loads(line)
        except ValueError:
            return None
        return "JSON lines"
    return None


def snippet(text: str, secrets: Secrets, limit: int = 200) -> str:
    """The start of a response body for an error message, with secrets redacted."""
    text = secrets.redact(text)
    return text if len(text) <= limit else text[:limit] + "..."


@functools.lru_cache(maxsize=8)
def _ssl_context(verify: bool, cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The TLS settings: the certifi bundle, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set
    (what httpx, the client before aiohttp, used; aiohttp alone would use the system store).

    Loading a CA bundle takes tens of milliseconds; every caller made in this process with the
    same settings shares one context.
    """
    if not verify:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if cert_file:
        return ssl.create_default_context(cafile=cert_file)
    if cert_dir:
        return ssl.create_default_context(capath=cert_dir)
    return ssl.create_default_context(cafile=certifi.where())


#: Proxy URL schemes aiohttp can use (``socks5://`` and the like need a library it lacks).
PROXY_SCHEMES = frozenset({"http", "https"})


def env_proxy(url: str) -> str | None:
    """The proxy the environment sets for *url*, or None: as urllib (and httpx) read them,
    ``HTTP_PROXY`` / ``HTTPS_PROXY`` by the URL's scheme, else ``ALL_PROXY`` (lower case wins
    over upper case), unless ``NO_PROXY`` names the host; a proxy without a scheme is http://.

    Raises:
        ValueError: The proxy is not an http:// or https:// URL (credentials redacted).
    """
    proxies = urllib.request.getproxies()
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme.lower()) or proxies.get("all")
    if not proxy:
        return None
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    # Documented in urllib (NO_PROXY: '*', names, domain suffixes, host:port), not typeshed.
    if urllib.request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]
        return None
    if "://" not in proxy:
        proxy = "http://" + proxy
    if urlsplit(proxy).scheme.lower() not in PROXY_SCHEMES:
        raise ValueError(
            f"the proxy for {redact_url(url)} set in the environment, {redact_url(proxy)!r}, "
            "is not supported: use an http:// or https:// proxy"
        )
    return proxy


_JSON_TYPE = "application/json"


class _WriteTimeout(TimeoutError):
    """A block of the request body was not taken by the connection within the timeout."""


class _TimedBody(aiohttp.Payload):
    """A request body large enough to block on a full socket buffer, written in blocks that
    must each be sent within the timeout.

    aiohttp's timeouts cover connecting and reading, and its read timer starts only once the
    body is sent: without this a server that stops reading would stall the request for ever.
    A body no larger than one block never waits for the connection (aiohttp buffers it whole),
    so small requests, which are nearly all of them, go out as plain bytes. Bytes, so the same
    body is sent again on a retry.
    """

    BLOCK = 0x10000  # aiohttp waits for its buffer to drain past 64 KiB
    _autoclose = True  # nothing to release
    _value: bytes

    def __init__(self, value: bytes, timeout: float) -> None:
        super().__init__(value, content_type=_JSON_TYPE)
        self._size = len(value)
        self._timeout = timeout

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self._value.decode(encoding, errors)

    async def as_bytes(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return self._value

    async def write(self, writer: Any) -> None:
        await self.write_with_length(writer, None)

    async def write_with_length(self, writer: Any, content_length: int | None) -> None:
        data = memoryview(self._value)[:content_length]
        for start in range(0, len(data), self.BLOCK):
            try:
                async with asyncio.timeout(self._timeout):
                    await writer.write(data[start : start + self.BLOCK])
            except TimeoutError:
                # Drop what is still buffered: a graceful close would wait for the server to
                # read it, that is for ever, and leave the socket open.
                transport = getattr(writer, "transport", None)
                if transport is not None:
                    transport.abort()
                raise _WriteTimeout from None


#: How each transport failure is named in error messages (the names httpx gave them, so the
#: messages did not change with the client), whether it is a timeout, and whether another
#: attempt may cure it. The first matching class wins: subclasses come before their bases.
_FAILURES: tuple[tuple[type[BaseException], str, bool, bool], ...] = (
    (_WriteTimeout, "WriteTimeout", True, True),
    (aiohttp.ConnectionTimeoutError, "ConnectTimeout", True, True),
    (aiohttp.SocketTimeoutError, "ReadTimeout", True, True),
    (TimeoutError, "Timeout", True, True),
    (aiohttp.ClientHttpProxyError, "ProxyError", False, False),
    (aiohttp.ClientConnectorError, "ConnectError", False, True),
    (aiohttp.ServerDisconnectedError, "RemoteProtocolError", False, True),
    (aiohttp.ClientPayloadError, "RemoteProtocolError", False, True),
    (aiohttp.ClientResponseError, "RemoteProtocolError", False, True),  # an unreadable reply
    (aiohttp.ServerFingerprintMismatch, "ConnectError", False, False),
    (aiohttp.InvalidURL, "InvalidURL", False, False),
    (aiohttp.ClientConnectionError, "NetworkError", False, True),  # reset, broken pipe...
    (OSError, "NetworkError", False, True),
)
#: What the transport raises for a request that got no response.
TRANSPORT_ERRORS = (aiohttp.ClientError, OSError)


def _failure(exc: BaseException, timeout: float, secrets: Secrets) -> tuple[str, bool]:
    """Why an attempt got no response, for the error message, and whether to try again."""
    name, timed_out, retry = next(
        ((n, t, r) for kind, n, t, r in _FAILURES if isinstance(exc, kind)),
        (type(exc).__name__, False, False),
    )
    if timed_out:
        return f"timed out after {timeout:g} s ({name})", retry
    detail = secrets.redact(_connect_detail(exc) or str(exc)) or "no detail"
    return f"{name}: {detail}", retry


def _connect_detail(exc: BaseException) -> str | None:
    """Why a connection to a plain ``http://`` URL failed, in words about that URL: aiohttp says
    "Cannot connect to host h:80 ssl:default [...]" for every URL (``ssl:default`` is its pool's
    key, not a sign of TLS), which sends a user looking for a certificate problem that a plain
    HTTP service cannot have. None for anything else (an ``https://`` URL keeps aiohttp's TLS
    wording, a TLS error is about TLS)."""
    if not isinstance(exc, aiohttp.ClientConnectorError) or isinstance(exc, aiohttp.ClientSSLError):
        return None
    key = getattr(exc, "_conn_key", None)
    if key is None or getattr(key, "is_ssl", True):
        return None
    error = exc.os_error
    code = error.errno
    if not isinstance(error, socket.gaierror) and code is not None and code in errno.errorcode:
        cause = os.strerror(code)  # "Connection refused", not asyncio's "Connect call..."
    else:
        cause = exc.strerror or str(error) or type(error).__name__
    return f"cannot connect to {exc.host}:{exc.port} (plain HTTP): {cause}"


def _status_reason(status: int, phrase: str, text: str, secrets: Secrets) -> str:
    reason = f"HTTP {status} {phrase}".rstrip()
    if 300 <= status < 400:
        return f"{reason} (redirects are not followed; use the final URL)"
    body = snippet(text, secrets)
    return f"{reason}: {body}" if body else reason


def _decode(body: bytes, charset: str | None) -> str:
    """The body as text: its declared charset, else UTF-8; undecodable bytes replaced."""
    if charset:
        try:
            return body.decode(charset, "replace")
        except LookupError:
            pass
    return body.decode("utf-8", "replace")


def _json_bytes(value: Any) -> bytes:
    # Compact, UTF-8 and no NaN: the body httpx sent, so servers see the same bytes as before.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


#: Requests as they go out are logged here at INFO (``-v``), one line per attempt, in the form
#: httpx used: ``HTTP Request: POST https://host/path "HTTP/1.1 200 OK"`` (URL redacted).
_log = logging.getLogger("ragleaklab.http")


@define
class _Route:
    """Where a URL goes: the parsed URL and the proxy (from the environment) in between."""

    url: yarl.URL
    proxy: yarl.URL | None = None
    #: ``Proxy-Authorization`` from the proxy URL's credentials, if it has any: on the request
    #: itself for an http:// URL (the proxy forwards it), on the tunnel's CONNECT for https://
    #: (never inside the tunnel, where the system under test would see it).
    headers: dict[str, str] = field(factory=dict)
    proxy_headers: dict[str, str] | None = None


@define
class _Pool:
    """One aiohttp session (one pool of keep-alive connections) and the loop it belongs to."""

    loop: asyncio.AbstractEventLoop
    session: aiohttp.ClientSession


def _discard(pool: _Pool) -> None:
    """Let go of a session whose loop is not the running one, without leaking its sockets or
    aiohttp's "Unclosed client session" complaint."""
    if pool.session.closed:
        return
    if pool.loop.is_running():  # another thread's loop: close it there
        asyncio.run_coroutine_threadsafe(pool.session.close(), pool.loop)
        return
    connector = pool.session.connector
    if connector is not None:
        # A loop that is not running cannot await close(); the synchronous part closes every
        # transport (nothing at all once the loop is closed) and marks the session closed.
        with contextlib.suppress(Exception):
            connector._close()


class _Background:
    """An event loop on a daemon thread, where the synchronous calls run the async code, so
    both share one transport, one set of timeouts and one way of naming failures."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pool: _Pool | None = None
        self.thread = threading.Thread(target=self._run, name="ragleaklab-http", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def call(self, coro: Coroutine[Any, Any, Reply]) -> Reply:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # interrupted (Ctrl-C): stop the request too
            raise

    async def _close_pool(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            await pool.session.close()

    async def _close_and_stop(self) -> None:
        try:
            await self._close_pool()
        finally:
            self.loop.stop()

    def shutdown(self) -> None:
        """Close the session, stop the loop and end the thread (also run when the caller is
        garbage collected, and at exit)."""
        if not self.thread.is_alive():
            return
        if threading.current_thread() is self.thread:  # collected on the loop's own thread
            self.loop.create_task(self._close_and_stop())
            return
        with contextlib.suppress(Exception):  # the loop stopped meanwhile: nothing to close
            asyncio.run_coroutine_threadsafe(self._close_pool(), self.loop).result(10)
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@define
class HttpCaller:
    """HTTP with timeouts and retries, over one aiohttp session per event loop.

    Concurrent requests share a pool of at most ``max_connections`` keep-alive connections
    (aiohttp's ``TCPConnector``; its pool does constant work per request, where httpx's pool
    re-scanned every connection for every queued request, see docs/targets.md#performance).
    The session is bound to the event loop it was made in; a new loop gets a new one.
    Synchronous calls run the same code on a private event loop in a daemon thread.
    :meth:`aclose` (or :meth:`close`) releases them.

    Cookies a server sets are not kept: each request carries only the configured headers, so
    one case cannot change what the next one is answered.

    Attributes:
        policy: When to retry and how long to wait.
        timeout: Seconds for connecting (waiting for a free pooled connection included), for
            sending each 64 KiB of a body, and for each read of the response.
        verify_tls: Check the server's TLS certificate.
        max_connections: Most connections open at once (the run's concurrency should not exceed
            it, or requests queue for a connection within their timeout).
        secrets: What to redact from error messages.
    """

    policy: RetryPolicy
    timeout: float
    verify_tls: bool = True
    max_connections: int = 100
    secrets: Secrets = field(factory=Secrets, repr=False)
    _pool: _Pool | None = field(default=None, init=False, repr=False)
    # Each lets its pool go (closing what it can) if the caller is collected unclosed.
    _pool_finalizer: weakref.finalize | None = field(default=None, init=False, repr=False)
    _background: _Background | None = field(default=None, init=False, repr=False)
    _background_finalizer: weakref.finalize | None = field(default=None, init=False, repr=False)
    # Synchronous calls may come from several threads: they must start one loop, not several.
    _background_lock: threading.Lock = field(factory=threading.Lock, init=False, repr=False)
    # Parsed once per URL, with its proxy: yarl re-parses a string URL on every request.
    _routes: dict[str, _Route] = field(factory=dict, init=False, repr=False)
    _rng: random.Random = field(factory=random.Random, init=False, repr=False)
    # Injectable so tests can see the waits without waiting.
    _sleep: Callable[[float], Awaitable[None]] = field(
        default=asyncio.sleep, init=False, repr=False
    )

    def route(self, url: str) -> _Route:
        """Where *url* goes (cached); call it when a target is built to check its proxy.

        Raises:
            ValueError: The environment's proxy for *url* is not an http(s) URL.
        """
        found = self._routes.get(url)
        if found is None:
            proxy = env_proxy(url)
            found = _Route(yarl.URL(url))
            if proxy is not None:
                parsed = yarl.URL(proxy)
                found.proxy = parsed.with_user(None)
                hidden = list(url_secrets(proxy))
                if parsed.user is not None:
                    # Basic credentials in UTF-8, as httpx sent them (aiohttp's BasicAuth is
                    # deprecated and latin-1).
                    pair = f"{parsed.user}:{parsed.password or ''}".encode()
                    token = base64.b64encode(pair).decode("ascii")
                    auth = {"Proxy-Authorization": f"Basic {token}"}
                    if found.url.scheme == "https":
                        found.proxy_headers = auth
                    else:
                        found.headers = auth
                    hidden.append(token)
                self.secrets += Secrets.of(hidden)
            self._routes[url] = found
        return found

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        pool = self._pool
        if pool is not None and pool.loop is loop:
            return pool.session
        background = self._background
        if background is not None and background.loop is loop:
            if background.pool is None:
                background.pool = _Pool(loop, self._new_session())
            return background.pool.session
        old = self._release_pool()
        if old is not None:
            _discard(old)  # made in another (finished) loop: cannot be used here
        pool = self._pool = _Pool(loop, self._new_session())
        self._pool_finalizer = weakref.finalize(self, _discard, pool)
        return pool.session

    def _release_pool(self) -> _Pool | None:
        """Forget the async pool (the caller closes or discards it)."""
        pool, finalizer = self._pool, self._pool_finalizer
        self._pool = self._pool_finalizer = None
        if finalizer is not None:
            finalizer.detach()
        return pool

    def _new_session(self) -> aiohttp.ClientSession:
        env = os.environ
        connector = aiohttp.TCPConnector(
            limit=self.max_connections,
            limit_per_host=0,
            ssl=_ssl_context(self.verify_tls, env.get("SSL_CERT_FILE"), env.get("SSL_CERT_DIR")),
            # Shorter than the keep-alive of common servers (5 s for uvicorn), as httpx's was:
            # a connection the server closes while it is being reused fails the attempt.
            keepalive_timeout=4.0,
        )
        return aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=None,
                connect=self.timeout,
                sock_connect=self.timeout,
                sock_read=self.timeout,
            ),
            cookie_jar=aiohttp.DummyCookieJar(),
            # Proxies are read by route(), once per URL, not by aiohttp on every request.
            trust_env=False,
        )

    async def send(self, request: Request) -> Reply:
        """Send *request*, retrying as the policy says; raise :class:`TargetRequestError`."""
        session = self._session()
        route = self.route(request.url)
        headers = {**request.headers, **route.headers} if route.headers else request.headers
        data: Any = None
        if request.json is not None:
            raw = _json_bytes(request.json)
            data = raw if len(raw) <= _TimedBody.BLOCK else _TimedBody(raw, self.timeout)
            if not any(name.lower() == "content-type" for name in headers):
                headers = {**headers, "Content-Type": _JSON_TYPE}
        attempt = 0
        while True:
            attempt += 1
            try:
                async with session.request(
                    request.method,
                    route.url,
                    headers=headers or None,
                    data=data,
                    params=request.params,
                    allow_redirects=False,
                    proxy=route.proxy,
                    proxy_headers=route.proxy_headers,
                ) as response:
                    body = await response.read()
                    status = response.status
                    phrase = response.reason or ""
                    retry_after = response.headers.get("Retry-After")
                    content_type = response.headers.get("Content-Type", "")
                    charset = response.charset
            except TRANSPORT_ERRORS as exc:
                wait = self._after_failure(request, attempt, exc)
            else:
                if _log.isEnabledFor(logging.INFO):
                    _log.info(
                        'HTTP Request: %s %s "HTTP/1.1 %d %s"',
                        request.method,
                        request.shown_url,
                        status,
                        phrase,
                    )
                text = _decode(body, charset)
                if 200 <= status < 300:
                    return Reply(status, attempt, text, content_type)
                wait = self._after_status(request, attempt, status, phrase, text, retry_after)
            await self._sleep(wait)

    def send_sync(self, request: Request) -> Reply:
        """The synchronous form of :meth:`send` (run on the caller's private event loop)."""
        with self._background_lock:
            background = self._background
            if background is None:
                background = self._background = _Background()
                self._background_finalizer = weakref.finalize(self, background.shutdown)
        return background.call(self.send(request))

    def _after_failure(self, request: Request, attempt: int, exc: BaseException) -> float:
        """The wait before the next attempt after a transport failure, or raise."""
        reason, retry = _failure(exc, self.timeout, self.secrets)
        if not retry or attempt > self.policy.retries:
            raise TargetRequestError(
                request.method, request.shown_url, attempt, None, reason, call=request.call
            ) from None
        return self.policy.backoff_delay(attempt - 1, self._rng)

    def _after_status(
        self,
        request: Request,
        attempt: int,
        status: int,
        phrase: str,
        text: str,
        retry_after_header: str | None,
    ) -> float:
        """The wait before the next attempt after an unsuccessful status, or raise."""
        reason = _status_reason(status, phrase, text, self.secrets)
        fail = TargetRequestError(
            request.method, request.shown_url, attempt, status, reason, call=request.call
        )
        if status not in RETRY_STATUSES or attempt > self.policy.retries:
            raise fail
        retry_after = parse_retry_after(retry_after_header)
        if retry_after is None:
            return self.policy.backoff_delay(attempt - 1, self._rng)
        if retry_after > self.policy.max_wait:
            raise TargetRequestError(
                request.method,
                request.shown_url,
                attempt,
                status,
                f"{reason} (Retry-After {retry_after:g} s is more than max_wait "
                f"{self.policy.max_wait:g} s)",
                call=request.call,
            )
        return retry_after

    async def aclose(self) -> None:
        """Close every session (the async one in the running loop, or let it go if it
        belongs to another loop) and the synchronous path's loop."""
        pool = self._release_pool()
        if pool is not None:
            if pool.loop is asyncio.get_running_loop():
                await pool.session.close()
            else:
                _discard(pool)
        self.close()

    def close(self) -> None:
        """Close the synchronous path: its session, loop and thread (async sessions need
        :meth:`aclose`, in their loop)."""
        with self._background_lock:
            finalizer = self._background_finalizer
            self._background = self._background_finalizer = None
        if finalizer is not None:
            finalizer()


def hide_literal_secrets(
    values: Mapping[str, str], *, secret_names: Callable[[str], bool] = is_secret_name
) -> tuple[dict[str, str], Secrets]:
    """Split a table of header or parameter values into what may be shown and what is secret.

    A value whose name marks it as a credential (see :func:`is_secret_name`) and that references
    no ``${NAME}`` is written literally in the configuration: it is shown as ``***`` and redacted
    everywhere. Values built from ``${NAME}`` references are shown as written (the references
    are not secret; the values they expand to are).
    """
    shown: dict[str, str] = {}
    hidden: list[str] = []
    for name, value in values.items():
        if value and secret_names(name) and not env_references(value):
            shown[name] = REDACTED
            hidden.append(value)
        else:
            shown[name] = value
    return shown, Secrets.of(hidden)


def expand_table(values: Mapping[str, str], *, where: str) -> tuple[dict[str, str], Secrets]:
    """Expand ``${NAME}`` in every value of a table; the substituted values are secrets."""
    expanded: dict[str, str] = {}
    used: list[str] = []
    for name, value in values.items():
        expanded[name], found = expand_env(value, where=f"{where}.{name}")
        used.extend(found)
    return expanded, Secrets.of(used)


def checked_url(value: str, *, name: str) -> str:
    """Raise ``ValueError`` (with credentials redacted) unless *value* is an http(s) URL."""
    try:
        parts = urlsplit(value)
    except ValueError:
        raise ValueError(f"'{name}' is not a valid URL: {redact_url(value)!r}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"'{name}' must be an http:// or https:// URL with a host: {redact_url(value)!r}"
        )
    return value


@frozen
class Endpoint:
    """A URL option as it is requested (may hold secrets) and as it may be shown."""

    url: str
    shown: str

    @classmethod
    def build(cls, raw: str, *, name: str) -> tuple[Endpoint, Secrets]:
        """Expand ``${NAME}`` in the option *raw*, check it is http(s), and collect its secrets:
        the expanded values and any credentials written in the URL."""
        resolved, used = expand_env(raw, where=name)
        checked_url(resolved, name=name)
        secrets = Secrets.of((*used, *url_secrets(raw), *url_secrets(resolved)))
        return cls(resolved, secrets.redact(redact_url(resolved))), secrets


def chat_completions(
    base_url: str, headers: Mapping[str, str], api_key_env: str | None
) -> tuple[Endpoint, dict[str, str], dict[str, str], Secrets]:
    """The ``{base_url}/chat/completions`` endpoint of an OpenAI-compatible API, with the
    headers to send (``${NAME}`` expanded, the key read from *api_key_env* as a bearer token),
    the headers as shown (literal secrets hidden), and every secret they hold. What the
    openai-compatible target and judge both build."""
    endpoint, secrets = Endpoint.build(base_url.rstrip("/") + "/chat/completions", name="base_url")
    sent, found = expand_table(headers, where="headers")
    secrets += found
    shown, found = hide_literal_secrets(headers)
    secrets += found
    if api_key_env is not None:
        key, used = expand_env("${" + api_key_env + "}", where="api_key_env")
        sent["Authorization"] = f"Bearer {key}"
        secrets += Secrets.of(used)
    return endpoint, sent, shown, secrets
