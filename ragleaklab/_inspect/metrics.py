"""Pack-level metrics over (epoch-reduced) ragleaklab scores: leak rate and its standard error.

inspect applies the epoch reducer before the metrics, so these see one value per sample: under
``mean`` a sample's ``attack_success`` is the share of its epochs that leaked, under ``max``
whether any epoch leaked, under ``at_least_k`` whether k did, under ``pass_at_k`` the chance that
one of k epochs leaks. The leak rate is the mean of those values over the samples that have one
(an unscored or ungated sample counts in neither numerator nor denominator, as ragleaklab counts
them apart from passes and failures). With one epoch it is the failing-case rate that
``ragleaklab run`` reports as ``fail_rate.rate``.
"""

from __future__ import annotations

import math
import statistics

from inspect_ai.scorer import Metric, SampleScore, Value, metric

from ragleaklab._inspect._common import success_of


def _successes(scores: list[SampleScore]) -> list[float]:
    found = (success_of(s.score.value) for s in scores)
    return [v for v in found if v is not None]


@metric
def leak_rate() -> Metric:
    """Mean ``attack_success`` over the scored samples (NaN when none was scored or gated)."""

    # The annotation matters: without it inspect passes the deprecated list[Score].
    def compute(scores: list[SampleScore]) -> Value:
        values = _successes(scores)
        return float(statistics.mean(values)) if values else math.nan

    return compute


@metric
def leak_stderr() -> Metric:
    """Standard error of :func:`leak_rate`: sample standard deviation (ddof 1) over sqrt(n).

    The same estimator as the ``stderr`` of ``report.json``'s summaries; 0.0 for one sample, NaN
    for none.
    """

    def compute(scores: list[SampleScore]) -> Value:
        values = _successes(scores)
        if not values:
            return math.nan
        if len(values) == 1:
            return 0.0
        return float(statistics.stdev(values) / math.sqrt(len(values)))

    return compute


__all__ = ["leak_rate", "leak_stderr"]
