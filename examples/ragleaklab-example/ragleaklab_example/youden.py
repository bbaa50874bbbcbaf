"""``example-youden``: a fitter that maximises Youden's J (TPR - FPR) within the FPR target."""

from __future__ import annotations

from typing import Any

import numpy as np
from attrs import frozen

from ragleaklab_core import FitResult, check_fit_inputs, decision_rule, max_false_positives


@frozen
class MaxYoudenFitter:
    """Among the thresholds that meet ``target_fpr`` on the data, the one with the largest
    TPR - FPR.

    Candidate thresholds are the observed scores; a case is flagged when its score is at or
    beyond the threshold on the worse side. Ties in J go to the threshold that flags fewer
    cases. With no threshold meeting the target the result flags nothing (``threshold=None``).
    This is a rate on the fitted data, not a guarantee: see ragleaklab's ``neyman-pearson``.
    """

    def fit(
        self,
        scores: Any,
        labels: Any,
        *,
        target_fpr: float,
        higher_is_worse: bool = True,
    ) -> FitResult:
        """Fit the threshold; see the class docstring."""
        s, y = check_fit_inputs(scores, labels, target_fpr)
        n_pos = int(np.count_nonzero(y))
        n_neg = y.size - n_pos
        rule = decision_rule(higher_is_worse)
        # Work on the "higher is worse" side: flag every case scoring >= the candidate.
        worse = s if higher_is_worse else -s
        order = np.argsort(-worse, kind="stable")
        ranked, flagged_positive = worse[order], y[order]
        tp = np.cumsum(flagged_positive)
        fp = np.cumsum(~flagged_positive)
        # One candidate per distinct score: its counts are those at the last case of the run.
        last = np.r_[ranked[1:] != ranked[:-1], True]
        candidates, tp, fp = ranked[last], tp[last], fp[last]
        allowed = fp <= max_false_positives(target_fpr, n_neg)
        if not allowed.any():
            return FitResult(
                threshold=None,
                achieved_fpr=0.0,
                achieved_tpr=0.0,
                n_positive=n_pos,
                n_negative=n_neg,
                decision_rule=rule,
                false_positives=0,
                true_positives=0,
                reason=f"every threshold exceeds the target false-positive rate {target_fpr}",
            )
        j = np.where(allowed, tp / n_pos - fp / n_neg, -np.inf)
        best = int(np.argmax(j))  # the first maximum: the candidate that flags fewest cases
        # Back to the caller's scale; "+ 0.0" turns the -0.0 of a negated 0 into 0.0.
        threshold = float(candidates[best] if higher_is_worse else -candidates[best]) + 0.0
        return FitResult(
            threshold=threshold,
            achieved_fpr=int(fp[best]) / n_neg,
            achieved_tpr=int(tp[best]) / n_pos,
            n_positive=n_pos,
            n_negative=n_neg,
            decision_rule=rule,
            false_positives=int(fp[best]),
            true_positives=int(tp[best]),
            details={"youden_j": float(j[best])},
        )
