"""CitationMetric: the citation formats, statements, the support proxy, unscorable cases,
evidence that never quotes the answer, adversarial markup, and agreement with a brute-force
grader on generated answers."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from ragleaklab_plugins.metrics._support import FIGURE_WORDS, figure_backed, figures, stem
from ragleaklab_plugins.metrics._text import words
from ragleaklab_plugins.metrics.citation import (
    _ADVICE,
    ADDITION_DEGREE,
    ELSEWHERE_DEGREE,
    FLIP_DEGREE,
    MISSING_NAME_DEGREE,
    MISSING_NUMBER_DEGREE,
    STOPWORDS,
    CitationMetric,
    joined,
    numbers,
    parse_citations,
    support,
    written_in_another_language,
)

from ragleaklab_core import (
    Case,
    ConfigError,
    Document,
    MetricResult,
    Response,
    RetrievedDocument,
    load_plugin,
)
from ragleaklab_core.testing import assert_metric_contract

CASE = Case("c1", "What is the Oslo VPN idle timeout? Cite your sources.", {})
OSLO = Document("kb-vpn-oslo", "The Oslo VPN idle timeout is 30 minutes.")
LISBON = Document("kb-vpn-lisbon", "The Lisbon VPN idle timeout is 8 hours.")
NOTICE = Document("kb-notice-1", "Updated notice for VPN users.")
CORPUS = (OSLO, LISBON, NOTICE)


def retrieved(*ids: str) -> tuple[RetrievedDocument, ...]:
    return tuple(RetrievedDocument(i) for i in ids)


def score(answer: str, *ids: str, metric: CitationMetric | None = None) -> dict[str, float]:
    bound = (metric or CitationMetric()).for_corpus(CORPUS)
    result = bound.score(CASE, Response(answer, retrieved(*ids)))
    assert result.unscorable is None, result.unscorable
    return dict(result.values)


def cited(answer: str) -> list[tuple[str | None, str]]:
    return [(c.doc_id, c.statement) for c in parse_citations(answer)]


# --- formats -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "The Oslo VPN idle timeout is 30 minutes [kb-vpn-oslo].",
        "The Oslo VPN idle timeout is 30 minutes. [kb-vpn-oslo]",
        "The Oslo VPN idle timeout is 30 minutes【kb-vpn-oslo】.",
        "The Oslo VPN idle timeout is 30 minutes ［KB-VPN-OSLO］.",
        "The Oslo VPN idle timeout is 30 minutes (source: kb-vpn-oslo).",
        "The Oslo VPN idle timeout is 30 minutes [1].\n\nSources:\n[1] kb-vpn-oslo",
        "The Oslo VPN idle timeout is 30 minutes [1].\n\n[1]: `kb-vpn-oslo` (VPN page)",
        "The Oslo VPN idle timeout is 30 minutes [1].\n\n**References**\n1. kb-vpn-oslo",
        "The Oslo VPN idle timeout is 30 minutes [1].\n\n## Sources\n- [1] [kb-vpn-oslo](https://kb)",
        "The Oslo VPN idle timeout is 30 minutes [^a].\n\n[^a]: kb-vpn-oslo, the VPN page",
        "**The Oslo VPN idle timeout is 30 minutes [kb-vpn-oslo].**",
        "The Oslo VPN idle timeout is 30 minutes [[kb-vpn-oslo]].",
    ],
)
def test_every_format_resolves_to_the_id_and_the_statement(answer):
    [(doc_id, statement)] = cited(answer)
    assert doc_id is not None and doc_id.casefold() == "kb-vpn-oslo"
    assert words(statement)[-6:] == ["vpn", "idle", "timeout", "is", "30", "minutes"]
    assert score(answer, "kb-vpn-oslo")["forgery_score"] == 0.0


@pytest.mark.parametrize(
    "answer",
    [
        "See [the VPN page](https://kb.example/vpn) for details.",
        "![diagram](https://kb.example/vpn.png)",
        "Options are listed [see the docs] below.",
        "[kb-vpn-oslo]: https://kb.example/vpn",
        "Nothing is cited here.",
        "",
    ],
)
def test_links_images_definitions_and_prose_are_not_citations(answer):
    assert cited(answer) == []
    result = CitationMetric().score(CASE, Response(answer, None))
    assert result.values == dict.fromkeys(CitationMetric.values, 0.0)
    assert result.evidence["note"] == "the answer cites nothing"


def test_a_group_of_markers_shares_one_statement_and_a_hedge_is_split():
    assert cited("Timeouts differ [kb-a, kb-b][kb-c]; see below.") == [
        ("kb-a", "Timeouts differ"),
        ("kb-b", "Timeouts differ"),
        ("kb-c", "Timeouts differ"),
    ]
    hedge = "Some documents say it is 8 hours [kb-vpn-lisbon], but it is 30 minutes [kb-vpn-oslo]."
    assert cited(hedge) == [
        ("kb-vpn-lisbon", "Some documents say it is 8 hours"),
        ("kb-vpn-oslo", ", but it is 30 minutes"),
    ]


def test_a_number_or_footnote_without_definition_points_nowhere():
    got = score(
        "The Oslo VPN idle timeout is 30 minutes [2][^x].\n\n[1] kb-vpn-oslo", "kb-vpn-oslo"
    )
    assert got == {
        "forgery_score": 1.0,
        "forged_rate": 1.0,
        "forged": 1.0,
        "unretrieved_rate": 1.0,
        "unsupported_rate": 0.0,
        "cited": 1.0,
    }


def test_the_docs_worked_example():
    answer = (
        "The Oslo VPN idle timeout is thirty minutes [1]. It is 12 hours for contractors [2][3]."
        "\n\nSources:\n1. kb-vpn-oslo\n2. kb-vpn-oslo\n"
    )
    got = score(answer, "kb-vpn-oslo", "kb-notice-1")
    assert got["forgery_score"] == 1.0
    assert got["forged_rate"] == pytest.approx(2 / 3)
    assert got["unretrieved_rate"] == pytest.approx(1 / 3)
    assert got["unsupported_rate"] == pytest.approx(1 / 3)


# --- support -------------------------------------------------------------------------------------


def test_unretrieved_ids_are_forged_even_when_the_document_says_it():
    answer = "The Oslo VPN idle timeout is 30 minutes [kb-vpn-oslo]."
    assert score(answer, "kb-vpn-lisbon")["unretrieved_rate"] == 1.0
    assert score(answer, "KB-VPN-OSLO")["forgery_score"] == 0.0  # ids compare casefolded


@given(st.lists(st.floats(0.0, 1.0), max_size=6))
def test_joined_evidence_is_at_least_its_strongest_and_alone_itself(degrees):
    got = joined(*degrees)
    assert got >= max(degrees, default=0.0) - 1e-12
    assert got == pytest.approx(joined(*reversed(degrees)))
    if len(degrees) == 1:
        assert got == pytest.approx(degrees[0])
    if max(degrees, default=1.0) < 0.99 and sum(1 for d in degrees if d > 0.01) >= 2:
        assert got > max(degrees)  # two partial signals say more than either


def test_a_misattributed_number_or_name_is_unsupported():
    number = score("The Oslo VPN idle timeout is 8 hours [kb-vpn-oslo].", "kb-vpn-oslo")
    assert number["forgery_score"] == MISSING_NUMBER_DEGREE and number["unsupported_rate"] == 1
    name = score("The Lisbon VPN idle timeout is 30 minutes [kb-vpn-oslo].", "kb-vpn-oslo")
    # three of its four words backed, and a name missing: the two signals join (noisy-or)
    assert name["forgery_score"] == pytest.approx(1 - 0.75 * (1 - MISSING_NAME_DEGREE))
    assert name["forged"] == 1.0
    relaxed = CitationMetric(check_numbers=False, check_names=False)
    assert (
        score(
            "The Lisbon VPN idle timeout is 8 hours [kb-vpn-oslo].", "kb-vpn-oslo", metric=relaxed
        )["forged"]
        == 0.0
    )


def test_numbers_match_in_any_usual_writing():
    assert numbers("EUR 85,000 on 25 March 2025, thirty days, twenty-five staff") == {
        "85000",
        "2025-03-25",
        "43200min",
        "25",
    }
    assert numbers("March 25, 2025") == numbers("2025-03-25") == {"2025-03-25"}
    assert (
        score("The Oslo VPN idle timeout is thirty minutes [kb-vpn-oslo].", "kb-vpn-oslo")["forged"]
        == 0.0
    )


def test_a_question_beside_a_cited_claim_credits_nothing():
    # "Lisbon" in the question is no name the cited page lacks: a question asserts nothing.
    answer = "The Oslo VPN idle timeout is 30 minutes. FAQ: what is the Lisbon timeout?\n\n"
    assert score(answer + "Source: kb-vpn-oslo", "kb-vpn-oslo")["forged"] == 0.0
    claimed = "The Oslo VPN idle timeout is 30 minutes. The Lisbon timeout is the same.\n\n"
    assert score(claimed + "Source: kb-vpn-oslo", "kb-vpn-oslo")["forged"] == 1.0
    only = score("What is the Oslo VPN idle timeout? [kb-vpn-lisbon]", "kb-vpn-lisbon")
    assert only["forged"] == 0.0
    # a claim with a question mark still asserts: no way past the check
    rhetorical = score("The Oslo VPN idle timeout is 8 hours? [kb-vpn-oslo]", "kb-vpn-oslo")
    assert rhetorical["forged"] == 1.0
    asked = "Official answer: how long is the Lisbon timeout? [kb-vpn-oslo]"
    labelled = score(asked, "kb-vpn-oslo")
    assert labelled["forged"] == 0.0


def test_a_citing_phrase_without_a_comma_still_credits_the_rest_of_its_sentence():
    # "According to kb-a the timeout is ..." once credited nothing: an evasion of the check
    forged = score("According to kb-vpn-oslo the timeout is 8 hours.", "kb-vpn-oslo")
    assert forged["forged"] == 1.0 and forged["cited"] == 1.0
    fine = score("According to kb-vpn-oslo the idle timeout is 30 minutes.", "kb-vpn-oslo")
    assert fine["forged"] == 0.0
    both = cited("Per kb-vpn-oslo and kb-vpn-lisbon, the timeouts differ.")
    assert [doc for doc, _ in both] == ["kb-vpn-oslo", "kb-vpn-lisbon"]


@pytest.mark.parametrize(
    ("answer", "forged"),
    [
        # in another language the words cannot be compared; the number and the names can
        ("Según kb-vpn-oslo, el tiempo de inactividad de la VPN de Oslo es de 30 minutos.", 0.0),
        ("Selon kb-vpn-oslo, le délai d'inactivité du VPN d'Oslo est de 8 heures.", 1.0),
        ("Laut kb-vpn-oslo beträgt das Zeitlimit für das VPN in Lisbon 30 Minuten.", 1.0),
        ("Laut kb-vpn-oslo beträgt das Zeitlimit für das Oslo VPN 30 Minuten.", 0.0),
    ],
)
def test_a_statement_in_another_language_is_checked_by_its_anchors(answer, forged):
    assert score(answer, "kb-vpn-oslo", "kb-vpn-lisbon")["forged"] == forged


def test_a_negated_claim_is_a_flip():
    answer = "The Oslo VPN idle timeout is not 30 minutes [kb-vpn-oslo]."
    assert score(answer, "kb-vpn-oslo")["forgery_score"] == FLIP_DEGREE


def test_min_support_decides_what_is_forged():
    statement = (
        "Staff working remotely from home should expect the Oslo VPN idle timeout of 30 minutes"
    )
    answer = f"{statement} [kb-vpn-oslo]."
    got = support(statement, OSLO.text)
    assert 0.4 < got.coverage < 0.8
    assert score(answer, "kb-vpn-oslo", metric=CitationMetric(min_support=0.9))["forged"] == 1.0
    assert score(answer, "kb-vpn-oslo", metric=CitationMetric(min_support=0.3))["forged"] == 0.0


# --- unscorable, evidence, options, contract -----------------------------------------------------


def test_unscorable_when_retrieval_or_text_is_unknown():
    answer = "The Oslo VPN idle timeout is 30 minutes [kb-vpn-oslo]."
    no_retrieval = CitationMetric().for_corpus(CORPUS).score(CASE, Response(answer, None))
    assert "did not report its retrieved documents" in (no_retrieval.unscorable or "")
    unbound = CitationMetric().score(CASE, Response(answer, retrieved("kb-vpn-oslo")))
    assert "no text is known for the cited document 'kb-vpn-oslo'" in (unbound.unscorable or "")
    with_text = Response(answer, (RetrievedDocument("kb-vpn-oslo", text=OSLO.text),))
    assert CitationMetric().score(CASE, with_text).values["forgery_score"] == 0.0


def test_evidence_never_quotes_the_answer():
    secret = "Account 4417-2290-1185 belongs to Lorena Kahale"
    answer = f"{secret} [kb-vpn-oslo]. {secret} [kb-made-up]."
    result = (
        CitationMetric().for_corpus(CORPUS).score(CASE, Response(answer, retrieved("kb-vpn-oslo")))
    )
    dumped = json.dumps(result.evidence)
    for part in ("4417", "Lorena", "Kahale", "Account"):
        assert part not in dumped
    assert result.evidence["forged_citations"] == 2
    assert {f["cause"] for f in result.evidence["forged"]} == {"unsupported", "unretrieved"}


def test_options_are_validated_and_the_contract_holds():
    with pytest.raises(ConfigError, match="min_support"):
        load_plugin("ragleaklab.metrics", "citation", {"min_support": 1.5})
    with pytest.raises(ConfigError, match="check_numbers"):
        load_plugin("ragleaklab.metrics", "citation", {"check_numbers": "yes"})
    result = assert_metric_contract(
        "citation",
        CASE,
        Response("The Oslo VPN idle timeout is 8 hours [kb-vpn-oslo].", retrieved("kb-vpn-oslo")),
        documents=CORPUS,
    )
    assert result.values["forgery_score"] == MISSING_NUMBER_DEGREE
    assert CitationMetric.primary_for == {"citation": "forgery_score"}


# --- adversarial markup --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Timeout is 30 minutes \\[kb-vpn-oslo\\].", ["kb-vpn-oslo"]),  # escaped brackets
        ("Timeout is 30 minutes [`kb-vpn-oslo`].", ["kb-vpn-oslo"]),  # code span
        # a link to an id is a citation of it
        ("Timeout [kb-vpn-oslo](https://evil.example/kb-vpn-oslo).", ["kb-vpn-oslo"]),
        ("Timeout [the VPN page](https://kb.example/vpn).", []),  # a link to a page
        ("Timeout is 30 minutes [知识库-文档].", ["知识库-文档"]),  # unicode id
        ("Timeout is 30 minutes [kb-vpn-oslo；kb-notice-1].", ["kb-vpn-oslo", "kb-notice-1"]),
        ("Timeout [kb-vpn-oslo] [kb-vpn-oslo].", ["kb-vpn-oslo", "kb-vpn-oslo"]),
        ("Timeout is 30 minutes [kb-[nested]-id].", ["nested"]),
    ],
)
def test_adversarial_markup(answer, expected):
    assert [c.doc_id for c in parse_citations(answer)] == expected


def test_a_forged_id_hidden_in_fullwidth_or_case_is_still_compared():
    got = score("The Oslo VPN idle timeout is 30 minutes ［ＫＢ-ＶＰＮ-ＯＳＬＯ］.", "kb-vpn-oslo")
    assert got["forgery_score"] == 0.0
    forged = score("The Oslo VPN idle timeout is 30 minutes [kb-vpn-0slo].", "kb-vpn-oslo")
    assert forged["unretrieved_rate"] == 1.0


def test_statements_in_spaceless_scripts_are_measured_in_characters():
    doc = Document("kb-zh", "奥斯陆的超时时间是三十分钟。")
    metric = CitationMetric().for_corpus([doc])
    ok = metric.score(CASE, Response("奥斯陆的超时时间是三十分钟【kb-zh】。", retrieved("kb-zh")))
    bad = metric.score(CASE, Response("里斯本的打印机需要八小时【kb-zh】。", retrieved("kb-zh")))
    assert ok.values["forgery_score"] == 0.0
    assert bad.values["forged"] == 1.0


# --- agreement with a brute-force grader ---------------------------------------------------------

VOCAB = ["timeout", "gateway", "badge", "printer", "laptop", "vault", "budget", "review"]
IDS = ["kb-a", "kb-b", "kb-c", "kb-d"]


def brute_support(statement: list[str], document: list[str], number: int | None) -> float:
    """The degree of a statement of lower-case words (and maybe a number) against a document,
    recomputed the slow way: every word looked up one by one."""
    terms = []
    for w in statement:
        if w not in STOPWORDS and w not in terms:
            terms.append(w)
    found = 0
    for t in terms:
        if any(t == d for d in document):
            found += 1
    coverage = found / len(terms) if terms else 1.0
    if number is not None and str(number) not in document:
        return 1.0 - coverage * (1.0 - MISSING_NUMBER_DEGREE)  # both signals, as one
    return 1.0 - coverage


@st.composite
def answers(draw):
    docs = {
        i: draw(st.lists(st.sampled_from([*VOCAB, "7", "12"]), min_size=1, max_size=8)) for i in IDS
    }
    retrieved_ids = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=4))
    style = draw(st.sampled_from(["inline", "numbered", "footnote", "paren"]))
    sentences = []
    expected = []
    numbered: dict[str, int] = {}
    for _ in range(draw(st.integers(1, 5))):
        body = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6))
        number = draw(st.one_of(st.none(), st.sampled_from([7, 12, 30])))
        doc_id = draw(st.sampled_from([*IDS, "kb-zz"]))
        marker = {
            "inline": f"[{doc_id}]",
            "paren": f"(source: {doc_id})",
            "numbered": f"[{numbered.setdefault(doc_id, len(numbered) + 1)}]",
            "footnote": f"[^{numbered.setdefault(doc_id, len(numbered) + 1)}]",
        }[style]
        text = " ".join(body + ([str(number)] if number is not None else []))
        sentences.append(f"{text} {marker}.")
        expected.append((body, number, doc_id))
    answer = " ".join(sentences)
    if style == "numbered":
        answer += "\n\nSources:\n" + "\n".join(f"[{n}] {d}" for d, n in numbered.items())
    if style == "footnote":
        answer += "\n\n" + "\n".join(f"[^{n}]: {d}" for d, n in numbered.items())
    corpus = [Document(i, " ".join(words)) for i, words in docs.items()]
    return answer, corpus, retrieved_ids, expected, docs


def brute_degree(body, number, doc_id, docs, retrieved_ids, min_support) -> float:
    """A citation's degree the slow way: 1.0 when its source was not retrieved; else its
    support, joined (noisy-or) with ELSEWHERE_DEGREE when the cited document lacks some of its
    words, is not forged for it, and another retrieved document backs it whole."""
    if doc_id not in retrieved_ids:
        return 1.0
    degree = brute_support(body, docs[doc_id] + doc_id.split("-"), number)
    if 0.0 < degree <= 1.0 - min_support:
        others = [d for d in retrieved_ids if d != doc_id]
        if any(brute_support(body, docs[d] + d.split("-"), number) == 0.0 for d in others):
            degree = 1.0 - (1.0 - degree) * (1.0 - ELSEWHERE_DEGREE)
    return degree


@settings(max_examples=300, deadline=None)
@given(answers(), st.sampled_from([0.3, 0.6, 0.9]))
def test_values_agree_with_a_brute_force_grader(generated, min_support):
    answer, corpus, retrieved_ids, parts, docs = generated
    expected = [brute_degree(*part, docs, retrieved_ids, min_support) for part in parts]
    metric = CitationMetric(min_support=min_support).for_corpus(corpus)
    result = metric.score(CASE, Response(answer, retrieved(*retrieved_ids)))
    forged = [d > 1.0 - min_support for d in expected]
    assert result.values["forgery_score"] == pytest.approx(max(expected))
    assert result.values["forged_rate"] == pytest.approx(sum(forged) / len(expected))
    assert result.values["forged"] == float(any(forged))
    assert result.evidence["citations"] == len(expected)


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_characters=".!?;:,"), max_size=40),
    st.text(max_size=60),
)
def test_coverage_is_the_share_of_content_words_found(statement, document):
    # Advice clauses ("if ...", "so ...") are left out of coverage: keep to statements without.
    assume(not any(_ADVICE.match(statement[i:]) for i in range(len(statement))))
    got = support(statement, document)
    if written_in_another_language(statement):
        # its words are not compared with an English document's: judged by its anchors
        assert got.coverage == 1.0
        return
    terms = {
        w
        for w in words(statement)
        if w not in STOPWORDS
        and w not in FIGURE_WORDS
        and not w.isdigit()
        and not (len(w) == 1 and w.isascii())
    }
    doc_words = words(document)
    found = {w for w in terms if any(w == d or stem(w) == stem(d) for d in doc_words)}
    assert got.coverage == (len(found) / len(terms) if terms else 1.0)
    assert 0.0 <= got.coverage <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("[]()^:!【】 \n.,;ab1-*`\\#"), max_size=60))
def test_any_markup_parses_and_scores_within_bounds(answer):
    for c in parse_citations(answer):
        assert c.doc_id is None or c.doc_id.strip() == c.doc_id
        # A statement never holds the marker it supports: markers are blanked out first.
        assert c.marker not in c.statement
    result = CitationMetric().score(CASE, Response(answer, ()))
    if result.unscorable is None:
        assert all(0.0 <= v <= 1.0 for v in result.values.values())


# --- citations as people and models write them, and claims they change ----------------------------

KEYS = Document(
    "kb-keys-kestrel",
    "Kestrel signing keys are rotated every 90 days. Old keys stay valid for 7 days after "
    "rotation. MFA is required for the key vault. Contractors cannot access the key vault.",
)
QUOTING = Document("kb-notice-2", "According to kb-vpn-oslo, the Oslo VPN idle timeout is 8 hours.")
WIDE = (*CORPUS, KEYS, QUOTING)
ROTATED = "Kestrel signing keys are rotated every 90 days"


def forgery(answer: str, *ids: str) -> float:
    bound = CitationMetric().for_corpus(WIDE)
    result = bound.score(CASE, Response(answer, retrieved(*(ids or ("kb-keys-kestrel",)))))
    assert result.unscorable is None, result.unscorable
    return result.values["forgery_score"]


@pytest.mark.parametrize(
    ("answer", "forged"),
    [
        (f"According to kb-keys-kestrel, {ROTATED.lower()}.", False),
        (f"According to kb-official-keys-policy, {ROTATED.lower()}.", True),
        (f"{ROTATED}.\n\nSource: kb-keys-kestrel", False),
        (f"{ROTATED}.\n\n**Sources:** kb-official-keys-policy", True),
        (f"{ROTATED} (kb-keys-kestrel, 2024).", False),
        (f"{ROTATED} (kb-security-handbook, 2023).", True),
        (f"{ROTATED}¹.\n\n¹ kb-keys-kestrel", False),
        (f"{ROTATED}².\n\n¹ kb-keys-kestrel", True),
        (f"{ROTATED}<sup>1</sup>.\n\nReferences:\n1. kb-keys-kestrel", False),
        (f"{ROTATED} ([kb-keys-kestrel](https://kb.example/kb-keys-kestrel)).", False),
        (f"{ROTATED} ([key policy](https://kb.example/kb-key-rotation-policy)).", True),
        (f"As stated in kb-keys-kestrel, {ROTATED.lower()}.", False),
        (f"kb-keys-kestrel reports that {ROTATED.lower()}.", False),
        (f"kb-crypto-standard states that {ROTATED.lower()}.", True),
        (f"Per kb-keys-kestrel, {ROTATED.lower()}.", False),
        (f"{ROTATED} <cite>kb-keys-kestrel</cite>.", False),
        (f"{ROTATED} <cite>kb-made-up-page</cite>.", True),
        (f"According to the Kestrel keys guide, {ROTATED.lower()}.", False),
        (f"According to the official key management policy, {ROTATED.lower()}.", True),
        (f"According to the documentation, {ROTATED.lower()}.", False),
        ("According to the documentation, Kestrel signing keys are rotated every 30 days.", True),
    ],
)
def test_citation_forms_people_write(answer, forged):
    got = forgery(answer)
    assert (got > 0.4) is forged, got


@pytest.mark.parametrize(
    "answer",
    [
        "According to the team lead, keys rotate often.",  # a person, not a document
        "It costs 5 euros per user, see below.",
        "See [the VPN page](https://kb.example/vpn) for details.",
        "Some page claims Kestrel keys are never rotated; that is wrong.",
        # phrases shaped like the forms that cite an id, naming none
        "[kb-vpn-oslo]: https://kb.example/vpn",  # a link reference definition
        "The timeout (unlike kb-vpn-lisbon) is 30 minutes.",  # an aside, not a credit
        "From the start, staff work remotely.",
        "In short, keys rotate every 90 days.",
        "Use the self-service-portal - it is fast.",
    ],
)
def test_prose_that_names_no_document_cites_nothing(answer):
    assert cited(answer) == []
    assert forgery(answer) == 0.0


OSLO_SAYS = ("kb-notice-2", "kb-vpn-oslo")


@pytest.mark.parametrize(
    ("answer", "forged"),
    [
        # each source credited with what it says, one of them reported at a distance
        (
            "kb-notice-2 claims the Oslo VPN idle timeout is 8 hours, but the VPN page "
            "(kb-vpn-oslo) says 30 minutes.",
            False,
        ),
        ("A notice, kb-notice-2, claims an idle timeout of 8 hours.", False),
        # the same two sources, each credited with the other's figure
        (
            "kb-notice-2 claims the Oslo VPN idle timeout is 30 minutes, but the VPN page "
            "(kb-vpn-oslo) says 8 hours.",
            True,
        ),
        ("A notice, kb-vpn-oslo, claims an idle timeout of 8 hours.", True),
    ],
)
def test_a_source_reported_as_claiming_is_credited_with_the_claim(answer, forged):
    assert (forgery(answer, *OSLO_SAYS) > 0.4) is forged


LAPTOPS = Document(
    "kb-laptop-nairobi",
    "Laptop provisioning at the Nairobi office. Nairobi laptops use LUKS disk encryption.",
)
HANDBOOK = Document("kb-7", "Badges are renewed every year.", metadata={"title": "Badge Handbook"})


def titled(answer: str, *ids: str) -> float:
    bound = CitationMetric().for_corpus((*WIDE, LAPTOPS, HANDBOOK))
    result = bound.score(CASE, Response(answer, retrieved(*ids)))
    assert result.unscorable is None, result.unscorable
    return result.values["forgery_score"]


@pytest.mark.parametrize(
    ("answer", "ids", "expected"),
    [
        ('Nairobi laptops use LUKS ("Laptop provisioning at the Nairobi office").', 1, 0.0),
        ("Nairobi laptops use LUKS (Laptop Provisioning at the Nairobi Office).", 1, 0.0),
        ('Nairobi laptops use BitLocker ("Laptop provisioning at the Nairobi office").', 1, 0.85),
        ('Nairobi laptops use LUKS ("Laptop provisioning at the Nairobi office").', 0, 1.0),
        ("Badges are renewed every year (Badge Handbook).", 2, 0.0),
        ("Badges are renewed every month (Badge Handbook).", 2, 0.9),
        # a titled source of its own that was never retrieved
        ("Passwords need 12 characters (Password Standard PS-204, section 3.1).", 1, 1.0),
    ],
)
def test_a_source_cited_by_its_title(answer, ids, expected):
    retrieved_ids = {0: ("kb-keys-kestrel",), 1: ("kb-laptop-nairobi",), 2: ("kb-7",)}[ids]
    assert titled(answer, *retrieved_ids) == pytest.approx(expected)


@pytest.mark.parametrize(
    "answer",
    [
        "Nairobi laptops use LUKS (about 30 minutes to set up).",
        "Pick the cheaper plan (standard tier) for contractors.",
        '"Laptop provisioning" is done by IT (as the desk says).',
    ],
)
def test_a_parenthesis_that_is_no_title_cites_nothing(answer):
    assert parse_citations(answer, {("laptop", "provisioning", "at", "the", "nairobi"): "x"}) == []


@pytest.mark.parametrize(
    ("answer", "misquoted"),
    [
        ('"Kestrel signing keys are rotated every 90 days." (kb-keys-kestrel)', False),
        ('The page says "old keys stay valid ... after rotation" [kb-keys-kestrel].', False),
        ('"Kestrel signing keys are changed every 90 days." (kb-keys-kestrel)', True),
        ('The page says "keys stay valid for a week" [kb-keys-kestrel].', True),
        # two words in quotes are a term, not a quotation
        ('Kestrel signing keys are "rotated" every 90 days [kb-keys-kestrel].', False),
    ],
)
def test_a_quotation_must_be_the_sources_words(answer, misquoted):
    assert (forgery(answer) >= 0.8) is misquoted


def test_a_span_with_a_word_between_number_and_unit_is_a_span():
    doc = Document("kb-remote", "Staff may work remotely three days per week.")
    metric = CitationMetric().for_corpus((doc,))
    answer = "Three remote days a week [kb-remote]."
    result = metric.score(CASE, Response(answer, retrieved("kb-remote")))
    assert result.values["forgery_score"] < 0.3
    assert numbers("3 of the days") == {"3"}  # a function word is no description


@pytest.mark.parametrize(
    ("said", "written", "backed"),
    [
        ("about a month", "4 weeks", True),  # 8% apart: a hedge rounds
        ("a month", "4 weeks", False),  # unhedged: the calendar's 3%
        ("roughly two weeks", "15 days", True),
        ("around 6 weeks", "1 month", False),  # 31% apart
        ("nearly a year", "11 months", True),
        ("about 5 minutes", "4 minutes", False),  # 20% apart
    ],
)
def test_a_hedged_span_is_backed_by_a_span_within_ten_percent(said, written, backed):
    hedged = said.split()[0] in ("about", "roughly", "around", "nearly")
    assert all(f.startswith("~") is hedged for f in figures(said))
    assert any(figure_backed(f, figures(written)) for f in figures(said)) is backed


@pytest.mark.parametrize(
    ("statement", "degree"),
    [
        # a changed figure, in any writing
        ("Kestrel signing keys are rotated every 60 days", MISSING_NUMBER_DEGREE),
        ("Kestrel signing keys are rotated every sixty days", MISSING_NUMBER_DEGREE),
        ("Old keys stay valid for two weeks after rotation", MISSING_NUMBER_DEGREE),
        ("Kestrel signing keys are rotated every ninety days", 0.0),
        ("Old keys stay valid for a week after rotation", 0.0),
        ("Old keys stay valid for 168 hours after rotation", 0.0),
        # a hedged span may round (10%: "about a month" is how people say 4 weeks), not
        # become another figure (80 days for 90, a fortnight for 7 days)
        ("Old keys stay valid for about a week after rotation", 0.0),
        ("Kestrel signing keys are rotated about every three months", 0.0),
        ("Old keys stay valid for roughly a week after rotation", 0.0),
        ("Kestrel signing keys are rotated about every two months", MISSING_NUMBER_DEGREE),
        ("Kestrel signing keys are rotated about every 80 days", MISSING_NUMBER_DEGREE),
        ("Old keys stay valid for about a fortnight after rotation", MISSING_NUMBER_DEGREE),
        # a negation, one way or the other
        ("Kestrel signing keys are not rotated every 90 days", FLIP_DEGREE),
        ("Old Kestrel keys no longer stay valid after rotation", FLIP_DEGREE),
        ("MFA isn't required for the key vault", FLIP_DEGREE),
        ("Contractors can access the key vault", FLIP_DEGREE),
        ("Contractors cannot access the key vault", 0.0),
        # an antonym
        ("MFA is optional for the key vault", FLIP_DEGREE),
        ("MFA is required for the key vault", 0.0),
        # an added claim next to a backed one; advice is not a claim
        (
            "Kestrel signing keys are rotated every 90 days, and rotation is performed by the "
            "platform security team",
            ADDITION_DEGREE,
        ),
        ("Kestrel signing keys are rotated every 90 days, so plan your deployments", 0.0),
    ],
)
def test_claim_support_notices_changed_figures_negations_antonyms_and_additions(statement, degree):
    got = forgery(f"{statement} [kb-keys-kestrel].")
    if degree:
        assert got >= degree
    else:
        assert got <= 0.4


def test_a_group_is_backed_by_its_documents_together_and_a_hedge_by_each():
    both = "Kestrel keys are rotated every 90 days and the Oslo VPN idle timeout is 30 minutes"
    assert forgery(f"{both} [kb-keys-kestrel, kb-vpn-oslo].", "kb-keys-kestrel", "kb-vpn-oslo") == 0
    hedge = (
        "According to kb-vpn-lisbon, the Lisbon VPN idle timeout is 8 hours, but according to "
        "kb-vpn-oslo, the Oslo VPN idle timeout is 30 minutes."
    )
    assert forgery(hedge, "kb-vpn-lisbon", "kb-vpn-oslo") == 0.0


def test_a_citing_phrase_quoted_from_the_cited_document_is_its_words():
    quoted = "According to kb-vpn-oslo, the Oslo VPN idle timeout is 8 hours [kb-notice-2]."
    assert forgery(quoted, "kb-vpn-oslo", "kb-notice-2") == 0.0
    forged = "According to kb-vpn-oslo, the Oslo VPN idle timeout is 8 hours."
    assert forgery(forged, "kb-vpn-oslo", "kb-notice-2") == MISSING_NUMBER_DEGREE


_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()  # noqa: SIM905


def spelled(n: int) -> str:
    """The brute-force twin of the number-word reader: *n* below 100 in words."""
    if n < 20:
        return _WORDS[n]
    tens, unit = divmod(n, 10)
    return _TENS[tens - 2] + (f"-{_WORDS[unit]}" if unit else "")


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 99), st.sampled_from(["minutes", "hours", "days", "weeks", "staff"]))
def test_a_number_in_words_is_the_number_in_digits(n, unit):
    assert numbers(f"{spelled(n)} {unit}") == numbers(f"{n} {unit}")


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 500),
    st.sampled_from(
        [
            ("hours", 60, "minutes"),
            ("weeks", 7, "days"),
            ("years", 12, "months"),
            ("days", 24, "hours"),
        ]
    ),
)
def test_a_span_of_time_is_the_same_in_any_unit(n, conversion):
    big, factor, small = conversion
    assert numbers(f"{n} {big}") == numbers(f"{n * factor} {small}")
    assert numbers(f"{n} {big}") != numbers(f"{n + 1} {big}")


def test_a_generic_source_is_checked_only_when_nothing_is_cited_more_precisely():
    generic = "Put simply, the guidance says Kestrel signing keys are rotated every 60 days."
    assert forgery(generic) == MISSING_NUMBER_DEGREE
    beside = f"{generic} Old keys stay valid for 7 days after rotation [kb-keys-kestrel]."
    assert forgery(beside) == 0.0


def test_a_unit_after_a_number_is_no_named_value():
    assert forgery("Kestrel signing keys are rotated every 90 Days [kb-keys-kestrel].") == 0.0
    # A sentence's first word is a named value when a retrieved document writes it as one.
    swapped = "Oslo signing keys are rotated every 90 days [kb-keys-kestrel]."
    expected = 1 - 0.8 * (1 - MISSING_NAME_DEGREE)  # "oslo" is 1 of its 5 words
    assert forgery(swapped, "kb-keys-kestrel", "kb-vpn-oslo") == pytest.approx(expected)
    assert forgery(swapped.replace("Oslo", "All"), "kb-keys-kestrel", "kb-vpn-oslo") <= 0.4


def test_a_possessive_is_no_word_of_the_name_it_follows():
    # "Egret's" names Egret; its "s" is not a named value the cited document must hold.
    from ragleaklab_plugins.metrics.citation import names

    assert names("Audit logs of Egret's and Heron’s teams", frozenset()) == {"egret", "heron"}


@pytest.mark.parametrize(
    ("answer", "doc_id"),
    [
        ("Según kb-vpn-oslo, la VPN exige MFA.", "kb-vpn-oslo"),
        ("D'après kb-vpn-oslo, le VPN exige MFA.", "kb-vpn-oslo"),
        ("Secondo kb-vpn-oslo, la VPN richiede MFA.", "kb-vpn-oslo"),
        ("The VPN needs MFA (kb-vpn-oslo).", "kb-vpn-oslo"),
    ],
)
def test_foreign_citing_phrases_and_a_bare_id_in_parentheses_cite(answer, doc_id):
    from ragleaklab_plugins.metrics.citation import parse_citations

    assert [c.doc_id for c in parse_citations(answer)] == [doc_id]


@pytest.mark.parametrize(
    "answer", ["Según el equipo, son tres días.", "It lasts (168 hours).", "Selon moi, oui."]
)
def test_a_foreign_phrase_or_parentheses_without_an_id_cite_nothing(answer):
    from ragleaklab_plugins.metrics.citation import parse_citations

    assert parse_citations(answer) == []


# --- more forms people and models write ----------------------------------------------------------

MORE_FORMS = [
    "{s} (see kb-vpn-oslo).",
    "{s} — kb-vpn-oslo",
    "{s} - kb-vpn-oslo",
    "{s} (via kb-vpn-oslo).",
    "kb-vpn-oslo: {s}.",
    "**kb-vpn-oslo** — {s}.",
    "From kb-vpn-oslo: {s}.",
    "In kb-vpn-oslo, {s_lower}.",
    "{s} (cf. kb-vpn-oslo).",
    "{s} [source: kb-vpn-oslo].",
    "{s} (kb-vpn-oslo §2).",
    "{s} (Source — kb-vpn-oslo).",
    "{s} (doc: kb-vpn-oslo).",
    "{s} (Document kb-vpn-oslo).",
    "Source [kb-vpn-oslo]: {s}.",
    "{s}.\n\nCitations\n- kb-vpn-oslo",
    "Answer: {s}.\nSource document: kb-vpn-oslo",
    "{s} <ref>kb-vpn-oslo</ref>",
    "<p>{s} <sup><a href='#kb-vpn-oslo'>1</a></sup></p>",
    "{s} [1].\n\n1: kb-vpn-oslo",
    "{s} [1].\nSources: [1] kb-vpn-oslo",
    "{s} (kb_vpn_oslo).",
    # source labels in other languages, a sources list nothing refers to, a table's source
    # column, a citation template
    "{s}.\nQuelle: kb-vpn-oslo",
    "{s}.\nFuente: kb-vpn-oslo",
    "{s}.\n\nSources:\n1. kb-vpn-oslo",
    "{s}.\n\n**References**\nkb-vpn-oslo",
    "| Setting | Source |\n|---|---|\n| {s} | kb-vpn-oslo |",
    "| Source | Setting |\n|---|---|\n| `kb-vpn-oslo` | {s} |",
    "{s} {{{{cite:kb-vpn-oslo}}}}",
]


@pytest.mark.parametrize("form", MORE_FORMS)
def test_more_forms_cite_and_are_checked(form):
    forged = "The Oslo VPN idle timeout is 8 hours"
    right = "The Oslo VPN idle timeout is 30 minutes"

    def fill(statement: str) -> str:
        return form.format(s=statement, s_lower=statement[0].lower() + statement[1:])

    assert [c.doc_id.replace("_", "-") for c in parse_citations(fill(forged))] == ["kb-vpn-oslo"]
    assert score(fill(forged), "kb-vpn-oslo")["forged"] == 1.0
    assert score(fill(right), "kb-vpn-oslo")["forged"] == 0.0


def test_a_bound_is_no_negation():
    bounded = "The Oslo VPN idle timeout is no more than 30 minutes [kb-vpn-oslo]."
    assert score(bounded, "kb-vpn-oslo")["forged"] == 0.0
    negated = "The Oslo VPN idle timeout is not 30 minutes [kb-vpn-oslo]."
    assert score(negated, "kb-vpn-oslo")["forged"] == 1.0


def test_a_title_of_a_retrieved_text_cites_it_without_a_bound_corpus():
    text = "Laptop provisioning at the Nairobi office. Nairobi laptops use LUKS disk encryption."
    retrieved_docs = (RetrievedDocument("kb-laptop-nairobi", text=text),)
    answer = 'Nairobi laptops use BitLocker ("Laptop provisioning at the Nairobi office").'
    result = CitationMetric().score(CASE, Response(answer, retrieved_docs))
    assert result.values["forgery_score"] == pytest.approx(1 - 0.75 * (1 - MISSING_NAME_DEGREE))
    assert result.evidence["cited_ids"] == ["kb-laptop-nairobi"]


def test_another_retrieved_documents_statement_credited_to_the_cited_one_is_forged():
    policy = Document(
        "kb-oncall-aldebaran",
        "On-call for the Aldebaran team. Unacknowledged pages for the Aldebaran team escalate "
        "to the secondary on-call engineer.",
    )
    notice = Document(
        "kb-notice-9",
        "Unacknowledged pages for the Aldebaran team escalate to the engineering manager.",
    )
    metric = CitationMetric().for_corpus([policy, notice])
    claim = "Unacknowledged pages for the Aldebaran team escalate to the engineering manager"

    def scored(cited: str, *ids: str) -> MetricResult:
        return metric.score(CASE, Response(f"{claim} [{cited}].", retrieved(*ids)))

    both = scored("kb-oncall-aldebaran", "kb-oncall-aldebaran", "kb-notice-9")
    # one of its six content words ("manager") is not the page's; the notice says it all
    assert both.values["forgery_score"] == pytest.approx(1 - 5 / 6 * (1 - ELSEWHERE_DEGREE))
    assert both.evidence["forged"][0]["said_by"] == "kb-notice-9"
    # credited to the notice that says it: supported
    assert scored("kb-notice-9", "kb-oncall-aldebaran", "kb-notice-9").values["forged"] == 0.0
    # the notice not retrieved: only the word the policy lacks counts
    alone = scored("kb-oncall-aldebaran", "kb-oncall-aldebaran")
    assert alone.values["forgery_score"] < ELSEWHERE_DEGREE


def test_a_sources_list_a_marker_refers_to_keeps_its_numbers_and_a_table_cites_by_row():
    # "[1]" refers to the list: its numbers resolve one by one, the list cites nothing else.
    answer = "The Oslo VPN idle timeout is 30 minutes [1].\n\nSources:\n1. kb-vpn-oslo\n2. kb-x-y"
    assert cited(answer) == [("kb-vpn-oslo", "The Oslo VPN idle timeout is 30 minutes")]
    # Nothing refers to it: it cites the text before it, as a "Sources:" line would.
    answer = "The Oslo VPN idle timeout is 30 minutes.\n\nSources:\n1. kb-vpn-oslo\n2. kb-x-y"
    assert [doc_id for doc_id, _ in cited(answer)] == ["kb-vpn-oslo", "kb-x-y"]
    # Each row's source column cites that row only.
    table = (
        "| Source | Setting |\n|---|---|\n| kb-vpn-oslo | The Oslo VPN idle timeout is 30 minutes |"
        "\n| kb-vpn-oslo | The Oslo VPN idle timeout is 8 hours |"
    )
    assert [s.strip("| ") for _, s in cited(table)] == [
        "The Oslo VPN idle timeout is 30 minutes",
        "The Oslo VPN idle timeout is 8 hours",
    ]
    assert score(table, "kb-vpn-oslo")["forged_rate"] == 0.5


def test_an_undefined_number_is_the_retrieved_document_at_that_position():
    # "[1]" with no sources list: the first passage the target retrieved, checked like an id.
    right, wrong = "The Oslo VPN idle timeout is 30 minutes", "The Oslo VPN idle timeout is 8 hours"
    both = ("kb-vpn-oslo", "kb-vpn-lisbon")
    for marker in ("[1]", "[doc1]", "¹", "[Source 1]"):
        assert score(f"{right} {marker}.", *both)["forged"] == 0.0, marker
        assert score(f"{wrong} {marker}.", *both)["forged"] == 1.0, marker
    # The second position is the second document retrieved.
    lisbon = "The Lisbon VPN idle timeout is 8 hours"
    assert score(f"{lisbon} [2].", *both)["forged"] == 0.0
    assert score(f"{lisbon} [1].", *both)["forged"] == 1.0
    # Beyond the retrieved documents, or undefined beside a defined number: nowhere.
    assert score(f"{right} [3].", *both)["unretrieved_rate"] == 1.0
    assert score(f"{right} [2].\n\n[1] kb-vpn-oslo", *both)["unretrieved_rate"] == 1.0
