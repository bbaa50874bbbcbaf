"""HttpTarget: a RAG system behind a JSON-over-HTTP endpoint (``ragleaklab.targets:http``).

The query goes into a JSON body template (or query parameters); the answer, the retrieved
document ids, texts and scores come out of the JSON response by paths such as
``data.sources[*].id``. Optional ingest and reset endpoints plant the pack's documents and remove
them. See docs/targets.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import attrs
from attrs import define, field
from attrs import validators as v

from ragleaklab_core import Document, Response, RetrievedDocument
from ragleaklab_plugins._access import parse_access
from ragleaklab_plugins.targets._ids import IdPattern, check_id_pattern
from ragleaklab_plugins.targets._net import (
    Endpoint,
    HttpCaller,
    Reply,
    Request,
    RetryPolicy,
    Secrets,
    TargetRequestError,
    TargetResponseError,
    checked_url,
    expand_table,
    hide_literal_secrets,
    redact_url,
)
from ragleaklab_plugins.targets._paths import JsonPath, PathMismatch, check_path
from ragleaklab_plugins.targets._template import (
    PRINCIPAL,
    check_json_value,
    expand_template_env,
    mentions,
    mentions_query,
    render,
)
from ragleaklab_plugins.targets._template import hide_literal_secrets as hide_body_secrets

__all__ = ["HttpTarget", "TargetRequestError", "TargetResponseError", "redact_url"]

_METHOD = re.compile(r"[A-Z]+")


def _url(instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None:
        checked_url(value, name=attribute.name)


def _method(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    if not _METHOD.fullmatch(value):
        raise ValueError(f"'{attribute.name}' must be an HTTP method such as POST: {value!r}")


def _path(single: bool = False) -> Any:
    def check(instance: Any, attribute: attrs.Attribute[str | None], value: str | None) -> None:
        check_path(value, name=attribute.name, single=single)

    return check


def _json_value(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_json_value(value, where=attribute.name)


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


def _number(minimum: float, *, strict: bool = False) -> list[Any]:
    bound = v.gt(minimum) if strict else v.ge(minimum)
    return [v.instance_of(float | int), bound]


@define
class HttpTarget:
    """A RAG system behind an HTTP endpoint that takes a query and returns JSON.

    Values of ``url``, ``headers``, ``params`` and string values of ``body`` may reference
    environment variables as ``${NAME}``; they are expanded when the target is built, and a
    missing variable is an error naming it. Expanded values, credentials written literally in a
    URL (``user:pass@``, ``?token=...``) and literal values of headers, parameters or body keys
    named like credentials are secrets: they are redacted from every error message, from
    ``repr()`` and from the options ragleaklab reports (the public fields show ``***`` in their
    place; the working values live in private fields).

    Attributes:
        url: The query endpoint, http:// or https:// only.
        method: The HTTP method (upper-cased). ``GET`` sends no body: put ``{query}`` in
            ``params``.
        headers: Extra request headers; ``{principal}`` in a value is replaced by the case's
            principal (``{"X-User": "{principal}"}``).
        body: The JSON body; every string value holding ``{query}`` gets the query inserted
            (``None``: no body), and ``{principal}`` the case's principal.
        params: URL query parameters, with ``{query}`` and ``{principal}`` inserted the same
            way. A case with a principal is errored when no header, body or parameter holds
            ``{principal}`` (it would be asked anonymously). A case without one is asked
            anonymously: every header, parameter and body value that holds ``{principal}``
            (``"user:{principal}"`` too) is left out of the request, never sent empty or cut,
            so one configuration serves packs with and without principals. Ingest and reset
            are asked as nobody: they leave out such headers too.
        answer_path: Where the answer string is in the response (one value, no ``[*]``).
        doc_ids_path: Where the retrieved document ids are, in rank order (``None``, or a path
            the response does not have: the target reports no retrieval, and retrieval metrics
            call the case unscorable).
        doc_texts_path: Where the retrieved texts are (one per id), or ``None``.
        doc_scores_path: Where the retrieval scores are (one per id), or ``None``.
        doc_id_pattern: A regular expression with a named group ``doc_id``, searched in every
            returned id (``^(?P<doc_id>.+?)::chunk-\\d+$``): the group is the pack's document id
            and the whole returned id is kept as the chunk id; an id it does not match is kept
            as it is (the runner's wiring check then counts it as unknown). ``None``: the ids
            are the pack's ``doc_id`` s as they are.
        ingest_url: Where to POST the pack's documents before the cases run, as
            ``{"documents": [{"doc_id": ..., "text": ...}, ...]}`` in batches; ``None``: the
            system is expected to hold them already. Only the id, the text and a document's
            ``metadata["access"]`` (``"access": {"owner": ..., "groups": [...]}``, only when
            it has one) are sent: the rest of its ``kind`` and ``metadata`` are the pack's
            ground truth (which document is poison, the claim it plants, the sentinel it
            hides) and must never reach the system under test.
        ingest_batch_size: Documents per ingest request.
        reset_url: Called (with ``reset_method``, no body) when the pack is done, to remove what
            ingest planted; ``None``: nothing is called, and a target with an ``ingest_url``
            has ``isolation = "shared"`` (several ingesting packs are refused unless the run
            allows shared state).
        reset_method: The HTTP method of the reset call.
        timeout: Seconds for connecting, for sending, for each read and for a free connection.
        retries: Attempts after the first for connection errors, timeouts, 429 and 5xx.
        backoff: Upper bound of the first wait between attempts, doubled after each one (full
            jitter: the wait is uniform between 0 and the bound); a ``Retry-After`` header wins.
        max_wait: Longest single wait; a longer ``Retry-After`` ends the retries with an error.
        verify_tls: Check the server's TLS certificate.
        max_connections: Most connections open at once (keep it >= the run's concurrency).
    """

    url: str = field(default="http://127.0.0.1:8000/query", validator=_url)
    method: str = field(default="POST", converter=_upper, validator=_method)
    headers: dict[str, str] = field(factory=dict)
    body: dict[str, Any] | None = field(factory=lambda: {"query": "{query}"}, validator=_json_value)
    params: dict[str, str] = field(factory=dict)
    answer_path: str = field(default="answer", validator=_path(single=True))
    doc_ids_path: str | None = field(default="sources[*].id", validator=_path())
    doc_texts_path: str | None = field(default=None, validator=_path())
    doc_scores_path: str | None = field(default=None, validator=_path())
    doc_id_pattern: str | None = field(default=None, validator=check_id_pattern)
    ingest_url: str | None = field(default=None, validator=_url)
    ingest_batch_size: int = field(default=100, validator=[v.instance_of(int), v.ge(1)])
    reset_url: str | None = field(default=None, validator=_url)
    reset_method: str = field(default="POST", converter=_upper, validator=_method)
    timeout: float = field(default=30.0, validator=_number(0, strict=True))
    retries: int = field(default=3, validator=[v.instance_of(int), v.ge(0)])
    backoff: float = field(default=0.5, validator=_number(0))
    max_wait: float = field(default=60.0, validator=_number(0))
    verify_tls: bool = field(default=True, validator=v.instance_of(bool))
    max_connections: int = field(default=100, validator=[v.instance_of(int), v.ge(1)])

    #: The documents land in the system behind the URL, which every process reaches: with
    #: ``--executor ray`` the driver ingests and resets once, and workers only ask.
    ingest_scope: ClassVar[str] = "system"

    _endpoint: Endpoint = field(init=False, repr=False)
    _ingest: Endpoint | None = field(default=None, init=False, repr=False)
    _reset: Endpoint | None = field(default=None, init=False, repr=False)
    _headers: dict[str, str] = field(factory=dict, init=False, repr=False)
    _params: dict[str, str] = field(factory=dict, init=False, repr=False)
    _body: Any = field(default=None, init=False, repr=False)
    _secrets: Secrets = field(factory=Secrets, init=False, repr=False)
    _caller: HttpCaller = field(init=False, repr=False)
    _answer: JsonPath = field(init=False, repr=False)
    _ids: JsonPath | None = field(default=None, init=False, repr=False)
    _texts: JsonPath | None = field(default=None, init=False, repr=False)
    _scores: JsonPath | None = field(default=None, init=False, repr=False)
    _id_pattern: IdPattern | None = field(default=None, init=False, repr=False)
    # Sent to ingest_url (by this instance), and not yet followed by a reset that succeeded.
    _ingested: bool = field(default=False, init=False, repr=False)
    _unreset: bool = field(default=False, init=False, repr=False)
    _sends_principal: bool = field(default=False, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        sends_body = self.method != "GET" and self.body is not None
        if not (mentions_query(self.params) or (sends_body and mentions_query(self.body))):
            where = "params" if self.method == "GET" else "body or params"
            raise ValueError(
                f'the query is never sent: put "{{query}}" in a value of {where}'
                + (" (GET sends no body)" if self.method == "GET" else "")
            )
        secrets = Secrets()
        self._endpoint, found = Endpoint.build(self.url, name="url")
        secrets += found
        if self.ingest_url is not None:
            self._ingest, found = Endpoint.build(self.ingest_url, name="ingest_url")
            secrets += found
        if self.reset_url is not None:
            self._reset, found = Endpoint.build(self.reset_url, name="reset_url")
            secrets += found
        self._headers, found = expand_table(self.headers, where="headers")
        secrets += found
        self._params, found = expand_table(self.params, where="params")
        secrets += found
        self._body, found = expand_template_env(self.body, where="body")
        secrets += found
        self._sends_principal = any(
            mentions(template, PRINCIPAL)
            for template in (self._headers, self._params, self._body if sends_body else None)
        )
        # Credentials written literally in the options: keep them working, show them as ***.
        headers, found = hide_literal_secrets(self.headers)
        secrets += found
        params, found = hide_literal_secrets(self.params)
        secrets += found
        body, found = hide_body_secrets(self.body)
        secrets += found
        self._secrets = secrets
        self.url = redact_url(self.url)
        self.ingest_url = None if self.ingest_url is None else redact_url(self.ingest_url)
        self.reset_url = None if self.reset_url is None else redact_url(self.reset_url)
        self.headers, self.params, self.body = headers, params, body
        self._answer = JsonPath.parse(self.answer_path)
        self._ids = None if self.doc_ids_path is None else JsonPath.parse(self.doc_ids_path)
        self._texts = None if self.doc_texts_path is None else JsonPath.parse(self.doc_texts_path)
        self._scores = (
            None if self.doc_scores_path is None else JsonPath.parse(self.doc_scores_path)
        )
        if self.doc_id_pattern is not None:
            self._id_pattern = IdPattern.compile(self.doc_id_pattern)
        self._caller = HttpCaller(
            RetryPolicy(self.retries, float(self.backoff), float(self.max_wait)),
            float(self.timeout),
            verify_tls=self.verify_tls,
            max_connections=self.max_connections,
            secrets=secrets,
        )
        # An unusable proxy in the environment is an error now, not at the first request.
        for endpoint in (self._endpoint, self._ingest, self._reset):
            if endpoint is not None:
                self._caller.route(endpoint.url)
        self._secrets = self._caller.secrets  # with the proxies' credentials

    # ---- requests ---------------------------------------------------------------------------

    @property
    def carries_principal(self) -> bool:
        """Whether a template sends the principal: read by the runner, which refuses a pack
        asking as a principal before anything is ingested when none does. It says nothing
        about cases without a principal: those are asked anonymously either way, the values
        holding ``{principal}`` left out of the request."""
        return self._sends_principal

    def _query_request(self, query: str, principal: str | None = None) -> Request:
        if principal is not None and not self._sends_principal:
            raise ValueError(
                "the http target cannot ask as a principal: no header, body or params value "
                'holds "{principal}" (e.g. headers = {"X-User" = "{principal}"})'
            )
        send_body = self.method != "GET" and self._body is not None
        return Request(
            self.method,
            self._endpoint.url,
            self._endpoint.shown,
            headers=_headers(self._headers, principal),
            json=render(self._body, query, principal) if send_body else None,
            params=render(self._params, query, principal) if self._params else None,
        )

    def _ingest_requests(self, documents: Iterable[Document]) -> list[Request]:
        if self._ingest is None:
            return []
        batch = [_document_json(d) for d in documents]
        size = self.ingest_batch_size
        return [
            Request(
                "POST",
                self._ingest.url,
                self._ingest.shown,
                headers=_headers(self._headers, None),
                json={"documents": batch[start : start + size]},
                call="ingest",
            )
            for start in range(0, len(batch), size)
        ]

    def _reset_request(self) -> Request | None:
        if self._reset is None:
            return None
        return Request(
            self.reset_method,
            self._reset.url,
            self._reset.shown,
            _headers(self._headers, None),
            call="reset",
        )

    # ---- what the core reads ---------------------------------------------------------------

    @property
    def ingests(self) -> bool:
        """True when the pack's documents are sent to the system (``ingest_url`` is set)."""
        return self._ingest is not None

    @property
    def isolation(self) -> str:
        """How packs are kept apart: ``"fresh"`` when nothing is ingested (the system holds
        the documents already and no pack adds any), ``"reset"`` when ``reset_url`` removes what
        ``ingest_url`` planted, ``"shared"`` when documents are ingested and nothing removes
        them (the runner then refuses several ingesting packs unless the run allows shared
        state)."""
        if not self.ingests:
            return "fresh"
        return "reset" if self._reset is not None else "shared"

    @property
    def plants_into(self) -> str | None:
        """The service ``ingest_url`` plants into (its URL without credentials) when
        ``reset_url`` can remove what it planted; None otherwise.

        A service keeps what it ingested after ragleaklab exits, so the pack's document ids are
        recorded in the run's ``planted.jsonl`` before they are sent, and ``ragleaklab cleanup``
        calls ``reset_url`` after a run that was killed. The ids are the pack's own: a service
        chooses how it stores them, so they cannot be made the run's (see docs/targets.md).
        Without ``reset_url`` nothing can remove them: the target is ``"shared"`` and what it
        sends stays in the service, as configured.
        """
        if self._ingest is None or self._reset is None:
            return None
        return f"the service at {self._ingest.shown}"

    def planted_ids(self, documents: Iterable[Document], *, run: str) -> list[str]:
        """The ids the documents are sent with: the pack's ``doc_id`` s."""
        return [d.doc_id for d in documents]

    async def aremove_planted(self, ids: Sequence[str]) -> list[str]:
        """Call ``reset_url``, unless this target's own reset already did since its ingest; a
        service cannot be asked which ids it still holds, so none are reported."""
        request = self._removal(ids)
        if request is not None:
            await self._caller.send(request)
            self._unreset = False
        return []

    def remove_planted(self, ids: Sequence[str]) -> list[str]:
        """The synchronous form of :meth:`aremove_planted`."""
        request = self._removal(ids)
        if request is not None:
            self._caller.send_sync(request)
            self._unreset = False
        return []

    def _removal(self, ids: Sequence[str]) -> Request | None:
        if not ids or (self._ingested and not self._unreset):
            return None  # this target's reset removed them already
        return self._reset_request()

    # ---- the Target protocol ----------------------------------------------------------------

    async def aanswer(self, query: str, *, principal: str | None = None) -> Response:
        """Ask the endpoint (as *principal*, through the ``{principal}`` templates); retries as
        configured, raises :class:`TargetRequestError` when the request fails for good and
        :class:`TargetResponseError` when the answer is not where ``answer_path`` says."""
        request = self._query_request(query, principal)
        return self._response(await self._caller.send(request), request)

    def answer(self, query: str, *, principal: str | None = None) -> Response:
        """The synchronous form of :meth:`aanswer`."""
        request = self._query_request(query, principal)
        return self._response(self._caller.send_sync(request), request)

    async def aingest(self, documents: Iterable[Document]) -> None:
        """POST *documents* to ``ingest_url`` in batches (nothing when it is not set)."""
        for request in self._ingest_requests(documents):
            self._ingested = self._unreset = True  # before sending: a failed batch may land
            await self._caller.send(request)

    def ingest(self, documents: Iterable[Document]) -> None:
        """The synchronous form of :meth:`aingest`."""
        for request in self._ingest_requests(documents):
            self._ingested = self._unreset = True
            self._caller.send_sync(request)

    async def areset(self) -> None:
        """Call ``reset_url`` (nothing when it is not set)."""
        request = self._reset_request()
        if request is not None:
            await self._caller.send(request)
            self._unreset = False

    def reset(self) -> None:
        """The synchronous form of :meth:`areset`."""
        request = self._reset_request()
        if request is not None:
            self._caller.send_sync(request)
            self._unreset = False

    async def aclose(self) -> None:
        """Close the HTTP clients."""
        await self._caller.aclose()

    def close(self) -> None:
        """Close the synchronous HTTP client."""
        self._caller.close()

    # ---- responses --------------------------------------------------------------------------

    def _response(self, reply: Reply, request: Request) -> Response:
        what = f"the response of {request.method} {request.shown_url}"
        payload = reply.json(self._secrets, what)
        try:
            answer = self._answer.select_one(payload)
        except PathMismatch as exc:
            raise TargetResponseError(
                f"answer_path {self.answer_path!r} does not match {what}: {exc}"
            ) from None
        if not isinstance(answer, str):
            raise TargetResponseError(
                f"answer_path {self.answer_path!r} selects {type(answer).__name__}, "
                f"not a string, in {what}"
            )
        metadata: dict[str, Any] = {"status": reply.status, "attempts": reply.attempts}
        retrieved, missing = self._retrieved(payload, what)
        if missing is not None:
            metadata["retrieved_missing"] = missing
        return Response(answer=answer, retrieved=retrieved, metadata=metadata)

    def _retrieved(
        self, payload: Any, what: str
    ) -> tuple[tuple[RetrievedDocument, ...] | None, str | None]:
        """The retrieved documents, or None and why (the ids are not in the response)."""
        if self._ids is None:
            return None, None
        try:
            ids = _values(self._ids, payload)
        except PathMismatch as exc:
            return None, f"doc_ids_path {self._ids.text!r}: {exc}"
        doc_ids = [_doc_id(value, self._ids, i, what) for i, value in enumerate(ids)]
        texts = self._aligned(self._texts, payload, len(doc_ids), what, _text)
        scores = self._aligned(self._scores, payload, len(doc_ids), what, _score)
        return (
            tuple(self._document(d, t, s) for d, t, s in zip(doc_ids, texts, scores, strict=True)),
            None,
        )

    def _document(self, returned: str, text: str | None, score: float | None) -> RetrievedDocument:
        """A retrieved id mapped back to the pack's document id by ``doc_id_pattern``."""
        if self._id_pattern is None:
            return RetrievedDocument(doc_id=returned, text=text, score=score)
        doc_id, chunk_id = self._id_pattern.split(returned)
        return RetrievedDocument(doc_id=doc_id, text=text, score=score, chunk_id=chunk_id)

    def _aligned(
        self, path: JsonPath | None, payload: Any, n: int, what: str, convert: Any
    ) -> list[Any]:
        if path is None:
            return [None] * n
        try:
            values = _values(path, payload)
        except PathMismatch as exc:
            raise TargetResponseError(f"{path.text!r} does not match {what}: {exc}") from None
        if len(values) != n:
            raise TargetResponseError(
                f"{path.text!r} selects {len(values)} values but doc_ids_path "
                f"{self.doc_ids_path!r} selects {n}, in {what}"
            )
        return [convert(value, path, i, what) for i, value in enumerate(values)]


def _headers(headers: dict[str, str], principal: str | None) -> dict[str, str]:
    """*headers* with ``{principal}`` replaced (only it: a query never goes into a header);
    without a principal, a header whose value holds ``{principal}`` is not sent at all (an empty
    or cut ``X-User`` would claim someone asks, or name nobody; see :func:`render`)."""
    if principal is not None and any(ord(c) < 32 or ord(c) == 127 for c in principal):
        # A line break in a header value would start a header of its own.
        raise ValueError(
            f"principal {principal!r} holds a control character, which a header cannot carry"
        )
    out = {}
    for name, value in headers.items():
        if PRINCIPAL in value:
            if principal is None:
                continue
            value = value.replace(PRINCIPAL, principal)
        out[name] = value
    return out


def _values(path: JsonPath, payload: Any) -> list[Any]:
    """What *path* selects; a path without ``[*]`` that selects a list selects its items."""
    values = path.select(payload)
    if not path.has_wildcard and len(values) == 1 and isinstance(values[0], list):
        return list(values[0])
    return values


def _doc_id(value: Any, path: JsonPath, i: int, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise TargetResponseError(
        f"doc_ids_path {path.text!r} item {i} is {type(value).__name__}, not an id, in {what}"
    )


def _text(value: Any, path: JsonPath, i: int, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TargetResponseError(
        f"{path.text!r} item {i} is {type(value).__name__}, not a string, in {what}"
    )


def _score(value: Any, path: JsonPath, i: int, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise TargetResponseError(
        f"{path.text!r} item {i} is {type(value).__name__}, not a number, in {what}"
    )


def _document_json(doc: Document) -> dict[str, Any]:
    """What the system under test is told about a document: its id, its text and, when the
    document has one, its access (``{"owner": ..., "groups": [...]}``, the convention of
    docs/packs.md); nothing else of the ground truth ``kind`` and ``metadata`` hold (a system
    that saw them could pass by filtering what it was told is poison). Access is different: a
    real app knows who may see each of its documents (it syncs the source's permissions), and
    one that is never told cannot enforce them.

    Raises:
        InputError: ``metadata["access"]`` is malformed (naming the document and the path).
    """
    sent: dict[str, Any] = {"doc_id": doc.doc_id, "text": doc.text}
    access = parse_access(doc.doc_id, doc.metadata)
    if access is not None:
        sent["access"] = {
            **({} if access.owner is None else {"owner": access.owner}),
            "groups": sorted(access.groups),
        }
    return sent
