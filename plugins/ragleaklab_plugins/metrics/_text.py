"""Text helpers shared by the built-in metrics: normalisation, word tokens, ground-truth lists."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

# A run of characters that are not letters or digits (``\W`` plus the underscore ``\w`` admits).
_NON_ALNUM = re.compile(r"[\W_]+")


#: Scripts written without spaces between words: each letter (with its marks) is a token.
#: Han (with the ideographic iteration and number marks), Hiragana, Katakana (with halfwidth
#: forms and the kana supplements), Thai, Lao, Myanmar, Khmer. Hangul is written with spaces and
#: is tokenised as words. Sorted and disjoint (a bisect finds a character's range).
SPACELESS_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0x2E80, 0x2FDF),  # CJK radicals supplement, Kangxi radicals
    (0x3005, 0x3007),  # ideographic iteration mark, closing mark, number zero
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3038, 0x303C),  # Hangzhou numerals, vertical iteration mark, masu mark
    (0x3041, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA9E0, 0xA9FF),  # Myanmar extended-B
    (0xAA60, 0xAA7F),  # Myanmar extended-A
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0x1AFF0, 0x1B16F),  # Kana extended-B, supplement, extended-A, small kana extension
    (0x20000, 0x3FFFF),  # CJK extensions B to H, compatibility supplement
)
_SPACELESS_STARTS = [a for a, _ in SPACELESS_RANGES]
_SPACELESS = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in SPACELESS_RANGES)
# The halfwidth (semi-)voiced sound marks are letters, but NFKC composes them with the kana
# before them (``"ｶﾞ"`` -> ``"ガ"``), so they stay with that kana like a combining mark.
_HALFWIDTH_SOUND_MARKS = "\\uff9e\\uff9f"
# ASCII text has no marks nor spaceless characters: its tokens are exactly these (a fast path).
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def is_spaceless(ch: str) -> bool:
    """Whether *ch* belongs to a script written without spaces (:data:`SPACELESS_RANGES`)."""
    code = ord(ch)
    i = bisect.bisect_right(_SPACELESS_STARTS, code) - 1
    return i >= 0 and code <= SPACELESS_RANGES[i][1]


def is_mark(ch: str) -> bool:
    """Whether *ch* is a combining mark (Unicode categories Mn, Mc, Me)."""
    return unicodedata.category(ch)[0] == "M"


@functools.cache
def _any_mark() -> re.Pattern[str]:
    """A class of every combining mark, to pick a text's marks out of its distinct characters.

    Built once, on first use, from :mod:`unicodedata`: marks exist only in planes 0, 1 and 14
    (plane 14 holds the variation selectors supplement), and scanning those takes about 25 ms
    instead of 160 ms for all seventeen planes.
    """
    ranges: list[tuple[int, int]] = []
    for code in (*range(0x20000), *range(0xE0000, 0xE1000)):
        if is_mark(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges) + "]")


_ANY_SPACELESS = re.compile(f"[{_SPACELESS}]")
_ASCII_RUN = re.compile(r"[\x00-\x7f]+")


@functools.lru_cache(maxsize=256)
def _token_regex(marks: str, spaceless: bool) -> re.Pattern[str]:
    """The token regex for a text whose combining marks are *marks*.

    A token is one letter or digit of a spaceless script with the marks that follow it, or a run
    of other letters, digits and marks (``\\w`` without the underscore, plus marks). ``re`` has
    no ``\\p{M}``, and a class of all 2,400 marks (300 ranges) makes matching five times slower
    than ``[^\\W_]+``, so the class lists only the marks the text holds (usually none or a few),
    and the spaceless branch is left out when the text has no spaceless character. The
    lookahead keeps the spaceless scripts' punctuation (Thai ``"๏"``, the katakana middle dot
    ``"・"``) out of tokens; marks after a spaceless letter belong to it (its branch comes first).
    """
    mark_class = "".join(f"\\U{ord(c):08x}" for c in marks)
    letter = f"[^\\W_{_SPACELESS}]" if spaceless else "[^\\W_]"
    run = f"(?:{letter}|[{mark_class}])+" if marks else f"{letter}+"
    if not spaceless:
        return re.compile(run)
    return re.compile(f"(?=[^\\W_])[{_SPACELESS}][{mark_class}{_HALFWIDTH_SOUND_MARKS}]*|{run}")


def token_regex(text: str) -> re.Pattern[str]:
    """The token regex for *text* (see :func:`_token_regex`).

    The marks and spaceless characters are looked for among the text's distinct characters
    only (a few dozen, joined into one string), with C-level regex scans.
    """
    # ASCII has neither; dropping it first leaves the slow mark class few characters to test.
    distinct = _ASCII_RUN.sub("", "".join(set(text)))
    marks = "".join(sorted(_any_mark().findall(distinct)))
    return _token_regex(marks, _ANY_SPACELESS.search(distinct) is not None)


_ENGLISH_UNITS_TEXT = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
)
#: The English number words below twenty, in order: each one's index is its value.
ENGLISH_UNITS: tuple[str, ...] = tuple(_ENGLISH_UNITS_TEXT.split())
_ENGLISH_TENS_TEXT = "twenty thirty forty fifty sixty seventy eighty ninety"
#: The English tens from twenty, in order (each is ``10 * (index + 2)``).
ENGLISH_TENS: tuple[str, ...] = tuple(_ENGLISH_TENS_TEXT.split())

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


def _fold_token(token: str) -> list[str]:
    """The normalised token(s) of one token of the original text: NFKC, then casefold.

    Normalising can change length (``"ß"`` -> ``"ss"``, ``"ﬁ"`` -> ``"fi"``) and can even split a
    token (``"½"`` -> ``"1⁄2"``, two tokens), so the result is tokenised again.
    """
    folded = unicodedata.normalize("NFKC", token).casefold()
    if folded.isascii():
        return _ASCII_TOKEN.findall(folded)
    return token_regex(folded).findall(folded)


def _fold_tokens(raw: list[str]) -> list[str] | None:
    """Each raw token normalised on its own, when each stays exactly one token; else ``None``.

    Normalising the tokens joined by newlines is the same as normalising each one: no
    composition involves a newline, and canonical reordering never crosses it (a newline is a
    starter). So the common case is a few C-level passes over the whole text. ``str.lower``
    maps every letter, digit and mark to letters, digits and marks and leaves the spaceless
    scripts alone (a test checks this over all of Unicode), so a token that normalises to its
    lowercase is still one token; only the others are tokenised again to check.
    """
    if not raw:
        return []  # "".split("\n") would be one empty token
    joined = "\n".join(raw)
    folded = unicodedata.normalize("NFKC", joined).casefold()
    pieces = folded.split("\n")
    lowered = joined.lower()
    if folded == lowered:
        return pieces
    lowered_pieces = lowered.split("\n")
    if len(lowered_pieces) != len(pieces):  # normalising made a newline: take the slow path
        return None
    changed = [p for p, q in zip(pieces, lowered_pieces, strict=True) if p != q]
    check = "\n".join(changed)
    return pieces if token_regex(check).findall(check) == changed else None


def words(text: str) -> list[str]:
    """The normalised word tokens of *text* (see :func:`word_spans`), without their offsets."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    raw = token_regex(text).findall(text)
    tokens = _fold_tokens(raw)
    if tokens is not None:
        return tokens
    return [piece for token in raw for piece in _fold_token(token)]


def word_spans(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    r"""The word tokens of *text* and the ``(start, end)`` offset of each in *text* itself.

    Tokens are found in the original text: runs of letters, digits and combining marks (``\w``
    without the underscore, plus marks), except that in a script written without spaces (Han,
    Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) each letter with its marks is a token. Each
    token is then normalised on its own (NFKC, casefold), so the spans stay offsets into *text*
    even where normalising changes the length; a token that normalising splits (``"½"``) gives
    several tokens with the same span. ``"Straße ﬁx 東京"`` gives
    ``["strasse", "fix", "東", "京"]`` with spans ``(0, 6), (7, 9), (10, 11), (11, 12)``.
    """
    if text.isascii():
        # Lowercasing ASCII keeps every offset, so the tokens are found in the lowered text.
        raw, spans = _split_spans(_ASCII_SPLIT, text.lower())
        return raw, spans
    raw, spans = _split_spans(_split_regex(token_regex(text)), text)
    tokens = _fold_tokens(raw)
    if tokens is not None:
        return tokens, spans
    tokens, piece_spans = [], []
    for token, span in zip(raw, spans, strict=True):
        for piece in _fold_token(token):
            tokens.append(piece)
            piece_spans.append(span)
    return tokens, piece_spans


_ASCII_SPLIT = re.compile(r"([a-z0-9]+)")


@functools.lru_cache(maxsize=256)
def _split_regex(token: re.Pattern[str]) -> re.Pattern[str]:
    """*token* as one capturing group, for :func:`_split_spans`."""
    return re.compile(f"({token.pattern})")


def _split_spans(split: re.Pattern[str], text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The tokens *split* (one capturing group) finds in *text*, and their spans.

    ``split`` alternates separators and tokens, so the running sum of the pieces' lengths gives
    every offset; all of it runs in C, about twice as fast as reading ``span()`` off match
    objects.
    """
    pieces = split.split(text)
    offsets = list(itertools.accumulate(map(len, pieces)))
    return pieces[1::2], list(zip(offsets[0::2], offsets[1::2], strict=False))


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
