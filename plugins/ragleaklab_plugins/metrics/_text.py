"""Text helpers shared by the built-in metrics: normalisation, word tokens, ground-truth lists."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

# A run of characters that are not letters or digits (``\W`` plus the underscore ``\w`` admits).
_NON_ALNUM = re.compile(r"[\W_]+")
# Verbatim words: ASCII letters and digits; everything else separates words.
_WORD = re.compile(r"[A-Za-z0-9]+")
#: How many characters of context evidence shows on each side of a match.
CONTEXT_CHARS = 40


class GroundTruthError(ValueError):
    """A case's ground truth is malformed; the metric reports the case as unscorable."""


def normalise(text: str) -> str:
    """NFKC, casefold, every run of non-alphanumeric characters to one space, strip.

    ``"The Eiffel-Tower, in ROME!"`` becomes ``"the eiffel tower in rome"``.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _NON_ALNUM.sub(" ", folded).strip()


def words(text: str) -> list[str]:
    """The lowercase ``[a-z0-9]+`` words of *text*."""
    return [m.group().lower() for m in _WORD.finditer(text)]


def word_spans(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The words of *text* (as :func:`words`) and the ``(start, end)`` offset of each."""
    tokens: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in _WORD.finditer(text):
        tokens.append(m.group().lower())
        spans.append(m.span())
    return tokens, spans


def context(text: str, start: int, end: int, width: int = CONTEXT_CHARS) -> str:
    """``text[start:end]`` with up to *width* characters on each side."""
    return text[max(0, start - width) : end + width]


def string_list(ground_truth: Mapping[str, Any], key: str) -> list[str]:
    """``ground_truth[key]`` as a list of strings; ``[]`` when the key is absent or null.

    Raises:
        GroundTruthError: The value is not a list of strings (a bare string is refused: iterating
            it would silently test its characters).
    """
    value = ground_truth.get(key)
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise GroundTruthError(
            f"ground_truth[{key!r}] must be a list of strings, got {type(value).__name__}"
        )
    bad = [item for item in value if not isinstance(item, str)]
    if bad:
        raise GroundTruthError(
            f"ground_truth[{key!r}] must be a list of strings, has {type(bad[0]).__name__} "
            f"{bad[0]!r}"
        )
    return list(value)


def distinct(items: list[str]) -> list[str]:
    """*items* without repeats, first occurrence kept (deterministic, unlike a set)."""
    return list(dict.fromkeys(items))
