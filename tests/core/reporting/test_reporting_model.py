"""The typed report a reporter receives (RunReport), and how a run's renderings reach the
installed reporters: read from report.json, verdicts as the gate's type, every rendering made
before any file is written, a reporter's failure named."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragleaklab_core import REPORTERS, PackReport, RunReport, Verdict
from ragleaklab_core.errors import InputError, PluginError, PluginRuntimeError
from ragleaklab_core.reporting import outputs
from tests.support.completed_reports import completed

PACK = {
    "name": "p",
    "version": "2.0",
    "verdict": "fail",
    "tested": True,
    "not_tested_reason": None,
    "reasons": ["v: 1 of 2 cases fail"],
    "warnings": [],
    "values": {"v": {"threshold": {"value": 0.5}}},
    "case_results": [{"test_id": "c1", "outcome": "fail"}, {"test_id": "c2", "outcome": "pass"}],
    "primary_metric": "v",
}
REPORT = {"verdict": "fail", "exit_code": 1, "totals": {"packs": 1}, "packs": [PACK]}


def test_a_report_is_read_into_typed_fields_and_keeps_its_document():
    run = RunReport.from_document(REPORT)
    assert run.verdict is Verdict.FAIL and run.exit_code == 1
    assert run.totals == {"packs": 1} and run.gate == {} and run.settings == {}
    (pack,) = run.packs
    assert isinstance(pack, PackReport)
    assert (pack.name, pack.version, pack.verdict) == ("p", "2.0", Verdict.FAIL)
    assert pack.reasons == ("v: 1 of 2 cases fail",) and pack.warnings == ()
    assert pack.case_results is PACK["case_results"]  # not copied: a run's may be a spool
    assert pack.document["primary_metric"] == "v" and run.document is REPORT


def test_a_verdict_that_is_no_verdict_word_reads_as_error_never_as_pass():
    run = RunReport.from_document({"verdict": "PASS", "packs": [{"verdict": "ok"}]})
    assert run.verdict is Verdict.ERROR and run.packs[0].verdict is Verdict.ERROR
    assert run.exit_code == Verdict.ERROR.exit_code  # none written: as its verdict exits
    assert run.packs[0].case_results == () and run.packs[0].tested


def test_the_model_is_frozen():
    run = RunReport.from_document(REPORT)
    with pytest.raises(AttributeError):
        run.verdict = Verdict.PASS  # type: ignore[misc]


_MODULE = """
from attrs import frozen

@frozen
class Upper:
    def render(self, report, /, **options):
        return "|".join(f"{p.name}={p.verdict.word}" for p in report.packs) + "\\n"

@frozen
class Broken:
    def render(self, report, /, **options):
        raise ZeroDivisionError("boom")

@frozen
class NotText:
    def render(self, report, /, **options):
        return b"bytes"
"""


@pytest.fixture
def fake_reporters(rlk_fake_dist):
    rlk_fake_dist(
        "rlk-fake-reporters",
        entry_points={
            REPORTERS: {
                "fake-upper": "rlk_fake_reporters:Upper",
                "fake-broken": "rlk_fake_reporters:Broken",
                "fake-bytes": "rlk_fake_reporters:NotText",
            }
        },
        modules={"rlk_fake_reporters.py": _MODULE},
    )


def test_an_installed_reporter_renders_the_typed_report(fake_reporters):
    assert {"fake-upper", "fake-broken"} <= set(outputs.reporter_names())
    assert outputs.render("fake-upper", REPORT) == "p=FAIL\n"
    # The same from a RunReport: what a run renders in memory is what report renders from file.
    assert outputs.render("fake-upper", RunReport.from_document(REPORT)) == "p=FAIL\n"


def test_a_failing_reporter_is_named_and_leaves_no_rendering_written(fake_reporters, tmp_path):
    written: list[Path] = []

    def write(path: Path, text: str) -> None:
        written.append(path)

    requested = {"fake-upper": tmp_path / "a.txt", "fake-broken": tmp_path / "b.txt"}
    with pytest.raises(PluginRuntimeError, match=r"ragleaklab\.reporters:fake-broken failed"):
        outputs.write_renderings(REPORT, requested, write)
    assert written == []  # fake-upper was rendered first, and still not written
    with pytest.raises(PluginRuntimeError, match="render returned bytes, expected str"):
        outputs.render("fake-bytes", REPORT)


def test_an_option_a_reporter_does_not_accept_is_refused(fake_reporters):
    with pytest.raises(InputError, match="'fake-upper' does not accept calibration"):
        outputs.render("fake-upper", REPORT, calibration={})


def test_an_unknown_reporter_gets_a_suggestion_and_the_installed_list(fake_reporters):
    said = outputs.unknown_reporter("fake-uper")
    assert said is not None
    assert "(did you mean 'fake-upper', " in said  # the closest first
    assert said.endswith(", ".join(outputs.reporter_names()))
    assert outputs.unknown_reporter("fake-upper") is None
    with pytest.raises(PluginError):
        outputs.render("fake-uper", REPORT)


def test_the_step_summary_is_the_reporter_that_declares_it(fake_reporters, tmp_path, monkeypatch):
    # The built-in markdown reporter declares step_summary; the fakes do not, so they are not
    # appended, and a broken one that is never chosen does not stop the summary.
    target = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    # The markdown rendering reads the run through the outcome's codec: a whole report.
    report = completed({**REPORT, "packs": [{**PACK, "values": {}, "case_results": []}]})
    chosen = [name for name, _ in outputs._declaring("step_summary")]
    assert chosen == ["markdown"]
    target.write_text("earlier\n", encoding="utf-8")
    outputs.step_summary(report)
    once = target.read_text(encoding="utf-8")
    assert once == "earlier\n" + outputs.render("markdown", report)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    outputs.step_summary(report)  # outside GitHub Actions: nothing is appended
    assert target.read_text(encoding="utf-8") == once
