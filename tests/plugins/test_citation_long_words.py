"""The citation parser reads the same citations as before, in time linear in a word's length.

A speaking source (``kb-a says``) used to be tried from every letter of a word, each try
scanning to the word's end: one 12,000-letter word took seconds (an answer can stall a run).
It now starts only where a word starts. The old pattern is kept here as the reference: on
the shipped packs' texts and on answers built from their ids, both read the same citations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import ragleaklab_plugins.packs as packs
from hypothesis import given
from hypothesis import strategies as st
from ragleaklab_plugins.metrics import citation

#: The pattern before the fix: the speaker's id could start anywhere in a word.
OLD_MARKER = re.compile(
    citation._MARKER.pattern.replace(citation._TOKEN_START, "", 1), re.IGNORECASE
)


def old_parse(answer: str) -> list[citation.Citation]:
    saved = citation._MARKER
    citation._MARKER = OLD_MARKER
    try:
        return citation.parse_citations(answer)
    finally:
        citation._MARKER = saved


def test_the_reference_pattern_is_the_old_one():
    assert OLD_MARKER.pattern != citation._MARKER.pattern
    word = "a" * 2000
    assert old_parse(word) == citation.parse_citations(word) == []


def _texts() -> list[str]:
    root = Path(packs.__file__).parent
    texts: list[str] = []
    for path in sorted(root.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for key in ("text", "query", "notes", "answer"):
                if isinstance(record.get(key), str):
                    texts.append(record[key])
    return texts


TEXTS = _texts()
IDS = sorted(
    {
        json.loads(line)["doc_id"]
        for path in Path(packs.__file__).parent.glob("*/documents.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    }
)[:200]


def test_the_shipped_texts_read_the_same_citations():
    assert len(TEXTS) > 1000
    for text in TEXTS:
        assert citation.parse_citations(text) == old_parse(text), text


PIECES = st.sampled_from(
    [
        " says ", " reports that ", " states, ", " according to ", " per ", " [", "] ", " (",
        ") ", "**", "`", "'", '"', " the VPN guide ", ". ", "\n", ", ", "1", "x", "-", "_", ".",
        "/", "Source: ", " - ",
    ]
)  # fmt: skip


@given(st.lists(st.one_of(st.sampled_from(IDS), PIECES, st.sampled_from(TEXTS[:300])), max_size=12))
def test_answers_built_from_ids_and_markers_read_the_same_citations(parts):
    # Pieces stand apart, as words do. The one difference, by design: an id glued to what
    # comes before it ("x**kb-a says", "1kb-a says") no longer speaks from inside that word.
    answer = " ".join(parts)
    assert citation.parse_citations(answer) == old_parse(answer)


@pytest.mark.parametrize("ch", ["a", "1", "*", "_", "'", "-", ".", "é"])
def test_a_long_word_scales_linearly(ch):
    # Regex steps are not observable, so the time of 8x the length is compared with 8x the time
    # of one length, each the best of three (load on a shared machine only ever adds time).
    # A quadratic parse takes 64x; the margin (40x, times under 5 ms counted as 5 ms) leaves
    # room for noise and the cache effects of a long string, not for n squared.
    import time

    def best(text: str) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            citation.parse_citations(text)
            times.append(time.perf_counter() - start)
        return min(times)

    small, large = best(ch * 12_500), best(ch * 100_000)
    assert large < 40 * max(small, 5e-3), (small, large)


#: The separators and headings as they were: each tried from every space of a run (and, for
#: two ``\s*`` in a row, every split of it), which took the square or cube of a run's length.
OLD_PATTERNS = {
    "_ITEM_SPLIT": re.compile(r"\s*[,;]\s*"),
    "_PROSE_SPLIT": re.compile(r"\s*(?:[,;]|\band\b|&)\s*", re.IGNORECASE),
    "_CLAUSE": re.compile(
        r"(?<=[.!?。！？])\s+|\s*(?:[;:]|,?\s+\b(?:but|however|whereas|while|although|though|"
        r"and|also|plus|which|so|and\s+also)\b|,)\s*",
        re.IGNORECASE,
    ),
    "_HEADING": re.compile(
        rf"^\s*(?:#{{1,6}}\s*)?[*_]{{0,2}}\s*(?:{citation._SOURCE_LABELS}|bibliography|footnotes?)"
        r"\s*[*_]{0,2}\s*:?\s*[*_]{0,2}\s*$",
        re.IGNORECASE,
    ),
    "_INLINE_SOURCES": re.compile(
        rf"^\s*[*_#\s]*(?:{citation._SOURCE_LABELS})[*_]*\s*:?[*_]*\s*(?=\[\d)", re.IGNORECASE
    ),
}
SHAPES = st.lists(
    st.sampled_from(
        [
            " ", "  ", "\t", "\n", ",", ";", ":", ".", "!", "。", "a", "kb-a", "&", "and",
            "also", "and also", "But", "however", "which", "so", "#", "##", "*", "_", "[1]",
            "Sources", "References", "bibliography", "Footnotes", "Quellen",
        ]
    ),
    max_size=16,
).map("".join)  # fmt: skip


def _spans(pattern: re.Pattern[str], text: str) -> object:
    return [m.span() for m in pattern.finditer(text)], pattern.split(text)


@pytest.mark.parametrize("name", sorted(OLD_PATTERNS))
@given(text=SHAPES)
def test_the_linear_separators_match_as_the_old_ones(name, text):
    old, new = OLD_PATTERNS[name], getattr(citation, name)
    if name in ("_HEADING", "_INLINE_SOURCES"):  # read with match(), line by line
        got, want = new.match(text), old.match(text)
        assert (got and got.group()) == (want and want.group())
    else:
        assert _spans(new, text) == _spans(old, text)
        assert bool(new.fullmatch(text)) == bool(old.fullmatch(text))


@pytest.mark.parametrize("name", sorted(OLD_PATTERNS))
def test_the_separators_are_the_shipped_ones_on_the_pack_texts(name):
    old, new = OLD_PATTERNS[name], getattr(citation, name)
    for text in TEXTS[:3000]:
        for line in text.split("\n"):
            if name in ("_HEADING", "_INLINE_SOURCES"):
                got, want = new.match(line), old.match(line)
                assert (got and got.group()) == (want and want.group())
            else:
                assert _spans(new, line) == _spans(old, line)


@pytest.mark.parametrize("unit", [" ", "\t ", " ,", " a"])
def test_a_long_run_of_spaces_scales_linearly(unit):
    import time

    def best(text: str) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            citation.parse_citations(text)
            citation._CLAUSE.split(text)
            times.append(time.perf_counter() - start)
        return min(times)

    small, large = best(unit * 6_250), best(unit * 50_000)
    assert large < 40 * max(small, 5e-3), (small, large)


def test_the_reference_target_s_answers_read_the_same_citations():
    # Real answers: the reference target (the system the packs' labels describe) answering the
    # citation pack's cases, bracketed, numbered and prose citations alike.
    from ragleaklab_core._discovery import TARGETS, load_plugin
    from ragleaklab_core.run.runner import load_pack

    pack = load_pack("citation-forgery").obj
    target = load_plugin(TARGETS, "reference").obj
    target.ingest(tuple(pack.documents()))
    answers = [target.answer(case.query).answer for case in list(pack.cases())[:200]]
    assert sum(bool(citation.parse_citations(a)) for a in answers) > 100  # they do cite
    for answer in answers:
        assert citation.parse_citations(answer) == old_parse(answer), answer
