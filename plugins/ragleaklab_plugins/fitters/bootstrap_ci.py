"""A stratified bootstrap of the exact fitting rule: how far its threshold and rates can move.

The fitting rule is the ``exact`` fitter's: with K the most false positives the target allows
among the n negatives, the *floor* is the (K+1)-th largest negative score and the threshold is
the lowest positive score above it (flag iff ``score >= threshold``); no positive above the floor
means "flag nothing". The bootstrap resamples the n negatives and the m positives separately,
with replacement (class counts stay fixed), refits the rule on every resample and reports
percentile intervals.

No resampled array is ever built. Each statistic is an order statistic or a count, and its
bootstrap distribution is drawn directly, exactly as a materialised resample would give it:

* **The floor.** Index the negatives in descending order, ``d_1 >= ... >= d_n``. A resample is
  n iid indices ``I = ceil(n U)`` with U uniform on (0, 1], and its (K+1)-th largest value is
  ``d_J`` with J the (K+1)-th smallest index. ``ceil`` is monotone, so ``J = ceil(n U_(K+1))``
  where ``U_(K+1) ~ Beta(K + 1, n - K)`` is the (K+1)-th uniform order statistic: one Beta draw
  per resample. (K >= n: every threshold is feasible, the floor is -inf.)
* **The refitted threshold.** Index the positives in ascending order, ``p_1 <= ... <= p_m``.
  Given the floor f, the c = #{p > f} positives above it are ``p_(m-c+1) .. p_m``. Of the m
  resampled indices, ``N ~ Binomial(m, c / m)`` fall among them; if N = 0 the resample flags
  nothing, otherwise those N are iid uniform on the top c, so the lowest of them is
  ``p_(m - c + ceil(c W))`` with ``W ~ Beta(1, N)``, the minimum of N uniforms.
* **Rates at a fixed threshold.** With x of n negatives flagged, a resample flags
  ``Binomial(n, x / n)`` of them; the same for positives.

Only the order statistics the draws land on are looked up, by selection
(:func:`~ragleaklab_plugins.fitters._order.order_statistics`): the whole fit costs a few O(n)
passes, O(B) random draws, an O(B log B) sort of the draws and the sort of the short run of
ranks the draws cover (a few hundred at a million scores), instead of B refits of O(n) each.
Draws for the floor, the positives and the rates come from three independent streams spawned
from ``seed``; percentile intervals are marginal, so they do not depend on how the streams are
coupled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import field, frozen
from attrs import validators as v

from ragleaklab_core import (
    FitResult,
    clopper_pearson_upper,
    decision_rule,
    max_false_positives,
    rate_interval,
)
from ragleaklab_plugins.fitters._needs import to_resolve
from ragleaklab_plugins.fitters._order import (
    inverted_cdf_rank,
    kth_largest,
    lowest_above,
    mirrored_classes,
    order_statistics,
)

if TYPE_CHECKING:
    import numpy.typing as npt

#: Which threshold ``FitResult.threshold`` is.
RECOMMENDATIONS = ("conservative", "exact")
#: Fewest resamples allowed in the two tails together, so that percentiles mean something.
MIN_TAIL_RESAMPLES = 10


def _positives_above(pos: np.ndarray, floors: np.ndarray) -> np.ndarray:
    """``#{p in pos : p > f}`` for each f in *floors*, without sorting all the positives."""
    lo, hi = float(floors.min()), float(floors.max())
    above_hi = int(np.count_nonzero(pos > hi))
    # Only the positives between the lowest and the highest floor need to be ordered.
    between = np.sort(pos[(pos > lo) & (pos <= hi)])
    return above_hi + between.size - np.searchsorted(between, floors, side="right")


def bootstrap_refits(
    neg: np.ndarray,
    pos: np.ndarray,
    max_fp: int,
    resamples: int,
    neg_rng: np.random.Generator,
    pos_rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact rule refitted on *resamples* stratified bootstrap resamples, drawn directly.

    Scores are oriented so that higher is worse. Returns ``(floors, thresholds)``, each of
    length *resamples*: the (max_fp + 1)-th largest resampled negative (-inf when
    ``max_fp >= len(neg)``) and the lowest resampled positive above it (+inf: flag nothing).
    See the module docstring for why these draws have exactly the bootstrap distribution.
    """
    n, m = neg.size, pos.size
    if max_fp >= n:
        floors = np.full(resamples, -np.inf)
        above = np.full(resamples, m, dtype=np.int64)
    else:
        u = neg_rng.beta(max_fp + 1, n - max_fp, size=resamples)
        j = np.clip(np.ceil(n * u).astype(np.int64), 1, n)  # 1-based rank, descending
        floors = order_statistics(neg, n - j)  # the j-th largest is ascending rank n - j
        above = _positives_above(pos, floors)
    caught = pos_rng.binomial(m, above / m)  # resampled positives above the floor
    thresholds = np.full(resamples, np.inf)
    hit = caught > 0
    if hit.any():
        c = above[hit]
        w = pos_rng.beta(1.0, caught[hit])
        offset = np.clip(np.ceil(c * w).astype(np.int64), 1, c)
        thresholds[hit] = order_statistics(pos, m - c + offset - 1)
    return floors, thresholds


def resample_streams(
    seed: int,
) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """The independent random streams of one fit: negatives, positives and rates."""
    neg, pos, rates = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    return neg, pos, rates


def _percentiles(draws: np.ndarray, confidence: float) -> tuple[float, float]:
    """The two-sided percentile interval of *draws* by the inverted empirical CDF."""
    ordered = np.sort(draws)
    tail = (1.0 - confidence) / 2
    lo = ordered[inverted_cdf_rank(tail, draws.size) - 1]
    hi = ordered[inverted_cdf_rank(1.0 - tail, draws.size) - 1]
    return float(lo), float(hi)


def _clopper_pearson(x: int, n: int, confidence: float) -> tuple[float, float]:
    """The exact two-sided Clopper-Pearson interval for x events among n trials (the core's)."""
    interval = rate_interval(x, n, confidence)
    assert interval.lower is not None and interval.upper is not None  # n > 0 here
    return interval.lower, interval.upper


def _rate_interval(
    draws: np.ndarray, count: int, total: int, confidence: float, events: str, cases: str
) -> tuple[list[float], str]:
    """Percentile interval of ``draws / total``, or Clopper-Pearson when it collapses."""
    lo, hi = _percentiles(draws, confidence)
    if lo < hi:
        return [lo / total, hi / total], "percentile bootstrap"
    if count == 0:
        why = f"0 {events}"
    elif count == total:
        why = f"all {total} {cases} flagged"
    else:
        why = f"every resample gave {count}/{total}"
    lo_cp, hi_cp = _clopper_pearson(count, total, confidence)
    return [lo_cp, hi_cp], f"clopper-pearson (bootstrap degenerate: {why})"


@frozen
class BootstrapCIFitter:
    """The exact fitter's threshold, with bootstrap intervals and a conservative alternative.

    Flagged means ``score >= threshold`` (mirrored, ``score <= threshold``, when lower is
    worse), as for ``exact``. ``details`` holds:

    - ``exact``: the threshold the exact fitter picks and its rates on the data;
    - ``conservative``: the lowest threshold that meets the target on the data and whose FPR
      stays within the target in at least ``confidence`` of the resamples. On a resample the
      FPR at t is within the target exactly when the resample's floor is below t, so this is
      the lowest positive score above the ``confidence`` quantile of the bootstrap floors;
    - ``within_target_fraction`` of each: the fraction of resamples in which its FPR is within
      the target;
    - ``threshold_interval``: the percentile interval of the threshold the exact rule picks on a
      resample (an end is null where the percentile falls on "flag nothing");
    - ``fpr_interval`` / ``tpr_interval``: percentile intervals of the FPR and TPR at the
      reported threshold on the resampled data, or exact Clopper-Pearson intervals when the
      percentile interval collapses (0 false positives gives [0, 0]), with
      ``fpr_interval_method`` / ``tpr_interval_method`` saying which;
    - ``recommended``: which of the two thresholds ``result.threshold`` is.

    None of this is a finite-sample guarantee; the ``neyman-pearson`` fitter gives one.

    Attributes:
        confidence: Level of the intervals and of the conservative threshold, in (0, 1).
        resamples: Number of bootstrap resamples (>= 100, and at least 10 in the two tails).
        seed: Seed of the resampling; the same seed gives the same report.
        recommend: ``"conservative"`` or ``"exact"``: which threshold the result carries.
    """

    confidence: float = field(default=0.95, validator=[v.gt(0.0), v.lt(1.0)])
    resamples: int = field(default=2000, validator=v.ge(100))
    seed: int = field(default=0, validator=v.ge(0))
    recommend: str = field(default="conservative", validator=v.in_(RECOMMENDATIONS))

    def __attrs_post_init__(self) -> None:
        if self.resamples * (1.0 - self.confidence) < MIN_TAIL_RESAMPLES:
            raise ValueError(
                f"'resamples' ({self.resamples}) is too small for 'confidence' "
                f"{self.confidence}: fewer than {MIN_TAIL_RESAMPLES} resamples in the tails"
            )

    def fit(
        self,
        scores: npt.ArrayLike,
        labels: npt.ArrayLike,
        *,
        target_fpr: float,
        higher_is_worse: bool = True,
    ) -> FitResult:
        neg, pos = mirrored_classes(scores, labels, target_fpr, higher_is_worse)
        n_neg, n_pos = neg.size, pos.size
        max_fp = max_false_positives(target_fpr, n_neg)
        neg_rng, pos_rng, rate_rng = resample_streams(self.seed)
        floors, refits = bootstrap_refits(neg, pos, max_fp, self.resamples, neg_rng, pos_rng)

        exact_floor = -np.inf if max_fp >= n_neg else kth_largest(neg, max_fp + 1)
        # The resample FPR at t is within the target iff the resample's floor is below t, so the
        # lowest t that is within it in a `confidence` fraction of resamples lies just above the
        # floors' `confidence` quantile; never below the exact floor (then it would exceed the
        # target on the data itself, possible only for a confidence near or under 1/2).
        rank = inverted_cdf_rank(self.confidence, self.resamples)
        floor_q = float(np.partition(floors, rank - 1)[rank - 1])
        candidates = {
            "exact": lowest_above(pos, exact_floor),
            "conservative": lowest_above(pos, max(floor_q, exact_floor)),
        }

        def orient(t: float) -> float:
            return t if higher_is_worse else -t + 0.0

        summaries: dict[str, dict[str, Any]] = {}
        counts: dict[str, tuple[int, int]] = {}
        for name, t in candidates.items():
            fp = 0 if t is None else int(np.count_nonzero(neg >= t))
            tp = 0 if t is None else int(np.count_nonzero(pos >= t))
            within = 1.0 if t is None else float(np.count_nonzero(floors < t)) / floors.size
            counts[name] = (fp, tp)
            summaries[name] = {
                "threshold": None if t is None else orient(t),
                "achieved_fpr": fp / n_neg,
                "achieved_tpr": tp / n_pos,
                "false_positives": fp,
                "true_positives": tp,
                "within_target_fraction": within,
            }

        chosen = candidates[self.recommend]
        fp, tp = counts[self.recommend]
        fp_draws = rate_rng.binomial(n_neg, fp / n_neg, size=self.resamples)
        tp_draws = rate_rng.binomial(n_pos, tp / n_pos, size=self.resamples)
        fpr_interval, fpr_method = _rate_interval(
            fp_draws, fp, n_neg, self.confidence, "false positives", "negatives"
        )
        tpr_interval, tpr_method = _rate_interval(
            tp_draws, tp, n_pos, self.confidence, "true positives", "positives"
        )

        lo, hi = _percentiles(refits, self.confidence)  # +inf = flag nothing
        if higher_is_worse:
            t_interval = [None if lo == np.inf else lo, None if hi == np.inf else hi]
        else:
            t_interval = [None if hi == np.inf else -hi + 0.0, None if lo == np.inf else -lo + 0.0]

        details: dict[str, Any] = {
            "method": "stratified percentile bootstrap, drawn from order statistics",
            "confidence": self.confidence,
            "resamples": self.resamples,
            "seed": self.seed,
            "recommended": self.recommend,
            "max_false_positives": max_fp,
            "exact": summaries["exact"],
            "conservative": summaries["conservative"],
            "threshold_interval": t_interval,
            "threshold_flag_nothing_fraction": float(np.count_nonzero(refits == np.inf))
            / self.resamples,
            "fpr_interval": fpr_interval,
            "fpr_interval_method": fpr_method,
            "tpr_interval": tpr_interval,
            "tpr_interval_method": tpr_method,
            "fpr_upper_bound": clopper_pearson_upper(fp, n_neg, self.confidence),
        }
        reason = None
        if chosen is None:
            if candidates["exact"] is None:
                reason = (
                    "no threshold catches a positive case within the target false-positive "
                    "rate; only 'flag nothing' is feasible"
                )
            else:
                reason = (
                    "no threshold catches a positive case while staying within the target "
                    f"false-positive rate in {self.confidence:.0%} of the resamples; the exact "
                    f"threshold {summaries['exact']['threshold']!r} meets it on the labelled "
                    "data only (details['exact'])"
                )
        if self.recommend == "conservative":
            promise = (
                "FPR on the calibration sample <= target, and within it in >= "
                f"{self.confidence:g} of stratified bootstrap resamples (asymptotic; no "
                "finite-sample guarantee on the population FPR)"
            )
        else:
            promise = (
                "FPR on the calibration sample <= target; bootstrap intervals describe its "
                "variability (no guarantee beyond the sample)"
            )
        return FitResult(
            guarantee=promise,
            threshold=None if chosen is None else orient(chosen),
            achieved_fpr=fp / n_neg,
            achieved_tpr=tp / n_pos,
            n_positive=n_pos,
            n_negative=n_neg,
            decision_rule=decision_rule(higher_is_worse),
            false_positives=fp,
            true_positives=tp,
            reason=reason,
            details=details,
        )

    def negatives_needed(self, target_fpr: float, confidence: float) -> int:
        """The exact fitter's count, ``ceil(1 / target_fpr)``: its threshold is the exact rule's
        (the conservative one only moves up from it), and it states no finite-sample guarantee,
        so *confidence* does not change the count."""
        return to_resolve(target_fpr)
