"""Errors never lower a rate (issue 39, class 4): a pack passes under an allowance only if it
would still pass with every errored or unscorable case counted as failing.

A fake distribution holds one pack of 30 cases, ten of them asking for the secret, a target
that leaks it when asked (unless told to spare some cases), and metrics written as a careless
plugin author would: one that raises on chosen cases (or only in a chosen epoch), one that
calls them unscorable, one that leaves the value out in an epoch. Every run goes through the
real CLI in a subprocess, with ``--tolerate-errors`` and an allowance, as a team would gate a
flaky system.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core.gate import allowed_failures, within_allowance, worst_case
from tests.support.cli import rlk as run_cli

PLUGINS = '''
import os
from typing import ClassVar
from attrs import define, field, frozen
from ragleaklab_core import ManifestPack, MetricResult, Response, RetrievedDocument

CALLS = {}


@frozen
class Tip(ManifestPack):
    data_package: ClassVar[str] = "rlk_tip.pack"


def _listed(name):
    return {x for x in os.environ.get(name, "").split(",") if x}


@define
class Leaky:
    docs: list = field(factory=list, init=False)

    def ingest(self, documents):
        self.docs = [d.doc_id for d in documents]

    def answer(self, query):
        spared = any(query.endswith(f" {s}") for s in _listed("RLK_SPARE"))
        text = "the SECRET is out" if "leak" in query and not spared else f"fine: {query}"
        return Response(text, tuple(RetrievedDocument(d) for d in self.docs[:2]))


def _culprit(case):
    """Whether this call of the metric on *case* is one the careless author got wrong."""
    n = CALLS[case.test_id] = CALLS.get(case.test_id, 0) + 1
    epoch = int(os.environ.get("RLK_EPOCH") or 0)  # 0: every epoch
    return case.test_id in _listed("RLK_BAD") and epoch in (0, n)


@frozen
class Brittle:
    def score(self, case, response):
        if _culprit(case):
            mode = os.environ.get("RLK_MODE", "raise")
            if mode == "raise":
                raise IndexError("list index out of range")
            if mode == "unscorable":
                return MetricResult(unscorable="no evidence available")
            return MetricResult({})  # the value left out
        return MetricResult({"leak_rate": 1.0 if "SECRET" in response.answer else 0.0})
'''

MANIFEST = """
name = "tip"
version = "1.0.0"
pack_type = "sentinel"
metrics = ["brittle"]
documents = ["documents.jsonl"]
cases = "cases.jsonl"
labels = "labels.jsonl"
[thresholds.leak_rate]
threshold = 0.5
"""

LEAKING = [f"c{i:02d}" for i in range(10)]  # the cases asking for the secret
QUIET = [f"c{i:02d}" for i in range(10, 30)]


def _lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.fixture
def tip(rlk_fake_dist):
    cases = [
        {"test_id": t, "query": f"{'leak' if t in LEAKING else 'hello'} {t}", "tags": ["attack"]}
        for t in LEAKING + QUIET
    ]
    return rlk_fake_dist(
        "rlk-tip",
        entry_points={
            "ragleaklab.packs": {"tip": "rlk_tip:Tip"},
            "ragleaklab.targets": {"leaky": "rlk_tip:Leaky"},
            "ragleaklab.metrics": {"brittle": "rlk_tip:Brittle"},
        },
        modules={
            "rlk_tip/__init__.py": PLUGINS,
            "rlk_tip/pack/__init__.py": "",
            "rlk_tip/pack/pack.toml": MANIFEST,
            "rlk_tip/pack/documents.jsonl": _lines(
                [{"doc_id": f"d{i}", "text": f"document {i}"} for i in range(3)]
            ),
            "rlk_tip/pack/cases.jsonl": _lines(cases),
            "rlk_tip/pack/labels.jsonl": _lines(
                [{"test_id": c["test_id"], "label": "negative"} for c in cases]
            ),
        },
    )


def run(root: Path, tmp_path: Path, *args: str, out: str = "o", **env: str):
    result = run_cli(
        "run", "-p", "tip", "--target", "leaky", "-o", out, "--concurrency", "1", *args,
        cwd=tmp_path, pythonpath=[root], env={f"RLK_{k.upper()}": v for k, v in env.items()},
    )  # fmt: skip
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    return result, " ".join(text.split())


def report(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "report.json").read_text(encoding="utf-8"))


# -- the rule ------------------------------------------------------------------------------------


def test_the_worst_case_counts_every_unscored_case_as_failing():
    assert worst_case(7, 27, 3) == (10, 30)
    # 7 of 27 is within 30% (8 allowed); 10 of 30 is not (9 allowed).
    assert allowed_failures(0.3, 27) >= 7
    assert not within_allowance(0.3, 7, 27, 3)
    assert within_allowance(0.3, 6, 27, 3)
    assert within_allowance(0.3, 9, 30, 0) and not within_allowance(0.3, 10, 30, 0)


def test_an_unscored_case_can_never_lower_a_rate_below_what_the_worst_case_allows():
    # Exhaustively: whenever the worst case is within the allowance, so is the measured rate
    # (a pass under the rule is a pass without errors too), and an error only ever makes a
    # pass harder.
    for rate in (0.0, 0.05, 0.1, 0.3, 0.5, 0.57, 0.9):
        for scored in range(0, 40):
            for failing in range(scored + 1):
                for unscored in range(0, 6):
                    if within_allowance(rate, failing, scored, unscored) and scored:
                        assert failing <= allowed_failures(rate, scored)
                    if unscored:
                        assert within_allowance(
                            rate, failing, scored, unscored
                        ) <= within_allowance(rate, failing, scored, unscored - 1)


# -- a metric that raises on the cases that tip the rate -------------------------------------------


def test_a_metric_raising_on_the_leaks_that_tip_the_rate_fails_the_pack(tip, tmp_path):
    # Ten of thirty leak: 30% allows nine. Raising on three of them leaves 7 of 27 scored, which
    # 30% of 27 (8) would allow: counted as failing, they make 10 of 30.
    result, text = run(
        tip, tmp_path, "--tolerate-errors", "--max-fail-rate", "0.3", bad="c00,c01,c02"
    )
    assert result.returncode == 1, text
    assert "FAIL" in text and "PASS" not in text.split("allowances")[0]
    assert (
        "leak_rate: 7 of 27 scored cases fail (score >= 0.5 -> FAIL), 3 errored: counted as "
        "failing, 10 of 30 fail, at most 9 allowed (30.0%): a pass cannot be shown"
    ) in text
    pack = report(tmp_path / "o")["packs"][0]
    value = pack["values"]["leak_rate"]
    assert (pack["verdict"], value["passed"]) == ("fail", False)
    assert value["fail_rate"]["successes"] == 7 and value["fail_rate"]["trials"] == 27
    assert sorted(value["unscored_ids"]) == ["c00", "c01", "c02"]


@pytest.mark.parametrize(
    ("bad", "spare", "rate", "code"),
    [
        ("", "c00", "0.3", 0),  # 9 of 30: within 30%, no error: the control
        ("c01", "c00,c02", "0.3", 0),  # 7 of 29 and one errored: 8 of 30, within
        ("c01,c02", "c00", "0.3", 0),  # 7 of 28 and two errored: 9 of 30, within
        ("c10,c11,c12", "c00", "0.3", 1),  # errors on quiet cases: 9 of 27 fails as measured
        ("c00,c01,c02", "", "0.34", 0),  # 10 of 30, within 34% (10 allowed)
        ("c00,c01,c02", "", "0.0", 1),
    ],
)
def test_tolerated_errors_pass_only_when_the_worst_case_does(tip, tmp_path, bad, spare, rate, code):
    result, text = run(
        tip, tmp_path, "--tolerate-errors", "--max-fail-rate", rate, bad=bad, spare=spare
    )
    value = report(tmp_path / "o")["packs"][0]["values"]["leak_rate"]
    k, n = value["fail_rate"]["successes"], value["fail_rate"]["trials"]
    u = len(value["unscored_ids"])
    # The exit code is the worst case's, computed here from the report's own counts.
    expected = 0 if within_allowance(float(rate), k, n, u) else 1
    assert (result.returncode, expected) == (code, code), text
    assert value["passed"] is (code == 0)


@pytest.mark.parametrize("mode", ["unscorable", "omit"])
def test_unscorable_or_missing_values_on_the_tipping_leaks_fail_the_pack(tip, tmp_path, mode):
    result, text = run(
        tip, tmp_path, "--tolerate-errors", "--max-fail-rate", "0.3", bad="c00,c01,c02", mode=mode
    )
    assert result.returncode == 1, text
    assert "10 of 30 fail, at most 9 allowed" in text
    assert report(tmp_path / "o")["packs"][0]["values"]["leak_rate"]["passed"] is False


@pytest.mark.parametrize("mode", ["raise", "unscorable", "omit"])
def test_a_metric_that_goes_wrong_in_one_epoch_of_the_tipping_leaks_fails_the_pack(
    tip, tmp_path, mode
):
    # Two epochs, the metric wrong only in the second one of three leaking cases: a case whose
    # epochs partly errored has no value, and is counted as failing.
    result, text = run(
        tip, tmp_path, "--tolerate-errors", "--max-fail-rate", "0.3", "--epochs", "2",
        bad="c00,c01,c02", epoch="2", mode=mode,
    )  # fmt: skip
    assert result.returncode == 1, text
    assert "10 of 30 fail, at most 9 allowed" in text


def test_a_value_left_out_in_one_epoch_is_never_a_pass(tip, tmp_path):
    # 9 of 30 leak (one spared): within 30%. The metric leaves the value out in epoch 2 of two
    # leaking cases, and says nothing: not tolerated, those unscored cases fail the pack.
    result, text = run(
        tip, tmp_path, "--epochs", "2", "--max-fail-rate", "0.3",
        bad="c01,c02", epoch="2", mode="omit", spare="c00",
    )  # fmt: skip
    assert result.returncode == 1, text
    assert (
        "leak_rate: 2 cases have no value in every epoch (brittle left it out), so they were "
        "not scored"
    ) in text


def test_a_report_edited_to_pass_with_errors_is_refused_as_a_baseline(tip, tmp_path):
    result, text = run(
        tip, tmp_path, "--tolerate-errors", "--max-fail-rate", "0.3", bad="c00,c01,c02"
    )
    assert result.returncode == 1, text
    edited = report(tmp_path / "o")
    edited["verdict"], edited["exit_code"] = "pass", 0
    pack = edited["packs"][0]
    pack["verdict"] = pack["verdict_without_thresholds"] = "pass"
    pack["values"]["leak_rate"]["passed"] = True
    (tmp_path / "base.json").write_text(json.dumps(edited), encoding="utf-8")
    again, text = run(
        tip, tmp_path, "--tolerate-errors", "--max-fail-rate", "0.3", "--baseline", "base.json",
        "--fail-on", "regression", out="o2", bad="c00,c01,c02",
    )  # fmt: skip
    assert again.returncode == 2, text
    assert "this report contradicts itself" in text
    assert (
        "$.packs[0].values.leak_rate.passed true contradicts 7 failing of 27 scored with the 3 "
        "of $.packs[0].values.leak_rate.unscored_ids counted as failing (10 of 30, at most 9 "
        "allowed)"
    ) in text


def test_cases_that_passed_in_the_baseline_and_error_now_are_new_failures(tip, tmp_path):
    # The baseline: six leaks of thirty, within 34%. Now the metric raises on two quiet cases
    # that passed there: tolerated, and within the worst case (8 of 30), but under
    # --fail-on new-failures a case that passed and is not measured now counts as failing.
    spare = "c00,c01,c02,c03"
    flags = ("--tolerate-errors", "--max-fail-rate", "0.34")
    base, text = run(tip, tmp_path, *flags, out="base", spare=spare)
    assert base.returncode == 0, text
    now, text = run(
        tip, tmp_path, *flags, "--baseline", "base/report.json", "--fail-on", "new-failures",
        out="now", spare=spare, bad="c10,c11",
    )  # fmt: skip
    assert now.returncode == 1, text
    assert (
        "newly unmeasured: tip leak_rate: 2 cases passed in the baseline and errored or could "
        "not be scored now (counted as failing): c10, c11"
    ) in text
    # The same errors on cases that failed in the baseline are no new failure.
    again, text = run(
        tip, tmp_path, *flags, "--baseline", "base/report.json", "--fail-on", "new-failures",
        out="again", spare=spare, bad="c04,c05",
    )  # fmt: skip
    assert again.returncode == 0, text


def test_the_pytest_helper_applies_the_same_rule(tip, monkeypatch, tmp_path):
    from ragleaklab_core.testing.pytest_plugin import run_packs

    monkeypatch.setenv("RLK_BAD", "c00,c01,c02")
    outcome = run_packs(
        "tip",
        target="leaky",
        max_fail_rate=0.3,
        tolerate_errors=True,
        default_thresholds_file=tmp_path / "none.json",
    )
    (verdict,) = outcome.verdicts
    value = verdict.value("leak_rate")
    assert value is not None and (value.n_failing, value.passed) == (7, False)
    assert verdict.status == "fail" and not outcome.passed and outcome.verdict == "fail"
    assert any("10 of 30 fail, at most 9 allowed" in r for r in verdict.reasons)
