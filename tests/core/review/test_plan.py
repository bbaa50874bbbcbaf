"""``ragleaklab label plan``: how many cases to review for a guarantee, and a sample in which
every case had the same chance."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from attrs import frozen
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core import FITTERS, LoadedPlugin, load_plugin
from ragleaklab_core.calibration.report import negatives_needed
from ragleaklab_core.errors import InputError, PluginRuntimeError
from ragleaklab_core.review.plan import (
    PlanCase,
    _allocate,
    negatives_to_plan,
    plan_pack,
    positives_needed,
)
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


@frozen
class SilentFitter:
    """A fitter that does not say how many negatives it needs."""

    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        raise NotImplementedError


@frozen
class CountingFitter:
    """A fitter that says it needs *needs* negatives, whatever the target."""

    needs: object = 1000

    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        raise NotImplementedError

    def negatives_needed(self, target_fpr, confidence):
        return self.needs


def _loaded(fitter: object) -> LoadedPlugin:
    return LoadedPlugin(FITTERS, type(fitter).__name__, "tests", "tests", fitter, {})


def test_a_plan_aims_for_what_the_fitter_says_it_needs_when_that_is_more():
    cases = _cases()
    # The guarantee's count covers the built-in fitters at their defaults: no note.
    for name in ("exact", "neyman-pearson"):
        fitter = load_plugin(FITTERS, name)
        plan = plan_pack(
            "p", cases, target_fpr=0.01, confidence=0.95, margin=0.2, seed=0, fitter=fitter
        )
        assert (plan.negatives_needed, plan.notes[0].startswith("the run has")) == (299, True)
    # A stricter delta needs more than the guarantee at 95%: the plan follows the fitter.
    strict = load_plugin(FITTERS, "neyman-pearson", {"delta": 0.01})
    needed, notes = negatives_to_plan(0.01, 0.95, strict)
    assert needed == 459 == negatives_needed(0.01, 0.01)
    assert notes == (
        "the neyman-pearson fitter needs 459 negatives at FPR 0.01 (its negatives_needed), "
        "more than the 299 of the guarantee: the plan aims for 459",
    )
    plan = plan_pack(
        "p", cases, target_fpr=0.01, confidence=0.95, margin=0.2, seed=0, fitter=strict
    )
    assert plan.negatives_needed == 459 and plan.notes[0] == notes[0]
    assert "fewer than the 459 a guarantee at FPR 0.01 needs" in plan.notes[1]
    # Any fitter is asked, not only the built-ins.
    assert negatives_to_plan(0.05, 0.95, _loaded(CountingFitter()))[0] == 1000
    assert negatives_to_plan(0.05, 0.95, _loaded(CountingFitter(3))) == (59, ())


def test_a_fitter_that_does_not_say_leaves_the_guarantees_count_with_a_note():
    needed, notes = negatives_to_plan(0.05, 0.95, _loaded(SilentFitter()))
    assert needed == 59
    assert notes == (
        "the SilentFitter fitter does not say how many negatives it needs (it declares no "
        "negatives_needed): the plan aims for the 59 the guarantee needs, which may not be "
        "enough for it",
    )
    with pytest.raises(PluginRuntimeError, match="must return a positive whole number, got 'x'"):
        negatives_to_plan(0.05, 0.95, _loaded(CountingFitter("x")))


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
    assert plan["fitter"] == "exact"  # the fitter it was sized for, calibrate's default
    _plan_with_a_stricter_fitter(run_dir, tmp_path)
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


def _plan_with_a_stricter_fitter(run_dir: Path, tmp_path: Path) -> None:
    """``label plan --fitter NAME --fitter-option ...``, in this process: the plan is sized for
    what that fitter, built with those options, says it needs; a bad option writes nothing."""
    from click.testing import CliRunner

    from ragleaklab_core.cli.commands import cli

    out = tmp_path / "strict.json"
    flags = ["--target-fpr", "0.05", "--fitter", "neyman-pearson", "-o", str(out)]
    plan_it = ["label", "plan", str(run_dir), *flags, "--fitter-option"]
    done = CliRunner().invoke(cli, [*plan_it, "delta=0.01"])
    assert done.exit_code == 0, done.output
    assert "the neyman-pearson fitter needs 90 negatives at FPR 0.05" in done.output
    plan = json.loads(out.read_text())
    assert (plan["fitter"], plan["packs"][0]["negatives_needed"]) == ("neyman-pearson", 90)
    out.unlink()
    bad = CliRunner().invoke(cli, [*plan_it, "delta=2"])
    assert bad.exit_code == 2 and "$.options.delta" in bad.output and not out.exists()
