"""BootstrapCIFitter: the drawn bootstrap against materialised resamples, the exact rule, edges."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragleaklab_plugins.fitters.bootstrap_ci import (
    BootstrapCIFitter,
    _clopper_pearson,
    bootstrap_refits,
    resample_streams,
)
from ragleaklab_plugins.fitters.exact import ExactSweepFitter
from scipy.stats import binom

from ragleaklab_core import (
    ConfigError,
    FitResult,
    calibrate,
    load_plugin,
    max_false_positives,
)
from ragleaklab_core.values import FLAG_HIGH, FLAG_LOW
from tests.support.cli import rlk

ROOT = Path(__file__).resolve().parents[2]
NEG = [0.05, 0.10, 0.12, 0.20, 0.31, 0.33, 0.40, 0.52, 0.61, 0.70]
POS = [0.35, 0.58, 0.66, 0.80, 0.93]
SUMMARY_KEYS = {
    "threshold",
    "achieved_fpr",
    "achieved_tpr",
    "false_positives",
    "true_positives",
    "within_target_fraction",
}


def fit(scores, labels, target_fpr, higher_is_worse=True, **options) -> FitResult:
    return BootstrapCIFitter(**options).fit(
        np.asarray(scores, dtype=float),
        np.asarray(labels, dtype=bool),
        target_fpr=target_fpr,
        higher_is_worse=higher_is_worse,
    )


def brute_force_refits(neg, pos, max_fp, resamples, rng):
    """Materialise every resample and refit the exact rule on it: (floors, thresholds)."""
    n, m = neg.size, pos.size
    res_neg = np.sort(neg[rng.integers(0, n, size=(resamples, n))], axis=1)
    floors = np.full(resamples, -np.inf) if max_fp >= n else res_neg[:, n - max_fp - 1]
    res_pos = pos[rng.integers(0, m, size=(resamples, m))]
    thresholds = np.where(res_pos > floors[:, None], res_pos, np.inf).min(axis=1)
    return floors, thresholds


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest gap between two empirical CDFs (works for discrete samples with infinities)."""
    support = np.unique(np.r_[a, b])
    fa = np.searchsorted(np.sort(a), support, side="right") / a.size
    fb = np.searchsorted(np.sort(b), support, side="right") / b.size
    return float(np.abs(fa - fb).max())


# --- the drawn bootstrap has the distribution of the materialised one -------------------------

RESAMPLES = 20_000
# Two-sample Kolmogorov-Smirnov critical value at level 0.001 (conservative for discrete data);
# the seeds are fixed, so this is a calibrated tolerance, not a flaky test.
KS_CRITICAL = 1.95 * np.sqrt(2 / RESAMPLES)


def _case(name):
    rng = np.random.default_rng(CASES.index(name))
    if name == "continuous":
        return rng.normal(size=60), rng.normal(1.5, 1.0, size=25), 0.05
    if name == "ties":
        return np.round(rng.normal(size=40), 1), np.round(rng.normal(1.0, 1.0, size=15), 1), 0.1
    if name == "interleaved":  # positives between the candidate floors: many refits differ
        return rng.random(50), rng.random(50), 0.2
    if name == "all-feasible":  # target 1: the floor is -inf, the threshold the lowest positive
        return rng.random(20), rng.random(8), 1.0
    if name == "one-negative":
        return np.array([0.5]), rng.random(6), 0.0
    if name == "sparse-positives":  # one positive above the floors: a resample may miss it
        return rng.random(30), np.r_[rng.random(9) * 0.5, 0.99], 0.1
    if name == "one-positive":
        return rng.random(30), np.array([0.8]), 0.1
    if name == "all-equal":
        return np.full(12, 0.5), np.full(4, 0.5), 0.25
    raise AssertionError(name)


CASES = [
    "continuous",
    "ties",
    "interleaved",
    "all-feasible",
    "sparse-positives",
    "one-negative",
    "one-positive",
    "all-equal",
]


@pytest.mark.parametrize("name", CASES)
def test_drawn_bootstrap_matches_materialised_resamples(name):
    neg, pos, target = _case(name)
    max_fp = max_false_positives(target, neg.size)
    neg_rng, pos_rng, _ = resample_streams(11)
    floors, refits = bootstrap_refits(neg, pos, max_fp, RESAMPLES, neg_rng, pos_rng)
    b_floors, b_refits = brute_force_refits(neg, pos, max_fp, RESAMPLES, np.random.default_rng(12))
    assert ks_distance(floors, b_floors) < KS_CRITICAL
    assert ks_distance(refits, b_refits) < KS_CRITICAL
    # Same support: every draw is a score of the right class (or "flag nothing").
    assert set(np.unique(refits)) <= set(pos) | {np.inf}
    assert set(np.unique(floors)) <= set(neg) | {-np.inf}
    # The flag-nothing share agrees too (it is part of the CDF, checked here on its own).
    assert abs(np.mean(refits == np.inf) - np.mean(b_refits == np.inf)) < KS_CRITICAL


def test_an_off_by_one_floor_would_be_caught():
    # The check above has the power to see a one-rank shift of the floor at this size.
    neg, pos, target = _case("continuous")
    max_fp = max_false_positives(target, neg.size)
    neg_rng, pos_rng, _ = resample_streams(11)
    shifted, _ = bootstrap_refits(neg, pos, max_fp + 1, RESAMPLES, neg_rng, pos_rng)
    b_floors, _ = brute_force_refits(neg, pos, max_fp, RESAMPLES, np.random.default_rng(12))
    assert ks_distance(shifted, b_floors) > 3 * KS_CRITICAL


def test_fraction_within_target_matches_materialised_resamples():
    neg, pos, target = _case("ties")
    r = fit(np.r_[neg, pos], [False] * neg.size + [True] * pos.size, target, resamples=4000)
    t = r.details["conservative"]["threshold"]
    max_fp = max_false_positives(target, neg.size)
    idx = np.random.default_rng(5).integers(0, neg.size, size=(RESAMPLES, neg.size))
    within = np.mean((neg[idx] >= t).sum(axis=1) <= max_fp)
    claimed = r.details["conservative"]["within_target_fraction"]
    se = np.sqrt(within * (1 - within) / RESAMPLES + claimed * (1 - claimed) / 4000)
    assert abs(within - claimed) < 4 * se + 1e-3
    assert claimed >= 0.95


# --- the exact part is the exact fitter -------------------------------------------------------


@st.composite
def problems(draw):
    n_neg = draw(st.integers(1, 40))
    n_pos = draw(st.integers(1, 15))
    pool = draw(
        st.sampled_from(
            [
                st.sampled_from([0.0, 0.5, 1.0]),
                st.floats(-1.0, 1.0),
                st.integers(-3, 3).map(float),
            ]
        )
    )
    scores = draw(st.lists(pool, min_size=n_neg + n_pos, max_size=n_neg + n_pos))
    labels = draw(st.permutations([False] * n_neg + [True] * n_pos))
    target = draw(st.one_of(st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.5, 1.0]), st.floats(0, 1)))
    confidence = draw(st.sampled_from([0.5, 0.8, 0.9, 0.95]))
    return scores, labels, target, confidence


@settings(max_examples=150, deadline=None)
@given(problems(), st.booleans())
def test_exact_summary_is_the_exact_fitter(problem, higher_is_worse):
    scores, labels, target, confidence = problem
    s, y = np.asarray(scores), np.asarray(labels)
    options = {"confidence": confidence, "resamples": 200}
    exact = ExactSweepFitter().fit(s, y, target_fpr=target, higher_is_worse=higher_is_worse)
    r = fit(s, y, target, higher_is_worse, recommend="exact", **options)
    # recommend="exact": the result *is* the exact fitter's, details aside.
    assert attrs.evolve(r, details={}, reason=exact.reason, guarantee=exact.guarantee) == exact
    assert r.guarantee is not None and "bootstrap" in r.guarantee
    summary = r.details["exact"]
    assert set(summary) == SUMMARY_KEYS
    assert summary["threshold"] == exact.threshold
    assert (summary["false_positives"], summary["true_positives"]) == (
        exact.false_positives,
        exact.true_positives,
    )
    assert r.decision_rule == (FLAG_HIGH if higher_is_worse else FLAG_LOW)


@settings(max_examples=150, deadline=None)
@given(problems(), st.booleans())
def test_conservative_threshold_is_the_lowest_within_target_in_enough_resamples(
    problem, higher_is_worse
):
    scores, labels, target, confidence = problem
    s, y = np.asarray(scores), np.asarray(labels)
    r = fit(s, y, target, higher_is_worse, confidence=confidence, resamples=200)
    d = r.details
    sign = 1.0 if higher_is_worse else -1.0
    neg, pos = sign * s[~y], sign * s[y]
    max_fp = max_false_positives(target, neg.size)
    neg_rng, pos_rng, _ = resample_streams(0)
    floors, _ = bootstrap_refits(neg, pos, max_fp, 200, neg_rng, pos_rng)

    def within(t):  # fraction of resamples whose FPR at t (flag >= t) is within the target
        return float(np.mean(floors < t)) if t is not None else 1.0

    cons, exact = d["conservative"], d["exact"]
    t_c = None if cons["threshold"] is None else sign * cons["threshold"]
    t_e = None if exact["threshold"] is None else sign * exact["threshold"]
    assert cons["within_target_fraction"] == within(t_c)
    assert exact["within_target_fraction"] == within(t_e)
    # It flags no more than the exact threshold, so it meets the target on the data too.
    assert cons["false_positives"] <= exact["false_positives"]
    assert cons["false_positives"] <= max_fp
    if t_e is None:
        assert t_c is None
    elif t_c is not None:
        assert t_c >= t_e
    if t_c is not None:
        assert cons["within_target_fraction"] >= confidence
    # No positive score below it (a higher TPR) is both feasible on the data and within the
    # target in enough resamples.
    floor = t_e if t_e is not None else np.inf
    for p in pos:
        if floor <= p < (t_c if t_c is not None else np.inf):
            assert within(p) < confidence


# --- mirror, determinism, seeds ---------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(problems())
def test_mirror_property(problem):
    scores, labels, target, confidence = problem
    s = np.asarray(scores)
    up = fit(s, labels, target, True, confidence=confidence, resamples=200)
    down = fit(-s, labels, target, False, confidence=confidence, resamples=200)

    def neg(x):
        return None if x is None else -x

    assert down.threshold == neg(up.threshold)
    assert (down.false_positives, down.true_positives) == (up.false_positives, up.true_positives)
    du, dd = up.details, down.details
    for name in ("exact", "conservative"):
        assert dd[name] == {**du[name], "threshold": neg(du[name]["threshold"])}
    lo, hi = du["threshold_interval"]
    assert dd["threshold_interval"] == [neg(hi), neg(lo)]
    for key in ("fpr_interval", "tpr_interval", "fpr_interval_method", "tpr_interval_method"):
        assert dd[key] == du[key]


def _spread_data():
    rng = np.random.default_rng(7)
    return np.r_[rng.normal(size=400), rng.normal(1.5, 1, size=100)], [False] * 400 + [True] * 100


def test_same_seed_same_result_and_different_seeds_differ():
    s, y = _spread_data()
    a = fit(s, y, 0.05, seed=3)
    assert fit(s, y, 0.05, seed=3) == a
    others = [fit(s, y, 0.05, seed=seed).details for seed in (4, 5, 6)]
    keys = ("threshold_interval", "fpr_interval", "tpr_interval")
    assert any(o[k] != a.details[k] for o in others for k in keys)
    # The exact part does not depend on the seed.
    assert all(o["exact"]["threshold"] == a.details["exact"]["threshold"] for o in others)
    # Neither does the input order.
    order = np.random.default_rng(0).permutation(s.size)
    assert fit(s[order], np.asarray(y)[order], 0.05, seed=3) == a


# --- intervals --------------------------------------------------------------------------------


def test_rate_intervals_are_percentiles_of_the_binomial():
    s, y = _spread_data()
    r = fit(s, y, 0.05, recommend="exact")
    d = r.details
    assert d["fpr_interval_method"] == d["tpr_interval_method"] == "percentile bootstrap"
    assert r.false_positives is not None and r.true_positives is not None
    for (lo, hi), x, n in (
        (d["fpr_interval"], r.false_positives, r.n_negative),
        (d["tpr_interval"], r.true_positives, r.n_positive),
    ):
        # The bootstrap count at a fixed threshold is Binomial(n, x/n): its exact percentiles,
        # up to Monte Carlo error of one count.
        assert abs(lo * n - binom.ppf(0.025, n, x / n)) <= 1
        assert abs(hi * n - binom.ppf(0.975, n, x / n)) <= 1
        assert lo <= x / n <= hi
    assert d["threshold_interval"][0] <= d["exact"]["threshold"] <= d["threshold_interval"][1]


def test_zero_false_positives_fall_back_to_clopper_pearson():
    # 300 negatives below every positive: any threshold has 0 false positives, and all 5
    # positives are flagged: both percentile intervals would collapse.
    neg = np.linspace(0.0, 1.0, 300)
    pos = np.array([2.0, 2.5, 3.0, 3.5, 4.0])
    r = fit(np.r_[neg, pos], [False] * 300 + [True] * 5, 0.0)
    d = r.details
    assert (r.false_positives, r.true_positives) == (0, 5)
    assert d["fpr_interval_method"] == "clopper-pearson (bootstrap degenerate: 0 false positives)"
    assert d["fpr_interval"][0] == 0.0
    assert d["fpr_interval"][1] == pytest.approx(0.01222, abs=5e-6)  # CP(0/300), reference B.7
    assert d["fpr_upper_bound"] == pytest.approx(0.00994, abs=5e-6)  # one-sided, 1 - 0.05**(1/300)
    assert d["tpr_interval_method"] == (
        "clopper-pearson (bootstrap degenerate: all 5 positives flagged)"
    )
    assert d["tpr_interval"] == [pytest.approx(0.025 ** (1 / 5)), 1.0]  # CP(5/5)


@pytest.mark.parametrize(
    ("x", "n", "interval"),
    [(3, 300, (0.00207, 0.02894)), (0, 300, (0.0, 0.01222)), (45, 50, (0.78186, 0.96672))],
)
def test_clopper_pearson_reference_values(x, n, interval):
    lo, hi = _clopper_pearson(x, n, 0.95)
    assert (lo, hi) == (pytest.approx(interval[0], abs=5e-6), pytest.approx(interval[1], abs=5e-6))


def test_all_negatives_flagged_falls_back_to_clopper_pearson():
    # Target 1 with one negative: the exact threshold is the lowest positive, which flags it.
    r = fit([0.9, 0.95, 0.1], [False, True, True], 1.0, recommend="exact")
    d = r.details
    assert (r.false_positives, r.n_negative) == (1, 1)
    assert d["fpr_interval_method"] == (
        "clopper-pearson (bootstrap degenerate: all 1 negatives flagged)"
    )
    assert d["fpr_interval"] == [pytest.approx(0.025), 1.0]


def test_threshold_interval_end_is_null_on_flag_nothing():
    # One positive barely above the 2nd-highest negative: many resamples flag nothing.
    neg = np.linspace(0.0, 1.0, 20)
    pos = np.array([0.96, 0.2])
    r = fit(np.r_[neg, pos], [False] * 20 + [True] * 2, 0.05, recommend="exact")
    d = r.details
    assert r.threshold == 0.96
    assert 0.025 < d["threshold_flag_nothing_fraction"] < 0.975
    assert d["threshold_interval"] == [0.96, None]
    down = fit(-np.r_[neg, pos], [False] * 20 + [True] * 2, 0.05, False, recommend="exact")
    assert down.details["threshold_interval"] == [None, -0.96]


# --- edges ------------------------------------------------------------------------------------


def test_worked_example():
    r = fit(NEG + POS, [False] * 10 + [True] * 5, 0.2)
    d = r.details
    assert d["exact"]["threshold"] == 0.58  # the reference's exact-sweep vector
    assert (d["exact"]["achieved_fpr"], d["exact"]["achieved_tpr"]) == (0.2, 0.8)
    assert d["recommended"] == "conservative"
    assert r.threshold == d["conservative"]["threshold"]
    assert r.threshold is not None and r.threshold > 0.58
    assert (
        d["exact"]["within_target_fraction"] < 0.95 <= d["conservative"]["within_target_fraction"]
    )


def test_all_equal_scores():
    r = fit([0.5] * 6, [False, True] * 3, 0.5)
    assert r.threshold is None
    assert r.details["threshold_interval"] == [None, None]
    assert r.details["threshold_flag_nothing_fraction"] == 1.0
    assert "flag nothing" in str(r.reason)
    r = fit([0.5] * 6, [False, True] * 3, 1.0)
    assert r.threshold == 0.5
    assert (r.false_positives, r.true_positives) == (3, 3)


def test_one_negative_and_one_positive():
    r = fit([0.2, 0.7], [False, True], 0.0)
    assert r.threshold == 0.7
    assert (r.achieved_fpr, r.achieved_tpr) == (0.0, 1.0)
    assert r.details["threshold_interval"] == [0.7, 0.7]
    r = fit([0.7, 0.2], [False, True], 0.0)
    assert r.threshold is None


def test_conservative_flags_nothing_when_only_the_exact_threshold_exists():
    neg = np.linspace(0.0, 1.0, 20)
    pos = np.array([0.96])
    r = fit(np.r_[neg, pos], [False] * 20 + [True], 0.05)
    assert r.details["exact"]["threshold"] == 0.96
    assert r.threshold is None
    assert "in 95% of the resamples" in str(r.reason)
    assert (r.achieved_fpr, r.achieved_tpr) == (0.0, 0.0)


# --- options, loading, the report and the CLI -------------------------------------------------


def test_loads_by_name_with_options():
    loaded = load_plugin("ragleaklab.fitters", "bootstrap-ci", {"resamples": 500, "seed": 2})
    assert loaded.obj == BootstrapCIFitter(resamples=500, seed=2)
    assert loaded.options == {
        "confidence": 0.95,
        "resamples": 500,
        "seed": 2,
        "recommend": "conservative",
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"confidence": 1.0}, "'confidence'"),
        ({"confidence": 0.0}, "'confidence'"),
        ({"resamples": 50}, "'resamples'"),
        ({"resamples": 150}, "fewer than 10 resamples in the tails"),
        ({"confidence": 0.99, "resamples": 900}, "fewer than 10 resamples in the tails"),
        ({"seed": -1}, "'seed'"),
        ({"recommend": "lenient"}, "'recommend'"),
    ],
)
def test_bad_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        BootstrapCIFitter(**options)
    with pytest.raises(ConfigError):
        load_plugin("ragleaklab.fitters", "bootstrap-ci", options)


@pytest.mark.parametrize("recommend", ["conservative", "exact"])
@pytest.mark.parametrize("higher_is_worse", [True, False])
def test_calibrate_accepts_the_result(recommend, higher_is_worse):
    s, y = _spread_data()
    s = np.round(s, 1) * (1 if higher_is_worse else -1)  # ties
    scores = {f"c{i:03d}": float(x) for i, x in enumerate(s)}
    labels = {f"c{i:03d}": bool(lab) for i, lab in enumerate(y)}
    report = calibrate(
        scores,
        labels,
        fitter="bootstrap-ci",
        fitter_options={"recommend": recommend, "resamples": 400},
        target_fpr=0.05,
        higher_is_worse=higher_is_worse,
    )
    data = json.loads(report.to_json())  # JSON-compatible, no NaN
    assert data["fitter"]["name"] == "bootstrap-ci"
    details = data["result"]["details"]
    assert details["recommended"] == recommend
    assert data["result"]["threshold"] == details[recommend]["threshold"]
    assert data["result"]["false_positives"] == details[recommend]["false_positives"]


def test_cli_calibrate(tmp_path):
    examples = ROOT / "data" / "examples"
    reports = []
    for run, extra in enumerate(([], ["--fitter-option", "resamples=500"])):
        out = tmp_path / f"out{run}"
        rlk(
            "calibrate",
            "--scores",
            str(examples / "scores.jsonl"),
            "--labels",
            str(examples / "labels.jsonl"),
            "--out",
            str(out),
            "--fitter",
            "bootstrap-ci",
            "--target-fpr",
            "0.05",
            *extra,
            cwd=tmp_path,
            ok=(0,),
        )
        reports.append(json.loads((out / "calibration_report.json").read_text("utf-8")))
    default, five_hundred = reports
    assert default["fitter"]["name"] == "bootstrap-ci"
    assert default["fitter"]["options"]["resamples"] == 2000
    assert five_hundred["fitter"]["options"]["resamples"] == 500
    for report in reports:
        d = report["result"]["details"]
        assert d["recommended"] == "conservative"
        assert report["result"]["threshold"] == d["conservative"]["threshold"]
        assert report["result"]["decision_rule"] == FLAG_HIGH
        assert set(d["exact"]) == set(d["conservative"]) == SUMMARY_KEYS
        assert len(d["threshold_interval"]) == len(d["fpr_interval"]) == 2
    assert five_hundred["result"]["details"]["resamples"] == 500
