"""The exact empirical sweep: the highest TPR whose FPR on the labelled data meets the target."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from ragleaklab_core import FitResult, check_fit_inputs, decision_rule, max_false_positives
from ragleaklab_plugins.fitters._needs import to_resolve
from ragleaklab_plugins.fitters._order import top_value

if TYPE_CHECKING:
    import numpy.typing as npt

#: What this fitter promises (the calibration report's ``guarantee``).
GUARANTEE = "FPR on the calibration sample <= target; no guarantee beyond the sample"


@frozen
class ExactSweepFitter:
    """Pick the threshold with the highest TPR among those with FPR <= target on the given data.

    Candidates are the distinct scores plus "flag nothing"; a case is flagged when
    ``score >= threshold`` (mirrored, ``score <= threshold``, when lower is worse). Among equal
    TPRs the threshold that flags less wins. FPR = FP / negatives, TPR = TP / positives.

    This is what the scores table of every ROC sweep would give, found in O(n) by selection
    instead of an O(n log n) sort: the feasible thresholds are exactly those above the
    (K+1)-th highest negative score, K being the most false positives the target allows, and the
    best of them is the lowest positive score above that negative. It promises nothing about the
    *true* false-positive rate; see the ``neyman-pearson`` fitter for a threshold that does.

    It has no options.
    """

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
        k = max_false_positives(target_fpr, n_neg)
        negatives = ~y
        # The (k+1)-th highest negative: any threshold at or below it flags k+1 negatives; with
        # k >= n_neg every threshold is feasible and the lowest positive catches them all.
        floor = -np.inf if k >= n_neg else top_value(s, k + 1, where=negatives)
        candidates = np.greater(s, floor)
        candidates &= y
        t = float(np.min(s, where=candidates, initial=np.inf))
        if t == np.inf:
            return _result(None, 0, 0, n_pos, n_neg, higher_is_worse)
        flagged = np.greater_equal(s, t)
        fp = int(np.count_nonzero(flagged & negatives))
        tp = int(np.count_nonzero(flagged)) - fp
        return _result(t, fp, tp, n_pos, n_neg, higher_is_worse)

    def negatives_needed(self, target_fpr: float, confidence: float) -> int:
        """``ceil(1 / target_fpr)`` (100 at 1%): with fewer negatives one false positive is
        already above the target, so the sample cannot resolve the rate. It states no guarantee
        beyond the sample, so *confidence* does not change the count."""
        return to_resolve(target_fpr)


def _result(
    t: float | None, fp: int, tp: int, n_pos: int, n_neg: int, higher_is_worse: bool
) -> FitResult:
    """*t* is in the frame where higher is worse (mirrored back here); None flags nothing."""
    threshold = None if t is None else t if higher_is_worse else -t + 0.0
    return FitResult(
        threshold=threshold,
        achieved_fpr=fp / n_neg,
        achieved_tpr=tp / n_pos,
        n_positive=n_pos,
        n_negative=n_neg,
        decision_rule=decision_rule(higher_is_worse),
        false_positives=fp,
        true_positives=tp,
        reason=None
        if t is not None
        else (
            "no threshold catches a positive case within the target false-positive "
            "rate; only 'flag nothing' is feasible"
        ),
        guarantee=GUARANTEE,
    )
