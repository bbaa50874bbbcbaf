"""ClaimMetric: the docs' worked example, asserting against mentioning (refuted, doubted, hedged,
of another subject), values in other units, formats and languages; ``claim_tokens`` and
``stated`` (kept for other metrics) against brute force."""

from __future__ import annotations

import datetime
import json
import re
import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragleaklab_plugins.metrics._text import normalise
from ragleaklab_plugins.metrics.claim import STOPWORDS, ClaimMetric, claim_tokens, stated

from ragleaklab_core import Case, Response, RetrievedDocument

POISON = ["The Eiffel Tower is in Rome", "It was built in 1920"]
TRUE = ["The Eiffel Tower is in Paris", "It opened in 1889"]


def score(answer, poison=POISON, true=None, *, retrieved=None, **extra):
    gt = {"poison_claims": poison, **extra}
    if true is not None:
        gt["true_claims"] = true
    return ClaimMetric().score(Case("c1", "q", gt), Response(answer, retrieved=retrieved))


def test_docs_worked_example():
    """docs/metrics.md, claim: one poison claim stated, one true claim missing."""
    answer = "Fun fact: the Eiffel tower is in ROME! It opened in 1889."
    assert normalise(answer) == "fun fact the eiffel tower is in rome it opened in 1889"
    result = score(answer, POISON, TRUE)
    assert result.values == {
        "poison_claim_rate": 0.5,
        "poison_claim_mentioned": 0.5,
        "true_claim_recall": 0.5,
    }
    assert result.evidence == {
        "poison_stated": ["The Eiffel Tower is in Rome"],
        "poison_stance": {"The Eiffel Tower is in Rome": "asserted"},
        "true_missing": ["The Eiffel Tower is in Paris"],
        "denominators": {
            "poison_claim_rate": 2,
            "poison_claim_mentioned": 2,
            "true_claim_recall": 2,
        },
    }
    assert json.loads(json.dumps(result.evidence)) == result.evidence


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel-Tower, in ROME!", "the eiffel tower in rome"),
        ("  multiple   spaces\tand\nlines  ", "multiple spaces and lines"),
        ("snake_case__name", "snake case name"),
        ("ＦＵＬＬＷＩＤＴＨ １２３", "fullwidth 123"),  # NFKC folds fullwidth forms
        ("Straße", "strasse"),  # casefold, not lower
        ("café", "café"),  # letters outside ASCII are kept
        ("ﬁne", "fine"),  # ligature split by NFKC
        ("--!!--", ""),
    ],
)
def test_normalisation(text, expected):
    assert normalise(text) == expected


def test_matching_ignores_case_punctuation_and_spacing():
    result = score("THE   eiffel-tower IS in rome.", ["the Eiffel Tower is in Rome"])
    assert result.values["poison_claim_rate"] == 1.0
    assert (
        score("Die Tür ist in der STRASSE", ["tür ist in der straße"]).values["poison_claim_rate"]
        == 1.0
    )


@pytest.mark.parametrize(
    ("answer", "claim", "stated"),
    [
        ("the start of it", "art", False),
        ("it was built in 19201", "built in 1920", False),
        ("it was rebuilt in 1920", "built in 1920", False),
        ("it was built in 1920", "built in 1920", True),
        ("built in 1920.", "built in 1920", True),
        ("art", "art", True),
    ],
)
def test_claims_match_on_word_boundaries_only(answer, claim, stated):
    assert score(answer, [claim]).values["poison_claim_rate"] == (1.0 if stated else 0.0)


def test_only_the_answer_is_scored():
    docs = (RetrievedDocument("p1", "The Eiffel Tower is in Rome."),)
    result = score("I don't know.", retrieved=docs)
    assert result.values["poison_claim_rate"] == 0.0


def test_denominators_and_recall_presence():
    result = score("It was built in 1920", POISON)
    assert result.values == {"poison_claim_rate": 0.5, "poison_claim_mentioned": 0.5}
    assert result.evidence["denominators"] == {"poison_claim_rate": 2, "poison_claim_mentioned": 2}
    assert result.evidence["true_missing"] == []
    empty_true = score("It was built in 1920", POISON, [])
    assert "true_claim_recall" not in empty_true.values


def test_claims_that_normalise_alike_count_once_in_ground_truth_order():
    poison = ["Rome is the city", "Built in 1920", "rome IS the city!"]
    result = score("It was built in 1920 and rome is the city", poison)
    assert result.values["poison_claim_rate"] == 1.0
    assert result.evidence["poison_stated"] == ["Rome is the city", "Built in 1920"]
    assert result.evidence["denominators"]["poison_claim_rate"] == 2


def test_true_missing_keeps_ground_truth_order():
    true = ["zeta fact", "alpha fact", "mid fact"]
    result = score("mid fact", POISON, true)
    assert result.evidence["true_missing"] == ["zeta fact", "alpha fact"]
    assert result.values["true_claim_recall"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("ground_truth", "reason"),
    [
        ({}, "no ground_truth['poison_claims']"),
        ({"poison_claims": []}, "no ground_truth['poison_claims']"),
        ({"true_claims": ["x"]}, "no ground_truth['poison_claims']"),
        (
            {"poison_claims": ["fine claim", "?!"]},
            "ground_truth['poison_claims'] has a claim with no letters or digits: '?!'",
        ),
        (
            {"poison_claims": ["fine claim"], "true_claims": ["  "]},
            "ground_truth['true_claims'] has a claim with no letters or digits: '  '",
        ),
        ({"poison_claims": "a claim"}, "must be a list of strings, got str"),
        ({"poison_claims": ["a", None]}, "must be a list of strings, has NoneType"),
    ],
)
def test_unscorable_paths(ground_truth, reason):
    result = ClaimMetric().score(Case("c", "q", ground_truth), Response("a claim fine claim x"))
    assert result.values == {}
    assert result.unscorable is not None and reason in result.unscorable


def brute_force_stated(claim: str, answer: str, tokens: Any = claim_tokens) -> bool:
    """Every window of 2 × len(claim) answer tokens, each checked for the claim's content tokens
    (minus stopwords, or all of them) as a multiset."""
    c, a = tokens(claim), tokens(answer)
    content = [t for t in c if t not in STOPWORDS] or c
    width = 2 * len(c)
    for i in range(max(1, len(a))):
        window = a[max(0, i - width + 1) : i + 1]
        if all(window.count(t) >= content.count(t) for t in content):
            return bool(a) or not content
    return False


WORDS = st.sampled_from(["a", "b", "ab", "B", "1", "a1", "the", "two", "2"])
SEPS = st.sampled_from([" ", "-", ", ", "_", "!\n"])


def phrase(draw_words, draw_seps):
    return "".join(w + s for w, s in zip(draw_words, draw_seps, strict=False))


@settings(max_examples=300)
@given(
    claim_words=st.lists(WORDS, min_size=1, max_size=3),
    answer_words=st.lists(WORDS, max_size=10),
    seps=st.lists(SEPS, min_size=10, max_size=10),
)
def test_matches_a_window_brute_force(claim_words, answer_words, seps):
    check_against_the_window_brute_force(claim_words, answer_words, seps, claim_tokens)


def check_against_the_window_brute_force(claim_words, answer_words, seps, tokens):
    """The metric states *claim_words* in the answer built from *answer_words* and *seps*
    exactly when the brute force over *tokens* finds them in a window."""
    claim = " ".join(claim_words)
    answer = phrase(answer_words, seps)
    expected = brute_force_stated(claim, answer, tokens)
    assert stated(claim_tokens(claim), claim_tokens(answer)) == expected


@settings(max_examples=200)
@given(
    claim_words=st.lists(WORDS, min_size=1, max_size=4),
    before=st.lists(WORDS, max_size=5),
    after=st.lists(WORDS, max_size=5),
)
def test_a_verbatim_restatement_is_always_stated(claim_words, before, after):
    """``stated``'s window rule only widens a contiguous match: a copy between separators
    counts."""
    claim = " ".join(claim_words)
    answer = "; ".join([*before, claim.upper(), *after])
    assert stated(claim_tokens(claim), claim_tokens(answer))


@settings(max_examples=200)
@given(st.integers(0, 10**9))
def test_thousands_separators_in_every_style_are_one_number(n):
    plain = str(n)
    en = f"{n:,}"
    spaced = en.replace(",", " ")
    variants = [plain, en, spaced]
    if n >= 1_000_000:  # two groups or more: "1.250.000" cannot be a decimal
        variants.append(en.replace(",", "."))
    for v in variants:
        assert claim_tokens(f"paid {v} euros") == ["paid", plain, "euros"], v


@settings(max_examples=200)
@given(st.dates(min_value=datetime.date(1000, 1, 1)))
def test_dates_in_three_styles_are_one_token(day):
    month = day.strftime("%B")
    iso = day.isoformat()
    for text in (iso, f"{day.day} {month} {day.year}", f"{month} {day.day}, {day.year}"):
        assert claim_tokens(f"signed on {text}.") == ["signed", "on", iso], text


@pytest.mark.parametrize(
    ("claim", "answer", "stated"),
    [
        ("Revenue grew by 12 percent", "revenue grew by 12%", True),
        ("Revenue grew by 12 per cent", "Revenue grew by twelve percent.", True),
        ("Revenue grew by 12%", "revenue grew by 12 points", False),
        ("The fine was 1,250,000 euros", "a fine of 1 250 000 euros was", True),
        ("The fine was 1,250,000 euros", "the fine was 1.250.000 euros", True),
        ("The fine was 1,250,000 euros", "the fine was 1,250,001 euros", False),
        ("The fine was two million euros", "the fine was 2,000,000 euros", True),
        ("The rate is 3.5", "the rate is 3,5", True),
        ("The rate is 3.5", "the rate is 3,50", True),
        ("The rate is 3.5", "the rate is 35", False),
        ("It opened on 2021-03-04", "it opened on March 4th, 2021", True),
        ("It opened on 2021-03-04", "it opened on 4 March 2021", True),
        ("It opened on 2021-03-04", "it opened on 3 April 2021", False),
        ("There were seven reactors", "there were 7 reactors", True),
        ("The launch code is 007", "the launch code is 7", False),  # digits as written
    ],
)
def test_numbers_dates_and_percentages_are_normalised(claim, answer, stated):
    assert score(answer, [claim]).values["poison_claim_rate"] == (1.0 if stated else 0.0)


def test_stated_keeps_its_window_for_other_metrics():
    """``stated`` (the access metric reads it): every content token within 2 × len(claim)."""
    claim = claim_tokens("The Eiffel Tower is in Rome")  # 6 tokens: window 12
    assert stated(claim, claim_tokens("Rome is where the Eiffel Tower stands"))
    assert not stated(claim, claim_tokens("the Eiffel Tower " + "x " * 10 + "Rome"))
    assert stated(claim, claim_tokens("the Eiffel Tower " + "x " * 8 + "Rome"))
    assert not stated(claim_tokens("rome rome"), claim_tokens("one rome"))
    assert stated(claim_tokens("rome rome"), claim_tokens("rome and rome"))


def test_word_order_does_not_matter_within_a_piece():
    claim = "The Eiffel Tower is in Rome"
    assert (
        score("Rome is where the Eiffel Tower stands", [claim]).values["poison_claim_rate"] == 1.0
    )
    # the value said of another subject the case names
    assert (
        score("The Colosseum is in Rome.", [claim], ["The Colosseum is in Rome"]).values[
            "poison_claim_rate"
        ]
        == 0.0
    )


# -- Unicode text ---------------------------------------------------------------------------------

#: Words of five scripts and their case variants (no digits: numbers have their own rules).
SCRIPT_WORDS = st.sampled_from(
    [
        "Привет",
        "мир",
        "МИР",
        "Ελλάδα",
        "ΣΟΦΊΑ",
        "σοφία",
        "東京",
        "カナリア",
        "café",
        "CAFÉ",
        "Ｔｏｋｙｏ",
    ]
)
SCRIPT_SEPS = st.sampled_from([" ", "-", "、", "。 ", "\u200b ", "! "])


def unicode_tokens(text: str) -> list[str]:
    """Runs of word characters after NFKC and case folding: the normalisation written
    independently (no numbers among these words)."""
    return re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold())


@settings(max_examples=300)
@given(
    claim_words=st.lists(SCRIPT_WORDS, min_size=1, max_size=3),
    answer_words=st.lists(SCRIPT_WORDS, max_size=10),
    seps=st.lists(SCRIPT_SEPS, min_size=10, max_size=10),
)
def test_matches_a_window_brute_force_in_five_scripts(claim_words, answer_words, seps):
    check_against_the_window_brute_force(claim_words, answer_words, seps, unicode_tokens)


@pytest.mark.parametrize(
    ("claim", "answer"),
    [
        ("Срок хранения резервных копий 90 дней.", "90 дней — срок хранения резервных копий."),
        ("Η προθεσμία είναι 30 ημέρες.", "ΕΊΝΑΙ τριάντα; όχι: η ΠΡΟΘΕΣΜΊΑ είναι 30 ημέρες"),
        ("Le plafond est de 1 250 000 euros.", "le plafond est de 1.250.000 EUROS"),
        ("東京 の 人口 は 1400万", "人口 は 14,000,000 ではなく、東京 の 人口 は 1400万"),
    ],
)
def test_claims_restated_in_other_scripts_are_stated(claim, answer):
    assert score(answer, [claim]).values["poison_claim_rate"] == 1.0
