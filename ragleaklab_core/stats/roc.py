"""ROC analysis for calibration reports: AUC with a DeLong interval, the ROC points, a TPR interval.

* :func:`auc_delong` gives the area under the ROC curve (the Mann-Whitney U over ``m * n``) and
  its DeLong (1988) variance, computed with the fast midrank algorithm of Sun & Xu (2014): one
  sort, O(N log N), no m-by-n matrix.
* :func:`roc_points` gives every point of the empirical ROC curve (one per distinct score, none
  dropped), for the rule "flag when ``score >= t``" (``score <= t`` for a lower-is-worse score).
* :func:`tpr_interval` gives the exact two-sided Clopper-Pearson interval on the true-positive
  rate at a chosen threshold; it is :func:`~ragleaklab_core.stats.aggregation.rate_interval`,
  so the two always agree.

Labels are booleans: True means positive (the attack succeeded). Everything here is pure
numpy/scipy; the plot lives in :mod:`ragleaklab_core.calibration.plot`.
"""

from __future__ import annotations

import math
import operator
from typing import Any, SupportsIndex

import numpy as np
import numpy.typing as npt
from attrs import frozen

from ragleaklab_core.errors import InputError
from ragleaklab_core.stats.aggregation import DECIMALS, rate_interval

#: Said in :attr:`AucResult.note` when the DeLong variance is exactly 0.
ZERO_VARIANCE_NOTE = (
    "the DeLong variance is 0 because every positive compares the same way with every negative "
    "(for example perfect separation, or all scores tied), so the interval collapses to the AUC "
    "itself; this does not mean the AUC is known exactly"
)
#: Said in :attr:`AucResult.note` when a class has a single case.
UNDEFINED_VARIANCE_NOTE = (
    "the DeLong variance needs at least 2 positives and 2 negatives, so it is not computed and "
    "the interval is the whole range [0, 1]"
)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), DECIMALS)


@frozen(kw_only=True)
class AucResult:
    """Area under the ROC curve with its DeLong confidence interval.

    Attributes:
        auc: P(positive score > negative score) + P(tie) / 2, in the score's worse direction.
        variance: DeLong variance ``S10 / m + S01 / n``; ``None`` when a class has one case.
        se: ``sqrt(variance)``; ``None`` when the variance is.
        lower: ``auc - z * se`` clipped to [0, 1]; equals ``auc`` when the variance is 0;
            0.0 when the variance is undefined.
        upper: ``auc + z * se`` clipped to [0, 1]; equals ``auc`` when the variance is 0;
            1.0 when the variance is undefined.
        confidence: Two-sided confidence level, e.g. 0.95.
        method: ``"delong"``.
        n_positive: Number of positive cases (m).
        n_negative: Number of negative cases (n).
        note: Why the interval is degenerate (zero or undefined variance); ``None`` otherwise.

    .. versionadded:: 0.1
    """

    auc: float
    variance: float | None
    se: float | None
    lower: float
    upper: float
    confidence: float
    method: str = "delong"
    n_positive: int
    n_negative: int
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form, floats rounded to 6 decimals."""
        return {
            "auc": _rounded(self.auc),
            "variance": _rounded(self.variance),
            "se": _rounded(self.se),
            "lower": _rounded(self.lower),
            "upper": _rounded(self.upper),
            "confidence": _rounded(self.confidence),
            "method": self.method,
            "n_positive": self.n_positive,
            "n_negative": self.n_negative,
            "note": self.note,
        }


def _validated(
    scores: npt.ArrayLike, labels: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Scores as finite float64, labels as bool, and the class counts; both classes required."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels)
    if s.ndim != 1 or y.ndim != 1 or s.size != y.size:
        raise InputError(
            f"scores and labels must be 1-D and of equal length, got shapes {s.shape} and {y.shape}"
        )
    if y.dtype != np.bool_:
        # 0/1 integers are accepted; anything else is more likely a mistake than a label.
        if y.size and not (y.dtype.kind in "iu" and np.isin(y, (0, 1)).all()):
            raise InputError(f"labels must be booleans (True = positive), got dtype {y.dtype}")
        y = y.astype(np.bool_)
    if not np.isfinite(s).all():
        raise InputError("scores must be finite numbers (no NaN or infinity)")
    n_pos = int(np.count_nonzero(y))
    n_neg = y.size - n_pos
    for count, name in ((n_pos, "positive"), (n_neg, "negative")):
        if count == 0:
            raise InputError(
                f"no {name} cases among the {y.size} labelled scores; "
                "ROC analysis needs both classes"
            )
    return s, y, n_pos, n_neg


def _sorted_midranks(xs: np.ndarray) -> np.ndarray:
    """1-based midranks of an ascending array: tied values share the mean of their ranks."""
    size = xs.size
    new_block = np.empty(size, dtype=np.bool_)
    new_block[0] = True
    np.not_equal(xs[1:], xs[:-1], out=new_block[1:])
    starts = np.flatnonzero(new_block)
    ends = np.append(starts[1:], size)
    # Ranks start+1 .. end (1-based) average to (start + 1 + end) / 2: exact halves in float64.
    return np.repeat((starts + ends + 1) / 2.0, ends - starts)


def _sample_variance(values: np.ndarray) -> float:
    # A constant vector gets exactly 0: np.var's rounded mean can leave noise such as 1e-33 (for
    # a vector of 1/3), which a report would print as a meaningless non-zero variance.
    if values.size < 2:
        raise ValueError("sample variance needs at least 2 values")
    if values[0] == values[-1] and np.ptp(values) == 0:
        return 0.0
    return float(np.var(values, ddof=1))


def _delong_components(
    s: np.ndarray, y: np.ndarray, n_pos: int, n_neg: int
) -> tuple[float, np.ndarray, np.ndarray]:
    """AUC and the DeLong structural components V10 (per positive) and V01 (per negative).

    Sun & Xu (2014): with midranks T_z over the pooled sample, T_x within positives and T_y
    within negatives, V10 = (T_z - T_x) / n and V01 = 1 - (T_z - T_y) / m. One stable sort of the
    pooled sample gives all three, since each class's scores are a sorted subsequence of it. The
    components come out in ascending score order, not input order (only their mean and variance
    are used).
    """
    order = np.argsort(s, kind="stable")
    xs, ys = s[order], y[order]
    tz = _sorted_midranks(xs)
    pos, neg = xs[ys], xs[~ys]
    v10 = (tz[ys] - _sorted_midranks(pos)) / n_neg
    v01 = 1.0 - (tz[~ys] - _sorted_midranks(neg)) / n_pos
    # sum(T_z over positives) - m(m+1)/2 is U, exact in float64 below 2**53.
    auc = (float(tz[ys].sum()) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
    return auc, v10, v01


def _z(confidence: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(1.0 - (1.0 - confidence) / 2.0))


def _checked_confidence(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, float | int):
        raise InputError(f"confidence must be a number in (0, 1), got {confidence!r}")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def auc_delong(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    confidence: float = 0.95,
    *,
    higher_is_worse: bool = True,
) -> AucResult:
    """Area under the ROC curve with its DeLong confidence interval, in O(N log N).

    AUC = U / (m n) = mean over positive-negative pairs of 1 (positive worse), 1/2 (tie) or 0.
    "Worse" means higher unless *higher_is_worse* is false, in which case the scores are negated.
    Var = S10 / m + S01 / n (DeLong, DeLong & Clarke-Pearson 1988), with S10 and S01 the sample
    variances (ddof=1) of the structural components; CI = AUC +/- z * SE, clipped to [0, 1].

    Degenerate cases are reported, not hidden, in :attr:`AucResult.note`:

    * variance 0 (e.g. perfect separation): ``lower == upper == auc``. DeLong cannot see any
      uncertainty there; with few cases the true AUC can still be far lower.
    * a class with a single case: the variance is undefined (``None``) and the interval is
      [0, 1].

    Example: positives [0.9, 0.8, 0.7, 0.55] and negatives [0.8, 0.6, 0.5, 0.4, 0.3] give AUC
    0.825, variance 0.022292, SE 0.1493 and the 95% CI (0.532, 1.0).

    Args:
        scores: One finite score per case.
        labels: One boolean per case, True for positive (0/1 integers are accepted).
        confidence: Two-sided confidence level, in (0, 1).
        higher_is_worse: Direction of the score.

    Raises:
        InputError: A class has no cases, a score is not finite, the shapes differ, or the
            confidence is not in (0, 1).

    .. versionadded:: 0.1
    """
    confidence = _checked_confidence(confidence)
    s, y, n_pos, n_neg = _validated(scores, labels)
    if not higher_is_worse:
        s = -s
    auc, v10, v01 = _delong_components(s, y, n_pos, n_neg)
    variance: float | None = None
    se: float | None = None
    lower, upper = 0.0, 1.0
    note: str | None = UNDEFINED_VARIANCE_NOTE
    if n_pos >= 2 and n_neg >= 2:
        variance = _sample_variance(v10) / n_pos + _sample_variance(v01) / n_neg
        se = math.sqrt(variance)
        if variance == 0.0:
            lower, upper, note = auc, auc, ZERO_VARIANCE_NOTE
        else:
            half = _z(confidence) * se
            lower, upper, note = max(0.0, auc - half), min(1.0, auc + half), None
    return AucResult(
        auc=auc,
        variance=variance,
        se=se,
        lower=lower,
        upper=upper,
        confidence=confidence,
        n_positive=n_pos,
        n_negative=n_neg,
        note=note,
    )


def tpr_interval(
    tp: SupportsIndex, n_positive: SupportsIndex, confidence: float = 0.95
) -> dict[str, Any]:
    """Exact two-sided Clopper-Pearson interval on the true-positive rate ``tp / n_positive``.

    The bounds are those of :func:`ragleaklab_core.stats.aggregation.rate_interval`, rounded to 6
    decimals. E.g. 45 of 50 at 95% gives (0.781865, 0.966725).

    Returns:
        ``{"method": "clopper-pearson", "confidence", "lower", "upper", "true_positives",
        "n_positive"}``.

    Raises:
        InputError: ``n_positive`` is not positive, ``tp`` is not in [0, n_positive], a count is
            not an integer, or the confidence is not in (0, 1).

    .. versionadded:: 0.1
    """
    confidence = _checked_confidence(confidence)
    counts = []
    for value, name in ((tp, "tp"), (n_positive, "n_positive")):
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise InputError(f"{name} must be an integer, got {value!r}")
        counts.append(operator.index(value))
    hits, trials = counts
    if trials <= 0:
        raise InputError(f"n_positive must be at least 1, got {trials}")
    if not 0 <= hits <= trials:
        raise InputError(f"need 0 <= tp <= n_positive, got tp={hits}, n_positive={trials}")
    interval = rate_interval(hits, trials, confidence).to_dict()
    return {
        "method": "clopper-pearson",
        "confidence": interval["confidence"],
        "lower": interval["lower"],
        "upper": interval["upper"],
        "true_positives": hits,
        "n_positive": trials,
    }


def roc_points(
    scores: npt.ArrayLike, labels: npt.ArrayLike, higher_is_worse: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every point of the empirical ROC curve: ``(fpr, tpr, thresholds)``, float64 arrays.

    Point 0 is (0, 0) with threshold ``+inf`` (``-inf`` for a lower-is-worse score): flag
    nothing. Then one point per distinct score, from the worst score to the least bad, where
    point i holds the rates of the rule "flag when ``score >= thresholds[i]``" (``<=`` for a
    lower-is-worse score); the last point is (1, 1). No point is dropped, not even collinear
    ones, so a fitter's operating point is always on the curve. Joining consecutive points with
    straight lines gives the empirical curve, and its trapezoidal area is the AUC of
    :func:`auc_delong`.

    Raises:
        InputError: A class has no cases, a score is not finite, or the shapes differ.

    .. versionadded:: 0.1
    """
    s, y, n_pos, n_neg = _validated(scores, labels)
    key = s if higher_is_worse else -s
    order = np.argsort(-key, kind="stable")  # worst first
    ks, ys = key[order], y[order]
    tp = np.cumsum(ys, dtype=np.int64)
    fp = np.arange(1, ks.size + 1, dtype=np.int64) - tp
    # The last index of each tie block: a block is never split, as under the rule ">= t".
    last = np.append(np.flatnonzero(ks[1:] != ks[:-1]), ks.size - 1)
    start = np.inf if higher_is_worse else -np.inf
    thresholds = np.concatenate(([start], s[order][last]))
    fpr = np.concatenate(([0], fp[last])) / n_neg
    tpr = np.concatenate(([0], tp[last])) / n_pos
    return fpr, tpr, thresholds
