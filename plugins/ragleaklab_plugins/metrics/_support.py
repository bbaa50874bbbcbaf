"""Lexical claim-support helpers: figures in any usual writing, negation, antonym flips, stems.

A statement credited to a document is a forgery when it changes what the document says. The
three changes an overlap of words cannot see are a changed figure (``8 hours`` for ``30
minutes``, also when either is written ``half an hour`` or ``thirty minutes``), a negation
(``not``, ``never``, ``no longer``, ``isn't``) and an antonym (``optional`` for ``required``).
These helpers read them, with the standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Set
from decimal import Decimal, InvalidOperation

from ragleaklab_plugins.metrics._text import ENGLISH_TENS, ENGLISH_UNITS
from ragleaklab_plugins.metrics.claim import claim_tokens

# --- figures ------------------------------------------------------------------------------------

_UNITS_WORDS = list(ENGLISH_UNITS)
_TENS_WORDS = list(ENGLISH_TENS)
#: Number words as values: zero to nineteen, the tens, and ``a``/``an``/``once`` before a unit.
NUMBER_WORDS: dict[str, Decimal] = {w: Decimal(n) for n, w in enumerate(_UNITS_WORDS)}
NUMBER_WORDS.update({w: Decimal(20 + 10 * n) for n, w in enumerate(_TENS_WORDS)})
NUMBER_WORDS.update({"a": Decimal(1), "an": Decimal(1), "single": Decimal(1)})
_MULTIPLIERS = {
    "hundred": Decimal(100),
    "thousand": Decimal(1000),
    "k": Decimal(1000),
    "million": Decimal(1_000_000),
    "m": Decimal(1_000_000),
    "billion": Decimal(1_000_000_000),
    "bn": Decimal(1_000_000_000),
}
#: Units of time, in minutes (durations) or months (calendar periods): a figure with a unit is
#: compared by its value in the base unit, so ``half an hour`` is ``30 minutes``.
UNITS: dict[str, tuple[str, Decimal]] = {}
for _names, _dim, _size in (
    ("second seconds sec secs", "min", Decimal(1) / 60),
    ("minute minutes min mins", "min", Decimal(1)),
    ("hour hours hr hrs h", "min", Decimal(60)),
    ("day days", "min", Decimal(1440)),
    ("week weeks", "min", Decimal(10080)),
    ("fortnight fortnights", "min", Decimal(20160)),
    ("month months", "mo", Decimal(1)),
    ("quarter quarters", "mo", Decimal(3)),
    ("year years yr yrs", "mo", Decimal(12)),
):
    for _n in _names.split():
        UNITS[_n] = (_dim, _size)
#: Words that are a figure on their own (``annually`` is every 12 months).
ADVERBS: dict[str, tuple[Decimal, str]] = {
    "hourly": (Decimal(60), "min"),
    "daily": (Decimal(1440), "min"),
    "weekly": (Decimal(10080), "min"),
    "fortnightly": (Decimal(20160), "min"),
    "biweekly": (Decimal(20160), "min"),
    "monthly": (Decimal(1), "mo"),
    "quarterly": (Decimal(3), "mo"),
    "annually": (Decimal(12), "mo"),
    "yearly": (Decimal(12), "mo"),
    "biannually": (Decimal(6), "mo"),
    "semiannually": (Decimal(6), "mo"),
}
#: Words that are part of a figure (number words, units of time, ``annually``): compared as
#: figures, never as words.
FIGURE_WORDS: frozenset[str] = frozenset(
    [*NUMBER_WORDS, *UNITS, *ADVERBS, "half", "twice", "percent", "hundred", "thousand", "million"]
) - {"a", "an", "h", "min", "m"}
_NUMERIC = re.compile(r"\d+(?:\.\d+)?%?|\d{4}-\d{2}-\d{2}")
# Words between a number and its unit that do not change it ("5 business days", "30 calendar
# days", "2 full weeks").
_UNIT_FILLERS = frozenset({"business", "working", "calendar", "full", "whole", "consecutive"})
# Words before a lone unit that make it one of it ("every year", "per month", "each week").
_ONE_OF = frozenset({"every", "per", "each", "a", "an", "one", "once"})
#: Words that never describe a unit between it and its number ("3 of the days", "2024 several
#: months"): function words and quantifiers.
_NOT_DESCRIBING = frozenset(
    """of and or to in on at for by from the than then more less fewer few several many
    other""".split()  # noqa: SIM905 - a word list reads best as words
)


def _dec(token: str) -> Decimal | None:
    try:
        return Decimal(token.rstrip("%"))
    except InvalidOperation:
        return None


def _canon(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


_COMPOUND = re.compile(
    r"\b(" + "|".join(_TENS_WORDS) + r")(?:[- ](one|two|three|four|five|six|seven|eight|nine))?\b"
)


def _compound(m: re.Match[str]) -> str:
    value = NUMBER_WORDS[m.group(1)] + (NUMBER_WORDS[m.group(2)] if m.group(2) else 0)
    return f" {value} "


def _tokens(text: str) -> list[str]:
    """:func:`claim_tokens` (dates, separators, percent, number words to twenty), with the
    number words above twenty (``twenty-five``) and ``k``/``m`` suffixes (``85k``) folded into
    numbers."""
    text = _COMPOUND.sub(_compound, text)
    text = re.sub(r"(\d)\s?(k|m|bn)\b", r"\1 \2", text)
    out: list[str] = []
    for token in claim_tokens(text):
        if token in _MULTIPLIERS and out and _NUMERIC.fullmatch(out[-1]) and "-" not in out[-1]:
            base = _dec(out[-1])
            if base is not None:
                out[-1] = _canon(base * _MULTIPLIERS[token])
                continue
        out.append(token)
    return out


_TIME = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>a\.?\s?m\.?|p\.?\s?m\.?)(?![\w])"
    r"|\b(?P<h24>\d{1,2}):(?P<m24>\d{2})\b",
    re.IGNORECASE,
)
# A list item's number at the start of a line ("1. Keys are rotated...") is no figure.
_LIST_NUMBER = re.compile(r"^\s*(?:\d{1,3}[.)]|#+)\s+", re.MULTILINE)
_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split()  # noqa: SIM905
)
#: Minutes in a month of the calendar (a year of 365.25 days over 12): a span in months and
#: one in minutes are the same when within :data:`CALENDAR_TOLERANCE` of each other.
MONTH_MINUTES = Decimal("43830")
CALENDAR_TOLERANCE = Decimal("0.03")
#: Words that hedge the span after them ("about a month", "roughly two weeks"): a hedged span
#: is written ``~`` before its figure and matches within :data:`HEDGED_TOLERANCE`, since
#: "about a month" is how people say "4 weeks" (8% apart) and is no changed figure.
HEDGES = frozenset({"about", "around", "roughly", "approximately", "approx", "nearly", "almost"})
HEDGED_TOLERANCE = Decimal("0.1")
_SPAN = re.compile(r"~?([\d.]+)(min|mo)")


def _times(text: str) -> tuple[str, set[str]]:
    """*text* without its times of day, and those as ``t17:00`` (``5 pm``, ``17:00``)."""
    found: set[str] = set()

    def repl(m: re.Match[str]) -> str:
        if m.group("h24") is not None:
            hour, minute = int(m.group("h24")), int(m.group("m24"))
        else:
            hour, minute = int(m.group("h")) % 12, int(m.group("m") or 0)
            hour += 12 if m.group("ampm").lower().startswith("p") else 0
        if hour < 24 and minute < 60:
            found.add(f"t{hour:02d}:{minute:02d}")
        return " "

    return _TIME.sub(repl, text), found


def ordinals(text: str) -> set[str]:
    """The ordinal words of *text* as numbers (``third`` is ``3``): a document that says ``the
    first day`` backs a statement that says ``the 1st``."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return {str(i + 1) for i, w in enumerate(_ORDINALS) if re.search(rf"\b{w}\b", folded)}


def figure_backed(figure: str, backing: set[str] | frozenset[str]) -> bool:
    """Whether *figure* (of :func:`figures`) is among *backing*, a span in months also matching
    one in minutes within :data:`CALENDAR_TOLERANCE` (``3 months`` is ``90 days``), and a
    hedged span (``~``) any span within :data:`HEDGED_TOLERANCE`."""
    if figure in backing or figure.lstrip("~") in backing:
        return True
    m = _SPAN.fullmatch(figure)
    if not m:
        return False
    value = _span_minutes(m)
    for other in backing:
        o = _SPAN.fullmatch(other)
        if not o:
            continue
        hedged = figure.startswith("~") or other.startswith("~")
        if o.group(2) == m.group(2) and not hedged:
            continue
        tolerance = HEDGED_TOLERANCE if hedged else CALENDAR_TOLERANCE
        theirs = _span_minutes(o)
        if value and abs(theirs - value) <= tolerance * max(value, theirs):
            return True
    return False


def _span_minutes(m: re.Match[str]) -> Decimal:
    return Decimal(m.group(1)) * (MONTH_MINUTES if m.group(2) == "mo" else 1)


def figures(text: str) -> set[str]:
    """The figures of *text*, canonical, so that one figure written two ways is one string.

    Numbers lose their separators and take a point (``85,000``, ``85 000`` and ``85k`` are
    ``85000``); number words are digits (``thirty``, ``twenty-five``); dates are ISO
    (``25 March 2025``, ``March 25th, 2025``); percentages keep their sign (``12 percent`` is
    ``12%``). A number followed by a unit of time is its value in minutes or months (``half an
    hour``, ``30 minutes`` and ``0.5 hours`` are ``30min``; ``a year``, ``every 12 months`` and
    ``annually`` are ``12mo``), and ``twice a year`` is ``6mo``. A unit after ``every``,
    ``per``, ``each``, ``a`` or ``one`` is one of it. Times of day are ``t17:00`` (``5 pm``,
    ``17:00``); a list item's number at the start of a line is not a figure.
    """
    text, found = _times(_LIST_NUMBER.sub(" ", unicodedata.normalize("NFKC", text)))
    tokens = _tokens(text.casefold())
    consumed: set[int] = set()
    for i, token in enumerate(tokens):
        if token in ADVERBS:
            size, dim = ADVERBS[token]
            found.add(f"{_canon(size)}{dim}")
            continue
        if token not in UNITS:
            continue
        dim, size = UNITS[token]
        j = i - 1
        while j >= 0 and tokens[j] in _UNIT_FILLERS:
            j -= 1
        count: Decimal | None = None
        # one describing word between a number and its unit ("three remote days", "two
        # office days") leaves the span a span
        if (
            j >= 1
            and tokens[j].isalpha()
            and tokens[j] not in _ONE_OF
            and tokens[j] not in _NOT_DESCRIBING
            and tokens[j] not in UNITS
            and re.fullmatch(r"\d{1,3}(?:\.\d+)?", tokens[j - 1])
        ):
            j -= 1
        if j >= 0 and _NUMERIC.fullmatch(tokens[j]) and "-" not in tokens[j]:
            count = _dec(tokens[j])
            consumed.add(j)
        elif j >= 0 and tokens[j] in _ONE_OF:
            count = Decimal(1)
            if j >= 1 and tokens[j - 1] == "half":
                count = Decimal("0.5")
            elif j >= 1 and tokens[j - 1] == "twice":
                count, size = Decimal(1), size / 2
        elif j >= 0 and tokens[j] == "half":
            count = Decimal("0.5")
        if count is None:
            continue
        hedged = j >= 1 and tokens[j - 1] in HEDGES
        found.add(f"{'~' if hedged else ''}{_canon(count * size)}{dim}")
    for i, token in enumerate(tokens):
        if i in consumed:
            continue
        if _NUMERIC.fullmatch(token):
            found.add(_number_figure(token))
    return found


def _number_figure(token: str) -> str:
    if "-" in token:
        return token  # an ISO date
    value = _dec(token)
    text = _canon(value) if value is not None else token
    return text + "%" if token.endswith("%") else text


# --- negation and antonyms ----------------------------------------------------------------------

_NEGATION = re.compile(
    r"\b(?:not|never|no|none|nobody|nothing|neither|nor|cannot|without|no longer|nowhere)\b"
    r"|n['’]t\b",
    re.IGNORECASE,
)
# A bound is no negation: "no more than 30 minutes", "not later than Friday", "not over 5".
_BOUND = re.compile(
    r"\b(?:no|not)\s+(?:(?:more|less|fewer|later|earlier|longer|shorter|greater|higher|lower|"
    r"sooner)\s+than|(?:over|under|above|below|beyond|exceeding)(?=\s+\d))\b",
    re.IGNORECASE,
)


def negations(text: str) -> int:
    """How many negations *text* holds (``not``, ``never``, ``no``, ``no longer``, ``cannot``,
    ``without``, ``isn't`` ...); a bound is none (``no more than``, ``not later than``, ``no
    longer than``)."""
    text = _BOUND.sub(" ", unicodedata.normalize("NFKC", text))
    return len(_NEGATION.findall(text))


_SUFFIXES = ("ations", "ation", "ingly", "ings", "ing", "edly", "ed", "ies", "es", "ly", "s")


def stem(word: str) -> str:
    """A crude stem: the word without one common English suffix (``rotated``, ``rotates`` and
    ``rotating`` are ``rotat``); words of four letters or fewer are kept."""
    if len(word) <= 4 or not word.isascii():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word.rstrip("e") if len(word) > 4 else word


_ANTONYM_PAIRS = (
    ("required", "optional"),
    ("mandatory", "optional"),
    ("compulsory", "optional"),
    ("allowed", "forbidden"),
    ("allowed", "prohibited"),
    ("permitted", "prohibited"),
    ("permitted", "forbidden"),
    ("allowed", "banned"),
    ("enabled", "disabled"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("before", "after"),
    ("minimum", "maximum"),
    ("least", "most"),
    ("more", "less"),
    ("more", "fewer"),
    ("above", "below"),
    ("over", "under"),
    ("higher", "lower"),
    ("longer", "shorter"),
    ("accepted", "rejected"),
    ("approved", "rejected"),
    ("approved", "denied"),
    ("granted", "denied"),
    ("public", "private"),
    ("public", "confidential"),
    ("internal", "external"),
    ("included", "excluded"),
    ("encrypted", "unencrypted"),
    ("supported", "unsupported"),
    ("automatic", "manual"),
    ("automatically", "manually"),
    ("online", "offline"),
    ("earlier", "later"),
    ("first", "last"),
    ("keep", "lose"),
    ("retain", "lose"),
    ("open", "closed"),
    ("weekdays", "weekends"),
    ("always", "never"),
    ("inside", "outside"),
    ("permanent", "temporary"),
    ("success", "failure"),
    ("start", "end"),
)
#: Each stem's antonym stems (:func:`stem` of both words of each pair, both ways).
ANTONYMS: dict[str, frozenset[str]] = {}
for _a, _b in _ANTONYM_PAIRS:
    for _x, _y in ((stem(_a), stem(_b)), (stem(_b), stem(_a))):
        ANTONYMS[_x] = ANTONYMS.get(_x, frozenset()) | {_y}


def antonym_flips(statement: Set[str], sentence: Set[str]) -> int:
    """How many stems of *statement* have an antonym in *sentence* while *sentence* lacks the
    stem itself and *statement* lacks the antonym (``optional`` said of a ``required`` step)."""
    flips = 0
    for s in sorted(statement - sentence):
        opposite = ANTONYMS.get(s)
        if opposite and (opposite & sentence) and not (opposite & statement):
            flips += 1
    return flips
