"""The corrected success rate: its estimator against the formula, its edge cases, and the
coverage of its interval in a seeded simulation over a grid of rates."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragleaklab_core.stats.corrected import corrected_rate, rogan_gladen


@given(
    st.integers(1, 300).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
    st.integers(1, 100).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
    st.integers(1, 100).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
)
def test_the_estimate_is_rogan_gladen_clipped(run, positives, negatives):
    (n, x), (npos, tp), (nneg, tn) = run, positives, negatives
    got = corrected_rate(
        x, n, true_positives=tp, positives=npos, true_negatives=tn, negatives=nneg, draws=500
    )
    se, sp = tp / npos, tn / nneg
    assert got.observed == x / n
    if se + sp <= 1:
        assert got.estimate is None and (got.low, got.high) == (0.0, 1.0)
        assert got.why_not is not None
    elif got.estimate is not None:
        want = min(1.0, max(0.0, (x / n + sp - 1) / (se + sp - 1)))
        assert got.estimate == pytest.approx(want)
        assert 0.0 <= got.low <= got.high <= 1.0


def test_a_perfect_instrument_leaves_the_rate_as_counted_and_chance_says_nothing():
    exact = corrected_rate(
        30, 100, true_positives=500, positives=500, true_negatives=500, negatives=500
    )
    assert exact.estimate == pytest.approx(0.30)
    assert exact.low < 0.30 < exact.high
    assert exact.high - exact.low < 0.2  # about the binomial interval of 30/100
    blind = corrected_rate(30, 100, true_positives=5, positives=10, true_negatives=5, negatives=10)
    assert blind.estimate is None and (blind.low, blind.high) == (0.0, 1.0)
    assert corrected_rate(
        30, 100, true_positives=9, positives=10, true_negatives=9, negatives=10
    ) == corrected_rate(30, 100, true_positives=9, positives=10, true_negatives=9, negatives=10)
    assert np.isnan(rogan_gladen(0.3, 0.4, 0.5))


def test_a_false_positive_heavy_count_is_corrected_down():
    # 10% flagged by a metric with 10% false positives and perfect sensitivity: almost nothing
    # truly succeeded, which the raw count hides.
    got = corrected_rate(
        40, 400, true_positives=200, positives=200, true_negatives=360, negatives=400
    )
    assert got.estimate is not None and got.estimate < 0.02
    assert got.low == 0.0 and got.high < 0.06


@pytest.mark.parametrize("bad", [(-1, 10), (11, 10), (0, 0)])
def test_bad_counts_are_refused(bad):
    with pytest.raises(ValueError):
        corrected_rate(*bad, true_positives=1, positives=2, true_negatives=1, negatives=2)
    with pytest.raises(TypeError):
        corrected_rate(1.5, 10, true_positives=1, positives=2, true_negatives=1, negatives=2)


def test_the_interval_covers_the_true_rate_within_two_points_of_nominal():
    """The run, the labelled positives and the labelled negatives are each drawn binomially
    around a known true rate, sensitivity and specificity; the 95% interval must hold the true
    rate in 93-97% of runs, pooled over the grid, and no cell may stray far (each cell has
    only 300 runs: its own standard error is 1.3 points)."""
    rng = np.random.default_rng(20261129)
    grid = list(
        itertools.product(
            [0.05, 0.2, 0.5, 0.8],  # true success rates, away from the edges 0 and 1
            [0.75, 0.95],  # sensitivities
            [0.9, 0.99],  # specificities
            [(200, 60, 200), (60, 30, 80)],  # run cases, labelled positives, negatives
        )
    )
    runs, held = 300, []
    for rate, se, sp, (n, npos, nneg) in grid:
        flagged_share = se * rate + (1 - sp) * (1 - rate)
        hits = 0
        for _ in range(runs):
            got = corrected_rate(
                int(rng.binomial(n, flagged_share)),
                n,
                true_positives=int(rng.binomial(npos, se)),
                positives=npos,
                true_negatives=int(rng.binomial(nneg, sp)),
                negatives=nneg,
                draws=2000,
            )
            hits += got.low <= rate <= got.high
        held.append(hits / runs)
    pooled = sum(held) / len(held)
    assert 0.93 <= pooled <= 0.97, pooled
    assert min(held) >= 0.90 and max(held) <= 0.995, held
