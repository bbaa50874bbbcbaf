"""The run's verdict is decided once, by the gate's run_verdict: a baseline rule adds what the
comparison found (worse, not measured again) as facts, and a report read back is decoded,
decided again with the gate's own functions and compared with what it says."""

from __future__ import annotations

import pytest

from ragleaklab_core.errors import InputError
from ragleaklab_core.gate import decide, run_verdict, value_passes
from ragleaklab_core.gate.comparison import check_consistent
from ragleaklab_core.outcome import Allowances, Verdict
from ragleaklab_core.outcome.codec import decode
from tests.support import reports

IDS = [f"c{i}" for i in range(10)]


@pytest.mark.parametrize(
    ("packs", "worse", "unmeasured", "expected"),
    [
        ([Verdict.PASS], False, False, Verdict.PASS),
        ([], False, False, Verdict.ERROR),  # no pack is no pass
        ([Verdict.PASS, Verdict.ERROR], False, False, Verdict.ERROR),
        ([Verdict.ERROR, Verdict.FAIL], False, False, Verdict.FAIL),  # a finding outranks
        ([Verdict.PASS], True, False, Verdict.FAIL),
        ([Verdict.PASS], False, True, Verdict.ERROR),
        ([Verdict.ERROR], True, True, Verdict.FAIL),
    ],
)
def test_the_run_verdict_ranks_findings_over_untested_over_pass(packs, worse, unmeasured, expected):
    assert run_verdict(packs, worse=worse, unmeasured=unmeasured) is expected


def test_a_value_passes_by_one_rule_whatever_decides_it():
    rate = Allowances(max_fail_rate=0.2)
    assert value_passes(rate, failing=2, scored=10, unscored=0, corrected_high=None)
    # Errors never lower a rate: 2 failing and 1 unscored of 11 is 3 of 11, more than 2 allowed.
    assert not value_passes(rate, failing=2, scored=10, unscored=1, corrected_high=None)
    assert not value_passes(rate, failing=0, scored=0, unscored=0, corrected_high=None)
    corrected = Allowances(max_corrected_rate=0.1)
    assert value_passes(corrected, failing=9, scored=10, unscored=0, corrected_high=0.1)
    assert not value_passes(corrected, failing=0, scored=10, unscored=0, corrected_high=0.11)
    assert not value_passes(corrected, failing=0, scored=10, unscored=0, corrected_high=None)


def test_the_gate_decides_from_the_typed_outcome_and_records_itself():
    report = decode(reports.report([reports.pack("p", IDS[:2], IDS)]), source="r")
    gate = decide(report)
    assert (gate.verdict, gate.exit_code, gate.thresholds_verdict) == (Verdict.FAIL, 1, "fail")
    record = gate.record()
    assert record.fail_on == "verdict" and record.baseline is None and record.reasons == ()


def test_a_baseline_rule_passes_a_known_failure_and_fails_what_is_worse():
    base = reports.report([reports.pack("p", IDS[:2], IDS)])
    same = reports.report([reports.pack("p", IDS[:2], IDS)])
    gate = decide(same, fail_on="new-failures", baseline=base)
    assert gate.verdict is Verdict.PASS and gate.thresholds_verdict is Verdict.FAIL
    worse = reports.report([reports.pack("p", IDS[:3], IDS)])
    gate = decide(worse, fail_on="new-failures", baseline=base)
    assert gate.verdict is Verdict.FAIL and gate.reasons[0].startswith("newly failing: p v: 1")
    # A pack the baseline measured and this run lacks: not measured again, never a pass.
    fewer = reports.report([])
    gate = decide(fewer, fail_on="new-failures", baseline=base, force=True)
    assert gate.verdict is Verdict.ERROR and gate.reasons == ("not measured again: p",)


def test_a_consistent_report_reads_back_and_an_edited_one_is_decided_again_and_refused():
    document = reports.report([reports.pack("p", IDS[:2], IDS)])
    check_consistent(document, source="base.json")
    passed = reports.report([reports.pack("p", IDS[:2], IDS)])
    passed["packs"][0]["values"]["v"]["passed"] = True
    with pytest.raises(InputError, match=r"passed true contradicts 2 failing of 10 \(at most 0"):
        check_consistent(passed, source="base.json")
    said_pass = reports.report([reports.pack("p", IDS[:2], IDS)], verdict="pass")
    with pytest.raises(InputError, match=r"\$\.verdict \"pass\" contradicts the packs' verdicts"):
        check_consistent(said_pass, source="base.json")
    inflated = reports.report([reports.pack("p", IDS[:2], IDS)])
    inflated["packs"][0]["values"]["v"]["fail_rate"]["successes"] = 11
    with pytest.raises(InputError, match="fail_rate: not a failing count out of at least one"):
        check_consistent(inflated, source="base.json")
