"""The exact empirical sweep: the highest TPR whose FPR on the labelled data meets the target."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from ragleaklab_core import FitResult, decision_rule, max_false_positives
from ragleaklab_plugins.fitters._order import mirrored_classes

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
        neg, pos = mirrored_classes(scores, labels, target_fpr, higher_is_worse)
        n_neg, n_pos = neg.size, pos.size
        k = max_false_positives(target_fpr, n_neg)
        if k >= n_neg:
            above = pos  # every threshold is feasible: the lowest positive catches them all
        else:
            # The (k+1)-th highest negative: any threshold at or below it flags k+1 negatives.
            floor = np.partition(neg, n_neg - k - 1)[n_neg - k - 1]
            above = pos[pos > floor]
        rule = decision_rule(higher_is_worse)
        if above.size == 0:
            return FitResult(
                threshold=None,
                achieved_fpr=0.0,
                achieved_tpr=0.0,
                n_positive=n_pos,
                n_negative=n_neg,
                decision_rule=rule,
                false_positives=0,
                true_positives=0,
                reason=(
                    "no threshold catches a positive case within the target false-positive "
                    "rate; only 'flag nothing' is feasible"
                ),
                guarantee=GUARANTEE,
            )
        t = float(above.min())
        fp = int(np.count_nonzero(neg >= t))
        tp = int(np.count_nonzero(pos >= t))
        return FitResult(
            threshold=t if higher_is_worse else -t + 0.0,
            achieved_fpr=fp / n_neg,
            achieved_tpr=tp / n_pos,
            n_positive=n_pos,
            n_negative=n_neg,
            decision_rule=rule,
            false_positives=fp,
            true_positives=tp,
            guarantee=GUARANTEE,
        )
