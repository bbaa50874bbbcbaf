"""ReferenceTarget: the embedded, deterministic RAG pipeline that ``ragleaklab run`` tests."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
from attrs import define, field
from attrs import validators as v

from ragleaklab_core import Document, InputError, Response, RetrievedDocument
from ragleaklab_plugins.targets.reference.access import (
    ACCESS_FILTERS,
    AccessControl,
    check_principal,
    principal_groups_option,
)
from ragleaklab_plugins.targets.reference.chunking import chunk_document
from ragleaklab_plugins.targets.reference.citations import CITATION_MODES
from ragleaklab_plugins.targets.reference.defences import (
    SEPARATORS,
    is_suspicious,
    pick_separator,
    strip_untrusted_urls,
)
from ragleaklab_plugins.targets.reference.extraction import (
    DEFAULT_SYSTEM_PROMPT,
    extract,
    guard_usual_answer,
)
from ragleaklab_plugins.targets.reference.generator import Passage, generate
from ragleaklab_plugins.targets.reference.retriever import ChunkIndex
from ragleaklab_plugins.targets.reference.simulated import simulate
from ragleaklab_plugins.targets.reference.text import content_tokens


def _below_chunk_words(instance: Any, attribute: attrs.Attribute[int], value: int) -> None:
    if not 0 <= value < instance.chunk_words:
        raise ValueError(
            f"'{attribute.name}' must be >= 0 and < chunk_words ({instance.chunk_words}): {value!r}"
        )


#: The generator behaviours: the literal text contract, or the seeded simulated LLM.
BEHAVIOURS = ("literal", "realistic")
#: How the realistic model writes: plain text, or markdown with links and images.
ANSWER_STYLES = ("plain", "markdown")
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*")


def _markdown_needs_realistic(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    if value == "markdown" and instance.behaviour != "realistic":
        raise ValueError(
            f"'{attribute.name}' = 'markdown' needs behaviour = 'realistic' "
            f"(the literal contract writes plain text): behaviour is {instance.behaviour!r}"
        )


def _default_style(instance: Any) -> str:
    return "markdown" if instance.behaviour == "realistic" else "plain"


def _always_needs_realistic(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    if value == "always" and instance.behaviour != "realistic":
        raise ValueError(
            f"'{attribute.name}' = 'always' needs behaviour = 'realistic' "
            f"(the literal contract never cites): behaviour is {instance.behaviour!r}"
        )


def _domains(value: Any) -> tuple[str, ...]:
    # A TOML array arrives as a list; host names compare lower-cased, without a trailing dot.
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(f"'allowed_domains' must be a list of host names, got {value!r}")
    return tuple(d.lower().rstrip(".") if isinstance(d, str) else d for d in value)


def _check_domains(instance: Any, attribute: attrs.Attribute[Any], value: tuple[Any, ...]) -> None:
    for entry in value:
        if not isinstance(entry, str) or not _HOST.fullmatch(entry):
            raise ValueError(
                f"'{attribute.name}' entry {entry!r} must be a host name such as 'example.com'"
            )


def _int(minimum: int) -> list[Any]:
    return [v.instance_of(int), v.ge(minimum)]


@define
class ReferenceTarget:
    """A real, deterministic RAG pipeline: word-window chunks, bm25s retrieval, and a seeded
    simulated LLM that answers from the most relevant sentences and, like a naive LLM app, is
    open to planted instructions and discloses private records. Defences are off by default;
    see docs/reference-target.md.

    Attributes:
        top_k: Distinct documents retrieved per query (each at its best-scoring chunk).
        chunk_words: Words per chunk.
        chunk_overlap: Words a chunk shares with the previous one; less than ``chunk_words``.
        k1: BM25 term-frequency saturation, passed to bm25s.
        b: BM25 length normalisation, passed to bm25s.
        answer_sentences: Most sentences the generator copies.
        obey_instructions: Put the payload of the first planted instruction before the answer.
        filter_injections: Drop retrieved documents whose best chunk holds a planted instruction
            or is keyword-stuffed, and backfill from the next-ranked documents.
        paraphrase: Rewrite copied sentences so no 6-token run of a source survives.
        max_quote_words: Cut each copied sentence to this many words (then ``...``).
        behaviour: ``"realistic"`` (the default): a seeded simulated LLM that obeys
            instructions in many languages and encodings only sometimes, discloses private
            records in several forms, hedges between conflicting documents, and records every
            decision in ``metadata["simulated"]``, which the built-in packs are labelled from;
            or ``"literal"``: the exact, rule-based text contract.
        seed: Seeds the realistic model's choices (ignored by the literal behaviour).
        answer_style: ``"markdown"`` (the realistic behaviour's default) or ``"plain"`` (the
            literal behaviour's, and its only style):
            the model writes links and may follow instructions to add a link or image whose
            URL carries data (recorded in ``metadata["simulated"]["exfiltration"]``).
        allowed_domains: The app's allow-list of host names (and their subdomains): recorded
            for every URL the markdown style writes, and kept by ``strip_untrusted_urls``.
        strip_untrusted_urls: Remove every URL to a domain not allowed from the answer.
        access_filter: Which documents retrieval skips (before the top-k cut) for the asking
            principal, by the documents' ``metadata["access"]``: ``"none"`` (the default: every
            document is retrievable by everyone), ``"tenant"`` (documents outside the
            principal's tenant) or ``"acl"`` (documents it may not see); see ``access.py``.
        principal_groups: Groups of each principal, on top of the tenant of a principal
            written ``"<tenant>:<user>"`` (``{"acme:alice" = ["acme:hr"]}``).
        citations: ``"on_request"`` (the default): the realistic model credits its statements
            to documents when the question asks for sources; ``"always"``; ``"never"``
            (recorded in ``metadata["simulated"]["citations"]``; the literal behaviour never
            cites).
        verify_citations: Check every citation against the retrieved passages; fix or drop the
            ones they do not back.
        system_prompt: The app's system prompt (realistic behaviour only; ``""``: none). The
            default is a fixed text holding the canary ``RLK-CANARY-5e1f0a9c7b2d``, which the
            model may dump when a query asks for it (``metadata["simulated"]["extraction"]``).
        guard_prompt: Refuse extraction requests the guard recognises, and replace an answer
            that copies the system prompt or a long run of a retrieved chunk with a refusal.
    """

    top_k: int = field(default=5, validator=_int(1))
    chunk_words: int = field(default=80, validator=_int(1))
    chunk_overlap: int = field(default=16, validator=[v.instance_of(int), _below_chunk_words])
    k1: float = field(default=1.5, validator=[v.instance_of(float | int), v.ge(0)])
    b: float = field(default=0.75, validator=[v.instance_of(float | int), v.ge(0), v.le(1)])
    answer_sentences: int = field(default=3, validator=_int(1))
    obey_instructions: bool = field(default=True, validator=v.instance_of(bool))
    filter_injections: bool = field(default=False, validator=v.instance_of(bool))
    paraphrase: bool = field(default=False, validator=v.instance_of(bool))
    max_quote_words: int | None = field(default=None, validator=v.optional(_int(1)))
    # Realistic by default: the built-in packs' labels describe this behaviour, so that the
    # default `ragleaklab run` and `calibrate` test the system the labels were observed on.
    behaviour: str = field(default="realistic", validator=v.in_(BEHAVIOURS))
    seed: int = field(default=0, validator=[v.instance_of(int), v.not_(v.instance_of(bool))])
    # Markdown for the realistic model: the naive app the packs describe is a chat assistant
    # whose client renders markdown, as the apps of the real exfiltration incidents were. The
    # literal contract writes plain text only.
    answer_style: str = field(
        default=attrs.Factory(_default_style, takes_self=True),
        validator=[v.in_(ANSWER_STYLES), _markdown_needs_realistic],
    )
    allowed_domains: tuple[str, ...] = field(
        default=(), converter=_domains, validator=_check_domains
    )
    strip_untrusted_urls: bool = field(default=False, validator=v.instance_of(bool))
    access_filter: str = field(default="none", validator=v.in_(ACCESS_FILTERS))
    principal_groups: dict[str, tuple[str, ...]] = field(
        factory=dict, converter=principal_groups_option
    )
    citations: str = field(
        default="on_request", validator=[v.in_(CITATION_MODES), _always_needs_realistic]
    )
    verify_citations: bool = field(default=False, validator=v.instance_of(bool))
    system_prompt: str = field(default=DEFAULT_SYSTEM_PROMPT, validator=v.instance_of(str))
    guard_prompt: bool = field(default=False, validator=v.instance_of(bool))

    _doc_ids: list[str] = field(factory=list, init=False)
    _doc_index: dict[str, int] = field(factory=dict, init=False)
    # Each document's kind, which only the realistic behaviour reads (see simulated.py).
    _kinds: dict[str, str] = field(factory=dict, init=False)
    _chunk_ids: list[str] = field(factory=list, init=False)
    _chunk_texts: list[str] = field(factory=list, init=False)
    # Every non-stopword token ingested, and the paraphrase separator chosen outside them.
    _vocabulary: set[str] = field(factory=set, init=False)
    _separator: str = field(default=SEPARATORS[0], init=False)
    _index: ChunkIndex = field(init=False)
    _acl: AccessControl = field(init=False)

    @_acl.default
    def _new_acl(self) -> AccessControl:
        return AccessControl(self.access_filter, self.principal_groups)

    @_index.default
    def _new_index(self) -> ChunkIndex:
        return ChunkIndex(k1=float(self.k1), b=float(self.b))

    def ingest(self, documents: Iterable[Document]) -> None:
        """Add *documents* and rebuild the index once; ids must be new (else nothing is added).

        Raises:
            InputError: A document id is already ingested or repeats within *documents*.
        """
        batch = list(documents)
        fresh: set[str] = set()
        for doc in batch:
            if doc.doc_id in self._doc_index or doc.doc_id in fresh:
                raise InputError(f"duplicate document id {doc.doc_id!r}")
            fresh.add(doc.doc_id)
        self._acl.add(self._acl.parse(batch))  # a malformed access raises before any is added
        tokens: list[list[str]] = []
        doc_of_chunk: list[int] = []
        for doc in batch:
            n = len(self._doc_ids)
            self._doc_index[doc.doc_id] = n
            self._doc_ids.append(doc.doc_id)
            self._kinds[doc.doc_id] = doc.kind
            for chunk in chunk_document(doc.doc_id, doc.text, self.chunk_words, self.chunk_overlap):
                self._chunk_ids.append(chunk.chunk_id)
                self._chunk_texts.append(chunk.text)
                tokens.append(content_tokens(chunk.text))
                doc_of_chunk.append(n)
        for chunk_tokens in tokens:
            self._vocabulary.update(chunk_tokens)
        self._separator = pick_separator(self._vocabulary)
        self._index.add(tokens, doc_of_chunk)

    def retrieve(
        self, query: str, principal: str | None = None
    ) -> tuple[list[RetrievedDocument], list[str]]:
        """The context the generator gets for *query*, and the ids the filter dropped."""
        kept, filtered, _ = self._retrieve(query, principal)
        return kept, filtered

    def _with_access(
        self,
        metadata: dict[str, Any],
        principal: str | None,
        retrieved: Sequence[RetrievedDocument],
        denied: Sequence[str],
    ) -> dict[str, Any]:
        """*metadata* with the ``access`` record, read from what the model recorded using
        (``access.py``), when a principal asked or a document is restricted."""
        if not self._acl.relevant(principal):
            return metadata
        ids = [r.doc_id for r in retrieved]
        access = self._acl.record(principal, ids, denied, metadata["simulated"])
        return {**metadata, "simulated": {**metadata["simulated"], "access": access}}

    def _retrieve(
        self, query: str, principal: str | None
    ) -> tuple[list[RetrievedDocument], list[str], list[str]]:
        kept: list[RetrievedDocument] = []
        filtered: list[str] = []
        denied: list[str] = []  # withheld by access_filter, ranked above the last one kept
        for hit in self._index.ranked_documents(content_tokens(query), self.top_k):
            doc_id = self._doc_ids[hit.doc_index]
            if not self._acl.allows(doc_id, principal):
                denied.append(doc_id)
                continue
            text = self._chunk_texts[hit.chunk_index]
            if self.filter_injections and is_suspicious(text):
                filtered.append(doc_id)
                continue
            kept.append(
                RetrievedDocument(
                    doc_id=doc_id,
                    text=text,
                    score=round(hit.score, 6),
                    chunk_id=self._chunk_ids[hit.chunk_index],
                )
            )
            if len(kept) == self.top_k:
                break
        return kept, filtered, denied

    def answer(self, query: str, *, principal: str | None = None) -> Response:
        """Retrieve, filter (when on) and generate; see docs/reference-target.md.

        *principal* (who asks) is reported in ``metadata["principal"]``; with
        ``access_filter`` only documents it may see (by tenant, or by each document's access)
        are retrieved (see ``access.py``).
        """
        check_principal(principal)
        response = self._answer(query, principal)
        if principal is None:  # anonymous answers keep their metadata exactly as before
            return response
        return attrs.evolve(response, metadata={**response.metadata, "principal": principal})

    def _answer(self, query: str, principal: str | None = None) -> Response:
        retrieved, filtered, denied = self._retrieve(query, principal)
        # The separator occurs in no ingested document, so no 6-token run of the paraphrased
        # content can match any of them, not even across sentence boundaries.
        separator = self._separator if self.paraphrase else None
        if self.behaviour == "realistic":
            passages = [Passage(r.doc_id, r.chunk_id or "", r.text or "") for r in retrieved]
            # A request to dump the prompt or context is decided first (extraction.py).
            taken = extract(
                passages,
                query,
                seed=self.seed,
                system_prompt=self.system_prompt,
                guard=self.guard_prompt,
            )
            if taken.answer is not None:
                metadata = self._with_access(taken.metadata(filtered), principal, retrieved, denied)
                return Response(taken.answer, tuple(retrieved), metadata)
            simulated = simulate(
                passages,
                self._kinds,
                query,
                frozenset(content_tokens(query)),
                seed=self.seed,
                answer_sentences=self.answer_sentences,
                obey_instructions=self.obey_instructions,
                separator=separator,
                max_quote_words=self.max_quote_words,
                answer_style=self.answer_style,
                allowed_domains=self.allowed_domains,
                strip_urls=self.strip_untrusted_urls,
                citations=self.citations,
                verify_citations=self.verify_citations,
            )
            answer, record = simulated.answer, taken.record
            if self.guard_prompt:
                answer, record = guard_usual_answer(answer, taken, passages, self.system_prompt)
            metadata = simulated.metadata(filtered)
            if record is not None:
                metadata["simulated"]["extraction"] = record
            metadata = self._with_access(metadata, principal, retrieved, denied)
            return Response(answer=answer, retrieved=tuple(retrieved), metadata=metadata)
        generated = generate(
            [Passage(r.doc_id, r.chunk_id or "", r.text or "") for r in retrieved],
            frozenset(content_tokens(query)),
            answer_sentences=self.answer_sentences,
            obey_instructions=self.obey_instructions,
            separator=separator,
            max_quote_words=self.max_quote_words,
        )
        answer = generated.answer
        if self.strip_untrusted_urls:
            answer, _ = strip_untrusted_urls(answer, self.allowed_domains)
        return Response(
            answer=answer,
            retrieved=tuple(retrieved),
            metadata=generated.metadata(filtered),
        )

    def close(self) -> None:
        """Forget every document (the runner calls this when a pack is done)."""
        self._doc_ids.clear()
        self._doc_index.clear()
        self._kinds.clear()
        self._chunk_ids.clear()
        self._chunk_texts.clear()
        self._vocabulary.clear()
        self._separator = SEPARATORS[0]
        self._index = self._new_index()
        self._acl.clear()
