"""Epoch reducers, summaries and exact rate intervals, against brute force and scipy."""

from __future__ import annotations

import itertools
import json
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core import ConfigError, clopper_pearson_upper
from ragleaklab_core.stats.aggregation import (
    DECIMALS,
    REDUCERS,
    RateInterval,
    Reducer,
    Summary,
    rate_interval,
    reducer,
    summarize,
)

# Multiples of 1/8 are exact in binary, so "value >= cut" and "1 - value" have no rounding.
GRID = [i / 8 for i in range(9)]
grid_values = st.lists(st.sampled_from(GRID), min_size=1, max_size=8)
any_values = st.lists(
    st.one_of(st.sampled_from(GRID), st.floats(0.0, 1.0, allow_nan=False)), min_size=1, max_size=8
)
cuts = st.sampled_from([None, "0.25", "0.5", "0.75", "1.0", "0.3"])


def _spec(kind: str, k: int, cut: str | None) -> str:
    return f"{kind}_{k}" if cut is None else f"{kind}_{k}@{cut}"


def _successes(values: list[float], cut: str | None) -> list[bool]:
    at = 1.0 if cut is None else float(cut)
    return [v >= at for v in values]


# --- parsing ---------------------------------------------------------------------------------


def test_fixed_names_parse_to_themselves():
    assert REDUCERS == ("mean", "max", "min", "median", "mode")
    for name in REDUCERS:
        r = reducer(name)
        assert (r.name, r.kind, r.k, r.success_at) == (name, name, None, 1.0)


@pytest.mark.parametrize(
    ("spec", "name", "kind", "k", "cut"),
    [
        ("at_least_2", "at_least_2", "at_least", 2, 1.0),
        ("at_least_2@1.0", "at_least_2", "at_least", 2, 1.0),
        ("at_least_2@1", "at_least_2", "at_least", 2, 1.0),
        ("at_least_2@0.50", "at_least_2@0.5", "at_least", 2, 0.5),
        ("pass_at_3@.25", "pass_at_3@0.25", "pass_at", 3, 0.25),
        ("pass_at_10", "pass_at_10", "pass_at", 10, 1.0),
    ],
)
def test_counting_specs_parse_to_a_canonical_name(spec, name, kind, k, cut):
    r = reducer(spec)
    assert (r.name, r.kind, r.k, r.success_at) == (name, kind, k, cut)
    assert reducer(r.name) == r == Reducer(spec)
    assert hash(reducer(r.name)) == hash(r)


@pytest.mark.parametrize(
    "spec",
    [
        "foo",
        "",
        "Mean",
        " mean",
        "at_most_2",
        "at_least",
        "at_least_",
        "at_least_0",
        "at_least_02",
        "at_least_-1",
        "pass_at_x",
        "pass_at_1.5",
        "at_least_2@x",
        "at_least_2@",
        "at_least_2@1.5",
        "at_least_2@0",
        "at_least_2@0.0",
        "at_least_2@-0.5",
        "at_least_2@nan",
        "at_least_2@inf",
        "at_least_2@1e-1",
        "at_least_2@0_5",
        "at_least_2@0.5@0.5",
        "at_least_" + "9" * 5000,
        "mean@0.5",
    ],
)
def test_bad_specs_are_one_config_error_naming_the_spec_and_the_valid_forms(spec):
    with pytest.raises(ConfigError) as info:
        reducer(spec)
    err = info.value
    assert err.source == "reducer"
    assert len(err.problems) == 1
    problem = err.problems[0]
    assert repr(spec) in problem
    for form in ("mean", "median", "mode", "at_least_<k>", "pass_at_<k>", "@<cut>"):
        assert form in problem
    assert isinstance(err, ValueError)


def test_a_non_string_spec_is_a_config_error():
    with pytest.raises(ConfigError, match="not a int"):
        reducer(3)  # type: ignore[arg-type]


# --- reducers against brute force ------------------------------------------------------------


@settings(max_examples=300)
@given(values=any_values, data=st.data(), cut=cuts)
def test_pass_at_k_matches_enumerating_every_k_subset(values, data, cut):
    n = len(values)
    k = data.draw(st.integers(1, n), label="k")
    won = _successes(values, cut)
    subsets = list(itertools.combinations(range(n), k))
    hit = sum(1 for subset in subsets if any(won[i] for i in subset))
    got = reducer(_spec("pass_at", k, cut))(values)
    assert got == float(Fraction(hit, len(subsets)))
    # inspect_ai's product form of the same estimator (Chen et al. 2021)
    c = sum(won)
    product = 1.0 if n - c < k else 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
    assert got == pytest.approx(product, abs=1e-12)


@given(values=any_values, k=st.integers(1, 10), cut=cuts)
def test_at_least_k_counts_successful_epochs(values, k, cut):
    expected = 1.0 if sum(_successes(values, cut)) >= k else 0.0
    assert reducer(_spec("at_least", k, cut))(values) == expected


def test_pinned_counting_examples():
    assert reducer("at_least_2@0.5")([0.4, 0.5, 0.9]) == 1.0  # 0.5 counts: the cut is >=
    assert reducer("at_least_2@0.5")([0.4, 0.49, 0.9]) == 0.0
    assert reducer("at_least_1")([0.99, 0.5]) == 0.0  # default cut 1.0
    assert reducer("pass_at_1")([1.0, 0.0, 0.0, 0.0]) == 0.25  # pass@1 is the success share
    assert reducer("pass_at_3")([1.0, 0.0, 0.0, 1.0, 0.0]) == 0.9  # 1 - C(3,3)/C(5,3)
    assert reducer("pass_at_2")([0.0, 1.0, 1.0]) == 1.0  # n - c < k


def test_pass_at_k_needs_k_epochs_and_at_least_k_does_not():
    with pytest.raises(ConfigError, match="needs at least 3 epochs per case, got 2") as info:
        reducer("pass_at_3")([1.0, 1.0])
    assert info.value.source == "reducer"
    assert reducer("at_least_3")([1.0, 1.0]) == 0.0


@given(values=st.lists(st.sampled_from([0.0, 0.2, 0.5, 1.0]), min_size=1, max_size=9))
def test_mode_is_the_most_frequent_value_ties_to_the_smallest(values):
    top = max(values.count(v) for v in values)
    assert reducer("mode")(values) == min(v for v in values if values.count(v) == top)


def test_mode_tie_is_not_first_seen():
    # Counter.most_common (inspect_ai's rule) would answer 0.5, the first value seen.
    assert reducer("mode")([0.5, 0.2, 0.5, 0.2, 1.0]) == 0.2


@given(values=any_values)
def test_mean_median_max_min_match_the_statistics_module(values):
    assert reducer("mean")(values) == statistics.mean(values)
    assert reducer("mean")(values) == pytest.approx(float(np.mean(values)), abs=1e-12)
    assert min(values) <= reducer("mean")(values) <= max(values)
    assert reducer("median")(values) == statistics.median(values)
    assert reducer("median")(values) == pytest.approx(float(np.median(values)), abs=1e-15)
    assert reducer("max")(values) == max(values)
    assert reducer("min")(values) == min(values)


@given(value=st.floats(0.0, 1.0), n=st.integers(1, 10))
def test_equal_epochs_reduce_to_their_value(value, n):
    for name in REDUCERS:
        assert reducer(name)([value] * n) == value


@given(values=any_values, data=st.data(), cut=cuts)
def test_reducers_ignore_epoch_order(values, data, cut):
    shuffled = data.draw(st.permutations(values), label="shuffled")
    k = data.draw(st.integers(1, len(values)), label="k")
    specs = [*REDUCERS, _spec("at_least", k, cut), _spec("pass_at", k, cut)]
    for spec in specs:
        assert reducer(spec)(shuffled) == reducer(spec)(values), spec


@given(values=grid_values, data=st.data(), cut=st.sampled_from([None, "0.25", "0.5", "0.75"]))
def test_lower_is_worse_mirrors_the_counting_reducers(values, data, cut):
    k = data.draw(st.integers(1, len(values)), label="k")
    mirrored = [1.0 - v for v in values]
    at_least = reducer(_spec("at_least", k, cut))
    assert at_least(values, higher_is_worse=False) == 1.0 - at_least(mirrored)
    pass_at = reducer(_spec("pass_at", k, cut))
    assert pass_at(values, higher_is_worse=False) == pytest.approx(1.0 - pass_at(mirrored))
    for name in REDUCERS:  # literal: direction does not change them
        assert reducer(name)(values, higher_is_worse=False) == reducer(name)(values)


def test_lower_is_worse_default_cut_needs_a_zero():
    # success means value <= 1 - 1.0 = 0.0; the result is in the value's direction (0 = worst)
    assert reducer("at_least_1")([0.0, 0.3], higher_is_worse=False) == 0.0
    assert reducer("at_least_1")([0.1, 0.3], higher_is_worse=False) == 1.0
    assert reducer("at_least_1@0.75")([0.25, 0.9], higher_is_worse=False) == 0.0


@pytest.mark.parametrize("spec", [*REDUCERS, "at_least_1", "pass_at_1"])
def test_empty_or_non_finite_epochs_are_value_errors(spec):
    r = reducer(spec)
    with pytest.raises(ValueError, match="empty"):
        r([])
    with pytest.raises(ValueError, match="finite"):
        r([0.5, math.nan])
    with pytest.raises(ValueError, match="finite"):
        r([math.inf])


# --- summarize -------------------------------------------------------------------------------


@given(values=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=60))
def test_summary_matches_numpy(values):
    s = summarize(values)
    assert s.n == len(values)
    assert s.mean == pytest.approx(float(np.mean(values)), abs=1e-12)
    expected = float(np.std(values, ddof=1)) / math.sqrt(len(values))
    assert s.stderr == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert (s.min, s.max) == (min(values), max(values))


def test_summary_of_one_and_of_none():
    assert summarize([0.25]) == Summary(n=1, mean=0.25, stderr=0.0, min=0.25, max=0.25)
    empty = summarize([])
    assert empty == Summary(n=0, mean=None, stderr=None, min=None, max=None)
    assert empty.to_dict() == {"n": 0, "mean": None, "stderr": None, "min": None, "max": None}


def test_summary_of_constant_values_has_exactly_zero_stderr():
    s = summarize([0.1] * 7)
    assert (s.mean, s.stderr) == (0.1, 0.0)  # numpy: 0.09999999999999999 and 1.5e-17


def test_summary_to_dict_rounds_to_six_decimals():
    s = summarize([0.1, 0.2, 0.4])
    d = s.to_dict()
    assert d == {"n": 3, "mean": 0.233333, "stderr": 0.088192, "min": 0.1, "max": 0.4}
    assert json.loads(json.dumps(d)) == d


def test_summary_rejects_non_finite_values():
    with pytest.raises(ValueError, match="finite"):
        summarize([0.5, math.nan])


# --- rate_interval ---------------------------------------------------------------------------


def test_zero_of_ten_and_ten_of_ten():
    none = rate_interval(0, 10)
    assert (none.successes, none.trials, none.rate, none.lower) == (0, 10, 0.0, 0.0)
    assert none.upper == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-12)
    assert none.to_dict() == {
        "successes": 0,
        "trials": 10,
        "rate": 0.0,
        "lower": 0.0,
        "upper": 0.308497,
        "confidence": 0.95,
    }
    every = rate_interval(10, 10)
    assert (every.rate, every.upper) == (1.0, 1.0)
    assert every.lower == pytest.approx(0.025 ** (1 / 10), rel=1e-12)
    assert none.upper is not None
    assert every.lower == pytest.approx(1 - none.upper, abs=1e-15)


# From the calibration statistics reference, B.7.
@pytest.mark.parametrize(
    ("x", "n", "lower", "upper"),
    [(3, 300, 0.00207, 0.02894), (0, 300, 0.0, 0.01222), (45, 50, 0.78186, 0.96672)],
)
def test_reference_values(x, n, lower, upper):
    r = rate_interval(x, n)
    assert (r.lower, r.upper) == (pytest.approx(lower, abs=5e-6), pytest.approx(upper, abs=5e-6))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_matches_scipy_exact_interval(data, confidence):
    from scipy import stats

    n = data.draw(st.integers(1, 500), label="n")
    x = data.draw(st.integers(0, n), label="x")
    r = rate_interval(x, n, confidence)
    ci = stats.binomtest(x, n).proportion_ci(confidence_level=confidence, method="exact")
    assert r.lower == pytest.approx(ci.low, rel=1e-9, abs=1e-12)
    assert r.upper == pytest.approx(ci.high, rel=1e-9, abs=1e-12)
    assert r.rate == x / n and r.confidence == confidence
    g = (1 - confidence) / 2
    if 0 < x < n:
        # The Beta quantiles as scipy.stats.beta.ppf gives them. They are computed without scipy
        # (ragleaklab_core.stats.beta), so the strongest honest statement is: the same to 1e-12
        # relative, and the same after rounding to what report.json writes.
        for ours, theirs in (
            (r.lower, float(stats.beta.ppf(g, x, n - x + 1))),
            (r.upper, float(stats.beta.ppf(1 - g, x + 1, n - x))),
        ):
            assert ours == pytest.approx(theirs, rel=1e-12, abs=0)
            assert round(ours, DECIMALS) == round(theirs, DECIMALS)
    # each end is the one-sided bound at (1 + confidence) / 2, as calibration reports use
    assert r.upper == pytest.approx(clopper_pearson_upper(x, n, 1 - g), rel=1e-9, abs=1e-12)


def test_covers_the_true_rate_at_least_as_often_as_promised():
    from scipy import stats

    n, draws = 50, 2000
    intervals = [rate_interval(x, n) for x in range(n + 1)]
    lower = np.array([r.lower for r in intervals])
    upper = np.array([r.upper for r in intervals])
    rng = np.random.default_rng(20240601)
    for p in (0.02, 0.1, 0.3, 0.5, 0.9):
        covers = (lower <= p) & (p <= upper)
        xs = rng.binomial(n, p, size=draws)
        assert covers[xs].mean() >= 0.95, p
    # and exactly, over a grid of true rates (Clopper-Pearson is conservative everywhere)
    grid = np.linspace(0.001, 0.999, 999)
    pmf = stats.binom.pmf(np.arange(n + 1)[:, None], n, grid)
    coverage = (pmf * ((lower[:, None] <= grid) & (grid <= upper[:, None]))).sum(axis=0)
    assert coverage.min() >= 0.95


def test_no_trials_has_no_rate():
    assert rate_interval(0, 0) == RateInterval(0, 0, None, None, None, 0.95)
    assert rate_interval(0, 0).to_dict()["rate"] is None


@pytest.mark.parametrize(
    ("x", "n", "confidence"),
    [(3, 2, 0.95), (-1, 5, 0.95), (0, -1, 0.95), (1, 5, 0.0), (1, 5, 1.0), (1, 5, math.nan)],
)
def test_bad_arguments_are_value_errors(x, n, confidence):
    with pytest.raises(ValueError):
        rate_interval(x, n, confidence)


@pytest.mark.parametrize(("x", "n"), [(1.0, 5), (1, 5.5), (True, 5)])
def test_counts_must_be_integers(x, n):
    with pytest.raises(TypeError):
        rate_interval(x, n)


def test_numpy_integer_counts_are_accepted():
    assert rate_interval(np.int64(3), np.int64(300)) == rate_interval(3, 300)


# --- the worked example in docs/aggregation.md -----------------------------------------------

EPOCHS = {
    "q1": [1.0, 0.0, 1.0],
    "q2": [0.0, 0.0, 0.0],
    "q3": [0.5, 1.0, 0.5],
    "q4": [0.0, 1.0, 0.0],
}
DOC_TABLE = {
    "mean": [0.666667, 0.0, 0.666667, 0.333333],
    "median": [1.0, 0.0, 0.5, 0.0],
    "mode": [1.0, 0.0, 0.5, 0.0],
    "max": [1.0, 0.0, 1.0, 1.0],
    "at_least_2": [1.0, 0.0, 0.0, 0.0],
    "at_least_2@0.5": [1.0, 0.0, 1.0, 0.0],
    "pass_at_1": [0.666667, 0.0, 0.333333, 0.333333],
    "pass_at_2": [1.0, 0.0, 0.666667, 0.666667],
}


def test_the_documented_worked_example():
    for spec, column in DOC_TABLE.items():
        assert [round(reducer(spec)(v), 6) for v in EPOCHS.values()] == column, spec
    means = [reducer("mean")(v) for v in EPOCHS.values()]
    assert summarize(means).to_dict() == {
        "n": 4,
        "mean": 0.416667,
        "stderr": 0.159571,
        "min": 0.0,
        "max": 0.666667,
    }
    assert sum(m >= 0.5 for m in means) == 2
    assert rate_interval(2, 4).to_dict() == {
        "successes": 2,
        "trials": 4,
        "rate": 0.5,
        "lower": 0.067586,
        "upper": 0.932414,
        "confidence": 0.95,
    }
    worst = [reducer("max")(v) for v in EPOCHS.values()]
    assert sum(w >= 0.5 for w in worst) == 3
    assert (rate_interval(3, 4).to_dict()["lower"], rate_interval(3, 4).to_dict()["upper"]) == (
        0.19412,
        0.993691,
    )
    assert rate_interval(0, 20).to_dict()["upper"] == 0.168433
    assert rate_interval(3, 300).to_dict()["lower"] == 0.002067
    assert rate_interval(3, 300).to_dict()["upper"] == 0.028945
