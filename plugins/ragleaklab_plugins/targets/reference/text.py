"""The reference target's text rules: tokenizer, stopwords, sentence splitter, instruction rule.

Attack packs are written against these exact rules, so they are part of the target's contract
(docs/reference-target.md) and change only with a new version of the target.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_INSTRUCTION = (
    re.compile(
        r"\bignore (?:all |any )?(?:previous|prior|above|earlier|other) instructions\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:you must|assistant must|always)\s+(?:respond|reply|answer|say|begin|start)\b",
        re.IGNORECASE,
    ),
)
_QUOTED = re.compile(r'"([^"]*)"')

#: The fixed English stopword list: dropped from documents and queries before BM25 and never
#: counted as a query term by the generator.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about an and are as at be by can could did do does for from had has have he her his how
    i if in into is it its me my of on or our please s she should t tell than that the their
    them then there these they this those to was we were what when where which who why will
    with would you your
    """.split()  # noqa: SIM905 - a word list reads best as words
)


def tokenize(text: str) -> list[str]:
    """Every token of *text*: runs of ``[a-z0-9]`` in the lowercased text, in order."""
    return _TOKEN.findall(text.lower())


def content_tokens(text: str) -> list[str]:
    """The tokens of *text* that are not stopwords, in order, duplicates kept."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def split_sentences(text: str) -> list[str]:
    """*text* cut after ``.``, ``!`` or ``?`` followed by whitespace; empty pieces dropped."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def is_instruction(sentence: str) -> bool:
    """True when *sentence* is a planted instruction by the INSTRUCTION rule."""
    return any(p.search(sentence) for p in _INSTRUCTION)


def instruction_payload(sentence: str) -> str | None:
    """The text inside the first pair of double quotes, stripped; None when absent or empty."""
    m = _QUOTED.search(sentence)
    if m is None:
        return None
    return m.group(1).strip() or None
