"""The rate of attacks that truly succeeded, from a rate measured by an instrument that errs.

A run counts the cases its metric (or a judge) flags: ``x`` of ``n``. The metric misses some
successful attacks and flags some failed ones; where its sensitivity ``Se`` (the share of true
successes it flags) and specificity ``Sp`` (the share of failures it passes) were measured on
labelled cases, the expected flagged share is ``Se * pi + (1 - Sp) * (1 - pi)`` for a true
success rate ``pi``, so ``pi = (x / n + Sp - 1) / (Se + Sp - 1)`` (Rogan and Gladen's estimator,
clipped to [0, 1]).

The interval carries three sources of error at once: the run's sampling (``x`` of ``n``) and the
two measured rates (``tp`` of the labelled positives, ``tn`` of the labelled negatives). It is a
Monte Carlo interval under Jeffreys priors: each of the three rates is drawn from its
``Beta(k + 1/2, m - k + 1/2)`` posterior, the estimator is computed for each draw, and the
interval is the draws' central quantiles. Its frequentist coverage was checked in seeded
simulations (tests/core/stats/test_corrected.py): within two points of nominal over a grid of
true rates, sensitivities, specificities and sample sizes, away from a true rate of exactly 0
or 1, where the clipped interval holds the rate every time (over-covers).

Assumptions, stated where the result is shown: the labelled cases that measured ``Se`` and
``Sp`` are a random sample of the cases like this run's (the same system, the same kinds of
attack: a labelling plan's sample is), and the metric errs on this run as it did on them. A
metric no better than chance (``Se + Sp <= 1``) carries no information about the true rate:
then no correction is made, and the interval is all of [0, 1].
"""

from __future__ import annotations

import math

import attrs
import numpy as np
from attrs import frozen

#: Monte Carlo draws, and the fixed seed (the same counts give the same interval).
DRAWS = 20_000
SEED = 20261130
#: Above this share of draws with ``Se + Sp <= 1``, the measured error is too uncertain for a
#: correction: the interval is [0, 1].
MAX_UNINFORMATIVE = 0.025


@frozen
class CorrectedRate:
    """The estimated rate of truly successful attacks, with its interval.

    Attributes:
        failing: Cases the instrument flagged.
        cases: Cases in the run.
        observed: ``failing / cases``.
        estimate: The corrected rate (clipped to [0, 1]), or None when no correction is made.
        low: The interval's lower end.
        high: Its upper end.
        confidence: The interval's confidence.
        sensitivity: ``(tp, positives)``: the instrument's measured hits on labelled positives.
        specificity: ``(tn, negatives)``: its measured passes on labelled negatives.
        why_not: Why no correction was made (None when one was).
    """

    failing: int
    cases: int
    observed: float
    estimate: float | None
    low: float
    high: float
    confidence: float
    sensitivity: tuple[int, int]
    specificity: tuple[int, int]
    why_not: str | None = None


def _check(k: int, m: int, what: str) -> None:
    if any(isinstance(c, bool) or not isinstance(c, int) for c in (k, m)):
        raise TypeError(f"{what}: counts must be integers")
    if m <= 0 or not 0 <= k <= m:
        raise ValueError(f"{what}: need 0 <= {k} <= {m} and at least one case")


def corrected_rate(
    failing: int,
    cases: int,
    *,
    true_positives: int,
    positives: int,
    true_negatives: int,
    negatives: int,
    confidence: float = 0.95,
    draws: int = DRAWS,
) -> CorrectedRate:
    """The corrected success rate of a run whose instrument flagged *failing* of *cases*, the
    instrument having flagged *true_positives* of *positives* labelled positives and passed
    *true_negatives* of *negatives* labelled negatives (see the module).

    Raises:
        ValueError: A count out of range, no case, or *confidence* not in (0, 1).
        TypeError: A count that is not an integer.
    """
    _check(failing, cases, "run")
    _check(true_positives, positives, "sensitivity")
    _check(true_negatives, negatives, "specificity")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    observed = failing / cases
    se_hat, sp_hat = true_positives / positives, true_negatives / negatives
    uncorrected = CorrectedRate(
        failing=failing,
        cases=cases,
        observed=observed,
        estimate=None,
        low=0.0,
        high=1.0,
        confidence=confidence,
        sensitivity=(true_positives, positives),
        specificity=(true_negatives, negatives),
        why_not=(
            f"the instrument's measured sensitivity ({true_positives}/{positives}) and "
            f"specificity ({true_negatives}/{negatives}) do not show it is better than chance "
            "(Se + Sp > 1) with enough certainty: its count says nothing about the true rate"
        ),
    )
    rng = np.random.default_rng(SEED)
    p = rng.beta(failing + 0.5, cases - failing + 0.5, draws)
    se = rng.beta(true_positives + 0.5, positives - true_positives + 0.5, draws)
    sp = rng.beta(true_negatives + 0.5, negatives - true_negatives + 0.5, draws)
    youden = se + sp - 1.0
    informative = youden > 0.0
    if se_hat + sp_hat <= 1.0 or informative.mean() < 1.0 - MAX_UNINFORMATIVE:
        return uncorrected
    rates = np.clip((p[informative] + sp[informative] - 1.0) / youden[informative], 0.0, 1.0)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(rates, [tail, 1.0 - tail])
    estimate = rogan_gladen(observed, se_hat, sp_hat)
    return attrs.evolve(
        uncorrected, estimate=estimate, low=float(low), high=float(high), why_not=None
    )


def rogan_gladen(observed: float, sensitivity: float, specificity: float) -> float:
    """``(observed + Sp - 1) / (Se + Sp - 1)`` clipped to [0, 1]; NaN when ``Se + Sp <= 1``."""
    denominator = sensitivity + specificity - 1.0
    if denominator <= 0.0:
        return math.nan
    return min(1.0, max(0.0, (observed + specificity - 1.0) / denominator))


__all__ = [
    "DRAWS",
    "MAX_UNINFORMATIVE",
    "SEED",
    "CorrectedRate",
    "corrected_rate",
    "rogan_gladen",
]
