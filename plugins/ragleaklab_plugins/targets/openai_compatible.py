"""OpenAICompatibleTarget: reference retrieval + an OpenAI-compatible chat model
(``ragleaklab.targets:openai-compatible``).

The pack's documents are chunked and indexed exactly as the reference target does (BM25 with
bm25s); for each query the top documents' best chunks become the context of a prompt sent to
``{base_url}/chat/completions`` (a local server such as vLLM, llama.cpp or Ollama, or a hosted
one). The answer is the model's reply; the retrieved documents are the context it was given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
from attrs import define, field
from attrs import validators as v

from ragleaklab_core import Document, Response, RetrievedDocument
from ragleaklab_plugins.targets._net import (
    Endpoint,
    HttpCaller,
    Reply,
    Request,
    RetryPolicy,
    Secrets,
    TargetRequestError,
    TargetResponseError,
    chat_completions,
    checked_url,
)
from ragleaklab_plugins.targets._paths import JsonPath, PathMismatch
from ragleaklab_plugins.targets._template import check_json_value
from ragleaklab_plugins.targets.reference import ReferenceTarget
from ragleaklab_plugins.targets.reference.access import ACCESS_FILTERS, principal_groups_option

__all__ = [
    "DEFAULT_DOCUMENT_TEMPLATE",
    "DEFAULT_PROMPT_TEMPLATE",
    "DEFAULT_SYSTEM_PROMPT",
    "OpenAICompatibleTarget",
    "TargetRequestError",
    "TargetResponseError",
    "fill",
]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the question using only the context. If the context "
    "does not contain the answer, say that you do not know."
)
DEFAULT_PROMPT_TEMPLATE = "Context:\n{context}\n\nQuestion: {query}"
DEFAULT_DOCUMENT_TEMPLATE = "{text}"

_CONTENT = JsonPath.parse("choices[0].message.content")
_PLACEHOLDER = re.compile(r"\{(context|query|doc_id|text)\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace the ``{name}`` placeholders of *template* that *values* names, in one pass.

    Inserted text is never scanned again, so a document or query holding ``{query}``, braces or
    anything else is inserted as it is (unlike ``str.format``, which would choke on braces, or
    successive ``str.replace`` calls, which would expand placeholders inside documents).
    """
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _url(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    checked_url(value, name=attribute.name)


def _env_name(instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise ValueError(f"'{attribute.name}' must be an environment variable name: {value!r}")


def _json_value(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_json_value(value, where=attribute.name)


def _extra_body(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_json_value(value, where=attribute.name)
    if isinstance(value, Mapping) and value.get("stream", False) is not False:
        raise ValueError(
            f"'{attribute.name}.stream' = {json.dumps(value['stream'])} asks for a streamed reply "
            "(server-sent events), which is not supported: ragleaklab reads one JSON "
            "completion. Remove 'stream' or set it to false"
        )


def _number(minimum: float, *, strict: bool = False) -> list[Any]:
    return [v.instance_of(float | int), v.gt(minimum) if strict else v.ge(minimum)]


def _int(minimum: int) -> list[Any]:
    return [v.instance_of(int), v.ge(minimum)]


def _below_chunk_words(instance: Any, attribute: attrs.Attribute[int], value: int) -> None:
    if not 0 <= value < instance.chunk_words:
        raise ValueError(
            f"'{attribute.name}' must be >= 0 and < chunk_words ({instance.chunk_words}): {value!r}"
        )


@define
class OpenAICompatibleTarget:
    """Retrieval by the reference retriever, generation by an OpenAI-compatible chat endpoint.

    Attributes:
        base_url: The API root; requests go to ``{base_url}/chat/completions``. http(s) only;
            may reference ``${NAME}`` environment variables.
        model: The model name the server expects.
        api_key_env: The environment variable holding the API key, sent as
            ``Authorization: Bearer ...``; ``None`` sends no key (local servers). When set, the
            variable must exist. The key is a secret: never shown or logged.
        headers: Extra headers (values may reference ``${NAME}``), e.g. ``api-key``.
        temperature: Sampling temperature (0 for the most repeatable answers).
        max_tokens: The longest answer, in tokens.
        system_prompt: The system message (``""``: none). May use ``{context}`` and ``{query}``.
        prompt_template: The user message; ``{context}`` becomes the retrieved documents and
            ``{query}`` the query. Both placeholders must appear in one of the two prompts.
        document_template: How each retrieved document is written into ``{context}`` (with
            ``{doc_id}`` and ``{text}``); documents are separated by a blank line.
        extra_body: More fields for the request body (``seed``, ``top_p``, ``stop``...).
            ``stream`` may only be false: a streamed reply is refused when the target is built.
        top_k: Documents retrieved per query, as in the reference target.
        chunk_words: Words per chunk, as in the reference target.
        chunk_overlap: Words a chunk shares with the previous one (< ``chunk_words``).
        access_filter: Which documents retrieval skips for the asking principal, by their
            ``metadata["access"]``, exactly as the reference target's option: ``"none"`` (every
            document retrievable by everyone), ``"tenant"`` or ``"acl"``. The model only ever
            sees what retrieval kept.
        principal_groups: Groups of each principal on top of its tenant, as the reference
            target's option.
        timeout: Seconds for connecting, sending, each read and waiting for a connection.
        retries: Attempts after the first for connection errors, timeouts, 429 and 5xx.
        backoff: Upper bound of the first wait, doubled after each attempt (full jitter);
            ``Retry-After`` wins.
        max_wait: Longest single wait; a longer ``Retry-After`` ends the retries with an error.
        verify_tls: Check the server's TLS certificate.
        max_connections: Most connections open at once.
    """

    base_url: str = field(default="http://127.0.0.1:8000/v1", validator=_url)
    model: str = field(default="default", validator=v.instance_of(str))
    api_key_env: str | None = field(default=None, validator=_env_name)
    headers: dict[str, str] = field(factory=dict)
    temperature: float = field(default=0.0, validator=_number(0))
    max_tokens: int = field(default=512, validator=_int(1))
    system_prompt: str = field(default=DEFAULT_SYSTEM_PROMPT, validator=v.instance_of(str))
    prompt_template: str = field(default=DEFAULT_PROMPT_TEMPLATE, validator=v.instance_of(str))
    document_template: str = field(default=DEFAULT_DOCUMENT_TEMPLATE, validator=v.instance_of(str))
    extra_body: dict[str, Any] = field(factory=dict, validator=_extra_body)
    top_k: int = field(default=5, validator=_int(1))
    chunk_words: int = field(default=80, validator=_int(1))
    chunk_overlap: int = field(default=16, validator=[v.instance_of(int), _below_chunk_words])
    access_filter: str = field(default="none", validator=v.in_(ACCESS_FILTERS))
    principal_groups: dict[str, tuple[str, ...]] = field(
        factory=dict, converter=principal_groups_option
    )
    timeout: float = field(default=60.0, validator=_number(0, strict=True))
    retries: int = field(default=3, validator=_int(0))
    backoff: float = field(default=0.5, validator=_number(0))
    max_wait: float = field(default=60.0, validator=_number(0))
    verify_tls: bool = field(default=True, validator=v.instance_of(bool))
    max_connections: int = field(default=100, validator=_int(1))

    _endpoint: Endpoint = field(init=False, repr=False)
    _headers: dict[str, str] = field(factory=dict, init=False, repr=False)
    _secrets: Secrets = field(factory=Secrets, init=False, repr=False)
    _caller: HttpCaller = field(init=False, repr=False)
    _retriever: ReferenceTarget = field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        prompts = self.system_prompt + "\n" + self.prompt_template
        for name in ("context", "query"):
            if "{" + name + "}" not in prompts:
                raise ValueError(
                    f"neither system_prompt nor prompt_template holds {{{name}}}, so the model "
                    f"would never see the {name}"
                )
        self._endpoint, self._headers, self.headers, secrets = chat_completions(
            self.base_url, self.headers, self.api_key_env
        )
        self._secrets = secrets
        self._caller = HttpCaller(
            RetryPolicy(self.retries, float(self.backoff), float(self.max_wait)),
            float(self.timeout),
            verify_tls=self.verify_tls,
            max_connections=self.max_connections,
            secrets=secrets,
        )
        # An unusable proxy in the environment is an error now, not at the first request.
        self._caller.route(self._endpoint.url)
        self._secrets = self._caller.secrets  # with the proxy's credentials
        self._retriever = self._new_retriever()

    def _new_retriever(self) -> ReferenceTarget:
        return ReferenceTarget(
            top_k=self.top_k,
            chunk_words=self.chunk_words,
            chunk_overlap=self.chunk_overlap,
            access_filter=self.access_filter,
            principal_groups=dict(self.principal_groups),
        )

    # ---- prompts ------------------------------------------------------------------------------

    def messages(self, query: str, retrieved: Iterable[RetrievedDocument]) -> list[dict[str, str]]:
        """The chat messages sent for *query* with *retrieved* as its context."""
        context = "\n\n".join(
            fill(self.document_template, {"doc_id": r.doc_id, "text": r.text or ""})
            for r in retrieved
        )
        values = {"context": context, "query": query}
        messages = []
        if self.system_prompt:
            messages.append({"role": "system", "content": fill(self.system_prompt, values)})
        messages.append({"role": "user", "content": fill(self.prompt_template, values)})
        return messages

    def _request(
        self, query: str, principal: str | None = None
    ) -> tuple[Request, tuple[RetrievedDocument, ...]]:
        # The principal chooses what is retrieved (access_filter); the model never sees it.
        retrieved, _ = self._retriever.retrieve(query, principal)
        body = {
            **self.extra_body,
            "model": self.model,
            "messages": self.messages(query, retrieved),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        request = Request(
            "POST", self._endpoint.url, self._endpoint.shown, headers=self._headers, json=body
        )
        return request, tuple(retrieved)

    # ---- the Target protocol ----------------------------------------------------------------

    async def aanswer(self, query: str, *, principal: str | None = None) -> Response:
        """Retrieve, then ask the model; errors as for the http target.

        *principal* belongs to the retrieval side, which this target runs itself (the
        reference retriever, filtered by ``access_filter``): it is reported in
        ``metadata["principal"]`` and never sent to
        the model (not as OpenAI's ``user`` field either: that field labels a request for the
        provider's abuse monitoring, changes nothing the model can see, and would hand the
        pack's user ids to a hosted provider).
        """
        request, retrieved = self._request(query, principal)
        reply = await self._caller.send(request)
        response = self._response(reply.json(self._secrets, self._what()), reply, retrieved)
        return _as(response, principal)

    def answer(self, query: str, *, principal: str | None = None) -> Response:
        """The synchronous form of :meth:`aanswer`."""
        request, retrieved = self._request(query, principal)
        reply = self._caller.send_sync(request)
        response = self._response(reply.json(self._secrets, self._what()), reply, retrieved)
        return _as(response, principal)

    def ingest(self, documents: Iterable[Document]) -> None:
        """Chunk and index *documents* for retrieval (the model never sees them otherwise)."""
        self._retriever.ingest(documents)

    async def aingest(self, documents: Iterable[Document]) -> None:
        """Same as :meth:`ingest` (indexing is local)."""
        self.ingest(documents)

    def reset(self) -> None:
        """Forget every ingested document."""
        self._retriever = self._new_retriever()

    async def areset(self) -> None:
        """Same as :meth:`reset`."""
        self.reset()

    async def aclose(self) -> None:
        """Close the HTTP clients and forget the documents."""
        await self._caller.aclose()
        self.reset()

    def close(self) -> None:
        """Close the synchronous HTTP client and forget the documents."""
        self._caller.close()
        self.reset()

    # ---- responses --------------------------------------------------------------------------

    def _what(self) -> str:
        return f"the response of POST {self._endpoint.shown}"

    def _response(
        self, payload: Any, reply: Reply, retrieved: tuple[RetrievedDocument, ...]
    ) -> Response:
        try:
            content = _CONTENT.select_one(payload)
        except PathMismatch as exc:
            raise TargetResponseError(
                f"{self._what()} has no choices[0].message.content: {exc}"
            ) from None
        if not isinstance(content, str):
            raise TargetResponseError(
                f"choices[0].message.content is {type(content).__name__}, not a string, "
                f"in {self._what()}"
            )
        metadata: dict[str, Any] = {"status": reply.status, "attempts": reply.attempts}
        if isinstance(payload.get("model"), str):
            metadata["model"] = payload["model"]
        finish = payload["choices"][0].get("finish_reason")
        if isinstance(finish, str):
            metadata["finish_reason"] = finish
        usage = payload.get("usage")
        if isinstance(usage, dict):
            metadata["usage"] = {
                k: n for k, n in sorted(usage.items()) if isinstance(n, int) and n >= 0
            }
        return Response(answer=content, retrieved=retrieved, metadata=metadata)


def _as(response: Response, principal: str | None) -> Response:
    """*response*, with who asked in its metadata (anonymous answers are unchanged)."""
    if principal is None:
        return response
    return attrs.evolve(response, metadata={**response.metadata, "principal": principal})
