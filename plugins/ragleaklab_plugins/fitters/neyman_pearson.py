"""The Neyman-Pearson umbrella algorithm: a threshold whose true false-positive rate is guaranteed.

Tong, Feng and Li (2018), "Neyman-Pearson classification algorithms and NP receiver operating
characteristics", Science Advances. With n negatives sorted ``t_(1) <= ... <= t_(n)`` and the rule
"flag iff score > t_(k)", the probability (over the draw of the negatives) that the true
false-positive rate exceeds the target alpha is at most

    v(k) = P(Bin(n, 1 - alpha) >= k),

with equality for continuous scores. The fitter takes ``k* = min{k : v(k) <= delta}``, the
lowest (most sensitive) threshold that carries the guarantee. Equivalently, k* is the lowest rank
whose one-sided (1 - delta) Clopper-Pearson upper bound on the FPR, with ``n - k`` negatives
above the threshold, is at most alpha.

The guarantee needs exchangeable negatives that played no part in producing the scores, and the
*strict* rule: with ``>=`` and tied scores the true rate can exceed the target far more often
than delta. It needs at least ``ceil(log delta / log(1 - alpha))`` negatives; with fewer, no
order statistic qualifies and the fitter flags nothing and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import field, frozen
from attrs import validators as v

from ragleaklab_core import (
    FLAG_ABOVE,
    FLAG_BELOW,
    FitResult,
    check_fit_inputs,
    negatives_needed,
)
from ragleaklab_plugins.fitters._order import top_value

if TYPE_CHECKING:
    import numpy.typing as npt

#: Rules of this fitter by score direction; strict, so ties never push the true rate over.
_RULES = {True: FLAG_ABOVE, False: FLAG_BELOW}
#: What a feasible result promises, in the report's words.
GUARANTEE = "P(true FPR > target) <= delta"


def violation_probability(k: int, n_negative: int, target_fpr: float) -> float:
    """``P(Bin(n, 1 - alpha) >= k)``: the chance that "flag iff score > t_(k)" breaks the target.

    An upper bound for any score distribution, exact for continuous ones.
    """
    from scipy.special import bdtrc  # P(X > k - 1) = P(X >= k); a plain ufunc, fast

    return float(bdtrc(k - 1, n_negative, 1.0 - target_fpr))


def umbrella_rank(n_negative: int, target_fpr: float, delta: float) -> int | None:
    """k* = the smallest k in [1, n] with ``violation_probability(k) <= delta``; None if none.

    Closed form ``binom.ppf(1 - delta, n, 1 - alpha) + 1``, then checked against the tail sum
    itself and moved by one where floating point put the quantile on the wrong side of a
    boundary. Feasibility is decided by :func:`ragleaklab_core.negatives_needed`, the same
    count the calibration report prints, so the two can never disagree.
    """
    if n_negative < 1:
        raise ValueError(f"need at least one negative, got {n_negative}")
    needed = negatives_needed(target_fpr, delta)
    if needed is None or n_negative < needed:
        return None
    from scipy.stats import binom

    k = int(binom.ppf(1.0 - delta, n_negative, 1.0 - target_fpr)) + 1
    k = min(max(k, 1), n_negative)
    while k > 1 and violation_probability(k - 1, n_negative, target_fpr) <= delta:
        k -= 1
    while k < n_negative and violation_probability(k, n_negative, target_fpr) > delta:
        k += 1
    return k


@frozen
class NeymanPearsonFitter:
    """Pick the lowest threshold whose true FPR exceeds the target with probability <= delta.

    The threshold is the k*-th smallest negative score (:func:`umbrella_rank`), found by
    selection in O(n); a case is flagged when ``score > threshold`` (mirrored, ``score <
    threshold``, when lower is worse). Positives do not move the threshold; they only measure
    the TPR it achieves.

    When the negatives are too few for the guarantee (fewer than
    ``ceil(log delta / log(1 - target))``, or any number when the target is 0) the result
    flags nothing, ``reason`` says how many negatives are needed, and
    ``details["guarantee"]["feasible"]`` is False.

    Attributes:
        delta: The allowed probability that the true false-positive rate exceeds the target,
            in (0, 1).
    """

    delta: float = field(default=0.05, validator=[v.gt(0.0), v.lt(1.0)])

    def negatives_needed(self, target_fpr: float, confidence: float) -> int:
        """The smallest n with ``(1 - target_fpr) ** n <= min(delta, 1 - confidence)`` (299 at
        1% and 95%): with fewer negatives no threshold carries its guarantee at *delta* (the
        fit flags nothing), nor a bound at *confidence* on the labels the caller reviews.

        Raises:
            ValueError: *target_fpr* is not in (0, 1), or *confidence* not in (0, 1).
        """
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
        if not 0.0 < target_fpr < 1.0:
            raise ValueError(f"target_fpr must be in (0, 1), got {target_fpr!r}")
        needed = negatives_needed(target_fpr, min(self.delta, 1.0 - confidence))
        assert needed is not None  # only a target of 0 has none
        return needed

    def fit(
        self,
        scores: npt.ArrayLike,
        labels: npt.ArrayLike,
        *,
        target_fpr: float,
        higher_is_worse: bool = True,
    ) -> FitResult:
        s, y = check_fit_inputs(scores, labels, target_fpr)
        if not higher_is_worse:
            s = np.negative(s)  # the mirror image: fit once, for higher-is-worse
        n_pos = int(np.count_nonzero(y))
        n_neg = y.size - n_pos
        rule = _RULES[higher_is_worse]
        needed = negatives_needed(target_fpr, self.delta)
        k = umbrella_rank(n_neg, target_fpr, self.delta)
        if k is None:
            if needed is None:
                why = (
                    "a target false-positive rate of 0 cannot be guaranteed by any finite "
                    "number of negatives"
                )
            else:
                why = (
                    f"too few negatives for the guarantee P(true FPR > {target_fpr:g}) <= "
                    f"{self.delta:g}: it needs at least {needed} negatives, there are {n_neg}"
                )
            return FitResult(
                guarantee=(
                    f"none on these labels: {n_neg} negatives cannot give probability >= "
                    f"{1 - self.delta:g} that the population FPR <= target"
                ),
                threshold=None,
                achieved_fpr=0.0,
                achieved_tpr=0.0,
                n_positive=n_pos,
                n_negative=n_neg,
                decision_rule=rule,
                false_positives=0,
                true_positives=0,
                reason=f"{why}; no threshold is presented as guaranteed (flag nothing)",
                details={
                    "guarantee": {
                        "feasible": False,
                        "delta": self.delta,
                        "negatives_needed": needed,
                        "n_negative": n_neg,
                    }
                },
            )
        # The k-th smallest negative is the (n - k + 1)-th largest, selected without copying the
        # negatives out (as the exact fitter does: a boolean extraction is the costliest step).
        negatives = ~y
        t = top_value(s, n_neg - k + 1, where=negatives)
        flagged = np.greater(s, t)
        fp = int(np.count_nonzero(flagged & negatives))
        tp = int(np.count_nonzero(flagged)) - fp
        guarantee: dict[str, Any] = {
            "feasible": True,
            "delta": self.delta,
            "k": k,
            "negatives_above_threshold": fp,
            "negatives_needed": needed,
            "n_negative": n_neg,
            "violation_bound": violation_probability(k, n_neg, target_fpr),
            "statement": GUARANTEE,
        }
        return FitResult(
            threshold=t if higher_is_worse else -t + 0.0,
            achieved_fpr=fp / n_neg,
            achieved_tpr=tp / n_pos,
            n_positive=n_pos,
            n_negative=n_neg,
            decision_rule=rule,
            false_positives=fp,
            true_positives=tp,
            details={"guarantee": guarantee},
            guarantee=(
                f"with probability >= {1 - self.delta:g} (1 - delta), population FPR <= target "
                "(negatives exchangeable with future ones and not used to produce the scores)"
            ),
        )
