"""``ragleaklab label plan``: how many cases to review for a guarantee, and a sample in which
every case had the same chance."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core.calibration.report import negatives_needed
from ragleaklab_core.errors import InputError
from ragleaklab_core.review.plan import PlanCase, _allocate, plan_pack, positives_needed
from ragleaklab_core.review.session import ReviewSession
from ragleaklab_core.stats.aggregation import cp_upper, rate_interval
from tests.support.cli import rlk


@settings(max_examples=60, deadline=None)
@given(st.floats(0.002, 0.3), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_negatives_needed_is_the_fewest_that_meet_the_target(fpr, confidence):
    n = negatives_needed(fpr, 1 - confidence)
    assert cp_upper(0, n, confidence) <= fpr
    if n > 1:
        assert cp_upper(0, n - 1, confidence) > fpr


def test_the_known_figures():
    assert negatives_needed(0.01, 0.05) == 299  # docs/calibration.md's rule of three, exactly
    assert negatives_needed(0.05, 0.05) == 59
    cases = _cases()
    assert (
        plan_pack("p", cases, target_fpr=0.01, confidence=0.95, margin=0.2, seed=0).negatives_needed
        == 299
    )
    n = positives_needed(0.1)
    interval = rate_interval(n // 2, n)
    assert (interval.upper - interval.lower) / 2 <= 0.1
    shorter = rate_interval((n - 2) // 2, n - 2)
    assert (shorter.upper - shorter.lower) / 2 > 0.1


@given(st.lists(st.integers(1, 40), min_size=1, max_size=12), st.integers(0, 500))
def test_allocation_is_proportional_and_adds_up(sizes, total):
    shares = _allocate(sizes, total)
    assert sum(shares) == min(total, sum(sizes))
    assert all(0 <= s <= size for s, size in zip(shares, sizes, strict=True))
    if total < sum(sizes):
        for s, size in zip(shares, sizes, strict=True):
            assert abs(s - total * size / sum(sizes)) < 1.0 + 1e-9


def _cases() -> list[PlanCase]:
    out = []
    for i in range(200):
        outcome = "fail" if i % 5 == 0 else "pass"
        family = ("a", "b", "c")[i % 3]
        out.append(PlanCase("p", f"c{i:03d}", ("attack", family, "-", outcome), outcome))
    return out


def test_every_case_has_about_the_same_chance_to_be_picked():
    cases = _cases()
    seen: Counter[str] = Counter()
    runs = 400
    for seed in range(runs):
        plan = plan_pack("p", cases, target_fpr=0.05, confidence=0.95, margin=0.2, seed=seed)
        seen.update(plan.chosen)
    rate = plan.sample_size / len(cases)
    frequencies = [seen[c.test_id] / runs for c in cases]
    # each within a binomial's 4 standard errors of the common rate: no stratum favoured
    spread = 4 * (rate * (1 - rate) / runs) ** 0.5 + 0.02
    assert all(abs(f - rate) <= spread for f in frequencies)


def test_a_plan_is_the_same_for_the_same_seed_and_says_when_the_run_is_too_small():
    cases = _cases()
    one = plan_pack("p", cases, target_fpr=0.05, confidence=0.95, margin=0.2, seed=3)
    assert one == plan_pack("p", cases, target_fpr=0.05, confidence=0.95, margin=0.2, seed=3)
    assert one != plan_pack("p", cases, target_fpr=0.05, confidence=0.95, margin=0.2, seed=4)
    assert one.notes == ()
    strict = plan_pack("p", cases, target_fpr=0.001, confidence=0.95, margin=0.2, seed=3)
    assert strict.sample_size == 200  # every case
    assert "fewer than the 2995 a guarantee at FPR 0.001 needs" in strict.notes[0]


def test_plan_then_review_the_sample_then_import_it(tmp_path: Path):
    rlk("run", "-p", "claim-corruption", "-o", "out", cwd=tmp_path, ok=(0, 1))
    run_dir = tmp_path / "out"
    done = rlk("label", "plan", "out", "--target-fpr", "0.05", cwd=tmp_path, ok=(0,))
    assert "claim-corruption: review " in done.stdout
    plan = json.loads((run_dir / "review" / "plan.json").read_text())
    picked = plan["packs"][0]["cases"]
    assert plan["packs"][0]["negatives_needed"] == 59
    assert 59 < len(picked) < plan["packs"][0]["cases_in_run"]
    again = rlk("label", "plan", "out", "--target-fpr", "0.05", cwd=tmp_path, ok=(2,))
    assert "exists" in again.stderr
    only = {("claim-corruption", c) for c in picked}
    session = ReviewSession(run_dir, "erin", only=only)
    assert [v.test_id for v in session.views] == picked  # the run's order
    for view in session.views:
        session.judge(view.index, "positive" if view.outcome == "fail" else "negative")
    out = tmp_path / "labels.jsonl"
    rlk("label", "import", str(session.path), "-o", str(out), cwd=tmp_path, ok=(0,))
    assert len(out.read_text().splitlines()) == len(picked)
    with pytest.raises(InputError, match="another plan's"):
        ReviewSession(run_dir, "erin", only=set(list(only)[:5]))
