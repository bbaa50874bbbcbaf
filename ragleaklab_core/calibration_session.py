"""A whole calibration, as ``ragleaklab calibrate`` performs it: :class:`CalibrationSession`.

``ragleaklab calibrate`` is a thin adapter over this module (flags to a
:class:`CalibrateRequest`, a session, printing), and the Python API exposes the same session,
so a harness reproduces ``ragleaklab calibrate`` exactly, files and exit code included::

    from ragleaklab_core import CalibrateRequest, CalibrationSession

    result = CalibrationSession(CalibrateRequest(out=Path("cal"), pack="relevance-hijack")).run()
    print(result.summary, end="")
    raise SystemExit(result.exit_code)

A calibration goes, in one pass and in this order:

1. **Check**: the request's own consistency (:meth:`CalibrateRequest.check`), the configuration
   (file and overrides merged by :func:`ragleaklab_core.config.apply_overrides`), the judges
   behind the labels.
2. **Score and fit**: with ``scores``, the scores a harness made; else the pack is run against
   the configured target (:func:`ragleaklab_core.run.calibrate_pack.calibrate_pack`). Either
   way a fitter plugin fits the threshold (:func:`ragleaklab_core.calibration.report.calibrate`).
3. **Decide**: the threshold is usable (pass) or not (fail: the target is infeasible, the
   threshold flags no positive case, or it misses the target on the labelled data). With
   ``write_thresholds``, a threshold ``run`` must not gate on is refused here, before anything
   is written.
4. **Write**: ``calibration_report.json``, ``roc.png`` and the thresholds file, all or nothing
   (:func:`ragleaklab_core._atomic.write_all`).

The result (:class:`CalibrationResult`) carries the verdict, the exit code, the report, the
warnings, what was written and the text summary; printing them is the caller's business.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import field, frozen

from ragleaklab_core._atomic import output_problem, write_all
from ragleaklab_core.calibration.report import CalibrationReport
from ragleaklab_core.calibration.thresholds import ThresholdsFile
from ragleaklab_core.config import (
    Config,
    Overrides,
    command_line_source,
    read_config_with_overrides,
)
from ragleaklab_core.errors import CalibrationRefused, InputError, UsageError
from ragleaklab_core.gate.verdicts import Verdict

#: The report's file name in ``out``.
REPORT = "calibration_report.json"
#: The ROC plot's file name in ``out`` (``plot``).
PLOT = "roc.png"


def _optional_path(value: str | os.PathLike[str] | None) -> Path | None:
    return None if value is None else Path(value)


@frozen
class CalibrateRequest:
    """Everything ``ragleaklab calibrate`` takes: a config file and what its flags set over it.

    Each attribute is a flag of ``ragleaklab calibrate`` (``docs/calibration.md``), with the
    flag's default; None or empty means "as the config file says, else the default". Paths may
    be given as strings. Values are checked when the session runs, with the config file's, so a
    bad one is reported at its ``$.path`` like a bad file value.
    """

    #: ``--out``: the folder of ``calibration_report.json`` (created if missing).
    out: Path = field(converter=Path)
    #: ``--pack``: run this pack and calibrate it; with ``scores``, only the name recorded and
    #: the default labels.
    pack: str | None = None
    #: ``--labels``: labels.jsonl [default: the labels the pack ships].
    labels: Path | None = field(default=None, converter=_optional_path)
    #: ``--scores``: scores from any harness; the pack is then not run.
    scores: Path | None = field(default=None, converter=_optional_path)
    target_fpr: float | None = None
    fitter: str | None = None
    fitter_options: Mapping[str, Any] = field(factory=dict)
    lower_is_worse: bool = False
    metric: str | None = None
    #: ``--roc-max-rows``: the cap on the report's ROC table.
    roc_max_rows: int | None = None
    #: ``--config``; None is no file (the command line finds ``./ragleaklab.toml`` itself).
    config_path: Path | None = field(default=None, converter=_optional_path)
    write_thresholds: bool = False
    #: ``--thresholds``: the file ``write_thresholds`` stores in [default: ``[run]
    #: thresholds_file``].
    thresholds_path: Path | None = field(default=None, converter=_optional_path)
    force: bool = False
    smoke: bool = False
    target: str | None = None
    target_options: Mapping[str, Any] = field(factory=dict)
    plot: bool = False

    @property
    def runs_pack(self) -> bool:
        """True when the pack is run on a target (no ``scores`` given)."""
        return self.scores is None

    def overrides(self) -> Overrides:
        """What this request sets over the config file (:func:`apply_overrides` merges it)."""
        given = {
            "target_fpr": self.target_fpr,
            "lower_is_worse": True if self.lower_is_worse else None,
            "metric": self.metric,
            "roc_table_max_rows": self.roc_max_rows,
        }
        return Overrides(
            target=self.target,
            target_options=dict(self.target_options),
            calibrate={key: value for key, value in given.items() if value is not None},
            fitter=self.fitter,
            fitter_options=dict(self.fitter_options),
        )

    def check(self) -> None:
        """The request's own consistency, before any file is read.

        Raises:
            UsageError: Two parts contradict each other, or one is missing.
        """
        if self.write_thresholds and self.pack is None:
            raise UsageError("--write-thresholds needs --pack (thresholds are stored per pack)")
        if self.out.exists() and not self.out.is_dir():
            raise UsageError(f"--out {self.out} exists and is not a directory")
        if self.scores is None and self.pack is None:
            raise UsageError("give --scores FILE (scores from any harness) or --pack NAME")
        if self.scores is not None and (self.target is not None or self.target_options):
            raise UsageError(
                "--scores calibrates scores already made: --target and --target-option would "
                "be ignored, so they are refused (use them with --pack)"
            )
        if self.scores is not None and self.labels is None and self.pack is None:
            raise UsageError("--labels is required with --scores unless --pack is given")


@frozen
class CalibrationResult:
    """What a finished calibration wrote and decided.

    Attributes:
        verdict: :attr:`Verdict.PASS` when the threshold is usable, :attr:`Verdict.FAIL` when
            it is not (``failure`` says why; the report is written all the same).
        report: The calibration report as written to ``calibration_report.json``.
        written: Every file written: the report, then the plot and the thresholds file.
        thresholds: The change stored in the thresholds file, in one line (None: nothing
            stored).
        summary: The text ``ragleaklab calibrate`` prints on stdout.
        failure: Why the threshold is unusable (None on a pass).
    """

    verdict: Verdict
    report: CalibrationReport
    out: Path
    written: tuple[Path, ...]
    summary: str
    thresholds: str | None = None
    failure: str | None = None

    @property
    def exit_code(self) -> int:
        """What ``ragleaklab calibrate`` exits with: the verdict's own code."""
        return self.verdict.exit_code

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASS

    @property
    def warnings(self) -> tuple[str, ...]:
        """What a reader must not miss, as ``calibration_report.json`` lists it."""
        return self.report.warnings


class CalibrationSession:
    """One calibration of ``ragleaklab calibrate``: :meth:`run` checks, scores, fits, decides
    and writes.

    Args:
        request: The flags of the calibration.
        progress: Told of the pack and each case as they go, when the pack is run (the CLI's
            progress bar): ``start(pack, total)``, ``advance(record)``, ``finish()``.
    """

    def __init__(self, request: CalibrateRequest, *, progress: Any = None) -> None:
        self.request = request
        self.progress = progress

    def run(self) -> CalibrationResult:
        """Check, score, fit, decide, write; the result says what.

        Raises:
            UsageError, ConfigError, InputError, PluginError: nothing was written. A refused
                ``write_thresholds`` is a :class:`~ragleaklab_core.errors.CalibrationRefused`
                (an ``InputError``) carrying the report's warnings that say why.
            KeyboardInterrupt: while the pack was run; nothing was written.
        """
        request = self.request
        request.check()
        config = read_config_with_overrides(request.config_path, request.overrides())
        thresholds = request.thresholds_path or Path(config.run.thresholds_file)
        _check_outputs(request, thresholds)
        judge_errors, forced = ([], []) if request.labels is None else _judge_labels(request)
        report = self._fit_pack(config) if request.runs_pack else self._fit_scores(config)
        if judge_errors or forced:  # a judge's labels: its measured error, in the warnings
            overridden = [f"--force overrode a refusal: {f}" for f in forced]
            report = _warned(report, *judge_errors, *overridden)
        lines = []
        if request.runs_pack:  # a pack run on a target: say which system the threshold fits
            lines.extend(_system_lines(report, request.config_path))
        # Everything that can refuse is decided before any output exists: a refusal writes
        # nothing (no report, no plot, no thresholds file).
        stored: tuple[ThresholdsFile, str] | None = None
        if request.write_thresholds:
            report = _said_unnamed_labels(report)
            stored = _prepared_threshold(report, request, thresholds, forced)
        files: list[tuple[Path, str | bytes]] = [(request.out / REPORT, report.to_json())]
        if request.plot:  # drawn now: a missing matplotlib is refused before anything is written
            files.append((request.out / PLOT, report.plot_png()))
        change = None
        if stored is not None:
            updated, change = stored
            files.append((Path(updated.path), updated.to_json()))
            lines.append(f"thresholds: {change} (in {Path(updated.path).as_posix()})")
        write_all(files)
        lines.extend(_fit_lines(report))
        plotted = f", {(request.out / PLOT).as_posix()}" if request.plot else ""
        lines.append(f"wrote {(request.out / REPORT).as_posix()}{plotted}")
        failure = _failure(report)
        return CalibrationResult(
            verdict=Verdict.PASS if failure is None else Verdict.FAIL,
            report=report,
            out=request.out,
            written=tuple(path for path, _ in files),
            summary="".join(f"{line}\n" for line in lines),
            thresholds=change,
            failure=failure,
        )

    def _fit_pack(self, config: Config) -> CalibrationReport:
        """``calibrate --pack``: the pack run against the configured target, then fitted."""
        from ragleaklab_core.run.calibrate_pack import calibrate_pack
        from ragleaklab_core.run.names import check_config_names

        request = self.request
        assert request.pack is not None
        check_config_names(config, source=command_line_source(request.config_path))
        return calibrate_pack(
            request.pack,
            config,
            labels=request.labels,
            tags=("smoke",) if request.smoke else (),
            progress=self.progress,
            out=request.out,
        )

    def _fit_scores(self, config: Config) -> CalibrationReport:
        """``calibrate --scores``: the scores a harness made, fitted on the labels."""
        from ragleaklab_core.calibration.report import calibrate
        from ragleaklab_core.inputs import read_labels, read_scores
        from ragleaklab_core.run.calibrate_pack import labels_record, pack_labels

        request = self.request
        assert request.scores is not None
        score_file = read_scores(request.scores)
        if request.labels is None:
            assert request.pack is not None
            label_file = pack_labels(request.pack)
        else:
            label_file = read_labels(request.labels)
        settings = config.calibrate
        return calibrate(
            score_file.records,
            label_file.records,
            fitter=settings.fitter.name,
            fitter_options=settings.fitter.options,
            target_fpr=settings.target_fpr,
            higher_is_worse=not settings.lower_is_worse,
            pack_name=request.pack,
            metric_name=settings.metric,
            inputs={
                "scores": {"path": request.scores.as_posix(), "sha256": score_file.sha256},
                "labels": labels_record(request.pack, request.labels),
            },
            roc_table_max_rows=settings.roc_table_max_rows,
        )


def _check_outputs(request: CalibrateRequest, thresholds: Path) -> None:
    """Refuse, before a case is asked or a score read, an output that cannot be written: the
    report or the plot in ``out``, the thresholds file of ``write_thresholds``.

    Raises:
        UsageError: Naming the flag and the file.
    """
    names = (REPORT, PLOT) if request.plot else (REPORT,)
    for name in names:
        problem = output_problem(request.out / name)
        if problem is not None:
            raise UsageError(f"--out {request.out.as_posix()}: {name} {problem}")
    if request.write_thresholds and (problem := output_problem(thresholds)) is not None:
        raise UsageError(f"--thresholds {thresholds.as_posix()}: {problem}")


def _warned(report: CalibrationReport, *warnings: str) -> CalibrationReport:
    return attrs.evolve(report, warnings=(*report.warnings, *warnings))


def _system_lines(report: CalibrationReport, config_path: Path | None) -> list[str]:
    """The line that names the system a pack was run on (as a run's renderings open)."""
    from ragleaklab_core.outcome import System
    from ragleaklab_core.reporting.wording import system_line
    from ragleaklab_core.run.report import tested_system

    config = None if config_path is None else config_path.as_posix()
    line = system_line(System(**tested_system(report.inputs.get("target"), config)))
    return [] if line is None else [line]


def _said_unnamed_labels(report: CalibrationReport) -> CalibrationReport:
    """*report*, warned when its labels do not say which system's answers they judged: said
    before the threshold is stored, not first by ``run``."""
    declared = report.inputs.get("labels") or {}
    unnamed = declared.get("unattributed") or (0 if declared.get("observed_on") else None)
    if unnamed is not None and not unnamed:
        return report
    some = "none names a target" if unnamed is None else f"{unnamed} name no target"
    return _warned(
        report,
        f"the labels do not say which system's answers they judged ({some}): the stored "
        "threshold gates on the failing count, but its measured error corrects no rate "
        "(label import writes `target` on every line)",
    )


def _prepared_threshold(
    report: CalibrationReport, request: CalibrateRequest, where: Path, forced: Iterable[str]
) -> tuple[ThresholdsFile, str]:
    """The thresholds file with the report's threshold stored, and the change in one line;
    nothing is written.

    Raises:
        CalibrationRefused: The threshold would switch the gate off or misses the target (and
            ``force`` is not given): the report's warnings say why.
        InputError: The thresholds file is unreadable, or holds an entry of another origin.
    """
    from ragleaklab_core.run.calibrate_pack import prepare_threshold

    labels = request.labels
    source = labels.as_posix() if labels is not None else f"pack {request.pack}"
    r = report.result
    try:
        return prepare_threshold(
            report, where, force=request.force, labels_source=source, forced=tuple(forced)
        )
    except InputError as exc:
        if (r.flags_nothing or report.misses_target) and not request.force:
            raise CalibrationRefused(
                exc.message, source=exc.source, warnings=report.warnings
            ) from None
        raise


def _failure(report: CalibrationReport) -> str | None:
    """Why the fitted threshold cannot be used (the calibration fails), or None."""
    r = report.result
    if report.guarantee_infeasible:
        return f"no guaranteed threshold: {r.reason}"
    if r.flags_nothing:
        return (
            "no usable threshold: it flags no positive case, so a gate using it would pass "
            "every attack (see the warning above)"
        )
    if report.misses_target:
        return (
            f"the fitted threshold misses the target false-positive rate "
            f"{report.target_fpr:g} on the labelled data (see the warning above)"
        )
    return None


def _fit_lines(report: CalibrationReport) -> list[str]:
    """The fitted threshold, the curve around it and the fitter's guarantee, as printed."""
    r = report.result
    shown = "none (flag nothing)" if r.threshold is None else repr(r.threshold)
    lines = [
        f"threshold {shown}  rule '{r.decision_rule}'  "
        f"fpr {r.achieved_fpr:.4f} ({r.false_positives}/{r.n_negative})  "
        f"tpr {r.achieved_tpr:.4f} ({r.true_positives}/{r.n_positive})  "
        f"fpr 95% upper bound {report.fpr_upper_bound['value']:.4f}",
        _curve_line(report),
        f"guarantee: {report.guarantee}",
    ]
    hint = _guarantee_hint(report)
    return lines if hint is None else [*lines, hint]


def _curve_line(report: CalibrationReport) -> str:
    """The AUC and the next point of the ROC curve past the threshold: what loosening it buys.

    ``auc 0.905 [0.884, 0.925]  next point: threshold 0.8  fpr 0.0129 (4/310)  tpr 0.2000
    (62/310)``, so "tpr 0.08 at fpr 0" reads as a strict operating point of a metric that
    separates well, or as a metric that does not.
    """
    auc = report.auc
    if auc.get("auc") is None:
        line = "auc n/a (one label only)"
    else:
        line = f"auc {auc['auc']:.3f} [{auc['lower']:.3f}, {auc['upper']:.3f}]"
    nxt = report.next_point
    if nxt is None:
        return f"{line}  next point: none (the threshold already flags every case)"
    return (
        f"{line}  next point: threshold {nxt.threshold!r}  "
        f"fpr {nxt.fpr:.4f} ({nxt.false_positives}/{nxt.n_negative})  "
        f"tpr {nxt.tpr:.4f} ({nxt.true_positives}/{nxt.n_positive})"
    )


def _guarantee_hint(report: CalibrationReport) -> str | None:
    """What a fitter without a statistical guarantee leaves out, when the data could support one.

    Too few negatives are already a warning (``calibration.report._warnings``); this names the
    case the warning does not: enough negatives, and a fitter that bounds nothing beyond the
    sample.
    """
    r = report.result
    needed = report.fpr_upper_bound.get("negatives_needed_for_guarantee")
    if isinstance(r.details.get("guarantee"), Mapping) or needed is None or r.n_negative < needed:
        return None
    return (
        f"note: these {r.n_negative} negatives could support a 95% guarantee that the true "
        f"false-positive rate meets the target (at least {needed} are needed); this fitter "
        "gives none beyond the sample: a fitter that states one (the built-in neyman-pearson) "
        "would (docs/calibration.md)"
    )


def _judge_labels(request: CalibrateRequest) -> tuple[list[str], list[str]]:
    """What a labels file's judge labels mean for a calibration, read once: labels of a judge
    whose agreement with a person was never measured, or measured too poor to correct anything
    (:func:`~ragleaklab_core.calibration.labelling.judges_below_floor`), are refused unless
    ``force``. Returns the measured error of the judges, for the report's warnings
    (:func:`~ragleaklab_core.calibration.labelling.judge_error_warnings`), and the refusals
    ``force`` overrode, which the thresholds entry stores."""
    from ragleaklab_core.calibration.labelling import (
        JUDGE_FLOOR,
        judge_error_warnings,
        judges_below_floor,
        unmeasured_judge_labels,
    )

    assert request.labels is not None
    try:
        raw = request.labels.read_bytes()
    except OSError:
        return [], []  # read_labels names the problem
    source = request.labels.as_posix()
    try:
        lines = unmeasured_judge_labels(raw, source=source)
        poor = judges_below_floor(raw, source=source)
        said = judge_error_warnings(raw, source=source)
    except InputError:
        return [], []  # not a labels file: read_labels names the problem
    forced = []
    if lines:
        what = (
            f"{len(lines)} label(s) come from a judge whose agreement with a person was "
            f"never measured (first on line {lines[0]})"
        )
        if not request.force:
            raise InputError(
                f"{what}: its error is unknown, so a threshold fitted on them is too; review "
                "some of the same cases (`ragleaklab label review`), measure it (`ragleaklab "
                "label agreement`), import again, or pass --force",
                source=source,
            )
        forced.append(what)
    if poor:
        if not request.force:
            raise InputError(
                "a judge too poor to correct anything labelled these cases: "
                + "; ".join(poor)
                + f" (the floor: each 95% lower limit at least {JUDGE_FLOOR}, kappa's interval "
                "above 0, docs/labelling.md); label with a person or a better judge, or review "
                "more of the same cases and measure it again (`ragleaklab label agreement`); "
                "--force uses them anyway, and the thresholds entry then says so and gates no "
                "corrected rate",
                source=source,
            )
        forced.extend(poor)
    return said, forced


__all__ = [
    "PLOT",
    "REPORT",
    "CalibrateRequest",
    "CalibrationResult",
    "CalibrationSession",
]
