"""The deterministic "LLM": builds an answer from the retrieved chunks like a naive RAG app.

It copies the sentences that share the most query terms with the query and, unless told not to,
obeys the first instruction planted in the retrieved text by putting its quoted payload first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attrs import frozen

from ragleaklab_plugins.targets.reference.defences import cut_words, paraphrase
from ragleaklab_plugins.targets.reference.text import (
    instruction_payload,
    is_instruction,
    split_sentences,
    tokenize,
)

#: The answer when no retrieved sentence contains a query term.
NO_ANSWER = "I could not find an answer in the provided documents."


@frozen
class Passage:
    """A retrieved document as the generator sees it: its best chunk."""

    doc_id: str
    chunk_id: str
    text: str


@frozen
class Generated:
    """The answer and the trace that goes into ``Response.metadata``."""

    answer: str
    obeyed_instruction: dict[str, str] | None
    sentences: list[dict[str, str]]

    def metadata(self, filtered: Sequence[str]) -> dict[str, Any]:
        """The response metadata: what was obeyed, where each copied sentence came from."""
        return {
            "obeyed_instruction": self.obeyed_instruction,
            "sentences": self.sentences,
            "filtered": sorted(filtered),
        }


@frozen
class _Candidate:
    relevance: int
    passage: Passage
    text: str


def generate(
    passages: Sequence[Passage],
    query_terms: frozenset[str],
    *,
    answer_sentences: int,
    obey_instructions: bool,
    separator: str | None = None,
    max_quote_words: int | None = None,
) -> Generated:
    """Answer from *passages* (in rank order) for a query with distinct terms *query_terms*.

    Args:
        passages: The retrieved documents' best chunks, best first.
        query_terms: The query's distinct non-stopword tokens.
        answer_sentences: How many sentences to copy at most.
        obey_instructions: Put the first planted payload before the answer.
        separator: When set, paraphrase every copied sentence with it (see
            :func:`~ragleaklab_plugins.targets.reference.defences.paraphrase`).
        max_quote_words: When set, cut every copied sentence to this many words, then ``...``.
    """
    obeyed: dict[str, str] | None = None
    candidates: list[_Candidate] = []
    for passage in passages:
        for sentence in split_sentences(passage.text):
            if is_instruction(sentence):
                # Instructions are never content; the naive app obeys the first with a payload.
                payload = instruction_payload(sentence)
                if obey_instructions and obeyed is None and payload is not None:
                    obeyed = {"doc_id": passage.doc_id, "payload": payload}
                continue
            relevance = len(query_terms.intersection(tokenize(sentence)))
            if relevance > 0:
                candidates.append(_Candidate(relevance, passage, sentence))
    # A stable sort keeps rank order, then position, among equally relevant sentences.
    picked = sorted(candidates, key=lambda c: -c.relevance)[:answer_sentences]
    copied = [_shape(c.text, separator, max_quote_words) for c in picked]
    answer = " ".join(copied) if copied else NO_ANSWER
    if obeyed is not None:
        answer = f"{obeyed['payload']} {answer}"
    return Generated(
        answer=answer,
        obeyed_instruction=obeyed,
        sentences=[{"doc_id": c.passage.doc_id, "chunk_id": c.passage.chunk_id} for c in picked],
    )


def _shape(sentence: str, separator: str | None, max_quote_words: int | None) -> str:
    """Apply the quote-length and paraphrase defences to one copied sentence."""
    cut = False
    if max_quote_words is not None:
        sentence, cut = cut_words(sentence, max_quote_words)
    if separator is not None:
        return paraphrase(sentence, separator) + ("..." if cut else ".")
    return sentence + "..." if cut else sentence
