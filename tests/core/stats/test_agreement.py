"""Cohen's kappa against its definition, and its bootstrap interval in a seeded simulation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragleaklab_core.stats.agreement import cohen_kappa


def brute_kappa(first: list[bool], second: list[bool]) -> float | None:
    """Kappa from its definition, one case at a time, over both labels."""
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    chance = 0.0
    for label in (True, False):
        chance += (sum(a == label for a in first) / n) * (sum(b == label for b in second) / n)
    if chance == 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


pairs = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60)


@given(pairs)
def test_kappa_is_its_definition(labelled):
    first, second = [a for a, _ in labelled], [b for _, b in labelled]
    got = cohen_kappa(first, second)
    want = brute_kappa(first, second)
    assert got.cases == len(labelled)
    assert got.agreed == sum(a == b for a, b in labelled)
    if want is None:
        assert got.kappa is None
    else:
        assert got.kappa == pytest.approx(want, abs=1e-12)
        assert -1.0 - 1e-12 <= got.kappa <= 1.0 + 1e-12


def test_the_interval_is_the_same_every_time_and_brackets_a_clear_case():
    first = [True] * 20 + [False] * 80
    second = [True] * 15 + [False] * 5 + [True] * 5 + [False] * 75
    one, two = cohen_kappa(first, second), cohen_kappa(first, second)
    assert one == two
    assert one.kappa == pytest.approx(0.6875)
    assert one.low is not None and one.high is not None
    assert one.low < one.kappa < one.high
    assert cohen_kappa([False] * 5, [False] * 5).kappa is None  # nothing to agree beyond chance


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="same cases"):
        cohen_kappa([True], [True, False])
    with pytest.raises(ValueError, match="no case"):
        cohen_kappa([], [])


def test_the_interval_covers_the_true_kappa_about_as_often_as_it_says():
    """Two raters who each see the truth through their own error (a rater model with a known
    kappa): the 95% interval should hold it in about 95% of runs of 200 cases."""
    rng = np.random.default_rng(7)
    prevalence, accuracy = 0.3, 0.9
    # The population kappa of this model, from its four cell probabilities.
    p_agree_pos = prevalence * accuracy**2 + (1 - prevalence) * (1 - accuracy) ** 2
    p_pos = prevalence * accuracy + (1 - prevalence) * (1 - accuracy)
    p_o = p_agree_pos + prevalence * (1 - accuracy) ** 2 + (1 - prevalence) * accuracy**2
    p_e = p_pos**2 + (1 - p_pos) ** 2
    true_kappa = (p_o - p_e) / (1 - p_e)
    runs, held = 300, 0
    for _ in range(runs):
        truth = rng.random(200) < prevalence
        first = np.where(rng.random(200) < accuracy, truth, ~truth)
        second = np.where(rng.random(200) < accuracy, truth, ~truth)
        got = cohen_kappa(first.tolist(), second.tolist())
        assert got.low is not None and got.high is not None
        held += got.low <= true_kappa <= got.high
    assert 0.91 <= held / runs <= 0.98
