"""The Beta quantile without scipy, against scipy and against an exact reference.

scipy's ``betaincinv`` is itself off in places (by 4e-8 relative at a = 1000, b = 999001,
q = 0.995, and by up to 3e-11 for small a against b near 10**6). Where ours and scipy's differ
by more than 1e-12, the tests settle it with an exact reference: ``I_x(a, b)`` as a binomial sum
in 50-digit decimals, which shows that ours is the root to 1e-13 and scipy's is not.
"""

from __future__ import annotations

import itertools
import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core.stats import beta
from ragleaklab_core.stats.aggregation import DECIMALS, cp_lower, cp_upper
from ragleaklab_core.stats.beta import beta_cdf, beta_ppf

#: The quantiles the limits are asked at: two-sided 99%, 95%, 90%, 80% and the one-sided 95%.
LEVELS = (0.005, 0.025, 0.05, 0.1, 0.9, 0.95, 0.975, 0.995)

# a and b log-uniform from 1 to 10**6: small counts and large ones are drawn alike.
counts = st.floats(0.0, math.log(1e6)).map(lambda t: max(1, round(math.exp(t))))
quantiles = st.floats(1e-9, 1 - 1e-9)


def _exact_cdf(x: Decimal, a: int, b: int) -> Decimal:
    """``I_x(a, b) = P(Bin(a + b - 1, x) >= a)``, summed over the shorter side in 50 digits."""
    n = a + b - 1
    with localcontext() as ctx:
        ctx.prec = 50
        y = 1 - x
        # P(Bin(n, p) <= k) from k = 0 up, each term from the one before
        p, other, k = (x, y, a - 1) if a <= b else (y, x, b - 1)
        term = other**n
        total = term
        for j in range(1, k + 1):
            term = term * (n - j + 1) / j * p / other
            total += term
        return 1 - total if a <= b else total


def _is_root(x: float, a: int, b: int, q: float, rel: float) -> bool:
    """Whether the exact root of ``I_x(a, b) = q`` is within *rel* of *x*."""
    with localcontext() as ctx:
        ctx.prec = 50
        below = Decimal(x) * (1 - Decimal(rel))
        above = min(Decimal(x) * (1 + Decimal(rel)), Decimal(1))
        return _exact_cdf(below, a, b) <= Decimal(q) <= _exact_cdf(above, a, b)


def _agrees_with_scipy(ours: float, a: int, b: int, q: float) -> None:
    from scipy.special import betaincinv

    theirs = float(betaincinv(a, b, q))
    if ours != pytest.approx(theirs, rel=1e-12, abs=0):
        # then scipy is the one that is off: ours is the root, scipy's is not
        assert _is_root(ours, a, b, q, 1e-13), (ours, theirs)
        assert not _is_root(theirs, a, b, q, 1e-12), (ours, theirs)


def test_the_stirling_table_holds_the_stirling_errors():
    with localcontext() as ctx:
        ctx.prec = 60
        half_log_2pi = (
            2 * Decimal("3.14159265358979323846264338327950288419716939937510")
        ).ln() / 2
        for n, value in enumerate(beta._STIRLING_ERROR[1:], start=1):
            log_factorial = sum((Decimal(k).ln() for k in range(2, n + 1)), Decimal(0))
            exact = log_factorial - (n + Decimal("0.5")) * Decimal(n).ln() + n - half_log_2pi
            assert value == float(exact), n
        # past the table, the asymptotic series; it is a term of an exponent, so what counts is
        # its absolute error (each branch's first n, where its truncation costs most)
        for n in (16, 36, 81, 501):
            log_factorial = sum((Decimal(k).ln() for k in range(2, n + 1)), Decimal(0))
            exact = log_factorial - (n + Decimal("0.5")) * Decimal(n).ln() + n - half_log_2pi
            assert beta._stirling_error(n) == pytest.approx(float(exact), rel=0, abs=3e-17), n


@settings(max_examples=150, deadline=None)
@given(a=counts, b=counts, q=quantiles)
def test_the_quantile_is_scipys(a, b, q):
    _agrees_with_scipy(beta_ppf(q, a, b), a, b, q)


@settings(max_examples=150, deadline=None)
@given(small=st.integers(1, 300), large=counts, q=quantiles, small_first=st.booleans())
def test_the_quantile_is_the_exact_root(small, large, q, small_first):
    a, b = (small, large) if small_first else (large, small)
    assert _is_root(beta_ppf(q, a, b), a, b, q, 1e-13)


@settings(max_examples=100, deadline=None)
@given(a=counts, b=counts, q=st.floats(1e-6, 1 - 1e-6))
def test_the_cdf_is_scipys_and_the_quantile_inverts_it(a, b, q):
    from scipy.special import betainc

    x = beta_ppf(q, a, b)
    ours, theirs = beta_cdf(x, a, b), float(betainc(a, b, x))
    if ours != pytest.approx(theirs, rel=1e-12, abs=0):
        with localcontext() as ctx:
            ctx.prec = 50
            exact = _exact_cdf(Decimal(x), a, b)
            assert abs(Decimal(ours) - exact) <= Decimal("1e-13") * exact, (ours, theirs)
            assert abs(Decimal(theirs) - exact) > Decimal("1e-12") * exact, (ours, theirs)
    # I_x at the quantile is q again, up to the precision of I_x and the rounding of x itself
    step = beta._density(x, a, b) * math.ulp(x)
    assert abs(ours - q) <= 2e-12 * min(q, 1 - q) + 4 * step


@settings(max_examples=100, deadline=None)
@given(a=counts, b=counts, qs=st.lists(quantiles, min_size=2, max_size=6, unique=True))
def test_the_quantile_increases_with_q(a, b, qs):
    qs = sorted(qs)
    xs = [beta_ppf(q, a, b) for q in qs]
    for (q1, x1), (q2, x2) in itertools.pairwise(zip(qs, xs, strict=True)):
        if q2 - q1 > 1e-10 * q2:
            assert x1 < x2, (q1, q2)
        else:  # a step below the precision: rounding may move it, but by no more than that
            assert x2 >= x1 * (1 - 1e-14), (q1, q2)
    # and between neighbouring doubles, where a stopping rule that left the root early would show
    q = qs[0]
    assert beta_ppf(math.nextafter(q, 1.0), a, b) >= beta_ppf(q, a, b) * (1 - 1e-14)


def test_limits_round_as_scipys_for_every_count_up_to_300():
    """What report.json writes (rounded to DECIMALS) is what scipy's limits gave, for every x of
    every n up to 300 at the levels every run and calibration report uses."""
    from scipy.special import betaincinv

    xs, ns = np.array([(x, n) for n in range(2, 301) for x in range(1, n)]).T
    for q, lower in ((0.025, True), (0.975, False), (0.95, False)):
        ours = np.array(
            [
                cp_lower(x, n, q) if lower else cp_upper(x, n, q)
                for x, n in zip(xs.tolist(), ns.tolist(), strict=True)
            ]
        )
        theirs = betaincinv(xs, ns - xs + 1, q) if lower else betaincinv(xs + 1, ns - xs, q)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(ours.round(DECIMALS), theirs.round(DECIMALS))


def _sampled_counts() -> list[tuple[int, int]]:
    rng = np.random.default_rng(20261207)
    ns = np.unique(np.round(10 ** rng.uniform(2.5, 6.0, size=60)).astype(int))
    pairs = [(int(rng.integers(1, n)), int(n)) for n in ns]
    # a count near each end and in the middle of a million, and where scipy is off by 4e-8
    million = 10**6
    pairs += [
        (x, million) for x in (1, 2, 17, 1000, 10**4, million // 2, million - 1000, million - 1)
    ]
    return pairs


@pytest.mark.parametrize(("x", "n"), _sampled_counts())
def test_limits_round_as_scipys_for_counts_up_to_a_million(x, n):
    for q in LEVELS:
        for limit, (a, b) in ((cp_lower, (x, n - x + 1)), (cp_upper, (x + 1, n - x))):
            ours = limit(x, n, q)
            _agrees_with_scipy(ours, a, b, q)
            from scipy.special import betaincinv

            assert round(ours, DECIMALS) == round(float(betaincinv(a, b, q)), DECIMALS)


def test_a_bad_first_guess_still_converges(monkeypatch):
    """Newton's iteration from anywhere in (0, 1) ends at the root: a step that leaves the bracket
    or does not shrink is replaced by bisection."""
    expected = {
        (q, a, b): beta_ppf(q, a, b)
        for q in (0.025, 0.975)
        for a, b in ((3, 998), (500, 501), (998, 3))
    }
    beta._ppf.cache_clear()
    for guess in (1e-300, 1e-9, 0.5, 1 - 1e-9, math.nextafter(1.0, 0.0)):
        monkeypatch.setattr(beta, "_first_guess", lambda q, a, b, guess=guess: guess)
        for (q, a, b), x in expected.items():
            assert beta_ppf(q, a, b) == pytest.approx(x, rel=1e-14), (guess, q, a, b)
            beta._ppf.cache_clear()


def test_closed_forms():
    # I_x(1, b) = 1 - (1 - x)**b and I_x(a, 1) = x**a
    assert beta_ppf(0.3, 1, 7) == pytest.approx(-math.expm1(math.log1p(-0.3) / 7), rel=1e-15)
    assert beta_ppf(0.3, 7, 1) == pytest.approx(0.3 ** (1 / 7), rel=1e-15)
    assert beta_ppf(0.3, 1, 1) == pytest.approx(0.3, rel=1e-15)
    assert beta_cdf(0.25, 2, 2) == pytest.approx(3 * 0.25**2 - 2 * 0.25**3, rel=1e-15)
    # far in a tail (where 1 - q rounds to 1, and scipy gives nan): I_x(2, b) ~ C(b + 1, 2) x**2
    assert beta_ppf(1e-300, 2, 50) == pytest.approx(math.sqrt(1e-300 / math.comb(51, 2)), rel=1e-12)
    assert beta_ppf(1e-300, 1, 7) == pytest.approx(1e-300 / 7, rel=1e-12)
    assert (beta_ppf(0.0, 3, 4), beta_ppf(1.0, 3, 4), beta_cdf(0.0, 3, 4), beta_cdf(1.0, 3, 4)) == (
        0.0,
        1.0,
        0.0,
        1.0,
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: beta_ppf(0.5, 0, 3), "a must be a whole number >= 1"),
        (lambda: beta_ppf(0.5, 3, 2.5), "b must be a whole number >= 1"),
        (lambda: beta_ppf(0.5, True, 3), "a must be a whole number >= 1"),
        (lambda: beta_ppf(1.5, 3, 3), "q must be in"),
        (lambda: beta_ppf(math.nan, 3, 3), "q must be in"),
        (lambda: beta_cdf(-0.1, 3, 3), "x must be in"),
    ],
)
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
