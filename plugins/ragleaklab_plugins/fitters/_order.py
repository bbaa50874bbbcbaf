"""Order statistics without a full sort, shared by the fitters (O(n) selection plus small sorts)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ragleaklab_core import check_fit_inputs

# Beyond this fraction of the array, one full sort is cheaper than selecting then sorting a slice.
_WIDE = 0.25


def order_statistics(values: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """``np.sort(values)[ranks]`` for 0-based *ranks*, by selection when the ranks are close.

    The ranks may repeat and come in any order. When they span ``r`` positions this costs one
    O(n) ``np.partition`` at the two extreme ranks plus an O(r log r) sort of what lies between,
    so a bootstrap that needs a few hundred neighbouring order statistics of a million scores
    never sorts the million.
    """
    ranks = np.asarray(ranks, dtype=np.int64)
    if ranks.size == 0:
        return np.empty(0, dtype=values.dtype)
    lo, hi = int(ranks.min()), int(ranks.max())
    if lo < 0 or hi >= values.size:
        raise IndexError(f"ranks must be in [0, {values.size}), got [{lo}, {hi}]")
    if hi - lo + 1 > _WIDE * values.size:
        return np.sort(values)[ranks]
    # After partitioning at lo and hi, positions lo..hi hold exactly the order statistics lo..hi
    # (in some order): everything before lo is <= them, everything after hi is >= them.
    part = np.partition(values, (lo, hi) if hi > lo else lo)
    segment = np.sort(part[lo : hi + 1])
    return segment[ranks - lo]


def kth_largest(values: np.ndarray, k: int) -> float:
    """The k-th largest value (k = 1 is the maximum), by selection."""
    n = values.size
    return float(np.partition(values, n - k)[n - k])


#: Below this many values a plain partition is as quick as sampling first.
_SAMPLED = 1 << 15
#: About how many values the sample that bounds a selection holds.
_SAMPLE = 4096


def top_value(values: np.ndarray, rank: int, where: np.ndarray | None = None) -> float:
    """The *rank*-th largest of ``values[where]`` (``rank = 1`` is the maximum; all of *values*
    when *where* is None), equal to ``np.sort(values[where])[-rank]``. *values* itself is
    never reordered.

    Copying a class out with a boolean mask costs more than the rest of a fit, and partitioning
    it most of what is left when the rank is near the top (the 1% false positives a target
    allows). So a large array is first cut with a bound read off a strided sample: only the
    values at or above the bound are copied out, and when at least *rank* of them are, the
    answer is among them (the rank-th largest is at or above a value with *rank* values at or
    above it). A sample that misjudges the bound (an adversarial order) costs a pass, never the
    answer: then every value is taken.
    """
    total = values.size if where is None else int(np.count_nonzero(where))
    if not 1 <= rank <= total:
        raise IndexError(f"rank must be in [1, {total}], got {rank}")
    if values.size >= _SAMPLED:
        step = values.size // _SAMPLE
        sample = values[::step] if where is None else values[::step][where[::step]]
        m = sample.size
        expected = rank * m / total
        # Generous: a few standard deviations of the binomial count above its expectation.
        at = math.ceil(1.25 * expected + 4.0 * math.sqrt(expected) + 8.0)
        if at < m:
            bound = np.partition(sample, m - at)[m - at]
            keep = values >= bound
            if where is not None:
                keep &= where
            kept = values[keep]
            if kept.size >= rank:
                return _select(kept, rank)
    return _select(values.copy() if where is None else values[where], rank)


def _select(values: np.ndarray, rank: int) -> float:
    # *values* is a copy the caller owns: partitioned in place.
    values.partition(values.size - rank)
    return float(values[values.size - rank])


def lowest_above(values: np.ndarray, floor: float) -> float | None:
    """The smallest value strictly above *floor*, or ``None`` when there is none."""
    above = values[values > floor]
    return float(above.min()) if above.size else None


def inverted_cdf_rank(p: float, size: int) -> int:
    """1-based rank of the p-quantile of *size* sorted values by the inverted empirical CDF.

    The smallest r with ``r / size >= p``, clamped to [1, size]. The product is rounded to 9
    decimals first so that, e.g., ``0.025 * 2000 == 50.00000000000001`` still gives rank 50.
    """
    return max(1, min(size, math.ceil(round(p * size, 9))))


def mirrored_classes(
    scores: npt.ArrayLike, labels: npt.ArrayLike, target_fpr: float, higher_is_worse: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The checked negative and positive scores, in a frame where higher is worse.

    Lower-is-worse is the mirror image: the fitters negate, fit, and negate the threshold back
    (the tie-break mirrors too), so each is written once, for higher-is-worse.
    """
    s, y = check_fit_inputs(scores, labels, target_fpr)
    if not higher_is_worse:
        s = -s
    return s[~y], s[y]
