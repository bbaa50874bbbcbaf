"""The calibration session: `ragleaklab calibrate` is a thin adapter over it, so the Python API
does everything the command does, with the same files byte for byte and the same exit code; and
the report, the plot and the thresholds file are written all or nothing."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import click
import pytest
from click.testing import CliRunner

from ragleaklab_core import (
    CalibrateRequest,
    CalibrationRefused,
    CalibrationResult,
    CalibrationSession,
    InputError,
    RagleaklabError,
    UsageError,
    Verdict,
)
from ragleaklab_core.calibration_session import REPORT
from ragleaklab_core.cli.commands import calibrate as calibrate_command
from ragleaklab_core.cli.commands import cli
from tests.support.cli import EPOCH, rlk

# The worked example of tests/core/cli/test_cli.py: --target-fpr 0.1 gives 0.66, 1/10, 3/5.
NEGATIVES = [0.05, 0.10, 0.12, 0.20, 0.31, 0.33, 0.40, 0.52, 0.61, 0.70]
POSITIVES = [0.35, 0.58, 0.66, 0.80, 0.93]
# Every positive at 1.0 and three negatives too: neyman-pearson's "> 1.0" flags no case.
FLAGS_NOTHING = ([0.0] * 331 + [1.0] * 3, [1.0] * 125)
SCORES = ("--scores", "scores.jsonl", "--labels", "labels.jsonl")


def scored(directory: Path, negatives: list[float], positives: list[float]) -> None:
    rows = [("n", v, "negative") for v in negatives] + [("p", v, "positive") for v in positives]
    counts: dict[str, int] = {}
    scores, labels = [], []
    for prefix, value, label in rows:
        counts[prefix] = counts.get(prefix, -1) + 1
        test_id = f"{prefix}{counts[prefix]:04d}"
        scores.append(json.dumps({"test_id": test_id, "score": value}) + "\n")
        labels.append(json.dumps({"test_id": test_id, "label": label}) + "\n")
    (directory / "scores.jsonl").write_text("".join(scores), encoding="utf-8")
    (directory / "labels.jsonl").write_text("".join(labels), encoding="utf-8")


def worked(directory: Path) -> None:
    scored(directory, NEGATIVES, POSITIVES)


def flags_nothing(directory: Path) -> None:
    scored(directory, *FLAGS_NOTHING)


def with_config(directory: Path) -> None:
    worked(directory)
    (directory / "rl.toml").write_text(
        '[calibrate]\ntarget_fpr = 0.2\nmetric = "poison_rate_at_k"\n', encoding="utf-8"
    )


def nothing(directory: Path) -> None:
    """A pack's own labels and a run of the pack: no input file."""


@attrs.frozen
class Case:
    """One calibration given as flags and as a request, the exit code both end with; *setup*
    writes its inputs."""

    id: str
    exit: int
    args: tuple[str, ...]
    request: dict[str, Any]
    setup: Callable[[Path], None] = worked


P = Path
CASES = [
    Case(
        "scores-fitter-options",
        0,
        (*SCORES, "-o", "out", "--target-fpr", "0.1", "--fitter", "bootstrap-ci",
         "--fitter-option", "resamples=200", "--fitter-option", "seed=7",
         "--metric", "poison_rate_at_k", "--roc-max-rows", "5"),
        dict(scores=P("scores.jsonl"), labels=P("labels.jsonl"), out=P("out"), target_fpr=0.1,
             fitter="bootstrap-ci", fitter_options={"resamples": 200, "seed": 7},
             metric="poison_rate_at_k", roc_max_rows=5),
    ),
    Case(
        "lower-is-worse-plot",
        1,
        ("-l", "labels.jsonl", "--scores", "scores.jsonl", "--out", "o/deeper",
         "--lower-is-worse", "--target-fpr", "0.3", "--plot"),
        dict(scores=P("scores.jsonl"), labels=P("labels.jsonl"), out=P("o/deeper"),
             lower_is_worse=True, target_fpr=0.3, plot=True),
    ),
    Case(
        "config-file",
        0,
        (*SCORES, "-o", "out", "-c", "rl.toml"),
        dict(scores=P("scores.jsonl"), labels=P("labels.jsonl"), out=P("out"),
             config_path=P("rl.toml")),
        with_config,
    ),
    Case(
        "write-thresholds",
        0,
        (*SCORES, "-p", "relevance-hijack", "--metric", "poison_rate_at_k", "--target-fpr",
         "0.1", "--write-thresholds", "--thresholds", "t/gate.json", "-o", "out"),
        dict(scores=P("scores.jsonl"), labels=P("labels.jsonl"), pack="relevance-hijack",
             metric="poison_rate_at_k", target_fpr=0.1, write_thresholds=True,
             thresholds_path=P("t/gate.json"), out=P("out")),
    ),
    Case(
        "force-stores-a-threshold-that-flags-nothing",
        1,  # the threshold stored anyway, and still a failure
        (*SCORES, "--pack", "sentinel-takeover-safe", "--metric", "leak_rate", "--fitter",
         "neyman-pearson", "--write-thresholds", "--force", "-o", "out"),
        dict(scores=P("scores.jsonl"), labels=P("labels.jsonl"), pack="sentinel-takeover-safe",
             metric="leak_rate", fitter="neyman-pearson", write_thresholds=True, force=True,
             out=P("out")),
        flags_nothing,
    ),
    Case(
        "refused-write",
        2,  # nothing written, the warnings shown before the error
        (*SCORES, "--pack", "sentinel-takeover-safe", "--metric", "leak_rate", "--fitter",
         "neyman-pearson", "--write-thresholds", "-o", "out"),
        dict(scores=P("scores.jsonl"), labels=P("labels.jsonl"), pack="sentinel-takeover-safe",
             metric="leak_rate", fitter="neyman-pearson", write_thresholds=True, out=P("out")),
        flags_nothing,
    ),
    Case(
        "pack-run-on-a-target",
        0,
        ("--pack", "relevance-hijack", "--smoke", "--target", "reference", "--target-option",
         "filter_injections=true", "--target-fpr", "0.2", "--out", "out"),
        dict(pack="relevance-hijack", smoke=True, target="reference",
             target_options={"filter_injections": True}, target_fpr=0.2, out=P("out")),
        nothing,
    ),
    Case(
        "usage-error",
        2,  # before anything is read
        ("--scores", "scores.jsonl", "--target", "reference", "-o", "out", "-l", "labels.jsonl"),
        dict(scores=P("scores.jsonl"), target="reference", out=P("out"),
             labels=P("labels.jsonl")),
    ),
]  # fmt: skip


def tree(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _flags(command: click.Command) -> dict[str, tuple[str, ...]]:
    """Every flag of *command*, by its parameter name: the spellings a case may use."""
    return {p.name: tuple(p.opts) for p in command.params if isinstance(p, click.Option) and p.name}


def test_every_flag_of_calibrate_has_a_case_and_a_request_attribute():
    """A new flag without a case (or without an attribute of the request) fails here."""
    flags = _flags(calibrate_command)
    assert {"out", "pack", "scores", "write_thresholds", "plot"} <= set(flags)  # read right
    used = {arg for case in CASES for arg in case.args}
    missing = sorted(name for name, opts in flags.items() if not used & set(opts))
    assert missing == [], f"flags of `ragleaklab calibrate` no case drives: {missing}"
    # Each flag is an attribute of the request (--target is `target`, as in RunRequest).
    renamed = {"target_name": "target"}
    fields = set(attrs.fields_dict(CalibrateRequest))
    assert {renamed.get(name, name) for name in flags} == fields


def _cli(cwd: Path, args: tuple[str, ...], monkeypatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    done = CliRunner().invoke(cli, ["calibrate", *args], catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def _api(cwd: Path, request: dict[str, Any], monkeypatch) -> CalibrationResult | RagleaklabError:
    monkeypatch.chdir(cwd)
    try:
        return CalibrationSession(CalibrateRequest(**request)).run()
    except RagleaklabError as exc:
        return exc


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_command_and_the_api_write_the_same_files_and_exit_alike(case, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.setenv("RAGLEAKLAB_PROGRESS_INTERVAL", "0")
    cli_dir, api_dir = tmp_path / "cli", tmp_path / "api"
    for directory in (cli_dir, api_dir):
        directory.mkdir()
        case.setup(directory)
    before = tree(cli_dir)
    code, stdout, stderr = _cli(cli_dir, case.args, monkeypatch)
    outcome = _api(api_dir, case.request, monkeypatch)
    assert "Traceback" not in stderr
    assert tree(api_dir) == tree(cli_dir)  # every file, byte for byte, and no other
    assert code == case.exit, stderr
    if isinstance(outcome, RagleaklabError):
        assert code == outcome.exit_code == 2, stderr
        assert tree(cli_dir) == before  # a refusal writes nothing
        message = outcome.message if isinstance(outcome, UsageError) else str(outcome)
        assert message in stderr
        if isinstance(outcome, CalibrationRefused):
            assert outcome.warnings
            shown = "".join(f"warning: {w}\n" for w in outcome.warnings)
            assert stderr.startswith(shown), stderr
        return
    assert code == outcome.exit_code == outcome.verdict.exit_code
    assert outcome.verdict is (Verdict.PASS if outcome.failure is None else Verdict.FAIL)
    assert stdout == outcome.summary
    assert stderr == "".join(f"warning: {w}\n" for w in outcome.warnings) + (
        "" if outcome.failure is None else f"error: {outcome.failure}\n"
    )
    written = {p.as_posix() for p in outcome.written}
    assert written == set(tree(api_dir)) - set(before)
    assert outcome.report.to_json() == (api_dir / outcome.out / REPORT).read_text("utf-8")


def test_a_real_subprocess_writes_what_the_api_writes(tmp_path, monkeypatch):
    """The process boundary itself: python -m ragleaklab_core against the session."""
    case = next(c for c in CASES if c.id == "force-stores-a-threshold-that-flags-nothing")
    cli_dir, api_dir = tmp_path / "cli", tmp_path / "api"
    for directory in (cli_dir, api_dir):
        directory.mkdir()
        case.setup(directory)
    done = rlk("calibrate", *case.args, cwd=cli_dir)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    outcome = _api(api_dir, case.request, monkeypatch)
    assert isinstance(outcome, CalibrationResult)
    assert (done.returncode, outcome.exit_code, outcome.verdict) == (1, 1, Verdict.FAIL)
    assert tree(api_dir) == tree(cli_dir)
    assert {"out/calibration_report.json", "ragleaklab.thresholds.json"} <= set(tree(api_dir))
    assert done.stdout == outcome.summary
    assert f"error: {outcome.failure}\n" in done.stderr


# -- the result, typed -------------------------------------------------------------------------


def test_the_result_carries_the_verdict_the_report_and_what_was_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    worked(tmp_path)
    # Paths may be given as strings.
    request = CalibrateRequest(
        out="out", scores="scores.jsonl", labels="labels.jsonl", target_fpr=0.1
    )
    assert (request.out, request.scores) == (Path("out"), Path("scores.jsonl"))
    result = CalibrationSession(request).run()
    assert (result.verdict, result.exit_code, result.passed) == (Verdict.PASS, 0, True)
    assert result.failure is None and result.thresholds is None
    r = result.report.result
    assert (r.threshold, r.false_positives, r.true_positives) == (0.66, 1, 3)
    assert [p.as_posix() for p in result.written] == ["out/calibration_report.json"]
    assert result.summary.splitlines()[0].startswith("threshold 0.66  rule 'score >= threshold")
    assert result.summary.endswith("wrote out/calibration_report.json\n")
    assert result.warnings == result.report.warnings


def test_an_unusable_threshold_fails_with_its_reason_and_the_report_is_still_written(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    flags_nothing(tmp_path)
    request = CalibrateRequest(
        out=Path("out"),
        scores=Path("scores.jsonl"),
        labels=Path("labels.jsonl"),
        fitter="neyman-pearson",
    )
    result = CalibrationSession(request).run()
    assert (result.verdict, result.exit_code) == (Verdict.FAIL, 1)
    assert result.failure is not None and result.failure.startswith("no usable threshold")
    assert any(w.startswith("no usable threshold") for w in result.warnings)
    assert json.loads((tmp_path / "out" / REPORT).read_text())["result"]["flags_nothing"]


@pytest.mark.parametrize(
    ("request_kwargs", "said"),
    [
        ({"write_thresholds": True, "scores": Path("s.jsonl")}, "--write-thresholds needs --pack"),
        ({}, "give --scores FILE"),
        ({"scores": Path("s.jsonl")}, "--labels is required with --scores"),
        ({"scores": Path("s.jsonl"), "target_options": {"top_k": 3}}, "--target-option"),
    ],
)
def test_a_contradictory_request_is_a_usage_error_before_any_file_is_read(
    request_kwargs, said, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=re.escape(said)):
        CalibrationSession(CalibrateRequest(out=Path("out"), **request_kwargs)).run()
    assert list(tmp_path.iterdir()) == []


# -- all or nothing ----------------------------------------------------------------------------


def test_a_thresholds_file_that_cannot_be_written_leaves_the_report_as_it_was(
    tmp_path, monkeypatch
):
    """The report and the plot are renamed into place first; when the thresholds file's rename
    then fails (a disk error, a file system gone read-only), the earlier report is put back."""
    import ragleaklab_core._atomic as atomic

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    worked(tmp_path)
    (tmp_path / "out").mkdir()
    earlier = b'{"an earlier report": true}\n'
    (tmp_path / "out" / REPORT).write_bytes(earlier)
    request = CalibrateRequest(
        out=Path("out"),
        scores=Path("scores.jsonl"),
        labels=Path("labels.jsonl"),
        pack="relevance-hijack",
        metric="poison_rate_at_k",
        target_fpr=0.1,
        write_thresholds=True,
        thresholds_path=Path("gate/thresholds.json"),
        plot=True,
    )
    renamed = []
    replace = os.replace

    def failing(source, target):
        if Path(target).name == "thresholds.json":
            raise OSError(5, "Input/output error")
        renamed.append(Path(target).as_posix())
        return replace(source, target)

    monkeypatch.setattr(atomic.os, "replace", failing)
    with pytest.raises(InputError, match="cannot write") as raised:
        CalibrationSession(request).run()
    monkeypatch.setattr(atomic.os, "replace", replace)
    assert str(raised.value).startswith("gate/thresholds.json: cannot write")
    assert renamed[:2] == ["out/calibration_report.json", "out/roc.png"]  # they were in place
    assert (tmp_path / "out" / REPORT).read_bytes() == earlier  # and the report is put back
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [REPORT]  # no plot, no temp
    assert list((tmp_path / "gate").iterdir()) == []
    # The same request, once the file can be written, writes all three.
    result = CalibrationSession(request).run()
    assert {p.as_posix() for p in result.written} == {
        "out/calibration_report.json",
        "out/roc.png",
        "gate/thresholds.json",
    }
    assert (tmp_path / "out" / REPORT).read_text("utf-8") == result.report.to_json()


def test_a_report_that_cannot_be_written_stores_no_threshold(tmp_path, monkeypatch):
    import ragleaklab_core._atomic as atomic

    monkeypatch.chdir(tmp_path)
    worked(tmp_path)
    request = CalibrateRequest(
        out=Path("out"),
        scores=Path("scores.jsonl"),
        labels=Path("labels.jsonl"),
        pack="relevance-hijack",
        metric="poison_rate_at_k",
        target_fpr=0.1,
        write_thresholds=True,
    )
    replace = os.replace

    def failing(source, target):
        if Path(target).name == REPORT:
            raise OSError(28, "No space left on device")
        return replace(source, target)

    monkeypatch.setattr(atomic.os, "replace", failing)
    with pytest.raises(InputError, match=r"out/calibration_report\.json: cannot write"):
        CalibrationSession(request).run()
    monkeypatch.setattr(atomic.os, "replace", replace)
    assert not (tmp_path / "ragleaklab.thresholds.json").exists()
    assert [p.name for p in tmp_path.rglob("*") if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({}, "--out out: calibration_report.json is a directory, expected a file"),
        ({"plot": True, "out": Path("plotted")}, "--out plotted: roc.png is a directory"),
        (
            {"write_thresholds": True, "pack": "relevance-hijack", "out": Path("fresh")},
            "--thresholds ragleaklab.thresholds.json: is a directory",
        ),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_anything_is_scored(
    kwargs, said, tmp_path, monkeypatch
):
    """A pack is not run for an hour to find the report cannot be written afterwards."""
    monkeypatch.chdir(tmp_path)
    worked(tmp_path)
    for folder in ("out/calibration_report.json", "plotted/roc.png", "ragleaklab.thresholds.json"):
        (tmp_path / folder).mkdir(parents=True)
    before = tree(tmp_path)
    scoring = []
    monkeypatch.setattr(
        "ragleaklab_core.inputs.read_scores", lambda *a, **k: scoring.append(a) or 1 / 0
    )
    request = {"out": Path("out"), "scores": Path("scores.jsonl"), "labels": Path("labels.jsonl")}
    with pytest.raises(UsageError, match=re.escape(said)):
        CalibrationSession(CalibrateRequest(**{**request, **kwargs})).run()
    assert scoring == [] and tree(tmp_path) == before
