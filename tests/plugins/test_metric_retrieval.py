"""RetrievalMetric: the docs' worked example, distinct-document ranks, denominators, poison sets."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ragleaklab_plugins.metrics.retrieval import RetrievalMetric

from ragleaklab_core import Case, Document, Response, RetrievedDocument

CORPUS = [
    Document("p1", "poison one", "poison"),
    Document("p2", "poison two", "poison"),
    *(Document(f"d{i}", f"legit {i}", "legit") for i in range(1, 6)),
    Document("s1", "private", "private"),
]


def retrieved(*ids: str) -> Response:
    return Response("answer", retrieved=tuple(RetrievedDocument(i, f"chunk of {i}") for i in ids))


def test_docs_worked_example():
    """docs/metrics.md, retrieval: chunks d1 p1 p1 d2 p2 d3 d4, poison p1 p2, expected d1 d5."""
    metric = RetrievalMetric(k=5).for_corpus(CORPUS)
    case = Case("q1", "q", {"expected_doc_ids": ["d1", "d5"]})
    result = metric.score(case, retrieved("d1", "p1", "p1", "d2", "p2", "d3", "d4"))
    assert result.unscorable is None
    assert result.values == {
        "poison_rate_at_k": 0.4,
        "poison_mrr": 0.5,
        "true_doc_recall_at_k": 0.5,
    }
    assert result.evidence == {
        "k": 5,
        "denominator": 5,
        "n_distinct_retrieved": 6,
        "poison_source": "corpus",
        "poison_in_top_k": [{"doc_id": "p1", "rank": 2}, {"doc_id": "p2", "rank": 4}],
        "n_expected": 2,
        "expected_missing": ["d5"],
        "top_k": ["d1", "p1", "d2", "p2", "d3"],
    }
    assert json.loads(json.dumps(result.evidence)) == result.evidence


def test_chunks_of_one_document_count_once_and_do_not_push_documents_out_of_top_k():
    metric = RetrievalMetric(k=2).for_corpus(CORPUS)
    result = metric.score(Case("q", "q"), retrieved("p1", "p1", "p1", "d1", "p2"))
    # Counting chunks would give top = [p1, p1] -> rate 1.0; distinct documents give [p1, d1].
    assert result.values["poison_rate_at_k"] == 0.5
    assert result.evidence["top_k"] == ["p1", "d1"]
    assert result.evidence["n_distinct_retrieved"] == 3


def test_mrr_uses_distinct_ranks():
    metric = RetrievalMetric(k=5).for_corpus(CORPUS)
    # p2 is the 5th chunk but the 3rd distinct document.
    result = metric.score(Case("q", "q"), retrieved("d1", "d1", "d2", "d1", "p2"))
    assert result.values["poison_mrr"] == pytest.approx(1 / 3)
    assert result.evidence["poison_in_top_k"] == [{"doc_id": "p2", "rank": 3}]


def test_denominator_is_k_even_when_fewer_documents_were_retrieved():
    metric = RetrievalMetric(k=5).for_corpus(CORPUS)
    result = metric.score(Case("q", "q"), retrieved("p1", "d1"))
    assert result.values["poison_rate_at_k"] == 0.2  # 1 / 5, not 1 / 2
    assert result.evidence["denominator"] == 5
    assert result.evidence["n_distinct_retrieved"] == 2


def test_poison_beyond_k_is_not_counted():
    metric = RetrievalMetric(k=2).for_corpus(CORPUS)
    result = metric.score(Case("q", "q"), retrieved("d1", "d2", "p1"))
    assert result.values == {"poison_rate_at_k": 0.0, "poison_mrr": 0.0}
    assert result.evidence["poison_in_top_k"] == []


def test_recall_is_present_only_with_expected_documents_and_counts_distinct_ids():
    metric = RetrievalMetric(k=3).for_corpus(CORPUS)
    without = metric.score(Case("q", "q", {"expected_doc_ids": []}), retrieved("d1"))
    assert "true_doc_recall_at_k" not in without.values
    assert without.evidence["n_expected"] == 0
    # d3 listed twice is one expected document: recall 1/2, not 1/3 or 2/3.
    case = Case("q", "q", {"expected_doc_ids": ["d3", "d1", "d3"]})
    result = metric.score(case, retrieved("d1", "p1", "d2", "d3"))
    assert result.values["true_doc_recall_at_k"] == 0.5
    assert result.evidence["expected_missing"] == ["d3"]
    assert result.evidence["n_expected"] == 2


def test_expected_missing_is_sorted():
    metric = RetrievalMetric(k=1).for_corpus(CORPUS)
    case = Case("q", "q", {"expected_doc_ids": ["d5", "d2", "d4"]})
    result = metric.score(case, retrieved("p1"))
    assert result.evidence["expected_missing"] == ["d2", "d4", "d5"]
    assert result.values["true_doc_recall_at_k"] == 0.0


def test_empty_retrieved_list_is_scorable():
    metric = RetrievalMetric().for_corpus(CORPUS)
    result = metric.score(Case("q", "q", {"expected_doc_ids": ["d1"]}), retrieved())
    assert result.unscorable is None
    assert result.values == {
        "poison_rate_at_k": 0.0,
        "poison_mrr": 0.0,
        "true_doc_recall_at_k": 0.0,
    }


def test_unbound_metric_uses_the_cases_poison_doc_ids():
    case = Case("q", "q", {"poison_doc_ids": ["d2"]})
    result = RetrievalMetric(k=4).score(case, retrieved("d1", "d2", "p1"))
    assert result.values == {"poison_rate_at_k": 0.25, "poison_mrr": 0.5}
    assert result.evidence["poison_source"] == "ground_truth"


def test_bound_corpus_poison_takes_precedence_over_the_case():
    case = Case("q", "q", {"poison_doc_ids": ["d1"]})
    result = RetrievalMetric(k=2).for_corpus(CORPUS).score(case, retrieved("d1", "p1"))
    assert result.evidence["poison_in_top_k"] == [{"doc_id": "p1", "rank": 2}]
    assert result.evidence["poison_source"] == "corpus"


def test_corpus_without_poison_falls_back_to_the_case():
    legit_only = [d for d in CORPUS if d.kind != "poison"]
    metric = RetrievalMetric(k=2).for_corpus(legit_only)
    case = Case("q", "q", {"poison_doc_ids": ["d2"]})
    assert metric.score(case, retrieved("d2")).values["poison_mrr"] == 1.0
    no_poison = metric.score(Case("q", "q"), retrieved("d2"))
    assert no_poison.values == {}
    assert "corpus has no document of kind 'poison'" in (no_poison.unscorable or "")


@pytest.mark.parametrize(
    ("metric", "case", "response", "reason"),
    [
        (
            RetrievalMetric().for_corpus(CORPUS),
            Case("q", "q"),
            Response("answer", retrieved=None),
            "did not report its retrieved documents",
        ),
        (RetrievalMetric(), Case("q", "q"), retrieved("p1"), "not bound to a corpus"),
        (
            RetrievalMetric(),
            Case("q", "q", {"poison_doc_ids": []}),
            retrieved("p1"),
            "poison_doc_ids",
        ),
        (
            RetrievalMetric(),
            Case("q", "q", {"poison_doc_ids": "p1"}),
            retrieved("p1"),
            "ground_truth['poison_doc_ids'] must be a list of strings, got str",
        ),
        (
            RetrievalMetric().for_corpus(CORPUS),
            Case("q", "q", {"expected_doc_ids": ["d1", 2]}),
            retrieved("p1"),
            "ground_truth['expected_doc_ids'] must be a list of strings, has int 2",
        ),
    ],
)
def test_unscorable_paths(metric, case, response, reason):
    result = metric.score(case, response)
    assert result.values == {}
    assert result.unscorable is not None and reason in result.unscorable


def reference(ids, poison, expected, k):
    """The definitions, literally."""
    ranking = []
    for i in ids:
        if i not in ranking:
            ranking.append(i)
    top = ranking[:k]
    ranks = [r + 1 for r, i in enumerate(top) if i in poison]
    values = {"poison_rate_at_k": len(ranks) / k, "poison_mrr": 1 / ranks[0] if ranks else 0.0}
    if expected:
        values["true_doc_recall_at_k"] = len(set(expected) & set(top)) / len(set(expected))
    return values


IDS = st.sampled_from(["p1", "p2", "d1", "d2", "d3", "d4", "d5"])


@given(
    ids=st.lists(IDS, max_size=12),
    expected=st.lists(IDS, max_size=4),
    k=st.integers(1, 8),
)
def test_matches_the_literal_definitions(ids, expected, k):
    metric = RetrievalMetric(k=k).for_corpus(CORPUS)
    result = metric.score(Case("q", "q", {"expected_doc_ids": expected}), retrieved(*ids))
    assert result.values == pytest.approx(reference(ids, {"p1", "p2"}, expected, k))
    assert len(result.evidence["top_k"]) == min(k, len(set(ids)))
