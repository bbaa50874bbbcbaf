"""The optional defences: the injection / keyword-stuffing filter, paraphrase and quote cutting."""

from __future__ import annotations

from collections import Counter
from collections.abc import Set

from ragleaklab_plugins.targets.reference.text import (
    content_tokens,
    is_instruction,
    split_sentences,
    tokenize,
)

#: A non-stopword token making up more than 1/STUFFING_SHARE of a chunk's non-stopword tokens...
STUFFING_SHARE = 5
#: ...and occurring at least this often marks the chunk as keyword-stuffed.
STUFFING_MIN_COUNT = 5
#: Paraphrase copies at most this many consecutive source tokens between two separators.
PARAPHRASE_GROUP = 5
#: Connectives paraphrase puts before each group; the first absent from the sources is used.
#: None is a stopword, so the documents' non-stopword tokens tell whether they hold it.
SEPARATORS = ("also", "plus", "next", "besides", "likewise", "further", "again", "moreover")


def has_instruction(text: str) -> bool:
    """True when some sentence of *text* is a planted instruction."""
    return any(is_instruction(s) for s in split_sentences(text))


def looks_stuffed(text: str) -> bool:
    """True when one non-stopword token is more than 20% of them and occurs at least 5 times."""
    terms = content_tokens(text)
    if not terms:
        return False
    top = max(Counter(terms).values())
    return top >= STUFFING_MIN_COUNT and top * STUFFING_SHARE > len(terms)


def is_suspicious(text: str) -> bool:
    """What ``filter_injections`` drops: a planted instruction or keyword stuffing."""
    return has_instruction(text) or looks_stuffed(text)


def pick_separator(taken: Set[str]) -> str:
    """The first of :data:`SEPARATORS` (then ``note1``, ``note2``...) not in *taken*."""
    for word in SEPARATORS:
        if word not in taken:
            return word
    n = 1
    while f"note{n}" in taken:
        n += 1
    return f"note{n}"


def paraphrase(text: str, separator: str) -> str:
    """Rewrite *text* so that it shares no run of 6 tokens with any text lacking *separator*.

    The tokens of *text* are cut into groups of at most five, which are emitted last group
    first, each preceded by *separator*: ``"sep g3; sep g2; sep g1"``. Every run of six
    consecutive tokens of the result therefore contains *separator*, which the caller chose
    among the words the sources do not contain. The result keeps every token of *text*
    (lowercased, punctuation dropped) and starts with *separator*, so runs that cross into it
    from the preceding text contain it too.
    """
    tokens = tokenize(text)
    groups = [tokens[i : i + PARAPHRASE_GROUP] for i in range(0, len(tokens), PARAPHRASE_GROUP)]
    return "; ".join(f"{separator} {' '.join(g)}" for g in reversed(groups))


def cut_words(text: str, max_words: int) -> tuple[str, bool]:
    """The first *max_words* whitespace-separated words of *text*, and whether any were cut."""
    words = text.split()
    if len(words) <= max_words:
        return text, False
    return " ".join(words[:max_words]), True
