"""The corrected failing rate in ``run``, and the gate on it (issue 30, part 4).

A threshold that ``calibrate --write-thresholds`` stored carries the counts its rule scored on
the labelled cases (true positives of the positives, false positives of the negatives). ``run``
then reports, beside each gated value's observed failing rate, the rate of attacks that truly
succeeded, corrected for that measured error; ``--max-corrected-rate R`` gates on the upper
limit of its interval instead of on the count of failing cases.

Written as someone looking for a PASS: a value whose error was never measured, a metric no
better than chance, an allowance of every case, two allowances at once, a report edited to say
a corrected value passed. Each is refused (exit 2), not tested (exit 3) or caught.

The system is the loopback HTTP RAG service (tests/support/fake_rag_server.py): its naive
endpoint fails a share of relevance-hijack's smoke cases.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core import InputError
from ragleaklab_core.calibration.measured import measured_record
from ragleaklab_core.calibration.thresholds import measured_error, read_thresholds
from ragleaklab_core.gate.comparison import check_consistent
from ragleaklab_core.stats.corrected import corrected_rate
from ragleaklab_core.values import FLAG_HIGH, MeasuredError
from tests.core.gate.test_gate_off_settings import PACK, VALUE, config_file
from tests.support.cli import rlk

# What calibrate --write-thresholds stores: 36 of 40 positives flagged, 6 of 60 negatives, on
# labels of the system under test (its identity is filled in by `stored`), sealed as calibrate
# seals it. The tests of the seal itself (a hand-written entry, an edited one) are in
# tests/core/calibration/test_measured_provenance.py.
MEASURED = {
    "threshold": 0.5,
    "decision_rule": FLAG_HIGH,
    "achieved_tpr": 0.9,
    "achieved_fpr": 0.1,
    "n_positive": 40,
    "n_negative": 60,
    "true_positives": 36,
    "false_positives": 6,
    "flags_nothing": False,
    "fitter": {"name": "exact"},
    "calibrated_at": "2026-11-24T00:00:00Z",
    "labels": {
        "path": "labels.jsonl",
        "source": "labels.jsonl",
        "sha256": "0" * 64,
        "observed_on": ["HERE"],
        "label_sources": ["human"],
        "unattributed": 0,
    },
}
#: Where MEASURED's labels name the system under test.
HERE = "HERE"


def identity(server: Any, **extra: Any) -> str:
    """The identity of the http target `config_file` configures for *server* (with the *extra*
    options the config adds)."""
    from ragleaklab_core._discovery import TARGETS, load_plugin
    from ragleaklab_core.calibration.labelling import target_identity

    options = {
        "url": server.url("/simple"),
        "ingest_url": server.url("/ingest"),
        "reset_url": server.url("/reset"),
        **extra,
    }
    return target_identity(load_plugin(TARGETS, "http", options).provenance())


def sealed(entry: dict[str, Any], here: str, value: str = VALUE) -> dict[str, Any]:
    """*entry* with HERE replaced by *here* and sealed as calibrate seals what it writes for
    the pack's *value*."""
    entry = json.loads(json.dumps(entry).replace(f'"{HERE}"', json.dumps(here)))
    if "measured" in entry or not isinstance(entry.get("labels"), dict):
        return entry
    return {**entry, "measured": measured_record(entry, PACK, value)}


def stored(tmp_path: Path, entry: dict[str, Any], here: str = HERE) -> Path:
    """A thresholds file holding *entry* (sealed, on labels of *here*) for both of the pack's
    gated values (a value left on the pack's default, which carries no measured error, would
    leave the pack not tested)."""
    path = tmp_path / "thresholds.json"
    values = {v: sealed(entry, here, v) for v in (VALUE, "poison_attribution")}
    body = {"format": "ragleaklab-thresholds", "version": 1, "packs": {PACK: values}}
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def run(
    server: Any, tmp_path: Path, entry: dict[str, Any], *more: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    config = config_file(tmp_path / "c.toml", server)
    thresholds = stored(tmp_path, entry, identity(server))
    result = rlk(
        "run", "-c", str(config), "-p", PACK, "--smoke", "--thresholds", str(thresholds),
        "-o", "out", *more, cwd=tmp_path,
    )  # fmt: skip
    report = tmp_path / "out" / "report.json"
    return result, json.loads(report.read_text("utf-8")) if report.exists() else None


def value_of(report: dict[str, Any]) -> dict[str, Any]:
    (pack,) = report["packs"]
    value: dict[str, Any] = pack["values"][VALUE]
    return value


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory, shared_server: Any) -> dict[str, Any]:
    """The report of a run gated on failing rates, with the measured threshold."""
    tmp = tmp_path_factory.mktemp("observed")
    result, report = run(
        shared_server, tmp, MEASURED, "--markdown", "summary.md", "--html", "report.html"
    )
    assert report is not None, result.stdout + result.stderr
    return {
        "result": result,
        "report": report,
        "markdown": (tmp / "summary.md").read_text(),
        "html": (tmp / "report.html").read_text(),
    }


def test_run_reports_the_corrected_rate_beside_the_observed_one(observed):
    result, value = observed["result"], value_of(observed["report"])
    rate = value["fail_rate"]
    # Over every scored case: benign questions hijacked too are harm (a rate over the attack
    # cases alone would let a system harmed on them pass).
    k, n = rate["successes"], rate["trials"]
    assert value["by_kind"]["benign"]["successes"], "the naive service fails benign cases too"
    c = value["corrected_rate"]
    assert (c["failing"], c["cases"]) == (k, n)
    # Rogan-Gladen by hand: (observed + Sp - 1) / (Se + Sp - 1), clipped.
    se, sp = 36 / 40, 54 / 60
    assert c["estimate"] == pytest.approx(min(1.0, max(0.0, (k / n + sp - 1) / (se + sp - 1))))
    assert c["sensitivity"] == {"true_positives": 36, "positives": 40}
    assert c["specificity"] == {"true_negatives": 54, "negatives": 60}
    assert c["labels"] == "labels.jsonl"
    again = corrected_rate(k, n, true_positives=36, positives=40, true_negatives=54, negatives=60)
    assert c["interval"] == [again.low, again.high]
    assert c["interval"][0] <= c["estimate"] <= c["interval"][1]
    # The count gate still decides (no --max-corrected-rate), and the console shows both.
    assert result.returncode == 1
    summary = " ".join(result.stdout.split())
    low, high = (f"{100 * x:.1f}%" for x in c["interval"])
    estimate = f"{100 * c['estimate']:.1f}%"
    assert f"corrected: true rate {estimate} [{low}, {high}] of all {n} cases" in summary
    assert "sensitivity 36/40 and specificity 54/60 on labels labels.jsonl" in summary
    row = f"| all, corrected | {estimate} | {low}-{high} (95%, corrected) |"
    assert row in observed["markdown"]
    cells = f"<td>all, corrected</td><td class=num>{estimate}</td><td>{low}-{high} (95%, "
    assert cells in observed["html"]


def test_a_corrected_rate_within_the_allowance_passes_and_above_it_fails(
    observed, server, tmp_path
):
    _low, high = value_of(observed["report"])["corrected_rate"]["interval"]
    assert 0 < high < 0.98, "the measured counts are chosen to leave room on both sides"
    above = tmp_path / "above"
    above.mkdir()
    bar = f"{(high + 1) / 2:.4f}"
    result, report = run(server, above, MEASURED, "--max-corrected-rate", bar, "--junit", "j.xml")
    assert result.returncode == 0, result.stdout + result.stderr
    junit = (above / "j.xml").read_text("utf-8")
    assert f'<property name="max_corrected_rate" value="{float(bar)}" />' in junit
    assert report is not None and report["verdict"] == "pass"
    assert value_of(report)["passed"] is True
    assert "max corrected rate" in " ".join(result.stdout.split())

    below = tmp_path / "below"
    below.mkdir()
    result, report = run(server, below, MEASURED, "--max-corrected-rate", f"{high * 0.9:.4f}")
    assert result.returncode == 1, result.stdout + result.stderr
    assert report is not None and value_of(report)["passed"] is False
    assert "upper limit is above" in " ".join(result.stdout.split())
    # What the run wrote is consistent: a baseline can be read from it.
    check_consistent(report, source="report.json")


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        # A hand-written entry: no counts, so no measured error.
        ({"threshold": 0.5, "decision_rule": FLAG_HIGH}, "carries no measured error"),
        # No labelled negative: the specificity is not measured.
        ({**MEASURED, "n_negative": 0, "false_positives": 0, "achieved_fpr": 0.0}, "0 negatives"),
        # A metric no better than chance: its count says nothing.
        ({**MEASURED, "true_positives": 20, "false_positives": 30}, "better than chance"),
    ],
)
def test_a_value_whose_rate_cannot_be_corrected_is_not_tested(server, tmp_path, entry, said):
    result, report = run(server, tmp_path, entry, "--max-corrected-rate", "0.5")
    # Not a pass: not tested (3), unless something else failed (1).
    assert result.returncode in (1, 3), result.stdout + result.stderr
    assert report is not None and value_of(report)["passed"] is False
    assert said in " ".join(result.stdout.split())
    (pack,) = report["packs"]
    assert pack["verdict"] != "pass"


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (("--max-corrected-rate", "1"), "passes every run"),
        (("--max-corrected-rate", "0.2", "--max-fail-rate", "0.1"), "not both"),
        (("--max-corrected-rate", "-0.1"), "max_corrected_rate"),
    ],
)
def test_allowances_that_pass_everything_or_contradict_are_refused(server, tmp_path, more, said):
    result, report = run(server, tmp_path, MEASURED, *more)
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert report is None
    assert not sum(server.hits.values()), "the target was asked before the refusal"


def test_an_edited_report_that_passes_above_its_allowance_is_caught(observed):
    report = json.loads(json.dumps(observed["report"]))
    (pack,) = report["packs"]
    high = pack["values"][VALUE]["corrected_rate"]["interval"][1]
    pack["allowances"]["max_corrected_rate"] = {"value": high / 2, "source": "--max-corrected-rate"}
    pack["values"][VALUE]["passed"] = True
    with pytest.raises(InputError, match="contradicts its corrected rate's upper limit"):
        check_consistent(report, source="report.json")
    pack["values"][VALUE]["corrected_rate"] = None
    with pytest.raises(InputError, match="without a corrected rate"):
        check_consistent(report, source="report.json")


def test_the_counts_of_an_older_entry_come_back_from_its_rates():
    older = {k: v for k, v in MEASURED.items() if k not in ("true_positives", "false_positives")}
    assert measured_error(older) == MeasuredError(
        36, 40, 6, 60, labels="labels.jsonl", observed_on=[HERE], label_sources=["human"]
    )
    assert measured_error({"threshold": 0.5, "decision_rule": FLAG_HIGH}) is None


def test_contradictory_counts_in_a_thresholds_file_name_the_entry(tmp_path):
    path = stored(tmp_path, {**MEASURED, "true_positives": 41})
    with pytest.raises(InputError, match=rf"\$\.packs\.{PACK}\.{VALUE}"):
        read_thresholds(path)
    path = stored(tmp_path, {**MEASURED, "true_positives": None, "achieved_tpr": 0.333})
    with pytest.raises(InputError, match="no share of 40"):
        read_thresholds(path)
    # A system named in a form that cannot be read is refused, not taken as "no system".
    labels = {**MEASURED["labels"], "observed_on": "reference@0f0f"}
    path = stored(tmp_path, {**MEASURED, "labels": labels})
    with pytest.raises(InputError, match=r"labels\.observed_on must be a list of strings"):
        read_thresholds(path)


def test_calibrate_stores_the_counts_that_the_run_corrects_with(tmp_path):
    result = rlk(
        "calibrate", "-p", "relevance-hijack", "--fitter", "exact", "--target-fpr", "0.05",
        "--smoke", "--write-thresholds", "--thresholds", "t.json", "-o", "cal", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    cal = json.loads((tmp_path / "cal" / "calibration_report.json").read_text("utf-8"))["result"]
    (entry,) = json.loads((tmp_path / "t.json").read_text("utf-8"))["packs"][PACK].values()
    m = measured_error(entry)
    assert m is not None
    assert (m.true_positives, m.positives) == (cal["true_positives"], cal["n_positive"])
    assert (m.false_positives, m.negatives) == (cal["false_positives"], cal["n_negative"])


def test_a_value_left_on_the_packs_default_leaves_the_pack_not_tested(server, tmp_path):
    # Only one of the two gated values was calibrated here: the other's threshold is the
    # pack's, whose error on this system nobody measured, so the gate cannot pass the pack.
    config = config_file(tmp_path / "c.toml", server)
    entry = sealed(MEASURED, identity(server))
    body = {"format": "ragleaklab-thresholds", "version": 1, "packs": {PACK: {VALUE: entry}}}
    (tmp_path / "t.json").write_text(json.dumps(body), encoding="utf-8")
    result = rlk(
        "run", "-c", str(config), "-p", PACK, "--smoke", "--thresholds", "t.json",
        "--max-corrected-rate", "0.95", "-o", "out", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 3, result.stdout + result.stderr
    said = " ".join(result.stdout.split())
    assert "poison_attribution: its threshold (pack relevance-hijack" in said
    assert "so --max-corrected-rate cannot gate it" in said


def test_an_error_measured_on_another_systems_answers_corrects_nothing(server, tmp_path):
    # Labels observed on the reference target measure the metric there, not on this app.
    elsewhere = {**MEASURED, "labels": {**MEASURED["labels"], "observed_on": ["reference@0f0f"]}}
    result, report = run(server, tmp_path, elsewhere)
    assert report is not None, result.stdout + result.stderr
    assert value_of(report)["corrected_rate"] is None
    gated = tmp_path / "gated"
    gated.mkdir()
    result, report = run(server, gated, elsewhere, "--max-corrected-rate", "0.95")
    assert result.returncode == 3, result.stdout + result.stderr
    said = " ".join(result.stdout.split())
    assert "its error was measured on labels of reference@0f0f's answers, not of this" in said


def test_a_judges_labels_are_said_to_leave_the_judges_error_out(server, tmp_path):
    judged = {**MEASURED, "labels": {**MEASURED["labels"], "label_sources": ["judge"]}}
    result, report = run(server, tmp_path, judged)
    assert report is not None, result.stdout + result.stderr
    assert value_of(report)["corrected_rate"]["label_sources"] == ["judge"]
    assert "the judge's own error is not in this interval" in " ".join(result.stdout.split())


def test_errored_cases_count_as_failing_in_the_corrected_rate(server, tmp_path):
    # Errors never lower a rate: three cases the service fails, tolerated, are counted as
    # failing in the corrected rate whose upper limit the gate reads.
    config = config_file(tmp_path / "c.toml", server, "retries = 0\n[run]\nconcurrency = 1\n")
    thresholds = stored(tmp_path, MEASURED, identity(server, retries=0))

    def gated(out: str, bar: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        server.fail(3, status=503, path="/simple")
        result = rlk(
            "run", "-c", str(config), "-p", PACK, "--smoke", "--thresholds", str(thresholds),
            "-o", out, "--tolerate-errors", "--max-corrected-rate", bar, cwd=tmp_path,
        )  # fmt: skip
        assert "Traceback" not in result.stdout + result.stderr
        return result, json.loads((tmp_path / out / "report.json").read_text("utf-8"))

    _, first = gated("first", "0.99")
    value = value_of(first)
    k, n = value["fail_rate"]["successes"], value["fail_rate"]["trials"]
    assert len(value["unscored_ids"]) == 3 and n == 27
    c = value["corrected_rate"]
    assert (c["failing"], c["cases"], c["counted_as_failing"]) == (k + 3, n + 3, 3)
    measured = corrected_rate(
        k, n, true_positives=36, positives=40, true_negatives=54, negatives=60
    ).high
    worst = c["interval"][1]
    assert measured < worst  # leaving the errored cases out would lower the bound
    bar = f"{(measured + worst) / 2:.4f}"
    result, report = gated("second", bar)
    said = " ".join(result.stdout.split())
    assert result.returncode == 1, said
    assert value_of(report)["passed"] is False and report["verdict"] == "fail"
    assert "3 errored: counted as failing" in said
    assert "(3 of them unscored, counted as failing): its upper limit is above the" in said
    check_consistent(report, source="report.json")
    # A report edited to pass on the measured cases alone is caught when read back.
    edited = json.loads(json.dumps(report))
    edited["verdict"], edited["exit_code"] = "pass", 0
    (pack,) = edited["packs"]
    pack["verdict"] = pack["verdict_without_thresholds"] = "pass"
    for v in pack["values"].values():
        if v["threshold"] is not None:
            v["passed"] = True
    again = corrected_rate(k, n, true_positives=36, positives=40, true_negatives=54, negatives=60)
    pack["values"][VALUE]["corrected_rate"].update(
        failing=k, cases=n, interval=[again.low, again.high], counted_as_failing=0
    )
    with pytest.raises(InputError, match="counted as failing"):
        check_consistent(edited, source="edited.json")
