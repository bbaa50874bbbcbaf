"""A comparison (`ragleaklab diff`, `run --baseline`) is between runs that measured the same way,
of a baseline that does not contradict itself, and never says "no regression" about what was not
tested; a changed target is named and compared. Written as an attacker who wants exit 0 or "no
regression" from a run that regressed."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from ragleaklab_plugins.targets.reference import ReferenceTarget

from ragleaklab_core.errors import InputError
from ragleaklab_core.gate import Verdict, decide, diff_verdict
from ragleaklab_core.gate.comparison import check_consistent, compare
from ragleaklab_core.reporting.diff import render
from tests.core.run.test_http_faults import ingesting, write_config
from tests.support import reports
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

PACK = "verbatim-extraction"
VALUE = "verbatim_score"


def _cli(*args: str, cwd: Path):
    return rlk(*args, cwd=cwd, epoch="0")


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, copy_runs) -> Path:
    """The verbatim pack against the reference target (tests/core/gate/conftest.py): naive, and
    hardened (paraphrasing)."""
    return copy_runs(tmp_path_factory.mktemp("comparable"), naive="naive", hardened="paraphrase")


def _edited(runs: Path, tmp_path: Path, edit, name: str = "edited.json") -> Path:
    report = _load(runs / "naive/report.json")
    edit(report)
    path = tmp_path / name
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


# ---- measured differently: refused, naming every difference ----------------------------------


def test_a_run_measured_another_way_is_refused_naming_every_difference(runs, tmp_path):
    def edit(report):
        pack = report["packs"][0]
        pack["version"] = "0.9.0"
        pack["cases"]["epochs"] = 3
        pack["cases"]["reducer"] = "max"
        pack["metrics"][0]["options"]["min_words"] = 20
        pack["values"][VALUE]["threshold"]["source"] = "ragleaklab.thresholds.json (hand-made)"

    other = _edited(runs, tmp_path, edit)
    for base, new in ((other, runs / "naive/report.json"), (runs / "naive/report.json", other)):
        done = _cli("diff", str(base), str(new), cwd=runs)
        assert done.returncode == 2, done.stdout + done.stderr
        said = done.stderr
        assert "did not measure the same way" in said and "Traceback" not in said
        for part in ("is version", "epochs in the base", "reduced epochs with", "min_words"):
            assert part in said, (part, said)
        assert "threshold source" in said
    # --force compares them, and says what it let through.
    forced = _cli("diff", str(other), "naive/report.json", "--force", cwd=runs)
    assert forced.returncode == 0 and "compared with --force although" in forced.stdout


def test_a_value_gated_at_another_threshold_or_rule_is_never_compared_unforced():
    """The seen attack: the new run gated at a laxer threshold (or rule) hides a regression."""
    ids = [f"c{i}" for i in range(40)]
    base = _report([_pack(ids[:1], ids)])
    new = _report([_pack(ids[:20], ids)])
    assert compare(base, new).regressed  # same settings: regressed (exit 1)
    for key, laxer in (("value", 0.99), ("decision_rule", "score > threshold -> FAIL")):
        lax = copy.deepcopy(new)
        lax["packs"][0]["values"]["v"]["threshold"][key] = laxer
        with pytest.raises(InputError, match=f"pack p v: .*{json.dumps(laxer)[:8]}"):
            compare(base, lax)
        with pytest.raises(InputError, match="did not measure the same way"):
            decide(lax, fail_on="regression", baseline=base)
        assert compare(base, lax, force=True).values[0].threshold_changed


def test_other_epochs_reducer_or_selection_under_a_baseline_are_refused_before_asking(runs):
    for extra, said in (
        (("--reducer", "min"), "reduced epochs with mean in the base, min now"),
        (("--epochs", "2"), "ran 1 epochs in the base, 2 now"),
        (("--smoke",), "ran the cases tagged [] in the base, ['smoke'] now"),
    ):
        for rule in ("verdict", "regression", "new-failures"):
            done = _cli(
                "run", "-p", PACK, *extra, "-o", "never", "--baseline", "naive/report.json",
                "--fail-on", rule, cwd=runs,
            )  # fmt: skip
            assert done.returncode == 2, done.stdout + done.stderr
            assert said in done.stderr and "Traceback" not in done.stderr
            assert not (runs / "never").exists()  # nothing asked, no journal


def test_other_case_ids_are_refused(runs, tmp_path):
    def edit(report):
        pack = report["packs"][0]
        pack["cases"]["ids"] = [*pack["cases"]["ids"][:-1], "ve-9999"]

    # The ids disagree with case_results too: refused either way, never compared.
    done = _cli("diff", "naive/report.json", str(_edited(runs, tmp_path, edit)), cwd=runs)
    assert done.returncode == 2
    ids = [f"c{i}" for i in range(10)]
    with pytest.raises(InputError, match=r"ran other cases: 1 only in the base \(c9\)"):
        compare(_report([_pack([], ids)]), _report([_pack([], [*ids[:9], "x"])]))


# ---- a changed target: named and compared ---------------------------------------------------


def test_a_changed_target_is_named_and_compared_without_force(runs):
    done = _cli("diff", "hardened/report.json", "naive/report.json", "--json", cwd=runs)
    assert done.returncode == 1, done.stderr  # the defence switched off: regressed
    document = json.loads(done.stdout)
    (change,) = document["target_changes"]
    assert "paraphrase true -> false" in change and not document["forced"]
    text = _cli("diff", "naive/report.json", "hardened/report.json", cwd=runs)
    assert text.returncode == 0, text.stderr  # switched on: no regression, and it says why
    assert text.stdout.startswith("target changed: the target is reference@")
    gated = _cli(
        "run", "-p", PACK, "-o", "gated", "--baseline", "hardened/report.json",
        "--fail-on", "regression", cwd=runs,
    )  # fmt: skip
    assert gated.returncode == 1
    assert "target changed from the baseline:" in gated.stdout
    report = _load(runs / "gated/report.json")
    assert report["gate"]["baseline"]["diff"]["target_changes"] == [change]


def test_a_defence_switched_on_in_an_http_service_is_named_and_compared(tmp_path):
    naive, defended = FakeRagServer(), FakeRagServer(target=ReferenceTarget(paraphrase=True))
    with naive, defended:
        naive_url = naive.url("/simple")
        for name, server in (("before", naive), ("after", defended)):
            config = write_config(tmp_path / f"{name}.toml", ingesting(server))
            done = _cli("run", "-p", PACK, "--smoke", "--config", str(config), "-o", name,
                        cwd=tmp_path)  # fmt: skip
            assert done.returncode in (0, 1), done.stderr
    done = _cli("diff", "before/report.json", "after/report.json", "--json", cwd=tmp_path)
    document = json.loads(done.stdout)
    (change,) = document["target_changes"]
    assert change.startswith("the target is http@") and naive_url in change
    assert "compared" not in done.stderr and not document["forced"]
    (value,) = document["values"]
    assert done.returncode == (1 if value["regressed"] else 0)
    back = _cli("diff", "after/report.json", "before/report.json", "--json", cwd=tmp_path)
    (value,) = json.loads(back.stdout)["values"]
    assert value["new"]["failing"] >= value["base"]["failing"]
    assert back.returncode == (1 if value["regressed"] else 0)


# ---- not tested: never "no regression" -------------------------------------------------------


def _untested(report, verdict="error"):
    pack = report["packs"][0]
    pack["tested"] = False
    pack["verdict"] = verdict
    pack["not_tested_reason"] = "the target could not be reached"
    report["verdict"] = "error" if verdict == "error" else verdict
    report["exit_code"] = 3 if verdict == "error" else 1


def test_a_new_run_that_was_not_tested_is_never_no_regression(runs, tmp_path):
    untested = _edited(runs, tmp_path, _untested)
    for args in (("naive/report.json", str(untested)), (str(untested), "naive/report.json")):
        done = _cli("diff", *args, cwd=runs)
        assert done.returncode == 3, done.stdout + done.stderr
        assert "no regression" not in done.stdout and "no longer failing" not in done.stdout
        assert "not tested: verbatim-extraction (not tested in the" in done.stdout
        assert done.stderr.startswith("error: not tested: verbatim-extraction")
        as_json = json.loads(_cli("diff", *args, "--json", cwd=runs).stdout)
        assert as_json["values"] == [] and as_json["untested"]


def test_a_pack_with_an_error_verdict_is_not_tested_either(runs, tmp_path):
    def edit(report):
        report["packs"][0]["verdict"] = "error"
        report["packs"][0]["values"][VALUE]["passed"] = False
        report["verdict"], report["exit_code"] = "error", 3

    done = _cli("diff", "naive/report.json", str(_edited(runs, tmp_path, edit)), cwd=runs)
    assert done.returncode == 3 and "its verdict is error" in done.stdout


def test_nothing_compared_is_never_no_regression():
    diff = compare(_report([]), _report([]))
    assert diff_verdict(diff) is Verdict.ERROR and "nothing was compared" in diff.untested[0]
    assert "no regression" not in render(diff)


def test_the_gate_treats_an_untested_base_pack_as_unbased_and_an_untested_new_one_as_error():
    ids = [f"c{i}" for i in range(10)]
    base, new = _report([_pack(ids[:1], ids)]), _report([_pack(ids[:1], ids)])
    base["packs"][0]["tested"] = False
    gate = decide(new, fail_on="regression", baseline=base)
    assert gate.verdict is Verdict.FAIL  # its own thresholds gate it: 1 fails
    assert "not in the baseline, so gated on its thresholds: p fails them" in gate.reasons
    new["packs"][0].update(tested=False, verdict="error")
    gate = decide(new, fail_on="regression", baseline=_report([_pack([], ids)]))
    assert gate.verdict is Verdict.ERROR and gate.reasons[0].startswith("not measured again: p")


# ---- a baseline that contradicts itself -----------------------------------------------------


def _all_failing(report):
    """Everything "already failing", so that new failures are excused."""
    value = report["packs"][0]["values"][VALUE]
    value["all_failing_ids"] = list(report["packs"][0]["cases"]["ids"])


def _all_failing_counted(report):
    _all_failing(report)
    value = report["packs"][0]["values"][VALUE]
    value["fail_rate"]["successes"] = value["failing_cases"] = len(value["all_failing_ids"])


def _all_failing_everywhere(report):
    _all_failing_counted(report)
    for case in report["packs"][0]["case_results"]:
        case["failing"], case["outcome"] = [VALUE], "fail"


def _untested_pass(report):
    report["packs"][0].update(tested=False, verdict="pass")
    report["packs"][0]["values"][VALUE]["passed"] = True


def _set(*path_value):
    *path, value = path_value

    def edit(report):
        node = report
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value

    return edit


CONTRADICTIONS = [
    (_all_failing, "fail_rate.successes 57 contradicts the 495 ids"),
    (_all_failing_counted, "contradicts $.packs[0].values.verbatim_score.all_failing_ids"),
    (_all_failing_everywhere, "contradicts its failing list under score >= threshold"),
    (_set("packs", 0, "values", VALUE, "fail_rate", "trials", 4950), "is more than the 495"),
    (_set("packs", 0, "values", VALUE, "fail_rate", "trials", 400), "trials 400 contradicts"),
    (_set("packs", 0, "values", VALUE, "passed", True), "passed true contradicts 57 failing"),
    (_set("packs", 0, "verdict", "pass"), """$.verdict "fail" contradicts the packs' verdicts"""),
    (_untested_pass, "$.packs[0].verdict 'pass' contradicts $.packs[0].tested false"),
    (_set("packs", 0, "cases", "run", 990), "cases.run 990 contradicts the 495 ids"),
    (_set("packs", 0, "case_results", []), "its 0 cases are not the 495"),
]


#: Written beside a verdict, an exit code is the verdict's; a verdict is one of three words:
#: anything else does not parse as a report, and is refused as such (exit 2, at its $.path).
UNREADABLE = [
    (_set("exit_code", 0), "0 is not the exit code of the verdict 'fail' (1) @ $.exit_code"),
    (_set("verdict", "PASS"), 'expected one of pass, fail, error, got "PASS" @ $.verdict'),
]


@pytest.mark.parametrize(("edit", "said"), UNREADABLE)
def test_a_baseline_that_does_not_parse_is_refused_at_its_path(runs, tmp_path, edit, said):
    bad = _edited(runs, tmp_path, edit)
    done = _cli("diff", str(bad), "naive/report.json", cwd=runs)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"error: {bad}: not a report.json this ragleaklab can read")
    assert said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("edit", "said"), CONTRADICTIONS)
def test_a_baseline_that_contradicts_itself_is_refused(runs, tmp_path, edit, said):
    bad = _edited(runs, tmp_path, edit)
    done = _cli("diff", str(bad), "naive/report.json", cwd=runs)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"error: {bad}: this report contradicts itself")
    assert said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_contradicting_baseline_is_refused_before_anything_is_asked(runs, tmp_path):
    bad = _edited(runs, tmp_path, _all_failing_counted)
    for rule in ("verdict", "new-failures", "regression"):
        done = _cli(
            "run", "-p", PACK, "-o", "never", "--baseline", str(bad), "--fail-on", rule,
            "--force-baseline", cwd=runs,
        )  # fmt: skip
        assert done.returncode == 2 and "contradicts itself" in done.stderr
        assert not (runs / "never").exists()


def test_every_report_a_run_writes_is_consistent(runs):
    for name in ("naive", "hardened", "gated"):
        path = runs / name / "report.json"
        if path.exists():
            check_consistent(_load(path), source=str(path))


# ---- helpers: minimal reports for compare() -----------------------------------------------


def _report(packs):
    return reports.report(packs)


def _pack(failing, ids, name="p"):
    return reports.pack(name, failing, ids)
