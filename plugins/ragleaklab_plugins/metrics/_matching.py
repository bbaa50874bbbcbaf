"""Matching an answer against a source text beyond exact words: the pluggable matcher interface,
how a metric finds a matcher by name, and the built-in offline matcher.

A *matcher* says how much of an answer's content comes from a source text, in any wording or
language it can read: ``similarity(source, answer)`` in [0, 1]. It is directional: swapping the
arguments asks how much of the source's content the answer carries (a dump covers its source; an
answer that uses one fact of it does not). Metrics take one through their ``matcher`` option:
``"anchors"`` (the default, :class:`AnchorMatcher`, offline), ``"none"`` (no semantic matching),
or the name of a matcher another distribution registers in the entry-point group
``ragleaklab.matchers`` (a class whose no-argument constructor gives a :class:`Matcher`, say one
that wraps an embedding model).
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from attrs import frozen

from ragleaklab_plugins.metrics._lexicon import STOPWORDS, concept, fold
from ragleaklab_plugins.metrics._text import word_spans

#: The entry-point group third-party matchers are registered in.
MATCHERS = "ragleaklab.matchers"
#: The built-in matcher's name, and the name that turns matching off.
DEFAULT_MATCHER = "anchors"
NO_MATCHER = "none"


@runtime_checkable
class Matcher(Protocol):
    """What a matcher provides. Both methods are pure and deterministic."""

    def similarity(self, source: str, answer: str) -> float:
        """How much of *answer*'s content comes from *source*: 0.0 (nothing) to 1.0 (all)."""

    def similarities(self, sources: Sequence[str], answer: str) -> list[float]:
        """``[similarity(s, answer) for s in sources]``, batched (a model embeds *answer* once)."""


@frozen
class SentenceMatch:
    """One answer sentence and the source sentence its content matches best.

    Attributes:
        start: The sentence's start offset in the answer.
        end: Its end offset.
        source_start: The best source sentence's start offset in the source (-1: none).
        source_end: Its end offset (-1: none).
        similarity: The share of the sentence's content found in that source sentence.
    """

    start: int
    end: int
    source_start: int
    source_end: int
    similarity: float


@frozen
class Alignment:
    """How much of an answer comes from a source, sentence by sentence.

    Attributes:
        similarity: The weighted share of the answer's content that comes from the source.
        sentences: Each answer sentence with content, in order, and its best source sentence.
    """

    similarity: float
    sentences: tuple[SentenceMatch, ...]


def known_matchers() -> list[str]:
    """Every matcher name an option may give: ``none``, the built-in, the registered ones."""
    registered = {ep.name for ep in importlib.metadata.entry_points(group=MATCHERS)}
    return sorted({NO_MATCHER, DEFAULT_MATCHER, *registered})


def load_matcher(name: str) -> Matcher | None:
    """The matcher called *name*; None for ``"none"``.

    Raises:
        ValueError: No matcher has that name, or the registered object is not a matcher.
    """
    if name == NO_MATCHER:
        return None
    if name == DEFAULT_MATCHER:
        return AnchorMatcher()
    for ep in importlib.metadata.entry_points(group=MATCHERS):
        if ep.name == name:
            made = ep.load()()
            if not isinstance(made, Matcher):
                raise ValueError(f"matcher {name!r} ({ep.value}) has no similarity/similarities")
            return made
    raise ValueError(f"unknown matcher {name!r}; known: {', '.join(known_matchers())}")


# Sentence ends: . ! ? and their CJK forms followed by space, or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？;；])\s+|\n+")
#: Fewest content tokens a piece keeps on its own; shorter ones join the next sentence (so one
#: word per line reads as sentences, not as one-word fragments).
MIN_SENTENCE_TOKENS = 4
#: Weight of an anchor token (a number, a code, a name) against an ordinary content word.
ANCHOR_WEIGHT = 3.0
#: Least character-trigram Dice coefficient for two different words to count as one (a cognate:
#: ``instructions``/``instrucciones`` 0.56), and their credit is that coefficient.
MIN_COGNATE = 0.5
#: Shortest word tried as a cognate (short words share trigrams by chance).
MIN_COGNATE_CHARS = 5


@frozen
class _Token:
    key: str  # the folded word, or its "#concept"
    weight: float
    start: int
    end: int


def _trigrams(word: str) -> frozenset[str]:
    padded = f"_{word}_"
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def content_tokens(text: str) -> list[_Token]:
    """*text*'s content words: folded (NFKC, casefold, no accents), function words dropped,
    lexicon words read as their concept. Anchors (a word holding a digit, or a capitalised word
    that does not start a sentence: a name) weigh :data:`ANCHOR_WEIGHT`."""
    tokens, spans = word_spans(text)
    out: list[_Token] = []
    previous_end = 0
    for token, (start, end) in zip(tokens, spans, strict=True):
        word = fold(token)
        gap = text[previous_end:start]
        previous_end = end
        if word in STOPWORDS:
            continue
        named = concept(word)
        digit = any(c.isdigit() for c in word)
        sentence_start = not out or any(c in ".!?:\n" for c in gap)
        capital = text[start].isupper() and not sentence_start
        weight = ANCHOR_WEIGHT if digit or (capital and named is None) else 1.0
        if named is None and len(word) < 3 and not digit:
            continue  # a stray letter or particle
        out.append(_Token(named or word, weight, start, end))
    return out


def _sentences(text: str, tokens: list[_Token]) -> list[list[_Token]]:
    """*tokens* grouped into sentences; pieces under :data:`MIN_SENTENCE_TOKENS` join the next."""
    bounds = [m.end() for m in _SENTENCE_END.finditer(text)]
    groups: list[list[_Token]] = []
    current: list[_Token] = []
    b = 0
    for tok in tokens:
        while b < len(bounds) and bounds[b] <= tok.start:
            if len(current) >= MIN_SENTENCE_TOKENS:
                groups.append(current)
                current = []
            b += 1
        current.append(tok)
    if current:
        if groups and len(current) < MIN_SENTENCE_TOKENS:
            groups[-1].extend(current)
        else:
            groups.append(current)
    return groups


@functools.lru_cache(maxsize=4096)
def _prepared(text: str) -> tuple[list[list[_Token]], dict[str, frozenset[str]]]:
    tokens = content_tokens(text)
    grams = {t.key: _trigrams(t.key) for t in tokens if len(t.key) >= MIN_COGNATE_CHARS}
    return _sentences(text, tokens), grams


def _cognates(
    answer_grams: dict[str, frozenset[str]], source_grams: dict[str, frozenset[str]]
) -> dict[str, dict[str, float]]:
    """For each answer word, the source words it is a cognate of, with their Dice coefficient.

    An inverted trigram index over the source words keeps this near linear: only pairs sharing a
    trigram are compared. Concepts (``#...``) and equal words are left out (they match exactly).
    """
    by_gram: dict[str, list[str]] = {}
    for word, grams in source_grams.items():
        if not word.startswith("#"):
            for g in grams:
                by_gram.setdefault(g, []).append(word)
    out: dict[str, dict[str, float]] = {}
    for word, grams in answer_grams.items():
        if word.startswith("#") or word in source_grams:
            continue
        shared = Counter(w for g in grams for w in by_gram.get(g, ()))
        found: dict[str, float] = {}
        for other, n in shared.items():
            dice = 2 * n / (len(grams) + len(source_grams[other]))
            if dice >= MIN_COGNATE:
                found[other] = dice
        if found:
            out[word] = found
    return out


def _sentence_similarity(
    sentence: list[_Token], keys: frozenset[str], cognates: dict[str, dict[str, float]]
) -> float:
    total = matched = 0.0
    for tok in sentence:
        total += tok.weight
        if tok.key in keys:
            matched += tok.weight
        else:
            near = cognates.get(tok.key)
            if near:
                matched += tok.weight * max((d for w, d in near.items() if w in keys), default=0.0)
    return matched / total if total else 0.0


@frozen
class AnchorMatcher:
    """The built-in offline matcher: shared content words, anchors, cognates and a lexicon.

    Both texts are read as content words (:func:`content_tokens`): accents and case folded,
    function words of seven European languages dropped, number words and a few hundred common
    words of those languages read as one concept (``"five"``, ``"fünf"``, ``"5"`` are one word;
    ``"never"``, ``"jamais"`` too). Anchors (numbers, codes, names) weigh three times an ordinary
    word: they survive translation, summary and paraphrase. Two different words of at least
    five letters whose character trigrams overlap enough (:data:`MIN_COGNATE`) count as the same
    word at that overlap (``documents``/``documentos``, ``information``/``informationen``).

    Each answer sentence is compared with each source sentence and each pair of adjacent source
    sentences: its similarity is the weighted share of its words found there. The answer's
    similarity is the sentences' mean weighted by their words. It needs no model and no
    download; its limits: a translation into a language outside the lexicon keeps only its
    anchors and cognates, and a paraphrase with synonyms matches only through its anchors.
    """

    def similarity(self, source: str, answer: str) -> float:
        """How much of *answer*'s content comes from *source* (see the class)."""
        return self.align(source, answer).similarity

    def similarities(self, sources: Sequence[str], answer: str) -> list[float]:
        """:meth:`similarity` for each of *sources* (the answer is prepared once)."""
        return [self.align(source, answer).similarity for source in sources]

    def align(self, source: str, answer: str) -> Alignment:
        """The answer's sentences, each with its best source sentence (see the class)."""
        answer_sentences, answer_grams = _prepared(answer)
        source_sentences, source_grams = _prepared(source)
        if not answer_sentences or not source_sentences:
            return Alignment(0.0, ())
        cognates = _cognates(answer_grams, source_grams)
        units: list[tuple[frozenset[str], int, int]] = []
        keysets = [frozenset(t.key for t in s) for s in source_sentences]
        for i, sentence in enumerate(source_sentences):
            units.append((keysets[i], sentence[0].start, sentence[-1].end))
            if i + 1 < len(source_sentences):
                nxt = source_sentences[i + 1]
                units.append((keysets[i] | keysets[i + 1], sentence[0].start, nxt[-1].end))
        matches: list[SentenceMatch] = []
        total = weighted = 0.0
        for sentence in answer_sentences:
            best, where = 0.0, (-1, -1)
            for keys, start, end in units:
                sim = _sentence_similarity(sentence, keys, cognates)
                if sim > best:
                    best, where = sim, (start, end)
            weight = sum(t.weight for t in sentence)
            total += weight
            weighted += weight * best
            matches.append(
                SentenceMatch(sentence[0].start, sentence[-1].end, where[0], where[1], best)
            )
        return Alignment(weighted / total if total else 0.0, tuple(matches))
