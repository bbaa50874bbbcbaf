"""The clause splitters of the access and attribution metrics split as before, in linear time on
a long run of spaces.

Tried from every space of a run and scanning to its end, they took time quadratic in the run's
length (50,000 spaces in an answer: seconds per case). They now never start inside a run where
no earlier match could have ended. The old patterns are kept here as the reference.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ragleaklab_plugins.metrics import _clause_stance, access

OLD = {
    "access": re.compile(
        r"(?=[.!?;:\n,\s])(?:[.!?;:\n]+(?:\s|$)|,?\s+but\s+|,?\s+however,?\s+)", re.IGNORECASE
    ),
    "clause_stance": re.compile(
        rf"(?<=[.!?。！？])\s+|\n+|;\s+|\s+[-–—]\s+|,?\s+\b(?:{_clause_stance._CONTRAST})\b\s*,?\s*",
        re.IGNORECASE,
    ),
}
NEW = {"access": access._CLAUSE, "clause_stance": _clause_stance._SPLIT}
SHAPES = st.lists(
    st.sampled_from(
        [
            " ", "  ", "\t", "\n", "\n\n", ",", ";", ":", ".", "!", "?", "。", "-", "–", "a",
            "word", "but", "However", "aber", "sin embargo", "tandis que", "yet", "x.",
        ]
    ),
    max_size=16,
).map("".join)  # fmt: skip


@pytest.mark.parametrize("name", sorted(OLD))
@given(text=SHAPES)
def test_the_splits_are_the_old_ones(name, text):
    old, new = OLD[name], NEW[name]
    assert [m.span() for m in new.finditer(text)] == [m.span() for m in old.finditer(text)]
    assert new.split(text) == old.split(text)


@pytest.mark.parametrize("name", sorted(OLD))
@pytest.mark.parametrize("unit", [" ", "\t", " ,", ". ", " a"])
def test_a_long_run_of_spaces_splits_in_linear_time(name, unit):
    # Best of three for 8x the length against 8x the best of three for one length (load only
    # ever adds time): quadratic would be 64x, the margin is 40x (times under 5 ms as 5 ms).
    def best(text: str) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            NEW[name].split(text)
            times.append(time.perf_counter() - start)
        return min(times)

    small, large = best(unit * 6_250), best(unit * 50_000)
    assert large < 40 * max(small, 5e-3), (small, large)


def old_clauses(text: str) -> list[str]:
    """clauses() as it was: the old pattern on the text as it is."""
    pieces = OLD["clause_stance"].split(text)
    return [piece.strip(" \t*-•>#") for piece in pieces if piece and piece.strip()]


LINES = st.lists(
    st.sampled_from(
        [
            " ", "\t", "\n", "\n\n", "\r\n", "\u3000", "\x0b", "\u2028", ".", "!", ";", ",",
            "-", "–", "—", "*", "#", "a", "word", "but", "However", "aber", "sin embargo", "yet",
        ]
    ),
    max_size=20,
).map("".join)  # fmt: skip


@given(text=LINES)
def test_clauses_are_the_old_ones_whatever_the_line_breaks(text):
    assert _clause_stance.clauses(text) == old_clauses(text)


@pytest.mark.parametrize("unit", ["\n ", "\n\t\n ", " \n", "\r\n "])
def test_alternating_line_breaks_and_spaces_split_in_linear_time(unit):
    def best(text: str) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            _clause_stance.clauses(text)
            times.append(time.perf_counter() - start)
        return min(times)

    small, large = best(unit * 6_250 + "x"), best(unit * 50_000 + "x")
    assert large < 40 * max(small, 5e-3), (small, large)


EMAILISH = st.lists(
    st.sampled_from(
        ["a", "b9", ".", "..", "@", "c.com", " ", "-", "_", "x@y.com", " dot ", "[at]"]
    ),
    max_size=24,
).map("".join)


@given(text=EMAILISH)
def test_emails_in_dotted_chains_are_the_plain_pattern_s(text):
    from ragleaklab_plugins.metrics import _values

    want = [(m.span(), m.groupdict()) for m in _values._EMAIL.finditer(text)]
    assert [(m.span(), m.groupdict()) for m in _values._email_matches(text)] == want


@pytest.mark.parametrize("unit", ["a.", "ab.", "a.b@"])
def test_a_long_dotted_chain_is_read_in_linear_time(unit):
    from ragleaklab_plugins.metrics import _values

    def best(text: str) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            _values._email_matches(text)
            times.append(time.perf_counter() - start)
        return min(times)

    small, large = best(unit * 3_000), best(unit * 24_000)
    assert large < 40 * max(small, 5e-3), (small, large)
