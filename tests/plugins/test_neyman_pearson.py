"""NeymanPearsonFitter: the reference's test vectors, brute force, ties, edges, report and CLI."""

from __future__ import annotations

import json
import math
import subprocess
from fractions import Fraction
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from ragleaklab_plugins.fitters.neyman_pearson import (
    NeymanPearsonFitter,
    umbrella_rank,
    violation_probability,
)

from ragleaklab_core import (
    ConfigError,
    FitResult,
    InputError,
    calibrate,
    clopper_pearson_upper,
    load_plugin,
)
from ragleaklab_core.values import FLAG_ABOVE, FLAG_BELOW
from tests.plugins.test_exact import large_problems
from tests.support.cli import rlk

ROOT = Path(__file__).resolve().parents[2]
NEG = [0.05, 0.10, 0.12, 0.20, 0.31, 0.33, 0.40, 0.52, 0.61, 0.70]
POS = [0.35, 0.58, 0.66, 0.80, 0.93]
FEASIBLE_KEYS = {
    "feasible",
    "delta",
    "k",
    "negatives_above_threshold",
    "negatives_needed",
    "n_negative",
    "violation_bound",
    "statement",
}


def fit(scores, labels, target_fpr, higher_is_worse=True, delta=0.05) -> FitResult:
    return NeymanPearsonFitter(delta=delta).fit(
        np.asarray(scores, dtype=float),
        np.asarray(labels, dtype=bool),
        target_fpr=target_fpr,
        higher_is_worse=higher_is_worse,
    )


def exact_tails(n: int, alpha: float) -> list[Fraction]:
    """P(Bin(n, 1 - alpha) >= k) for k = 1..n, in exact rational arithmetic (alpha as its float)."""
    a = Fraction(alpha)
    pmf = [math.comb(n, j) * (1 - a) ** j * a ** (n - j) for j in range(n + 1)]
    tails, running = [], Fraction(0)
    for j in range(n, 0, -1):
        running += pmf[j]
        tails.append(running)
    return tails[::-1]


# --- the reference's vectors (B.11 item 2 and 3) ----------------------------------------------


@pytest.mark.parametrize(
    ("n", "alpha", "delta", "k"),
    [
        (59, 0.05, 0.05, 59),
        (100, 0.05, 0.05, 99),
        (300, 0.05, 0.05, 292),
        (1000, 0.05, 0.05, 962),
        (300, 0.01, 0.05, 300),
        (1000, 0.01, 0.05, 996),
        (10000, 0.01, 0.05, 9917),
    ],
)
def test_umbrella_rank_vectors(n, alpha, delta, k):
    assert umbrella_rank(n, alpha, delta) == k
    # ... and it is the *smallest* qualifying rank.
    assert violation_probability(k, n, alpha) <= delta
    if k > 1:
        assert violation_probability(k - 1, n, alpha) > delta


def test_umbrella_rank_infeasible_one_below_the_minimum():
    assert umbrella_rank(298, 0.01, 0.05) is None
    assert umbrella_rank(299, 0.01, 0.05) == 299


@pytest.mark.parametrize(
    ("alpha", "delta", "needed"),
    [(0.05, 0.05, 59), (0.01, 0.05, 299), (0.01, 0.01, 459), (0.001, 0.05, 2995)],
)
def test_minimum_negatives(alpha, delta, needed):
    rng = np.random.default_rng(0)
    for n, feasible in ((needed - 1, False), (needed, True)):
        scores = np.r_[rng.random(n), 2.0]
        labels = np.r_[np.zeros(n, bool), True]
        r = fit(scores, labels, alpha, delta=delta)
        guarantee = r.details["guarantee"]
        assert guarantee["feasible"] is feasible
        assert guarantee["negatives_needed"] == needed
        assert guarantee["n_negative"] == n
        if feasible:
            # Only the largest negative qualifies: k = n, threshold = the maximum.
            assert guarantee["k"] == n
            assert r.threshold == scores[:n].max()
            assert (r.false_positives, r.true_positives) == (0, 1)
        else:
            assert r.threshold is None
            assert f"at least {needed} negatives, there are {n}" in str(r.reason)


def test_worked_example_feasible():
    r = fit(NEG + POS, [False] * 10 + [True] * 5, 0.3, delta=0.1)
    assert r.threshold == 0.70
    assert r.decision_rule == FLAG_ABOVE
    assert (r.achieved_fpr, r.achieved_tpr) == (0.0, 0.4)
    assert (r.false_positives, r.true_positives) == (0, 2)
    g = r.details["guarantee"]
    assert set(g) == FEASIBLE_KEYS
    assert g["feasible"] is True
    assert (g["k"], g["negatives_above_threshold"], g["negatives_needed"]) == (10, 0, 7)
    assert g["violation_bound"] == pytest.approx(0.7**10, rel=1e-9)  # v(10) = 0.0282
    assert g["statement"] == "P(true FPR > target) <= delta"
    assert r.reason is None


def test_worked_example_infeasible():
    r = fit(NEG + POS, [False] * 10 + [True] * 5, 0.2, delta=0.1)  # 0.8**10 = 0.107 > 0.1
    assert r.threshold is None
    assert r.flags_nothing
    assert (r.achieved_fpr, r.achieved_tpr, r.false_positives, r.true_positives) == (0, 0, 0, 0)
    assert r.details["guarantee"] == {
        "feasible": False,
        "delta": 0.1,
        "negatives_needed": 11,
        "n_negative": 10,
    }
    assert "at least 11 negatives, there are 10" in str(r.reason)
    assert "flag nothing" in str(r.reason)


# --- property tests against brute force -------------------------------------------------------

ALPHAS = st.one_of(st.floats(0.001, 0.999), st.sampled_from([0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9]))
DELTAS = st.one_of(st.floats(0.001, 0.999), st.sampled_from([0.01, 0.05, 0.1, 0.2]))


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 600), alpha=ALPHAS, delta=DELTAS)
def test_rank_is_the_lowest_whose_clopper_pearson_bound_meets_the_target(n, alpha, delta):
    k = umbrella_rank(n, alpha, delta)
    # The lowest k in [1, n] whose one-sided (1 - delta) CP upper bound, with n - k negatives
    # above t_(k), is <= alpha; None if none is.
    bounds = [clopper_pearson_upper(n - j, n, 1 - delta) for j in range(1, n + 1)]
    qualifying = [j for j, b in zip(range(1, n + 1), bounds, strict=True) if b <= alpha]
    expected = qualifying[0] if qualifying else None
    # Exactly at a boundary the two float computations may round to different sides.
    for j in {expected, k} - {None}:
        assume(not math.isclose(bounds[j - 1], alpha, rel_tol=1e-9))
        if j > 1:
            assume(not math.isclose(bounds[j - 2], alpha, rel_tol=1e-9))
    assume(not math.isclose((1 - alpha) ** n, delta, rel_tol=1e-9))
    assert k == expected


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 40), alpha=ALPHAS, delta=DELTAS)
def test_rank_matches_the_exact_tail_sum(n, alpha, delta):
    tails = exact_tails(n, alpha)
    d = Fraction(delta)
    for t in tails:
        assume(abs(t - d) > d * Fraction(1, 10**9))
    qualifying = [j for j, t in zip(range(1, n + 1), tails, strict=True) if t <= d]
    assert umbrella_rank(n, alpha, delta) == (qualifying[0] if qualifying else None)


@st.composite
def problems(draw):
    n_neg = draw(st.integers(1, 80))
    n_pos = draw(st.integers(1, 20))
    pool = draw(
        st.sampled_from(
            [
                st.sampled_from([0.0, 0.5, 1.0]),  # heavy ties
                st.sampled_from([-0.0, 0.0, 0.25]),  # signed zeros compare equal
                st.floats(-1e6, 1e6, allow_nan=False),
                st.integers(-3, 3).map(float),
            ]
        )
    )
    neg = draw(st.lists(pool, min_size=n_neg, max_size=n_neg))
    pos = draw(st.lists(pool, min_size=n_pos, max_size=n_pos))
    alpha = draw(st.one_of(st.sampled_from([0.0, 0.05, 0.1, 0.3, 0.5, 0.9, 1.0]), ALPHAS))
    delta = draw(st.sampled_from([0.01, 0.05, 0.1, 0.3, 0.5]))
    order = draw(st.permutations(range(n_neg + n_pos)))
    scores = [(neg + pos)[i] for i in order]
    labels = [i >= n_neg for i in order]
    return scores, labels, alpha, delta


@settings(max_examples=300, deadline=None)
@given(problems(), st.booleans())
def test_matches_brute_force(problem, higher_is_worse):
    scores, labels, alpha, delta = problem
    r = fit(scores, labels, alpha, higher_is_worse, delta)
    sign = 1.0 if higher_is_worse else -1.0
    neg = sorted(sign * s for s, lab in zip(scores, labels, strict=True) if not lab)
    pos = [sign * s for s, lab in zip(scores, labels, strict=True) if lab]
    n = len(neg)
    feasible = alpha > 0 and (1 - alpha) ** n <= delta  # the reference's n >= n_min
    k = umbrella_rank(n, alpha, delta)
    assert (k is not None) == feasible
    assert r.details["guarantee"]["feasible"] is feasible
    assert r.decision_rule == (FLAG_ABOVE if higher_is_worse else FLAG_BELOW)
    assert (r.n_negative, r.n_positive) == (n, len(pos))
    if not feasible:
        assert r.threshold is None
        assert (r.false_positives, r.true_positives) == (0, 0)
        return
    t = neg[k - 1]  # the k-th smallest, in the oriented scores
    fp = sum(x > t for x in neg)  # strict: ties with the threshold are not flagged
    tp = sum(x > t for x in pos)
    assert r.threshold == sign * t
    assert (r.false_positives, r.true_positives) == (fp, tp)
    assert (r.achieved_fpr, r.achieved_tpr) == (fp / n, tp / len(pos))
    assert r.details["guarantee"]["k"] == k
    assert r.details["guarantee"]["negatives_above_threshold"] == fp
    assert fp <= n - k  # ties can only lower the count


@settings(max_examples=200, deadline=None)
@given(problems())
def test_mirror_property(problem):
    scores, labels, alpha, delta = problem
    up = fit(scores, labels, alpha, True, delta)
    down = fit([-x for x in scores], labels, alpha, False, delta)
    assert (down.threshold is None) == (up.threshold is None)
    if up.threshold is not None:
        assert down.threshold == -up.threshold
    assert attrs.evolve(down, threshold=up.threshold, decision_rule=FLAG_ABOVE) == up


# --- ties and edges ---------------------------------------------------------------------------


def test_ties_at_the_threshold_are_not_flagged():
    # 59 negatives: k* = 59 at alpha = delta = 0.05, so the threshold is the maximum, 0.9,
    # shared by three negatives and two positives; the strict rule flags none of them.
    neg = [0.1] * 56 + [0.9] * 3
    pos = [0.9, 0.9, 0.95]
    r = fit(neg + pos, [False] * 59 + [True] * 3, 0.05)
    assert r.threshold == 0.9
    assert (r.false_positives, r.true_positives) == (0, 1)
    assert r.achieved_tpr == 1 / 3


def test_all_equal_scores():
    r = fit([0.5] * 70, [False] * 60 + [True] * 10, 0.05)
    assert r.threshold == 0.5
    assert (r.false_positives, r.true_positives, r.achieved_tpr) == (0, 0, 0.0)
    assert r.details["guarantee"]["feasible"] is True


def test_one_negative():
    # One negative supports only targets with 1 - target <= delta (0.95 just misses in floats:
    # 1 - 0.95 == 0.05000000000000004 > 0.05).
    r = fit([0.4, 0.3, 0.9], [False, True, True], 0.96)
    assert r.threshold == 0.4
    assert (r.false_positives, r.true_positives) == (0, 1)
    assert r.details["guarantee"]["k"] == 1
    assert fit([0.4, 0.3, 0.9], [False, True, True], 0.95).threshold is None
    r = fit([0.4, 0.3, 0.9], [False, True, True], 0.5)
    assert r.threshold is None
    assert r.details["guarantee"]["negatives_needed"] == 5  # 0.5**5 <= 0.05 < 0.5**4


def test_one_positive():
    neg = list(np.linspace(0.0, 1.0, 100))
    r = fit([*neg, 0.995], [False] * 100 + [True], 0.05)
    assert r.threshold == neg[98]  # k* = 99 of 100
    assert (r.false_positives, r.true_positives, r.achieved_tpr) == (1, 1, 1.0)
    r = fit([*neg, 0.5], [False] * 100 + [True], 0.05)
    assert (r.true_positives, r.achieved_tpr) == (0, 0.0)


def test_target_zero_is_never_feasible():
    r = fit([*np.linspace(0, 1, 5000), 2.0], [False] * 5000 + [True], 0.0)
    assert r.threshold is None
    assert r.details["guarantee"] == {
        "feasible": False,
        "delta": 0.05,
        "negatives_needed": None,
        "n_negative": 5000,
    }
    assert "any finite number of negatives" in str(r.reason)


def test_target_one_uses_the_smallest_negative():
    r = fit([0.2, 0.1, 0.3, 0.15], [False, False, True, True], 1.0)
    assert r.threshold == 0.1
    assert r.details["guarantee"]["k"] == 1
    assert (r.false_positives, r.true_positives) == (1, 2)


def test_lower_is_worse_worked_example():
    scores = [-x for x in NEG + POS]
    r = fit(scores, [False] * 10 + [True] * 5, 0.3, higher_is_worse=False, delta=0.1)
    assert r.threshold == -0.70
    assert r.decision_rule == FLAG_BELOW
    assert (r.false_positives, r.true_positives) == (0, 2)


def test_does_not_mutate_inputs():
    s = np.array(NEG + POS)
    y = np.array([False] * 10 + [True] * 5)
    s0 = s.copy()
    fit(s, y, 0.3, delta=0.1)
    fit(s, y, 0.3, higher_is_worse=False, delta=0.1)
    np.testing.assert_array_equal(s, s0)


def test_bad_inputs_raise_input_error():
    with pytest.raises(InputError):
        NeymanPearsonFitter().fit([0.1, float("nan")], np.array([True, False]), target_fpr=0.1)
    with pytest.raises(InputError):
        NeymanPearsonFitter().fit([0.1, 0.2], np.array([False, False]), target_fpr=0.1)


# --- loading, options, the report and the CLI -------------------------------------------------


def test_loads_by_name_with_options():
    loaded = load_plugin("ragleaklab.fitters", "neyman-pearson", {"delta": 0.1})
    assert loaded.obj == NeymanPearsonFitter(delta=0.1)
    assert loaded.options == {"delta": 0.1}
    assert attrs.fields_dict(NeymanPearsonFitter)["delta"].default == 0.05


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5])
def test_delta_outside_the_open_unit_interval_is_refused(delta):
    with pytest.raises(ValueError, match="'delta'"):
        NeymanPearsonFitter(delta=delta)
    with pytest.raises(ConfigError):
        load_plugin("ragleaklab.fitters", "neyman-pearson", {"delta": delta})


@pytest.mark.parametrize("higher_is_worse", [True, False])
def test_calibrate_accepts_the_result(higher_is_worse):
    rng = np.random.default_rng(3)
    neg = np.round(rng.random(300), 2)  # ties, also at the threshold
    pos = np.round(rng.random(40) + 0.5, 2)
    sign = 1 if higher_is_worse else -1
    scores = {f"n{i}": float(sign * x) for i, x in enumerate(neg)}
    scores |= {f"p{i}": float(sign * x) for i, x in enumerate(pos)}
    labels = {k: k.startswith("p") for k in scores}
    report = calibrate(
        scores,
        labels,
        fitter="neyman-pearson",
        target_fpr=0.05,
        higher_is_worse=higher_is_worse,
    )
    r = report.result
    direct = fit(np.r_[neg, pos] * sign, [False] * 300 + [True] * 40, 0.05, higher_is_worse)
    assert r.threshold == direct.threshold
    assert (r.false_positives, r.true_positives) == (direct.false_positives, direct.true_positives)
    assert r.details["guarantee"]["k"] == 292
    data = json.loads(report.to_json())
    assert data["fitter"]["name"] == "neyman-pearson"
    assert data["result"]["details"]["guarantee"]["feasible"] is True


def _cli(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    examples = ROOT / "data" / "examples"
    return rlk(
        "calibrate",
        "--scores",
        str(examples / "scores.jsonl"),
        "--labels",
        str(examples / "labels.jsonl"),
        "--out",
        str(tmp_path / "out"),
        "--fitter",
        "neyman-pearson",
        *extra,
        cwd=tmp_path,
    )


def test_cli_calibrate(tmp_path):
    done = _cli(tmp_path, "--target-fpr", "0.05")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "out" / "calibration_report.json").read_text("utf-8"))
    assert report["fitter"]["name"] == "neyman-pearson"
    assert report["fitter"]["options"] == {"delta": 0.05}
    result = report["result"]
    assert result["decision_rule"] == FLAG_ABOVE
    g = result["details"]["guarantee"]
    assert g["feasible"] is True
    assert g["n_negative"] == result["n_negative"] == 120
    assert g["k"] == umbrella_rank(120, 0.05, 0.05)
    assert g["negatives_needed"] == 59
    assert "'score > threshold -> FAIL'" in done.stdout


def test_cli_calibrate_infeasible_report(tmp_path):
    done = _cli(tmp_path, "--target-fpr", "0.01", "--fitter-option", "delta=0.05")
    # The report is written (it says what is missing) and the command fails: exit 1.
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads((tmp_path / "out" / "calibration_report.json").read_text("utf-8"))
    result = report["result"]
    assert result["flags_nothing"] is True
    assert result["details"]["guarantee"] == {
        "feasible": False,
        "delta": 0.05,
        "negatives_needed": 299,
        "n_negative": 120,
    }
    assert "at least 299 negatives, there are 120" in done.stderr


def test_the_guarantee_it_states_names_its_confidence_and_says_when_it_has_none():
    rng = np.random.default_rng(1)
    s = np.concatenate([rng.uniform(0, 1, 100), rng.uniform(0.5, 2, 10)])
    y = np.arange(110) >= 100
    r = fit(s, y, 0.05, delta=0.1)
    assert r.guarantee is not None
    assert r.guarantee.startswith("with probability >= 0.9 (1 - delta), population FPR <= target")
    # 100 negatives cannot carry a 1% target at delta 0.05 (299 needed): no guarantee, said so.
    none = fit(s, y, 0.01)
    assert none.threshold is None and none.guarantee is not None
    assert none.guarantee.startswith("none on these labels: 100 negatives cannot give")


def test_cli_calibrate_infeasible_write_thresholds_is_refused_and_writes_nothing(tmp_path):
    before = sorted(p.name for p in tmp_path.iterdir())
    done = _cli(tmp_path, "--target-fpr", "0.01", "--pack", "relevance-hijack", "--metric", "m",
                "--write-thresholds", "--thresholds", str(tmp_path / "t.json"))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "--write-thresholds refused: the fitter found no threshold" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@settings(max_examples=60, deadline=None)
@given(large_problems(), st.sampled_from([0.01, 0.05, 0.2]))
def test_large_inputs_match_the_sorted_order_statistic(problem, alpha):
    """At sizes where the selection cuts with a sampled bound: the threshold is the k-th smallest
    negative by a full sort, and the counts are those above it."""
    scores, labels, _, higher_is_worse = problem
    fitter = NeymanPearsonFitter(delta=0.05)
    got = fitter.fit(scores, labels, target_fpr=alpha, higher_is_worse=higher_is_worse)
    s = scores if higher_is_worse else -scores
    neg, pos = np.sort(s[~labels]), s[labels]
    k = umbrella_rank(neg.size, alpha, 0.05)
    if k is None:
        assert got.threshold is None
        return
    t = float(neg[k - 1])
    assert got.threshold == (t if higher_is_worse else -t + 0.0)
    assert got.false_positives == int(np.count_nonzero(neg > t))
    assert got.true_positives == int(np.count_nonzero(pos > t))
