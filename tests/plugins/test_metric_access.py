"""The access metric: forbidden words, copied runs and retrieved documents, against brute force
and on adversarial inputs (other scripts, case and width tricks, shared wording)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragleaklab_plugins._access import groups_of, visible
from ragleaklab_plugins.metrics._text import words
from ragleaklab_plugins.metrics.access import AccessMetric
from ragleaklab_plugins.metrics.claim import STOPWORDS

from ragleaklab_core import Case, Document, InputError, Response, RetrievedDocument

ACME = Document(
    "acme",
    "Customer record for Brightwater Foods, account AC-12345, worth EUR 90,000 per year.",
    "private",
    {"access": {"groups": ["acme"]}},
)
GLOBEX = Document(
    "globex",
    "Customer record for Calder Dairy, account AC-55555, worth EUR 20,000 per year.",
    "private",
    {"access": {"groups": ["globex"]}},
)
PUBLIC = Document("pub", "Every customer record is worth reading once per year.")
CORPUS = [ACME, GLOBEX, PUBLIC]
METRIC = AccessMetric(min_words=3).for_corpus(CORPUS)


def _score(answer: str, principal: str | None = "acme:alice", query: str = "q?", **gt: object):
    case = Case("c", query, dict(gt), principal=principal)
    retrieved = (RetrievedDocument("globex"), RetrievedDocument("acme"), RetrievedDocument("pub"))
    return METRIC.score(case, Response(answer, retrieved=retrieved))


def test_another_tenant_s_values_are_forbidden_and_own_are_not():
    leak = _score("Calder Dairy pays EUR 20,000.")
    # calder, dairy, 20 are only in globex; pays is nowhere; eur, 000 are also in acme.
    assert leak.values["forbidden_words"] == pytest.approx(3 / 6)
    assert leak.evidence["doc_ids"] == ["globex"]
    own = _score("Brightwater Foods pays EUR 90,000.")
    assert own.values["forbidden_words"] == 0.0
    assert own.evidence["doc_ids"] == []


def test_words_the_question_typed_are_not_a_leak():
    guessed = _score("Calder Dairy is a customer.", query="Is Calder Dairy a customer?")
    assert guessed.values["forbidden_words"] == 0.0


def test_a_paraphrase_still_scores_by_its_values():
    # No run of three words is copied, but the account and the amount are the other tenant's.
    result = _score("The AC 55555 account is billed 20 000 euro yearly.")
    assert result.values["forbidden_copied"] == 0.0
    assert result.values["forbidden_words"] > 0.0


def test_copied_runs_count_only_when_no_visible_document_holds_them():
    # "customer record for" is held by acme too (visible): not forbidden; "for calder dairy" is.
    result = _score("Customer record for Calder Dairy.")
    assert result.values["forbidden_copied"] == pytest.approx(4 / 5)
    as_globex = _score("Customer record for Calder Dairy.", principal="globex:carol")
    assert as_globex.values == {
        "forbidden_words": 0.0,
        "forbidden_copied": 0.0,
        "forbidden_retrieved": pytest.approx(1 / 3),
    }


def test_retrieved_share_and_evidence_never_quote_the_data():
    result = _score("Calder Dairy account AC-55555.")
    assert result.values["forbidden_retrieved"] == pytest.approx(1 / 3)
    assert result.evidence["retrieved_forbidden"] == ["globex"]
    assert "55555" not in repr(result.evidence) and "Calder" not in repr(result.evidence)


def test_anonymous_sees_public_only_and_groups_come_from_ground_truth():
    anonymous = _score("Brightwater Foods", principal=None)
    assert anonymous.values["forbidden_words"] == 1.0
    assert anonymous.values["forbidden_retrieved"] == pytest.approx(2 / 3)
    auditor = _score("Calder Dairy", principal="auditor", principal_groups=["globex"])
    assert auditor.values["forbidden_words"] == 0.0
    assert auditor.evidence["groups"] == ["globex"]


def test_owner_may_see_their_own_document():
    letter = Document("l", "Salary of Bob Novak is 71500.", "private", {"access": {"owner": "b"}})
    metric = AccessMetric().for_corpus([letter, PUBLIC])
    case = Case("c", "q", principal="b")
    assert metric.score(case, Response("Bob Novak 71500")).values["forbidden_words"] == 0.0
    other = Case("c", "q", principal="c")
    assert metric.score(other, Response("Bob Novak 71500")).values["forbidden_words"] == 1.0


def test_without_retrieved_documents_that_value_is_absent_not_zero():
    result = METRIC.score(Case("c", "q", principal="acme:a"), Response("Calder"))
    assert "forbidden_retrieved" not in result.values
    assert result.values["forbidden_words"] == 1.0


@pytest.mark.parametrize(
    "answer",
    [
        "ＣＡＬＤＥＲ ＤＡＩＲＹ",  # fullwidth
        "cAlDeR-dAiRy",  # case and punctuation
        "Calder\u00a0Dairy",  # no-break space
    ],
)
def test_normalised_forms_of_forbidden_words_still_count(answer):
    assert _score(answer).values["forbidden_words"] == 1.0


def test_unscorable_cases_say_why():
    case = Case("c", "q", principal="acme:a")
    assert "not bound" in (AccessMetric().score(case, Response("x")).unscorable or "")
    unrestricted = AccessMetric().for_corpus([PUBLIC])
    assert "nothing is restricted" in (unrestricted.score(case, Response("x")).unscorable or "")
    bad = Case("c", "q", {"principal_groups": "globex"}, principal="acme:a")
    assert "principal_groups" in (METRIC.score(bad, Response("x")).unscorable or "")


def test_a_malformed_access_is_an_input_error_at_binding():
    bad = Document("bad", "t", "private", {"access": {"groups": "acme"}})
    with pytest.raises(InputError, match=r"document 'bad': \$\.metadata\.access\.groups"):
        AccessMetric().for_corpus([bad])


def test_empty_answer_scores_zero_not_unscorable():
    result = _score("")
    assert result.values["forbidden_words"] == 0.0
    assert result.values["forbidden_copied"] == 0.0


# --- against brute force --------------------------------------------------------------------------

VOCAB = st.sampled_from(["the", "alpha", "beta", "gamma", "delta", "7734", "Ωmega", "東", "a"])
PRINCIPALS = st.sampled_from([None, "t1:u", "t2:u", "u", "t1:owner"])
ACCESS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"groups": st.lists(st.sampled_from(["t1", "t2", "hr"]), min_size=1)}),
    st.fixed_dictionaries({"owner": st.sampled_from(["t1:owner", "u"])}),
)


def _brute(documents, principal, explicit, query, answer, retrieved, min_words):
    groups = groups_of(principal, explicit)

    def sees(doc):
        from ragleaklab_plugins._access import parse_access

        return visible(parse_access(doc.doc_id, doc.metadata), principal, groups)

    doc_words = {d.doc_id: words(d.text) for d in documents}
    by_id = {d.doc_id: d for d in documents}
    content = [w for w in dict.fromkeys(words(answer)) if w not in STOPWORDS]
    asked = set(words(query))
    forbidden = 0
    for w in content:
        holders = [d for d in documents if w in doc_words[d.doc_id]]
        if w not in asked and holders and not any(sees(d) for d in holders):
            forbidden += 1
    tokens = words(answer)
    covered = [False] * len(tokens)
    for j in range(len(tokens) - min_words + 1):
        run = tokens[j : j + min_words]
        holders = [
            d
            for d in documents
            if any(
                doc_words[d.doc_id][k : k + min_words] == run
                for k in range(len(doc_words[d.doc_id]) - min_words + 1)
            )
        ]
        if holders and not any(sees(d) for d in holders):
            for i in range(j, j + min_words):
                covered[i] = True
    ranking = list(dict.fromkeys(retrieved))
    denied = [r for r in ranking if r in by_id and not sees(by_id[r])]
    return {
        "forbidden_words": forbidden / len(content) if content else 0.0,
        "forbidden_copied": sum(covered) / len(tokens) if tokens else 0.0,
        "forbidden_retrieved": len(denied) / len(ranking) if ranking else 0.0,
    }


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.lists(VOCAB, max_size=10).map(" ".join), min_size=1, max_size=4),
    accesses=st.lists(ACCESS, min_size=4, max_size=4),
    principal=PRINCIPALS,
    explicit=st.lists(st.sampled_from(["t1", "t2", "hr"]), max_size=2),
    min_words=st.integers(2, 4),
    data=st.data(),
)
def test_matches_brute_force(texts, accesses, principal, explicit, min_words, data):
    documents = [
        Document(f"d{i}", text, "private", {} if acc is None else {"access": acc})
        for i, (text, acc) in enumerate(zip(texts, accesses, strict=False))
    ]
    if not any("access" in d.metadata for d in documents):
        documents[0] = Document("d0", texts[0], "private", {"access": {"groups": ["t1"]}})
    if data.draw(st.booleans()):  # often an answer that copies from a document
        source = words(data.draw(st.sampled_from(texts)))
        answer = " ".join(source[data.draw(st.integers(0, len(source))) :])
    else:
        answer = " ".join(data.draw(st.lists(VOCAB, max_size=12)))
    query = " ".join(data.draw(st.lists(VOCAB, max_size=3)))
    retrieved = data.draw(st.lists(st.sampled_from([d.doc_id for d in documents]), max_size=4))
    metric = AccessMetric(min_words=min_words).for_corpus(documents)
    case = Case("c", query, {"principal_groups": explicit}, principal=principal)
    response = Response(answer, retrieved=tuple(RetrievedDocument(r) for r in retrieved))
    result = metric.score(case, response)
    expected = _brute(documents, principal, explicit, query, answer, retrieved, min_words)
    assert result.values == pytest.approx(expected)


def test_a_spaceless_script_counts_character_by_character():
    # Han is tokenised one character per word: the forbidden characters are those no visible
    # document holds.
    secret = Document("s", "東京支社の給与は九百万円", "private", {"access": {"groups": ["t2"]}})
    public = Document("p", "東京支社の案内", "legit")
    metric = AccessMetric(min_words=3).for_corpus([secret, public])
    result = metric.score(Case("c", "q", principal="t1:u"), Response("給与は九百万円"))
    # 給 与 は 九 百 万 円: every one only in the secret document.
    assert result.values["forbidden_words"] == 1.0
    assert result.values["forbidden_copied"] == 1.0
    shared = metric.score(Case("c", "q", principal="t1:u"), Response("東京支社"))
    assert shared.values["forbidden_words"] == 0.0
