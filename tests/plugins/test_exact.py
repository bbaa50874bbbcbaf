"""ExactSweepFitter: against a brute-force sweep, pinned vectors, the mirror and bad inputs."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragleaklab_plugins.fitters.exact import ExactSweepFitter

from ragleaklab_core import FitResult, InputError, decision_rule

NEG = [0.05, 0.10, 0.12, 0.20, 0.31, 0.33, 0.40, 0.52, 0.61, 0.70]
POS = [0.35, 0.58, 0.66, 0.80, 0.93]


def brute_force(scores, labels, target_fpr, higher_is_worse=True):
    """The spec's rule, literally: try every distinct score and "flag nothing", keep the best.

    Returns ``(threshold, fpr, tpr, fp, tp, n_pos, n_neg)``; ``threshold`` is None for
    "flag nothing" (also when the best feasible TPR is 0).
    """
    scores = [float(x) for x in scores]
    labels = [bool(x) for x in labels]
    pos = [s for s, lab in zip(scores, labels, strict=True) if lab]
    neg = [s for s, lab in zip(scores, labels, strict=True) if not lab]
    n_pos, n_neg = len(pos), len(neg)

    def flagged(x, t):
        return x >= t if higher_is_worse else x <= t

    def wins_tie(t, incumbent):
        # Among equal TPR the threshold that flags less wins.
        return t > incumbent if higher_is_worse else t < incumbent

    best_t, best_fp, best_tp = None, 0, 0  # "flag nothing" is always feasible
    for t in set(scores):
        fp = sum(flagged(x, t) for x in neg)
        tp = sum(flagged(x, t) for x in pos)
        if not fp / n_neg <= target_fpr:
            continue
        if tp == 0:
            continue  # no better than flagging nothing
        if tp > best_tp or (tp == best_tp and wins_tie(t, best_t)):
            best_t, best_fp, best_tp = t, fp, tp
    if best_t is None:
        return None, 0.0, 0.0, 0, 0, n_pos, n_neg
    return best_t, best_fp / n_neg, best_tp / n_pos, best_fp, best_tp, n_pos, n_neg


def as_tuple(r: FitResult):
    return (
        r.threshold,
        r.achieved_fpr,
        r.achieved_tpr,
        r.false_positives,
        r.true_positives,
        r.n_positive,
        r.n_negative,
    )


def fit(scores, labels, target_fpr, higher_is_worse=True) -> FitResult:
    return ExactSweepFitter().fit(
        np.asarray(scores),
        np.asarray(labels, dtype=bool),
        target_fpr=target_fpr,
        higher_is_worse=higher_is_worse,
    )


# --- the property test ------------------------------------------------------------------------

ANY_FLOAT = st.floats(allow_nan=False, allow_infinity=False)
SCORE_POOLS = st.sampled_from(
    [
        st.sampled_from([0.0, 0.25, 0.5, 1.0]),  # heavy ties
        st.sampled_from([-1.0, -0.0, 0.0, 0.5]),  # signed zeros that compare equal
        st.sampled_from([0.1, 0.2, 0.30000000000000004, 0.3]),  # neighbours one ulp apart
        st.floats(-1.0, 1.0),
        ANY_FLOAT,  # incl. negatives, -0.0, subnormals and huge magnitudes
        st.one_of(st.sampled_from([-0.0, 0.0, 5e-324, -5e-324, 1.0]), ANY_FLOAT),
        st.integers(-3, 3).map(float),
    ]
)


# (k, n) with n <= 60 where floor((k / n) * n) < k in floats, e.g. 1/49 * 49 == 0.999...9:
# k false positives among n negatives meet the target k / n, a naive floor would allow k - 1.
AWKWARD = [(k, n) for n in range(1, 61) for k in range(1, n + 1) if math.floor(k / n * n) < k]


@st.composite
def fit_problems(draw):
    awkward_target = None
    if draw(st.integers(0, 3)) == 0:
        k, n_neg = draw(st.sampled_from(AWKWARD))
        awkward_target = k / n_neg
        n_pos = draw(st.integers(1, 60 - n_neg))
        labels = [True] * n_pos + [False] * n_neg
    else:
        n = draw(st.integers(2, 60))
        # Both classes present: force one of each.
        labels = [True, False, *draw(st.lists(st.booleans(), min_size=n - 2, max_size=n - 2))]
    labels = draw(st.permutations(labels))
    n = len(labels)
    n_neg = labels.count(False)
    pool = draw(SCORE_POOLS)
    scores = draw(st.lists(pool, min_size=n, max_size=n))
    if awkward_target is not None:
        target = awkward_target
    else:
        target = draw(
            st.one_of(
                st.sampled_from([0.0, 1.0, 0, 1]),
                st.floats(0.0, 1.0),
                # exact fractions of the negatives count, k / n_neg, and their float neighbours
                st.integers(0, n_neg).map(lambda k: k / n_neg),
                st.integers(0, n_neg).map(lambda k: float(np.nextafter(k / n_neg, 0.0))),
                st.integers(0, n_neg).map(lambda k: min(1.0, float(np.nextafter(k / n_neg, 1)))),
                # fractions whose float product is just under an integer, e.g. 0.29 * 100
                st.integers(1, 100).flatmap(lambda d: st.integers(0, d).map(lambda k: k / d)),
                st.sampled_from([2 / 3, 1 / 3, 0.29, 0.57, 0.1, 0.7, 0.01]),
            )
        )
    higher_is_worse = draw(st.booleans())
    return scores, labels, target, higher_is_worse


@settings(max_examples=300, deadline=None)
@given(fit_problems())
def test_matches_brute_force(problem):
    scores, labels, target, higher_is_worse = problem
    r = fit(scores, labels, target, higher_is_worse)
    expected = brute_force(scores, labels, target, higher_is_worse)
    assert as_tuple(r) == expected
    assert r.decision_rule == decision_rule(higher_is_worse)
    assert (r.reason is not None) == (r.threshold is None)


@settings(max_examples=300, deadline=None)
@given(fit_problems())
def test_mirror_property(problem):
    scores, labels, target, _ = problem
    up = fit(scores, labels, target, higher_is_worse=True)
    down = fit([-x for x in scores], labels, target, higher_is_worse=False)
    if up.threshold is None:
        assert down.threshold is None
    else:
        assert down.threshold == -up.threshold
    assert as_tuple(down)[1:] == as_tuple(up)[1:]


# --- pinned vectors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "threshold", "fpr", "tpr"),
    [(0.0, 0.80, 0.0, 0.4), (0.1, 0.66, 0.1, 0.6), (0.2, 0.58, 0.2, 0.8)],
)
def test_worked_example(target, threshold, fpr, tpr):
    r = fit(NEG + POS, [False] * len(NEG) + [True] * len(POS), target)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (threshold, fpr, tpr)
    assert r.decision_rule == "score >= threshold -> FAIL"
    assert (r.n_negative, r.n_positive) == (10, 5)
    assert r.false_positives == round(fpr * 10)
    assert r.true_positives == round(tpr * 5)
    assert r.reason is None


def test_ties_are_not_split():
    # sklearn's roc_curve with drop_intermediate=True drops the point at threshold 0.8
    # (FPR 2/3, TPR 2/3) as collinear, so an argmax over its curve would give TPR 1/3 (threshold
    # 0.9) here; the exact sweep keeps every distinct score and finds 0.8 with TPR 2/3.
    scores = [0.9, 0.9, 0.8, 0.8, 0.7, 0.7]
    labels = [1, 0, 1, 0, 1, 0]
    r = fit(scores, labels, 2 / 3)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (0.8, 2 / 3, 2 / 3)
    assert (r.false_positives, r.true_positives) == (2, 2)


def test_float_edge_target():
    # 0.29 * 100 == 28.999999999999996: 29 false positives out of 100 must still be allowed.
    neg = np.arange(100) / 100  # 0.00 .. 0.99
    pos = np.array([0.705, 0.995])
    s = np.concatenate([neg, pos])
    y = np.r_[np.zeros(100, bool), np.ones(2, bool)]
    r = fit(s, y, 0.29)
    assert r.false_positives == 29
    assert r.threshold == 0.705
    assert r.achieved_tpr == 1.0
    assert as_tuple(r) == brute_force(s, y, 0.29)


# --- the mirror -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [0.0, 0.1, 0.2, 0.5, 1.0])
def test_mirror_worked_example(target):
    scores = np.array(NEG + POS)
    labels = [False] * len(NEG) + [True] * len(POS)
    up = fit(scores, labels, target, higher_is_worse=True)
    down = fit(-scores, labels, target, higher_is_worse=False)
    assert down.threshold == -up.threshold
    assert as_tuple(down)[1:] == as_tuple(up)[1:]
    assert down.decision_rule == "score <= threshold -> FAIL"


def test_lower_is_worse_tie_goes_to_lower_threshold():
    # Lower is worse: 0.1 and 0.2 both catch the single positive at 0.1; 0.1 flags less.
    r = fit([0.1, 0.3, 0.5], [True, False, False], 0.0, higher_is_worse=False)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (0.1, 0.0, 1.0)


# --- edge cases -------------------------------------------------------------------------------


def test_all_equal_scores():
    scores, labels = [0.5] * 4, [True, False, True, False]
    r = fit(scores, labels, 1.0)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (0.5, 1.0, 1.0)
    for target in (0.0, 0.5, 0.99):
        r = fit(scores, labels, target)
        assert r.threshold is None
        assert (r.achieved_fpr, r.achieved_tpr) == (0.0, 0.0)


def test_one_negative():
    scores, labels = [0.6, 0.5, 0.9], [False, True, True]
    r = fit(scores, labels, 0.0)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (0.9, 0.0, 0.5)
    r = fit(scores, labels, 0.99)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (0.9, 0.0, 0.5)
    r = fit(scores, labels, 1.0)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (0.5, 1.0, 1.0)
    assert r.n_negative == 1


def test_one_positive():
    scores = [0.1, 0.5, 0.8, 0.9, 0.7]
    labels = [False, False, False, False, True]
    r = fit(scores, labels, 0.5)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (0.7, 0.5, 1.0)
    assert (r.false_positives, r.true_positives, r.n_positive) == (2, 1, 1)
    assert fit(scores, labels, 0.25).threshold is None


def test_flag_nothing():
    # Every positive sits below the highest negative: at FPR 0 nothing can be caught.
    r = fit([0.9, 0.1, 0.2], [False, True, True], 0.0)
    assert r.threshold is None
    assert r.flags_nothing
    assert (r.achieved_fpr, r.achieved_tpr) == (0.0, 0.0)
    assert (r.false_positives, r.true_positives) == (0, 0)
    assert (r.n_positive, r.n_negative) == (2, 1)
    assert "flag nothing" in r.reason
    down = fit([0.1, 0.9, 0.8], [False, True, True], 0.0, higher_is_worse=False)
    assert down.threshold is None
    assert "flag nothing" in down.reason


@pytest.mark.parametrize("target", [1, 1.0])
def test_target_one_flags_every_positive(target):
    scores = np.array(NEG + POS)
    labels = [False] * len(NEG) + [True] * len(POS)
    r = fit(scores, labels, target)
    assert r.threshold == min(POS)
    assert r.achieved_tpr == 1.0
    assert r.false_positives == sum(x >= min(POS) for x in NEG)
    down = fit(scores, labels, target, higher_is_worse=False)
    assert down.threshold == max(POS)
    assert down.achieved_tpr == 1.0


def test_int_scores():
    r = ExactSweepFitter().fit([1, 2, 3, 4, 5], np.array([0, 0, 1, 0, 1], bool), target_fpr=0.0)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (5.0, 0.0, 0.5)
    assert isinstance(r.threshold, float)
    r = ExactSweepFitter().fit(
        np.array([1, 2, 3, 4, 5], np.uint8), [False, False, True, False, True], target_fpr=1 / 3
    )
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (3.0, 1 / 3, 1.0)


def test_plain_lists_work():
    r = ExactSweepFitter().fit(NEG + POS, [False] * 10 + [True] * 5, target_fpr=0.1)
    assert (r.threshold, r.achieved_fpr, r.achieved_tpr) == (0.66, 0.1, 0.6)


@pytest.mark.parametrize("higher_is_worse", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_independent_of_input_order(seed, higher_is_worse):
    rng = np.random.default_rng(seed)
    s = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=200)
    y = rng.random(200) < 0.3
    expected = fit(s, y, 0.1, higher_is_worse)
    for _ in range(5):
        order = rng.permutation(200)
        assert fit(s[order], y[order], 0.1, higher_is_worse) == expected


def test_does_not_mutate_inputs():
    s = np.array(NEG + POS)
    y = np.array([False] * 10 + [True] * 5)
    s0, y0 = s.copy(), y.copy()
    fit(s, y, 0.2)
    fit(s, y, 0.2, higher_is_worse=False)
    np.testing.assert_array_equal(s, s0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize(
    ("scores", "labels", "target"),
    [
        pytest.param([0.1, float("nan"), 0.3], [True, False, True], 0.1, id="nan"),
        pytest.param([0.1, float("inf"), 0.3], [True, False, True], 0.1, id="inf"),
        pytest.param([0.1, float("-inf"), 0.3], [True, False, True], 0.1, id="-inf"),
        pytest.param([0.1, 0.2, 0.3], [True, False], 0.1, id="mismatched-lengths"),
        pytest.param([[0.1, 0.2], [0.3, 0.4]], [[True, False], [True, False]], 0.1, id="2-D"),
        pytest.param([0.1, 0.2, 0.3], [False, False, False], 0.1, id="no-positives"),
        pytest.param([0.1, 0.2, 0.3], [True, True, True], 0.1, id="no-negatives"),
        pytest.param([0.1, 0.2, 0.3], [True, False, True], -0.1, id="target-negative"),
        pytest.param([0.1, 0.2, 0.3], [True, False, True], 1.5, id="target-above-1"),
        pytest.param([0.1, 0.2, 0.3], [True, False, True], float("nan"), id="target-nan"),
        pytest.param([0.1, 0.2, 0.3], [1, 0, 1], 0.1, id="int-labels"),
        pytest.param([0.1, 0.2, 0.3], ["yes", "no", "yes"], 0.1, id="string-labels"),
        pytest.param(["0.1", "0.2", "0.3"], [True, False, True], 0.1, id="string-scores"),
        pytest.param([], [], 0.1, id="empty"),
    ],
)
def test_bad_inputs_raise_input_error(scores, labels, target):
    with pytest.raises(InputError):
        ExactSweepFitter().fit(scores, labels, target_fpr=target)


def test_is_a_frozen_attrs_class_without_options():
    fitter = ExactSweepFitter()
    assert attrs.has(ExactSweepFitter)
    assert attrs.fields(ExactSweepFitter) == ()
    assert fitter == ExactSweepFitter()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        fitter.anything = 1  # type: ignore[attr-defined]


def test_it_states_that_it_promises_nothing_beyond_the_sample():
    found = fit([0.9, 0.1, 0.2], [True, False, False], 0.0)
    nothing = fit([0.9, 0.1, 0.2], [False, True, True], 0.0)
    promise = "FPR on the calibration sample <= target; no guarantee beyond the sample"
    assert found.guarantee == nothing.guarantee == promise


# --- large inputs: the selection that skips most of the array ---------------------------------

from ragleaklab_plugins.fitters import _order  # noqa: E402


def sweep_reference(scores, labels, target_fpr, higher_is_worse=True):
    """A full ROC sweep by sorting, for sizes the literal brute force cannot reach: the counts
    at every distinct threshold, the best feasible TPR, the highest threshold on ties."""
    s = np.asarray(scores, dtype=np.float64)
    s = s if higher_is_worse else -s
    y = np.asarray(labels, dtype=bool)
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    tp, fp = np.cumsum(y), np.cumsum(~y)
    n_pos, n_neg = int(tp[-1]), int(fp[-1])
    last = np.flatnonzero(np.append(s[1:] != s[:-1], True))  # end of each run of equal scores
    feasible = last[(fp[last] / n_neg <= target_fpr) & (tp[last] > 0)]
    if feasible.size == 0:
        return None, 0.0, 0.0, 0, 0, n_pos, n_neg
    best = feasible[np.argmax(tp[feasible])]  # first maximum: the highest threshold
    t = float(s[best]) if higher_is_worse else -float(s[best]) + 0.0
    f, p = int(fp[best]), int(tp[best])
    return t, f / n_neg, p / n_pos, f, p, n_pos, n_neg


ORDERS = ["random", "ascending", "descending", "positives-last", "blocks"]


@st.composite
def large_problems(draw):
    n = draw(st.integers(_order._SAMPLED, 3 * _order._SAMPLED))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["uniform", "ties", "separable", "huge", "tiny-range"]))
    if kind == "uniform":
        scores = rng.random(n)
    elif kind == "ties":
        scores = rng.integers(0, draw(st.integers(1, 50)), n).astype(float)
    elif kind == "separable":
        scores = rng.normal(size=n)
    elif kind == "huge":  # magnitudes where a shift of max - min + 1 would round
        scores = rng.choice([-1e17, 1e17, 1e17 + 16, -1e17 + 32], size=n)
    else:
        scores = 1.0 + rng.integers(0, 3, n) * np.finfo(float).eps
    labels = rng.random(n) < draw(st.sampled_from([0.01, 0.3, 0.5, 0.9]))
    labels[:2] = [True, False]
    if kind == "separable":
        scores = scores + 2.0 * labels
    order = draw(st.sampled_from(ORDERS))
    if order == "ascending":
        idx = np.argsort(scores, kind="stable")
    elif order == "descending":
        idx = np.argsort(-scores, kind="stable")
    elif order == "positives-last":  # the strided sample sees almost only negatives
        idx = np.argsort(labels, kind="stable")
    elif order == "blocks":
        idx = np.concatenate([np.arange(n)[i::7] for i in range(7)])
    else:
        idx = np.arange(n)
    target = draw(st.sampled_from([0.0, 0.001, 0.01, 0.05, 0.5, 1.0]))
    return scores[idx], labels[idx], target, draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(large_problems())
def test_large_inputs_match_a_full_sweep(problem):
    scores, labels, target, higher_is_worse = problem
    got = fit(scores, labels, target, higher_is_worse)
    assert as_tuple(got) == sweep_reference(scores, labels, target, higher_is_worse)


@settings(max_examples=80, deadline=None)
@given(large_problems(), st.integers(1, 3 * _order._SAMPLED))
def test_top_value_is_the_sorted_value(problem, rank):
    scores, labels = problem[0], problem[1]
    before = scores.copy()
    rank = min(rank, scores.size)
    assert _order.top_value(scores, rank) == float(np.sort(scores)[-rank])
    assert _order.top_value(scores, 1) == float(scores.max())
    negatives = scores[~labels]
    within = min(rank, negatives.size)
    assert _order.top_value(scores, within, where=~labels) == float(np.sort(negatives)[-within])
    assert np.array_equal(scores, before)  # never reordered
    with pytest.raises(IndexError):
        _order.top_value(scores, negatives.size + 1, where=~labels)


def test_scores_near_the_float_limits_are_fitted_exactly():
    scores = np.array([-1.7e308, 1.7e308, 1e308, -1e308, 0.0, 5.0])
    labels = np.array([False, True, True, False, False, True])
    for higher_is_worse in (True, False):
        got = fit(scores, labels, 0.34, higher_is_worse)
        assert as_tuple(got) == brute_force(scores, labels, 0.34, higher_is_worse)


@pytest.mark.parametrize("rank", [1, 500, 5_000, 39_000])
def test_top_value_survives_a_sample_that_sees_only_the_largest_values(rank):
    """Every value the strided sample reads is among the largest: the bound it gives keeps
    fewer than *rank* values, and the whole array must be partitioned instead."""
    n = 40_000
    values = np.zeros(n)
    stride = n // _order._SAMPLE
    values[::stride] = 1.0 + np.arange(values[::stride].size)
    expected = float(np.sort(values)[-rank])
    assert _order.top_value(values, rank) == expected
    everywhere = np.ones(n, dtype=bool)
    assert _order.top_value(values, rank, where=everywhere) == expected
