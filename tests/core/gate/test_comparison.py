"""ragleaklab diff: the exact statistics against brute force, and real pairs of runs."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import barnard_exact, binom

from ragleaklab_core.errors import InputError
from ragleaklab_core.outcome import AppliedThreshold
from ragleaklab_core.reporting.diff import compare, render
from ragleaklab_core.stats.difference import difference_interval, tail_p_value
from tests.support import reports
from tests.support.cli import rlk


def _pooled_z(x1: int, n1: int, x2: int, n2: int) -> float:
    """The pooled Z of p1 - p2, written out independently of the implementation."""
    p = (x1 + x2) / (n1 + n2)
    var = p * (1 - p) * (1 / n1 + 1 / n2)
    diff = x1 / n1 - x2 / n2
    if var == 0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / math.sqrt(var)


def _brute_p_value(x1: int, n1: int, x2: int, n2: int) -> float:
    """Every table under the null p1 = p2 = p, the tail of the pooled Z, maximised over p on a
    fine grid (Barnard's test, one-sided: p1 > p2)."""
    observed = _pooled_z(x1, n1, x2, n2)
    extreme = [
        (a, b)
        for a, b in itertools.product(range(n1 + 1), range(n2 + 1))
        if _pooled_z(a, n1, b, n2) >= observed - 1e-9
    ]
    grid = np.linspace(0, 1, 2001)
    tail = sum(binom.pmf(a, n1, grid) * binom.pmf(b, n2, grid) for a, b in extreme)
    return float(np.max(tail)) if extreme else 0.0


counts = st.integers(1, 7).flatmap(
    lambda n1: st.integers(1, 7).flatmap(
        lambda n2: st.tuples(st.integers(0, n1), st.just(n1), st.integers(0, n2), st.just(n2))
    )
)


@settings(max_examples=25, deadline=None)
@given(counts)
def test_the_p_value_is_the_brute_force_exact_one(table):
    x1, n1, x2, n2 = table
    mine = tail_p_value(x1, n1, x2, n2)
    brute = _brute_p_value(x1, n1, x2, n2)
    # The grid's maximum can only be below the true supremum; the refinement can only add.
    assert brute - 1e-9 <= mine <= brute + 2e-3
    # scipy is a lower bound only: it maximises over a grid, and it compares the statistic
    # exactly, so a table whose Z ties the observed one but rounds a bit lower is dropped from
    # the tail (on (3, 4, 2, 6), the table (1, 4, 0, 6) has Z = 1.2909944487358056 against
    # 1.2909944487358058: scipy says 0.169, the exact p-value is 0.189).
    table2 = [[x1, x2], [n1 - x1, n2 - x2]]
    scipy_p = barnard_exact(table2, alternative="greater", n=1024).pvalue
    assert scipy_p - 1e-9 <= mine


def test_the_interval_covers_at_least_its_nominal_level():
    """Coverage of the 90% interval (alpha 0.05 each side): exact, by every table's probability,
    and in a seeded simulation."""
    n1 = n2 = 8
    intervals = {
        (a, b): difference_interval(a, n1, b, n2, alpha=0.05)
        for a, b in itertools.product(range(n1 + 1), range(n2 + 1))
    }
    rng = np.random.default_rng(20261125)
    for p_new, p_base in [(0.1, 0.1), (0.5, 0.2), (0.3, 0.7), (0.05, 0.4), (0.9, 0.85)]:
        truth = p_new - p_base
        exact = sum(
            binom.pmf(a, n1, p_new) * binom.pmf(b, n2, p_base)
            for (a, b), (low, high) in intervals.items()
            if low <= truth <= high
        )
        assert exact >= 0.90 - 1e-9, (p_new, p_base, exact)
        draws = zip(rng.binomial(n1, p_new, 2000), rng.binomial(n2, p_base, 2000), strict=True)
        covered = np.mean([intervals[a, b][0] <= truth <= intervals[a, b][1] for a, b in draws])
        assert covered >= 0.90 - 3 * math.sqrt(0.09 / 2000)


def test_the_interval_agrees_with_the_test():
    """Lower end above 0 exactly when the one-sided test rejects at the same level."""
    for x1, n1, x2, n2 in [(7, 12, 2, 15), (5, 10, 1, 10), (3, 9, 3, 9), (9, 20, 2, 20)]:
        low, _ = difference_interval(x1, n1, x2, n2, alpha=0.05)
        assert (low > 0) == (tail_p_value(x1, n1, x2, n2) <= 0.05)


# Real runs (tests/core/gate/conftest.py): the reference target naive, and hardened by
# paraphrasing or cutting quotes.


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return rlk(*args, cwd=cwd, epoch="0")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, copy_runs) -> Path:
    names = ("naive", "paraphrase", "quotes")
    return copy_runs(tmp_path_factory.mktemp("runs"), **{name: name for name in names})


def test_identical_runs_do_not_regress(runs):
    done = _cli("diff", "naive/report.json", "naive/report.json", cwd=runs)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(
        "diff: no regression (1 values, one-sided level 0.05); 0 cases newly failing\n"
    )
    again = _cli("diff", "naive/report.json", "naive/report.json", cwd=runs)
    assert again.stdout == done.stdout


def test_hardened_to_naive_regresses_and_lists_every_newly_failing_case(runs):
    # A changed target is what a diff judges: named, and compared without --force.
    text = _cli("diff", "paraphrase/report.json", "naive/report.json", cwd=runs)
    assert text.returncode == 1, text.stderr
    assert text.stdout.startswith("target changed: the target is reference@")
    assert "(options: paraphrase true -> false)" in text.stdout.splitlines()[0]
    assert "compared with --force" not in text.stdout
    done = _cli("diff", "paraphrase/report.json", "naive/report.json", "--json", cwd=runs)
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert not document["forced"] and document["differences"] == []
    (change,) = document["target_changes"]
    assert "paraphrase true -> false" in change
    (value,) = document["values"]
    naive = json.loads((runs / "naive/report.json").read_text(encoding="utf-8"))
    failing = naive["packs"][0]["values"]["verbatim_score"]["all_failing_ids"]
    assert len(failing) > 50  # more than report.json's first-50 list holds
    assert value["regressed"] and value["newly_failing"] == failing
    assert value["no_longer_failing"] == [] and value["p_value"] < 1e-4
    assert 0 < value["interval"][0] <= value["difference"] <= value["interval"][1]


def test_naive_to_hardened_does_not_regress(runs):
    done = _cli("diff", "naive/report.json", "quotes/report.json", cwd=runs)
    assert done.returncode == 0, done.stderr
    assert "no longer failing (11)" in done.stdout
    back = _cli("diff", "quotes/report.json", "naive/report.json", "--json", cwd=runs)
    (value,) = json.loads(back.stdout)["values"]
    # 46 -> 57 of 495 is not significant at 0.05: the interval straddles 0.
    assert back.returncode == 0 and not value["regressed"]
    assert value["interval"][0] < 0 < value["interval"][1]
    assert set(value["newly_failing"]) == {*value["newly_failing"]} and value["newly_failing"]


def test_a_pack_version_bump_is_refused_unless_forced(runs, tmp_path):
    report = json.loads((runs / "naive/report.json").read_text(encoding="utf-8"))
    report["packs"][0]["version"] = "1.1.0"
    bumped = tmp_path / "bumped.json"
    bumped.write_text(json.dumps(report), encoding="utf-8")
    done = _cli("diff", str(runs / "naive/report.json"), str(bumped), cwd=runs)
    assert done.returncode == 2
    assert "pack verbatim-extraction is version 1.0.0 in the base, 1.1.0 now" in done.stderr
    forced = _cli("diff", str(runs / "naive/report.json"), str(bumped), "--force", cwd=runs)
    assert forced.returncode == 0 and "compared with --force although" in forced.stdout


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "$: not JSON"),
        ('{"packs": 3}', "expected a list, got int 3 @ $.packs"),
        ('{"packs": [{"name": "x"}]}', "required field missing @ $.packs[0].version"),
    ],
)
def test_a_malformed_report_names_the_file_and_the_path(runs, tmp_path, content, expected):
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    done = _cli("diff", "naive/report.json", str(bad), cwd=runs)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {bad}") and expected in done.stderr
    assert "Traceback" not in done.stderr
    missing = _cli("diff", "nowhere.json", "naive/report.json", cwd=runs)
    assert missing.returncode == 2 and "nowhere.json: no such file" in missing.stderr


def _report(packs):
    return reports.report(packs)


def _pack(name, failing, ids, version="1", tags=(), verdict="fail"):
    return reports.pack(
        name,
        failing,
        ids,
        version=version,
        tags=tags,
        verdict=verdict,
        threshold=AppliedThreshold(value=0.5, decision_rule=reports.RULE, source="pack p 1"),
    )


def test_packs_in_one_report_only_are_listed_and_errored_cases_are_not_new_failures():
    ids = [f"c{i}" for i in range(6)]
    base = _report([_pack("a", ["c0"], ids), _pack("gone", [], ids)])
    base["packs"][0]["values"]["v"]["unscored_ids"] = ["c5"]
    new = _report([_pack("a", ["c1", "c5"], ids), _pack("added", [], ids)])
    diff = compare(base, new)
    assert diff.only_in_base == ("gone",) and diff.only_in_new == ("added",)
    (value,) = diff.values
    assert value.newly_failing == ("c1",)  # c5 was not scored in the base: it never passed
    assert value.no_longer_failing == ("c0",)
    text = render(diff)
    assert "only in base: gone\nonly in new: added\n" in text
    assert json.loads(json.dumps(diff.to_dict()))["only_in_new"] == ["added"]


def test_compare_refuses_a_bad_level():
    with pytest.raises(InputError, match="level"):
        compare(_report([]), _report([]), level=0.5)


def test_a_pack_the_new_run_lacks_fails_the_diff_it_is_never_a_pass(runs, tmp_path):
    report = json.loads((runs / "naive/report.json").read_text(encoding="utf-8"))
    assert report["packs"]
    gone = tmp_path / "gone.json"
    # A run of no packs is untested (error, exit 3): a report saying so is consistent.
    empty = {**report, "packs": [], "verdict": "error", "exit_code": 3}
    gone.write_text(json.dumps(empty), encoding="utf-8")
    done = _cli("diff", "naive/report.json", str(gone), cwd=runs)
    # Not tested (exit 3, as the gate has it), never "no regression".
    assert done.returncode == 3, done.stdout + done.stderr
    assert "error: not tested: verbatim-extraction" in done.stderr
    assert "no regression" not in done.stdout and "NOT TESTED" in done.stdout
    assert "Traceback" not in done.stderr
    # The other way round, the base measured nothing: nothing was compared, so no "no
    # regression" either.
    more = _cli("diff", str(gone), "naive/report.json", cwd=runs)
    assert more.returncode == 3, more.stdout + more.stderr
    assert "only in new: verbatim-extraction" in more.stdout
    assert "nothing was compared" in more.stderr
