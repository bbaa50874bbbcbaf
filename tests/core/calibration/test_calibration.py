"""calibrate(): the report, its bounds, its checks on fitters, and determinism."""

from __future__ import annotations

import json

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core import (
    FitResult,
    InputError,
    PluginRuntimeError,
    calibrate,
    clopper_pearson_upper,
    decision_rule,
    negatives_needed,
)

NEG = [0.05, 0.10, 0.12, 0.20, 0.31, 0.33, 0.40, 0.52, 0.61, 0.70]
POS = [0.35, 0.58, 0.66, 0.80, 0.93]


def worked_example() -> tuple[dict[str, float], dict[str, str]]:
    scores = {f"n{i}": v for i, v in enumerate(NEG)} | {f"p{i}": v for i, v in enumerate(POS)}
    labels = {k: "positive" if k.startswith("p") else "negative" for k in scores}
    return scores, labels


@pytest.mark.parametrize(
    ("target", "threshold", "fpr", "tpr"),
    [(0.0, 0.80, 0.0, 0.4), (0.1, 0.66, 0.1, 0.6), (0.2, 0.58, 0.2, 0.8)],
)
def test_worked_example_through_the_library(target, threshold, fpr, tpr):
    scores, labels = worked_example()
    report = calibrate(scores, labels, target_fpr=target)
    r = report.result
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (threshold, fpr, tpr)
    assert (r.n_positive, r.n_negative) == (5, 10)
    assert r.decision_rule == "score >= threshold -> FAIL"
    assert report.fitter["name"] == "exact"
    assert report.fitter["provider"].startswith("ragleaklab ")
    bound = report.fpr_upper_bound
    assert bound["false_positives"] == round(fpr * 10)
    assert bound["value"] == pytest.approx(clopper_pearson_upper(round(fpr * 10), 10))


# Test vectors from the calibration statistics reference (B.4, B.7, B.11).
@pytest.mark.parametrize(
    ("x", "n", "upper"),
    [
        (0, 300, 0.00994),
        (4, 1000, 0.00913),
        (5, 1000, 0.01048),
        (8, 300, 0.04760),
        (9, 300, 0.05177),
        (0, 59, 0.04951),
        (1, 59, 0.07790),
    ],
)
def test_clopper_pearson_one_sided_upper_bound(x, n, upper):
    assert clopper_pearson_upper(x, n) == pytest.approx(upper, abs=5e-6)


def test_clopper_pearson_edges():
    assert clopper_pearson_upper(7, 7) == 1.0
    assert clopper_pearson_upper(0, 1) == pytest.approx(0.95)
    with pytest.raises(ValueError):
        clopper_pearson_upper(3, 2)


@pytest.mark.parametrize(
    ("alpha", "delta", "n"),
    [(0.05, 0.05, 59), (0.01, 0.05, 299), (0.01, 0.01, 459), (0.001, 0.05, 2995), (0.1, 0.1, 22)],
)
def test_negatives_needed(alpha, delta, n):
    assert negatives_needed(alpha, delta) == n
    # the defining property, both sides of the boundary
    assert (1 - alpha) ** n <= delta < (1 - alpha) ** (n - 1)


def test_negatives_needed_edges():
    assert negatives_needed(0.0) is None
    assert negatives_needed(1.0) == 1


def test_unsupported_target_is_warned_about():
    scores, labels = worked_example()
    report = calibrate(scores, labels, target_fpr=0.01)
    assert report.fpr_upper_bound["negatives_needed_for_guarantee"] == 299
    assert any("not statistically supported by 10 negatives" in w for w in report.warnings)
    assert any("at least 299" in w for w in report.warnings)


def test_supported_target_has_no_support_warning():
    rng = np.random.default_rng(1)
    scores = {f"c{i}": float(v) for i, v in enumerate(rng.random(400))}
    labels = {k: "positive" if i < 100 else "negative" for i, k in enumerate(scores)}
    report = calibrate(scores, labels, target_fpr=0.05)
    assert not any("statistically" in w for w in report.warnings)


def test_flag_nothing_is_reported_not_invented():
    # every negative outscores every positive: no threshold catches a positive at FPR 0
    scores = {"n1": 0.9, "n2": 0.8, "p1": 0.1, "p2": 0.2}
    labels = {"n1": "negative", "n2": "negative", "p1": "positive", "p2": "positive"}
    report = calibrate(scores, labels, target_fpr=0.0)
    d = report.to_dict()["result"]
    assert d["threshold"] is None
    assert d["flags_nothing"] is True
    assert "flag nothing" in d["reason"]
    assert (d["achieved_fpr"], d["achieved_tpr"]) == (0.0, 0.0)
    assert any("no usable threshold" in w for w in report.warnings)


def test_unmatched_ids_are_counted_and_listed_not_errors():
    scores, labels = worked_example()
    scores = scores | {f"extra-{i:02d}": 0.5 for i in range(25)}
    labels = labels | {"lonely": "negative"}
    report = calibrate(scores, labels, target_fpr=0.1)
    cov = report.coverage
    assert cov["n_matched"] == 15
    assert cov["unlabelled"]["count"] == 25
    assert cov["unlabelled"]["ids"] == [f"extra-{i:02d}" for i in range(20)]
    assert cov["unlabelled"]["truncated"] is True
    assert cov["unscored"] == {"count": 1, "ids": ["lonely"], "truncated": False}
    assert report.result.threshold == 0.66  # unmatched ids do not influence the fit


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ({"a": float("nan"), "b": 0.1}, {"a": "positive", "b": "negative"}, "finite"),
        ({"a": "0.5", "b": 0.1}, {"a": "positive", "b": "negative"}, "finite number"),
        ({"a": 0.5, "b": 0.1}, {"a": "maybe", "b": "negative"}, "'maybe'"),
        ({"a": 0.5}, {"b": "negative"}, "no test_id has both"),
        ({"a": 0.5, "b": 0.1}, {"a": "positive", "b": "positive"}, "no negative cases"),
        ({"a": 0.5, "b": 0.1}, {"a": "negative", "b": False}, "no positive cases"),
    ],
)
def test_bad_in_memory_inputs(scores, labels, message):
    with pytest.raises(InputError, match=message):
        calibrate(scores, labels)


@pytest.mark.parametrize("target", [-0.1, 1.5, float("nan"), True, "0.1"])
def test_bad_target(target):
    scores, labels = worked_example()
    with pytest.raises(InputError, match="target_fpr"):
        calibrate(scores, labels, target_fpr=target)


def test_source_date_epoch_pins_the_timestamp(monkeypatch):
    scores, labels = worked_example()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert calibrate(scores, labels).generated_at == "2023-11-14T22:13:20Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(InputError, match="SOURCE_DATE_EPOCH"):
        calibrate(scores, labels)


def test_report_json_is_deterministic_and_independent_of_input_order(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    scores, labels = worked_example()
    reversed_scores = dict(reversed(list(scores.items())))
    first = calibrate(scores, labels, target_fpr=0.1).to_json()
    second = calibrate(reversed_scores, labels, target_fpr=0.1).to_json()
    assert first == second
    data = json.loads(first)
    assert list(data)[:5] == ["pack_name", "metric_name", "target_fpr", "higher_is_worse", "result"]
    assert data["generated_at"] == "1970-01-01T00:00:00Z"


# --- fitters are checked, not trusted ------------------------------------------------------


@attrs.frozen
class LyingFitter:
    """Claims a perfect result whatever the data say."""

    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        labels = np.asarray(labels)
        return FitResult(
            threshold=0.0,
            achieved_fpr=0.0,
            achieved_tpr=1.0,
            n_positive=int(labels.sum()),
            n_negative=int((~labels).sum()),
            decision_rule=decision_rule(higher_is_worse),
        )


@attrs.frozen
class RaisingFitter:
    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        raise ZeroDivisionError("oops")


@attrs.frozen
class WrongTypeFitter:
    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        return {"threshold": 0.5}


@attrs.frozen
class MidpointFitter:
    """A legitimate fitter whose threshold is not one of the scores."""

    cut: float = 0.5

    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        s, y = np.asarray(scores), np.asarray(labels)
        flags = s >= self.cut
        return FitResult(
            threshold=self.cut,
            achieved_fpr=float((flags & ~y).sum() / (~y).sum()),
            achieved_tpr=float((flags & y).sum() / y.sum()),
            n_positive=int(y.sum()),
            n_negative=int((~y).sum()),
            decision_rule=decision_rule(True),
        )


def test_a_fitter_whose_claims_disagree_with_the_data_is_refused():
    scores, labels = worked_example()
    with pytest.raises(PluginRuntimeError, match="achieved_fpr"):
        calibrate(scores, labels, fitter=LyingFitter())


@pytest.mark.parametrize(
    ("fitter", "message"),
    [(RaisingFitter(), "ZeroDivisionError: oops"), (WrongTypeFitter(), "FitResult")],
)
def test_a_failing_fitter_is_named(fitter, message):
    scores, labels = worked_example()
    with pytest.raises(PluginRuntimeError, match=message) as info:
        calibrate(scores, labels, fitter=fitter)
    assert type(fitter).__qualname__ in str(info.value)


def test_instance_fitter_provenance_and_off_grid_threshold_row():
    scores, labels = worked_example()
    report = calibrate(scores, labels, fitter=MidpointFitter(cut=0.5))
    assert report.fitter["target"].endswith(":MidpointFitter")
    assert report.fitter["options"] == {"cut": 0.5}
    rows = report.roc_table
    row = next(r for r in rows if r["threshold"] == 0.5)
    assert (row["fpr"], row["tpr"]) == (0.3, 0.8)
    assert [r["threshold"] for r in rows] == sorted((r["threshold"] for r in rows), reverse=True)
    assert report.result.false_positives == 3


# --- the ROC table --------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0, -2.0]), st.booleans()),
        min_size=2,
        max_size=40,
    ),
    higher=st.booleans(),
)
def test_roc_table_matches_brute_force(data, higher):
    if len({y for _, y in data}) < 2:
        data = [*data, (0.3, not data[0][1])]
    scores = {f"c{i}": s for i, (s, _) in enumerate(data)}
    labels = {f"c{i}": "positive" if y else "negative" for i, (_, y) in enumerate(data)}
    report = calibrate(scores, labels, target_fpr=0.3, higher_is_worse=higher)
    s = np.array([x for x, _ in data])
    y = np.array([lab for _, lab in data])
    distinct = sorted(set(s.tolist()), reverse=True)
    assert [r["threshold"] for r in report.roc_table] == distinct
    for row in report.roc_table:
        flags = s >= row["threshold"] if higher else s <= row["threshold"]
        assert row["fpr"] == (flags & ~y).sum() / (~y).sum()
        assert row["tpr"] == (flags & y).sum() / y.sum()


def test_roc_table_cap_keeps_both_ends_and_the_chosen_threshold():
    rng = np.random.default_rng(7)
    values = rng.random(5000)
    scores = {f"c{i}": float(v) for i, v in enumerate(values)}
    labels = {k: "positive" if v > 0.7 else "negative" for k, v in zip(scores, values, strict=True)}
    # make the classes overlap so the chosen threshold is somewhere in the middle
    for i in range(0, 5000, 7):
        labels[f"c{i}"] = "negative"
    report = calibrate(scores, labels, target_fpr=0.05, roc_table_max_rows=11)
    rows = report.roc_table
    thresholds = [r["threshold"] for r in rows]
    assert len(rows) <= 11
    assert thresholds[0] == values.max() and thresholds[-1] == values.min()
    assert report.result.threshold in thresholds
    assert report.roc_table_info["distinct_thresholds"] == 5000
    assert report.roc_table_info["complete"] is False
    assert thresholds == sorted(thresholds, reverse=True)


def test_next_point_of_the_worked_example_is_the_next_score_flagged():
    scores, labels = worked_example()
    report = calibrate(scores, labels, target_fpr=0.0)  # threshold 0.80: 2/5 caught, 0/10
    nxt = report.next_point
    assert nxt is not None
    assert (nxt.threshold, nxt.false_positives, nxt.true_positives) == (0.70, 1, 2)
    assert (nxt.fpr, nxt.tpr) == (0.1, 0.4)


@settings(max_examples=80, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0, -2.0]), st.booleans()),
        min_size=2,
        max_size=40,
    ),
    higher=st.booleans(),
    target=st.sampled_from([0.0, 0.1, 0.3]),
)
def test_next_point_matches_brute_force(data, higher, target):
    if len({y for _, y in data}) < 2:
        data = [*data, (0.3, not data[0][1])]
    scores = {f"c{i}": s for i, (s, _) in enumerate(data)}
    labels = {f"c{i}": "positive" if y else "negative" for i, (_, y) in enumerate(data)}
    report = calibrate(scores, labels, target_fpr=target, higher_is_worse=higher)
    s = np.array([x for x, _ in data])
    y = np.array([lab for _, lab in data])
    t = report.result.threshold
    # The distinct scores from the most to the least alarming; the first one the threshold does
    # not flag is the next point.
    order = sorted(set(s.tolist()), reverse=higher)
    rest = [v for v in order if t is None or (v < t if higher else v > t)]
    nxt = report.next_point
    if not rest:
        assert nxt is None
        return
    assert nxt is not None
    assert nxt.threshold == rest[0]
    flags = s >= rest[0] if higher else s <= rest[0]
    assert nxt.false_positives == int((flags & ~y).sum())
    assert nxt.true_positives == int((flags & y).sum())
