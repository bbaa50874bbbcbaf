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
import email.utils
import functools
import json
import os
import random
import re
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
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
# Transport failures that another attempt may cure (the network, the server going away, time).
_RETRY_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


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
        so the CLI's log handler hides them in every line, whoever logs it (httpx included).
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


def _reply(response: httpx.Response, attempt: int) -> Reply:
    content_type = response.headers.get("content-type", "")
    return Reply(response.status_code, attempt, response.text, content_type)


def snippet(text: str, secrets: Secrets, limit: int = 200) -> str:
    """The start of a response body for an error message, with secrets redacted."""
    text = secrets.redact(text)
    return text if len(text) <= limit else text[:limit] + "..."


def _failure(exc: httpx.HTTPError, timeout: float, secrets: Secrets) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out after {timeout:g} s ({type(exc).__name__})"
    detail = secrets.redact(str(exc)) or "no detail"
    return f"{type(exc).__name__}: {detail}"


def _status_reason(response: httpx.Response, secrets: Secrets) -> str:
    reason = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    if 300 <= response.status_code < 400:
        return f"{reason} (redirects are not followed; use the final URL)"
    body = snippet(response.text, secrets)
    return f"{reason}: {body}" if body else reason


@functools.lru_cache(maxsize=8)
def _ssl_context(verify: bool, cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # Loading the CA bundle takes tens of milliseconds; every client made in this process with
    # the same settings (and the same SSL_CERT_* variables, which httpx reads) shares one context.
    del cert_file, cert_dir  # part of the cache key only
    return httpx.create_ssl_context(verify=verify)


#: Connections per async client ("lane"); see :class:`HttpCaller`.
LANE_CONNECTIONS = 4


@define
class _Lane:
    """One async client and how many requests it is serving right now."""

    client: httpx.AsyncClient
    capacity: int
    in_flight: int = 0


@define
class HttpCaller:
    """HTTP with timeouts and retries, over lazily made clients (sync and async).

    Concurrent requests share a pool of at most ``max_connections`` keep-alive connections.
    The async pool is split into lanes: small ``httpx.AsyncClient`` s of
    :data:`LANE_CONNECTIONS` connections each, opened as the concurrency needs them, and each
    attempt goes to the first lane with a free connection. One client with a large pool would
    do the same work, but httpcore re-scans every connection of its pool for every queued
    request (quadratic in the concurrency; httpx issue 3215), which at 64 requests in flight
    costs more CPU than the requests themselves. The lanes are bound to the event loop they
    were made in; a new loop gets new ones. :meth:`aclose` (or :meth:`close`) releases them.

    Attributes:
        policy: When to retry and how long to wait.
        timeout: Seconds for each of connect, read, write and waiting for a pooled connection.
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
    _lanes: list[_Lane] = field(factory=list, init=False, repr=False)
    _lanes_loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False)
    _sync_client: httpx.Client | None = field(default=None, init=False, repr=False)
    # Parsed once: httpx re-parses a string URL on every request, an httpx.URL it just copies.
    _urls: dict[str, httpx.URL] = field(factory=dict, init=False, repr=False)
    _rng: random.Random = field(factory=random.Random, init=False, repr=False)
    # Injectable so tests can see the waits without waiting.
    _sleep: Callable[[float], Awaitable[None]] = field(
        default=asyncio.sleep, init=False, repr=False
    )
    _sleep_sync: Callable[[float], None] = field(default=time.sleep, init=False, repr=False)

    def _options(self, connections: int) -> dict[str, Any]:
        env = os.environ
        return {
            "timeout": httpx.Timeout(self.timeout),
            "verify": _ssl_context(
                self.verify_tls, env.get("SSL_CERT_FILE"), env.get("SSL_CERT_DIR")
            ),
            "limits": httpx.Limits(
                max_connections=connections, max_keepalive_connections=connections
            ),
            "follow_redirects": False,
        }

    def _url(self, url: str) -> httpx.URL:
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = self._urls[url] = httpx.URL(url)
        return parsed

    def _lane(self) -> _Lane:
        """The lane for the next attempt: the first with a free connection, a new one while
        the pool allows, else the least busy."""
        loop = asyncio.get_running_loop()
        if self._lanes_loop is not loop:
            # Clients of another (finished) loop cannot be used or closed here; drop them.
            self._lanes, self._lanes_loop = [], loop
        for lane in self._lanes:
            if lane.in_flight < lane.capacity:
                return lane
        opened = sum(lane.capacity for lane in self._lanes)
        if opened < self.max_connections:
            size = min(LANE_CONNECTIONS, self.max_connections - opened)
            lane = _Lane(httpx.AsyncClient(**self._options(size)), size)
            self._lanes.append(lane)
            return lane
        return min(self._lanes, key=lambda lane: lane.in_flight)

    def _client_sync(self) -> httpx.Client:
        if self._sync_client is None:
            self._sync_client = httpx.Client(**self._options(self.max_connections))
        return self._sync_client

    async def send(self, request: Request) -> Reply:
        """Send *request*, retrying as the policy says; raise :class:`TargetRequestError`."""
        attempt = 0
        while True:
            attempt += 1
            lane = self._lane()
            lane.in_flight += 1
            try:
                response = await lane.client.request(
                    request.method,
                    self._url(request.url),
                    headers=request.headers or None,
                    json=request.json,
                    params=request.params,
                )
            except httpx.HTTPError as exc:
                wait = self._after_failure(request, attempt, exc)
            else:
                retry_wait = self._after_response(request, attempt, response)
                if retry_wait is None:
                    return _reply(response, attempt)
                wait = retry_wait
            finally:
                lane.in_flight -= 1
            await self._sleep(wait)

    def send_sync(self, request: Request) -> Reply:
        """The synchronous form of :meth:`send`."""
        client = self._client_sync()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = client.request(
                    request.method,
                    self._url(request.url),
                    headers=request.headers or None,
                    json=request.json,
                    params=request.params,
                )
            except httpx.HTTPError as exc:
                wait = self._after_failure(request, attempt, exc)
            else:
                retry_wait = self._after_response(request, attempt, response)
                if retry_wait is None:
                    return _reply(response, attempt)
                wait = retry_wait
            self._sleep_sync(wait)

    def _after_failure(self, request: Request, attempt: int, exc: httpx.HTTPError) -> float:
        """The wait before the next attempt after a transport failure, or raise."""
        reason = _failure(exc, self.timeout, self.secrets)
        if not isinstance(exc, _RETRY_ERRORS) or attempt > self.policy.retries:
            raise TargetRequestError(
                request.method, request.shown_url, attempt, None, reason, call=request.call
            ) from None
        return self.policy.backoff_delay(attempt - 1, self._rng)

    def _after_response(
        self, request: Request, attempt: int, response: httpx.Response
    ) -> float | None:
        """None for a success; else the wait before the next attempt, or raise."""
        status = response.status_code
        if 200 <= status < 300:
            return None
        reason = _status_reason(response, self.secrets)
        fail = TargetRequestError(
            request.method, request.shown_url, attempt, status, reason, call=request.call
        )
        if status not in RETRY_STATUSES or attempt > self.policy.retries:
            raise fail
        retry_after = parse_retry_after(response.headers.get("retry-after"))
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
        """Close every client (the async ones only if they belong to the running loop)."""
        lanes, self._lanes = self._lanes, []
        if self._lanes_loop is asyncio.get_running_loop():
            for lane in lanes:
                await lane.client.aclose()
        self._lanes_loop = None
        self.close()

    def close(self) -> None:
        """Close the synchronous client (async clients need :meth:`aclose`, in their loop)."""
        client, self._sync_client = self._sync_client, None
        if client is not None:
            client.close()


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
