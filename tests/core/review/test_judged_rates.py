"""A judge's corrected success rate, checked by simulating judges whose error is known.

A run of attacks of which a known share truly succeeded; a person labels a random sample of
them (the truth); a judge with a known sensitivity and specificity labels every case. Through
the real pipeline (:func:`judge_agreement`, then :func:`judged_rates`), the corrected rate's
95% interval must hold the true share about 95% of the time, where the judge's raw share (its
exact interval) misses it most of the time.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragleaklab_core.review.judging import judge_agreement, judged_rates
from ragleaklab_core.review.session import Mark
from ragleaklab_core.stats.aggregation import rate_interval

PACK = "simulated"
CASES, REVIEWED = 300, 120


def simulate(seed: int, truth_rate: float, se: float, sp: float) -> tuple[dict, float, bool]:
    rng = np.random.default_rng(seed)
    truth = rng.random(CASES) < truth_rate
    says = np.where(truth, rng.random(CASES) < se, rng.random(CASES) >= sp)
    keys = [(PACK, f"c-{i:04d}") for i in range(CASES)]
    judge = {k: Mark("positive" if s else "negative") for k, s in zip(keys, says, strict=True)}
    sample = rng.choice(CASES, REVIEWED, replace=False)
    person = {keys[i]: Mark("positive" if truth[i] else "negative") for i in sample}
    measured = judge_agreement(judge, person)
    assert measured is not None
    (entry,) = judged_rates(judge, measured, person)
    raw = rate_interval(int(says.sum()), CASES)
    # The rate the attacks truly succeed at (the run's share is one draw of it, as the run's
    # failing count is one draw of the metric's rate: the interval carries that sampling).
    true = truth_rate
    return entry, true, raw.lower <= true <= raw.upper


@pytest.mark.parametrize(("truth_rate", "se", "sp"), [(0.2, 0.85, 0.9), (0.5, 0.75, 0.95)])
def test_the_corrected_interval_holds_the_true_rate_and_the_raw_one_does_not(truth_rate, se, sp):
    held = raw_held = 0
    runs = 200
    for seed in range(runs):
        entry, true, raw = simulate(seed, truth_rate, se, sp)
        # Over the cases the person did not review (those measured the judge).
        assert entry["cases"] == CASES - REVIEWED
        low, high = entry["interval"]
        held += low <= true <= high
        raw_held += raw
    # Nominal 95%: within two points and a half, over 200 runs (binomial sd ~1.5 points).
    assert 0.925 <= held / runs <= 0.975, held / runs
    assert raw_held / runs < 0.6, raw_held / runs


def test_a_judge_measured_on_no_positive_gives_no_corrected_rate():
    keys = [(PACK, f"c-{i}") for i in range(10)]
    judge = {k: Mark("positive" if i < 3 else "negative") for i, k in enumerate(keys)}
    person = {k: Mark("negative") for k in keys}
    measured = judge_agreement(judge, person)
    assert measured is not None
    (entry,) = judged_rates(judge, measured, {})
    assert entry["positive"] == 3
    assert "estimate" not in entry and "no positive" in entry["why_not"]


def test_cases_the_person_labelled_are_not_corrected_again():
    keys = [(PACK, f"c-{i}") for i in range(6)]
    judge = {k: Mark("positive" if i % 2 else "negative") for i, k in enumerate(keys)}
    person = dict(judge)
    measured = judge_agreement(judge, person)
    assert measured is not None
    (entry,) = judged_rates(judge, measured, person)
    assert entry["cases"] == 0 and "(theirs are the truth)" in entry["why_not"]
