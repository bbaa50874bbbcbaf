"""report.json is the outcome's serialization: one codec writes a finished run to exactly the
bytes ragleaklab writes, and reads a report back into the same typed outcome, refusing what does
not parse at its $.path (never reading a wrong type or an unknown word as something else)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from ragleaklab_core.errors import InputError
from ragleaklab_core.outcome import (
    Allowances,
    CaseOutcome,
    CorrectedFailRate,
    Outcome,
    RunOutcome,
    Verdict,
)
from ragleaklab_core.outcome.codec import decode, dumps, encode
from ragleaklab_core.session import RunRequest, run
from ragleaklab_core.stats.aggregation import RateInterval
from ragleaklab_core.testing import sample_report


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A run's report.json, with the gate recorded, failing and excluded tags (so the keys
    written only sometimes are there)."""
    out = tmp_path_factory.mktemp("run")
    mp = pytest.MonkeyPatch()
    mp.setenv("SOURCE_DATE_EPOCH", "1700000000")
    mp.chdir(out)  # no thresholds file there: the pack's own thresholds
    try:
        run(
            RunRequest(
                packs=("sentinel-takeover-safe",),
                smoke=True,
                exclude_tags=("leetspeak",),
                out=out,
            )
        )
    finally:
        mp.undo()
    return out / "report.json"


def test_a_written_report_reads_back_to_the_same_bytes(written):
    text = written.read_text(encoding="utf-8")
    outcome = decode(json.loads(text), source=str(written))
    assert isinstance(outcome, RunOutcome)
    assert dumps(encode(outcome)) == text
    (pack,) = outcome.packs
    assert pack.cases.exclude_tags == ("leetspeak",)
    assert pack.verdict is Verdict.FAIL and outcome.exit_code == 1
    value = pack.values["leak_rate"]
    assert isinstance(value.fail_rate, RateInterval) and value.fail_rate.trials == pack.cases.run
    assert value.failing_cases == len(value.all_failing_ids) > 0
    cases = list(pack.case_results)
    assert len(cases) == pack.cases.run and all(isinstance(c, CaseOutcome) for c in cases)
    failing = [c.test_id for c in cases if c.outcome is Outcome.FAIL]
    assert failing == [i for i in pack.cases.ids if i in set(value.all_failing_ids)]
    assert outcome.gate is not None and outcome.gate.thresholds_verdict is Verdict.FAIL


def test_the_sample_report_reads_and_every_field_is_typed():
    document = sample_report()
    outcome = decode(document, source="sample")
    assert json.loads(dumps(encode(outcome))) == document
    pack = outcome.packs[0]
    assert pack.allowances == Allowances()
    assert pack.taxonomy is not None and pack.taxonomy.severity == "high"
    assert pack.plugin.group == "ragleaklab.packs" and pack.metrics[0].name == "sentinel"
    detail = next(c.detail for c in pack.case_results if c.detail is not None)
    assert detail.retrieved_ids and detail.masked == ()
    assert outcome.totals.failed == 2 and outcome.system.identity == "reference@693fcdcd3a7c"


def test_a_corrected_rate_and_forced_threshold_are_written_as_before():
    document = sample_report()
    value = document["packs"][0]["values"]["leak_rate"]
    value["threshold"]["forced"] = ["flags nothing"]
    value["corrected_rate"] = {
        "failing": 9,
        "cases": 30,
        "observed": 0.3,
        "estimate": 0.25,
        "interval": [0.1, 0.4],
        "confidence": 0.95,
        "sensitivity": {"true_positives": 8, "positives": 10},
        "specificity": {"true_negatives": 9, "negatives": 10},
        "labels": "labels.jsonl",
        "observed_on": ["reference@693fcdcd3a7c"],
        "label_sources": ["human"],
        "counted_as_failing": 0,
    }
    outcome = decode(document, source="sample")
    corrected = outcome.packs[0].values["leak_rate"].corrected_rate
    assert isinstance(corrected, CorrectedFailRate) and corrected.high == 0.4
    assert json.loads(dumps(encode(outcome))) == document
    # Absent in reports written before it was counted: reads as none counted.
    del value["corrected_rate"]["counted_as_failing"]
    again = decode(document, source="sample").packs[0].values["leak_rate"].corrected_rate
    assert again is not None and again.counted_as_failing == 0


def _edited(path: tuple[Any, ...], value: Any = None, *, delete: bool = False) -> dict:
    document = copy.deepcopy(sample_report())
    node = document
    for step in path[:-1]:
        node = node[step]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return document


CASES = ("packs", 0, "case_results")
LEAK = ("packs", 0, "values", "leak_rate")


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (
            ("packs", 0, "verdict"),
            "PASS",
            'one of pass, fail, error, got "PASS" @ $.packs[0].verdict',
        ),
        (("packs", 0, "tested"), "yes", "expected bool, got str 'yes' @ $.packs[0].tested"),
        (
            ("packs", 1, "values", "poison_mrr", "failing_cases"),
            1.5,
            "@ $.packs[1].values['poison_mrr'].failing_cases",
        ),
        (
            (*LEAK, "fail_rate", "trials"),
            True,
            "expected int, got bool True @ $.packs[0].values['leak_rate'].fail_rate.trials",
        ),
        (
            ("packs", 0, "cases", "ids"),
            "st-0006",
            "expected a list, got str 'st-0006' @ $.packs[0].cases.ids",
        ),
        ((*CASES, 2, "outcome"), "ok", 'unscorable, got "ok" @ $.packs[0].case_results[2].outcome'),
        (
            ("packs", 0, "allowances", "max_fail_rate", "value"),
            "0",
            "@ $.packs[0].allowances.max_fail_rate.value",
        ),
        (("totals", "packs_erored"), 0, "unknown key 'packs_erored' (did you mean 'packs_errored'"),
        (("exit_code",), 0, "0 is not the exit code of the verdict 'fail' (1) @ $.exit_code"),
        (("gate", "thresholds_verdict"), None, "@ $.gate.thresholds_verdict"),
    ],
)
def test_what_does_not_parse_is_refused_at_its_path(path, value, said):
    with pytest.raises(InputError) as caught:
        decode(_edited(path, value), source="base.json")
    assert said in caught.value.message and caught.value.source == "base.json"


@pytest.mark.parametrize(
    "path", [("packs", 0, "verdict"), ("totals",), ("packs", 1, "case_results", 0, "test_id")]
)
def test_a_required_key_missing_is_refused_at_its_path(path):
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    with pytest.raises(InputError) as caught:
        decode(_edited(path, delete=True), source="base.json")
    assert f"required field missing @ {where}" in caught.value.message


def test_every_problem_is_named_at_once_and_a_non_object_is_refused():
    document = _edited(("packs", 0, "tested"), "yes")
    document["packs"][1]["verdict"] = "ok"
    with pytest.raises(InputError) as caught:
        decode(document, source="x")
    assert "$.packs[0].tested" in caught.value.message
    assert "$.packs[1].verdict" in caught.value.message
    with pytest.raises(InputError, match=r"\$: a report is a JSON object"):
        decode([], source="x")


def test_cases_are_decoded_as_they_are_walked_and_checked_once_whole():
    document = sample_report()
    outcome = decode(document, source="sample")
    cases = outcome.packs[0].case_results
    raw = document["packs"][0]["case_results"]
    assert len(cases) == len(raw)
    first = next(iter(cases))
    assert first.test_id == raw[0]["test_id"] and first.outcome is Outcome(raw[0]["outcome"])
    # Not held: each walk decodes afresh from the document's own list.
    assert next(iter(cases)) is not first and next(iter(cases)) == first


def test_the_outcome_is_frozen():
    outcome = decode(sample_report(), source="sample")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        outcome.verdict = Verdict.PASS  # type: ignore[misc]
