"""Did the attack reach the system? The wiring check, read from a pack's own results.

A pack plants documents and asks questions whose answers should draw on them. If the target's
retrieved ids never name one of those documents, the pack tested nothing: the documents were not
ingested, the app was built before ingest, or the system returns ids of its own that were never
mapped back. Every retrieval value then reads 0 and the pack would PASS; this check turns that
into a pack that was *not tested*, with the likely causes, so CI fails loudly instead.

The check needs nothing but what any black-box user sees (the retrieved ids) and the pack's
document ids, so it applies to every target, recorded or live.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any

from attrs import frozen

#: How many unknown ids the report lists (the count is always complete).
LISTED_UNKNOWN = 10


@frozen
class Wiring:
    """What the retrieved ids say about whether the pack's documents reached the system.

    Attributes:
        corpus: How many documents the pack planted.
        answered: Case epochs the target answered (no error).
        with_retrieval: Of those, how many reported their retrieved documents.
        retrieved: Retrieved ids seen in all (one per retrieved item).
        unknown: Of those, how many name no document of the pack.
        unknown_examples: A few distinct unknown ids, sorted.
        reached: True when some retrieved id is the pack's; False when none is (the pack was
            not tested); None when it cannot be told (no corpus, or no retrieval reported).
        blank: Of the answered case epochs, how many answered with no text at all (only
            whitespace): when all did, nothing a metric that reads the answer gave is evidence.
        same_text: When every answered case epoch of at least two different cases answered
            the same text (compared after :func:`normalise`), that text; else None. Like
            blank answers, one text for every question says nothing about any of them.
    """

    corpus: int
    answered: int
    with_retrieval: int
    retrieved: int
    unknown: int
    unknown_examples: tuple[str, ...]
    reached: bool | None
    blank: int = 0
    same_text: str | None = None

    @property
    def all_blank(self) -> bool:
        """Every answered case epoch answered with no text."""
        return bool(self.answered) and self.blank == self.answered

    @property
    def problem(self) -> str | None:
        """Why the pack counts as not tested, or None."""
        if self.reached is not False:
            return None
        if self.retrieved:
            shown = ", ".join(repr(i) for i in self.unknown_examples)
            seen = (
                f"none of the {self.retrieved} documents retrieved for {self.with_retrieval} "
                f"answered cases is one of the pack's {self.corpus} documents (retrieved ids "
                f"such as {shown})"
            )
        else:
            seen = f"the system retrieved no document for any of {self.with_retrieval} cases"
        return (
            f"the attack never reached the system: {seen}. Likely causes: the "
            "pack's documents were never ingested (set the target's ingest hook: ingest_url, "
            "ingest_callable, a vector store), the app was built before ingest (build it in a "
            "factory), or the system returns its own ids (map them with doc_id_pattern or "
            "doc_id_field); see docs/targets.md, 'Wiring your app'"
        )

    @property
    def warning(self) -> str | None:
        """A caveat worth printing in the summary (some ids unknown, or nothing to check)."""
        if self.reached is None and self.corpus and self.answered and not self.with_retrieval:
            return (
                "wiring not verified: the target reports no retrieved documents, so ragleaklab "
                "cannot tell whether the pack's documents reached it"
            )
        if self.reached and self.unknown:
            shown = ", ".join(repr(i) for i in self.unknown_examples)
            return (
                f"{self.unknown} of {self.retrieved} retrieved ids are not the pack's documents "
                f"(such as {shown}); if the system returns chunk ids, map them with "
                "doc_id_pattern"
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus_documents": self.corpus,
            "answered": self.answered,
            "answered_with_retrieval": self.with_retrieval,
            "retrieved_ids": self.retrieved,
            "unknown_ids": self.unknown,
            "unknown_id_examples": list(self.unknown_examples),
            "reached": self.reached,
        }


class WiringTally:
    """The wiring of one pack, counted one answered case epoch at a time (a run streams its
    records, so the retrieved ids of every case are never held together)."""

    def __init__(self, corpus: Iterable[str]) -> None:
        self.ids = frozenset(corpus)
        self.answered = 0
        self.with_retrieval = 0
        self.retrieved = 0
        self.unknown = 0
        self.blank = 0
        self._examples: list[str] = []  # the smallest distinct unknown ids, sorted
        # The one answer text seen so far (normalised), until two answers differ; and the first
        # case answered, until a second case is (one case over many epochs is not "every case").
        self._text: str | None = None
        self._differ = False
        self._case: str | None = None
        self._cases = 0

    def add(
        self, retrieved: Sequence[str] | None, answer: str = "x", case: str | None = None
    ) -> None:
        """One answered case epoch: its retrieved ids in rank order, or None when the target
        did not report retrieval for it, its answer, and the case's id."""
        self.answered += 1
        self.blank += not answer.strip()
        self._same(normalise(answer), case)
        if retrieved is None:
            return
        self.with_retrieval += 1
        self.retrieved += len(retrieved)
        for doc_id in retrieved:
            if doc_id in self.ids:
                continue
            self.unknown += 1
            examples = self._examples
            if doc_id in examples:
                continue
            if len(examples) < LISTED_UNKNOWN or doc_id < examples[-1]:
                bisect.insort(examples, doc_id)
                del examples[LISTED_UNKNOWN:]

    def _same(self, text: str, case: str | None) -> None:
        if not self._differ:
            if self._text is None:
                self._text = text
            elif text != self._text:
                self._differ, self._text = True, None
        if self._cases < 2 and (self._cases == 0 or case != self._case):
            self._case = case
            self._cases += 1

    def result(self) -> Wiring:
        if not self.ids or not self.with_retrieval:
            reached = None
        elif not self.retrieved:
            reached = False  # the system retrieved nothing at all for any case
        else:
            reached = self.unknown < self.retrieved
        return Wiring(
            corpus=len(self.ids),
            answered=self.answered,
            with_retrieval=self.with_retrieval,
            retrieved=self.retrieved,
            unknown=self.unknown,
            unknown_examples=tuple(self._examples),
            reached=reached,
            blank=self.blank,
            same_text=self._text if self._cases >= 2 and not self._differ else None,
        )


def normalise(answer: str) -> str:
    """An answer as the identical-answers check compares it: stripped, runs of whitespace
    collapsed to one space, case folded ("Sorry,\n I can't" and "sorry, i can't" are one)."""
    return " ".join(answer.split()).casefold()


def check_wiring(corpus: Iterable[str], answered: Sequence[Sequence[str] | None]) -> Wiring:
    """The wiring of one pack.

    Args:
        corpus: The ids of the documents the pack plants.
        answered: For each answered case epoch, the retrieved document ids in rank order, or
            None when the target did not report retrieval for it.
    """
    tally = WiringTally(corpus)
    for retrieved in answered:
        tally.add(retrieved)
    return tally.result()


__all__ = ["Wiring", "WiringTally", "check_wiring", "normalise"]
