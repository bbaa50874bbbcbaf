"""The ``ragleaklab`` command line: the only place that prints, exits or configures logging.

Exit codes: 0 ok, 1 a gate failed, 2 bad input or usage, 3 a plugin could not be used.
Results go to stdout; logs, warnings and errors go to stderr.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from ragleaklab_core._log import configure_cli_logging
from ragleaklab_core._safe_text import neutralised_output, write_workflow_command
from ragleaklab_core._version import __version__
from ragleaklab_core.cli._errors import fail, handle_errors
from ragleaklab_core.cli._files import make_dir, write_file
from ragleaklab_core.cli._options import key_values
from ragleaklab_core.cli.diff import diff_command
from ragleaklab_core.cli.label import label_group
from ragleaklab_core.cli.packs import new_pack_command, pack_group
from ragleaklab_core.cli.plugins import plugins_command
from ragleaklab_core.cli.reports import (
    RunCommand,
    rendering_options,
    report_command,
    requested_renderings,
    step_summary,
)
from ragleaklab_core.config import DEFAULT_TARGET, MARKDOWN_MAX_CHARS, RunConfig, find_config
from ragleaklab_core.gate import DEFAULT_LEVEL, FAIL_ON, allowance_problem
from ragleaklab_core.stats.aggregation import COUNTING_REDUCERS, REDUCERS

F = TypeVar("F", bound=Callable[..., Any])


def _target_flags(when: str = "") -> Callable[[F], F]:
    """``--target`` and ``--target-option``, spelled alike in every command; *when* says when
    they apply ("with --pack: "), ahead of their help."""

    def decorate(command: F) -> F:
        command = click.option(
            "--target-option",
            "target_options",
            multiple=True,
            metavar="KEY=VALUE",
            help=f"{when}A target option; VALUE is read as a TOML value. Repeatable.",
        )(command)
        return click.option(
            "--target", "target_name", help=f"{when}Target plugin [default: {DEFAULT_TARGET}]."
        )(command)

    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragleaklab")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-v info, -vv debug).")
@click.option(
    "--log-format",
    type=click.Choice(["console", "json"]),
    default="console",
    show_default=True,
    help="How logs on stderr are rendered.",
)
def cli(verbose: int, log_format: str) -> None:
    """Test RAG systems for poisoning, hijacking and leaks; calibrate CI thresholds."""
    configure_cli_logging(verbose, json=log_format == "json")


@cli.command()
@click.option(
    "-p",
    "--pack",
    help="Pack to run and calibrate; with --scores it is not run, it names the report and "
    "the default labels.",
)
@click.option(
    "-o",
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Directory for calibration_report.json (created if missing).",
)
@click.option(
    "-l",
    "--labels",
    type=click.Path(path_type=Path),
    help="labels.jsonl [default: the labels the pack ships, as in data/calibration/<pack>/]",
)
@click.option(
    "--scores",
    type=click.Path(path_type=Path),
    help='JSONL of {"test_id": ..., "score": ...} from any harness; skips running the pack.',
)
@click.option(
    "--target-fpr", type=float, default=None, help="Target false-positive rate [default: 0.01]."
)
@click.option("--fitter", default=None, help="Fitter plugin name [default: exact].")
@click.option(
    "--fitter-option",
    "fitter_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A fitter option; VALUE is read as a TOML value. Repeatable.",
)
@click.option("--lower-is-worse", is_flag=True, help="Lower scores mean a worse case.")
@click.option(
    "--metric",
    default=None,
    help="The metric value calibrated: with --pack, which of the pack's values is fitted "
    "(e.g. poison_mrr) [default: the pack's primary value]; with --scores, only the name "
    "recorded in the report.",
)
@click.option(
    "--roc-max-rows", type=int, default=None, help="Cap on roc_table rows [default: 1001]."
)
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="TOML config file; flags override it [default: ./ragleaklab.toml if there is one].",
)
@click.option(
    "--write-thresholds",
    is_flag=True,
    help="Store the fitted threshold in the thresholds file that `ragleaklab run` reads.",
)
@click.option(
    "--thresholds",
    "thresholds_path",
    type=click.Path(path_type=Path),
    help="Thresholds file for --write-thresholds [default: ragleaklab.thresholds.json].",
)
@click.option(
    "--force",
    is_flag=True,
    help="Let --write-thresholds replace a threshold of another origin, or store one that "
    "flags no positive case; accept a judge's labels whose agreement was never measured.",
)
@click.option("--smoke", is_flag=True, help="Only the pack's cases tagged 'smoke'.")
@_target_flags("With --pack: ")
@click.option(
    "--plot", is_flag=True, help="Also write roc.png (needs: pip install 'ragleaklab[plot]')."
)
@handle_errors
def calibrate(
    pack: str | None,
    out: Path,
    labels: Path | None,
    scores: Path | None,
    target_fpr: float | None,
    fitter: str | None,
    fitter_options: tuple[str, ...],
    lower_is_worse: bool,
    metric: str | None,
    roc_max_rows: int | None,
    config_path: Path | None,
    write_thresholds: bool,
    thresholds_path: Path | None,
    force: bool,
    smoke: bool,
    target_name: str | None,
    target_options: tuple[str, ...],
    plot: bool,
) -> None:
    """Fit the threshold that meets a target false-positive rate on labelled cases.

    With --pack (and no --scores) the pack is run against the configured target (default: the
    embedded reference RAG) and the cases' values of its primary metric (or of --metric) are
    calibrated against the labels (default: the pack's own). Writes
    <out>/calibration_report.json atomically.

    Exit code: 0 a threshold that flags positive cases was fitted; 1 no usable threshold (the
    target is infeasible or the threshold flags no positive case; the report says why); 2 bad
    input or a refused --write-thresholds (nothing is written); 3 a plugin could not be used.
    """
    from ragleaklab_core.calibration.report import calibrate as run_calibration
    from ragleaklab_core.config import Overrides, read_config
    from ragleaklab_core.inputs import read_labels, read_scores

    if write_thresholds and pack is None:
        raise click.UsageError("--write-thresholds needs --pack (thresholds are stored per pack)")
    if out.exists() and not out.is_dir():
        raise click.UsageError(f"--out {out} exists and is not a directory")
    if scores is None and pack is None:
        raise click.UsageError("give --scores FILE (scores from any harness) or --pack NAME")
    if scores is not None and (target_name is not None or target_options):
        raise click.UsageError(
            "--scores calibrates scores already made: --target and --target-option would be "
            "ignored, so they are refused (use them with --pack)"
        )
    given = {
        "target_fpr": target_fpr,
        "lower_is_worse": True if lower_is_worse else None,
        "metric": metric,
        "roc_table_max_rows": roc_max_rows,
    }
    overrides = Overrides(
        target=target_name,
        target_options=key_values(target_options, flag="--target-option"),
        calibrate={key: value for key, value in given.items() if value is not None},
        fitter=fitter,
        fitter_options=key_values(fitter_options, flag="--fitter-option"),
    )
    config_path = find_config(config_path)
    full = read_config(config_path, overrides)
    config = full.calibrate
    judge_errors, forced = ([], []) if labels is None else _judge_labels(labels, force=force)
    if scores is None:
        assert pack is not None
        from ragleaklab_core.config import command_line_source
        from ragleaklab_core.run.calibrate_pack import calibrate_pack
        from ragleaklab_core.run.names import check_config_names

        check_config_names(full, source=command_line_source(config_path))

        from ragleaklab_core._signals import received, termination_as_interrupt

        try:
            with termination_as_interrupt():  # SIGTERM, SIGHUP: planted documents removed
                report = calibrate_pack(
                    pack,
                    full,
                    labels=labels,
                    tags=("smoke",) if smoke else (),
                    progress=_progress_callbacks(),
                    out=out,
                )
        except KeyboardInterrupt:
            click.echo("\ninterrupted: nothing was written", err=True)
            signum = received()
            sys.exit(130 if signum is None else 128 + signum)
    else:
        if labels is None and pack is None:
            raise click.UsageError("--labels is required with --scores unless --pack is given")
        score_file = read_scores(scores)
        from ragleaklab_core.run.calibrate_pack import labels_record, pack_labels

        if labels is None:
            assert pack is not None
            label_file = pack_labels(pack)
        else:
            label_file = read_labels(labels)
        report = run_calibration(
            score_file.records,
            label_file.records,
            fitter=config.fitter.name,
            fitter_options=config.fitter.options,
            target_fpr=config.target_fpr,
            higher_is_worse=not config.lower_is_worse,
            pack_name=pack,
            metric_name=config.metric,
            inputs={
                "scores": {"path": scores.as_posix(), "sha256": score_file.sha256},
                "labels": labels_record(pack, labels),
            },
            roc_table_max_rows=config.roc_table_max_rows,
        )
    if judge_errors or forced:  # a judge's labels: its measured error, in the report's warnings
        import attrs

        overridden = [f"--force overrode a refusal: {f}" for f in forced]
        report = attrs.evolve(report, warnings=(*report.warnings, *judge_errors, *overridden))
    r = report.result
    if scores is None:  # a pack run on a target: say which system the threshold was fitted on
        from ragleaklab_core.outcome import System
        from ragleaklab_core.reporting.wording import system_line
        from ragleaklab_core.run.report import tested_system

        config_name = None if config_path is None else config_path.as_posix()
        system = tested_system(report.inputs.get("target"), config_name)
        click.echo(system_line(System(**system)))
    # Everything that can refuse is decided before any output exists: on exit 2 nothing is
    # written (no report, no plot, no thresholds file).
    prepared = None
    if write_thresholds:
        from ragleaklab_core.run.calibrate_pack import prepare_threshold

        where = thresholds_path or Path(full.run.thresholds_file)
        labels_source = labels.as_posix() if labels is not None else f"pack {pack}"
        declared = report.inputs.get("labels") or {}
        unnamed = declared.get("unattributed") or (0 if declared.get("observed_on") else None)
        if unnamed is None or unnamed:  # said before it is stored, not first by `run`
            import attrs

            some = "none names a target" if unnamed is None else f"{unnamed} name no target"
            said = (
                f"the labels do not say which system's answers they judged ({some}): "
                "the stored threshold gates on the failing count, but its measured error "
                "corrects no rate (label import writes `target` on every line)"
            )
            report = attrs.evolve(report, warnings=(*report.warnings, said))
        if (r.flags_nothing or report.misses_target) and not force:
            _echo_warnings(report.warnings)
        prepared = prepare_threshold(
            report, where, force=force, labels_source=labels_source, forced=forced
        )
    if plot:
        from ragleaklab_core.calibration.plot import _matplotlib

        _matplotlib()  # a missing matplotlib is refused before anything is written
    target = out / "calibration_report.json"
    make_dir(out)
    if plot:
        report.write_plot(out / "roc.png")
    previous = target.read_bytes() if target.is_file() else None
    write_file(target, report.to_json())
    if prepared is not None:
        from ragleaklab_core.calibration.thresholds import write_thresholds as store

        updated, change = prepared
        try:
            store(updated)
        except Exception:
            # The thresholds file could not be written: leave the report as it was, too.
            from ragleaklab_core._atomic import write_atomic

            if previous is None:
                target.unlink(missing_ok=True)
            else:
                write_atomic(target, previous)
            raise
        click.echo(f"thresholds: {change} (in {Path(updated.path).as_posix()})")
    _echo_warnings(report.warnings)
    shown = "none (flag nothing)" if r.threshold is None else repr(r.threshold)
    click.echo(
        f"threshold {shown}  rule '{r.decision_rule}'  "
        f"fpr {r.achieved_fpr:.4f} ({r.false_positives}/{r.n_negative})  "
        f"tpr {r.achieved_tpr:.4f} ({r.true_positives}/{r.n_positive})  "
        f"fpr 95% upper bound {report.fpr_upper_bound['value']:.4f}"
    )
    click.echo(_curve_line(report))
    click.echo(f"guarantee: {report.guarantee}")
    hint = _guarantee_hint(report)
    if hint:
        click.echo(hint)
    plotted = f", {(out / 'roc.png').as_posix()}" if plot else ""
    click.echo(f"wrote {target.as_posix()}{plotted}")
    if report.guarantee_infeasible:
        click.echo(f"error: no guaranteed threshold: {r.reason}", err=True)
        sys.exit(1)
    if r.flags_nothing:
        click.echo(
            "error: no usable threshold: it flags no positive case, so a gate using it would "
            "pass every attack (see the warning above)",
            err=True,
        )
        sys.exit(1)
    if report.misses_target:
        click.echo(
            f"error: the fitted threshold misses the target false-positive rate "
            f"{report.target_fpr:g} on the labelled data (see the warning above)",
            err=True,
        )
        sys.exit(1)


def _curve_line(report: Any) -> str:
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


def _guarantee_hint(report: Any) -> str | None:
    """What a fitter without a statistical guarantee leaves out, when the data could support one.

    Too few negatives are already a warning (``calibration._warnings``); this names the case the
    warning does not: enough negatives, and a fitter that bounds nothing beyond the sample.
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


def _judge_labels(labels: Path, *, force: bool) -> tuple[list[str], list[str]]:
    """What a labels file's judge labels mean for a calibration, read once: labels of a judge
    whose agreement with a person was never measured, or measured too poor to correct anything
    (:func:`~ragleaklab_core.calibration.labelling.judges_below_floor`), are refused (exit 2)
    unless *force*. Returns the measured error of the judges, for the report's warnings
    (:func:`~ragleaklab_core.calibration.labelling.judge_error_warnings`), and the refusals
    *force* overrode, which the thresholds entry stores."""
    from ragleaklab_core.calibration.labelling import (
        JUDGE_FLOOR,
        judge_error_warnings,
        judges_below_floor,
        unmeasured_judge_labels,
    )
    from ragleaklab_core.errors import InputError

    try:
        raw = labels.read_bytes()
    except OSError:
        return [], []  # read_labels names the problem
    source = labels.as_posix()
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
        if not force:
            raise InputError(
                f"{what}: its error is unknown, so a threshold fitted on them is too; review "
                "some of the same cases (`ragleaklab label review`), measure it (`ragleaklab "
                "label agreement`), import again, or pass --force",
                source=source,
            )
        forced.append(what)
    if poor:
        if not force:
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


def _echo_warnings(warnings: tuple[str, ...] | list[str]) -> None:
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)


def _fail_rates(_ctx: click.Context, _param: click.Parameter, items: tuple[str, ...]) -> Any:
    """``--max-fail-rate`` values as ``{pack: rate}``, the key ``""`` for every pack."""
    rates: dict[str, float] = {}
    for item in items:
        pack, _, text = item.rpartition("=")
        try:
            rate = float(text)
        except ValueError:
            rate = -1.0
        named = "=" in item
        if not 0.0 <= rate <= 1.0 or (named and (not pack or pack != pack.strip())):
            raise click.BadParameter(
                f"expected RATE or PACK=RATE with RATE in [0, 1], got {item!r}"
            )
        # The check the config applies to [run] max_fail_rate(s), so every spelling of one
        # ("1", "1e0", "1.00", "0.99999999999999999") is refused here as there.
        problem = allowance_problem(rate)
        if problem is not None:
            raise click.BadParameter(f"{item!r}: {problem}")
        rates[pack] = rate
    return rates


def _progress_callbacks() -> Any:
    """Progress on stderr: a bar on a terminal, else a plain line at a steady interval
    (``RAGLEAKLAB_PROGRESS_INTERVAL``), or None when that is 0."""
    from ragleaklab_core.cli._progress import progress_for

    return progress_for(sys.stderr, os.environ)


@cli.command(cls=RunCommand)
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="TOML config [default: ./ragleaklab.toml if there is one].",
)
@click.option(
    "-p", "--pack", "packs", multiple=True, help="Pack to run (repeatable) [default: all]."
)
@click.option(
    "--exclude",
    "exclude",
    multiple=True,
    metavar="PACK",
    help="Leave this pack out (repeatable; replaces [run] exclude).",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    help=f"Output directory [default: [run] out of the config, else {RunConfig().out}].",
)
@_target_flags()
@click.option("--epochs", type=int, help="Runs per case [default: 1].")
@click.option(
    "--reducer",
    help="Epoch reducer: "
    + ", ".join([*REDUCERS, *(f"{family}_K[@CUT]" for family in COUNTING_REDUCERS)])
    + " [default: mean].",
)
@click.option("--smoke", is_flag=True, help="Only cases tagged 'smoke'.")
@click.option("--tag", "tags", multiple=True, help="Only cases with this tag (repeatable).")
@click.option(
    "--exclude-tag",
    "exclude_tags",
    multiple=True,
    metavar="TAG",
    help="Leave out cases with this tag (repeatable; replaces [run] exclude_tags).",
)
@click.option(
    "--thresholds",
    "thresholds_path",
    type=click.Path(path_type=Path),
    help="Thresholds file [default: ragleaklab.thresholds.json when it exists].",
)
@click.option("--tolerate-errors", is_flag=True, help="Errored cases do not fail the run.")
@click.option("--concurrency", type=int, help="Cases asked at once [default: 8].")
@click.option("--rate-limit", type=float, help="At most this many requests per second.")
@click.option(
    "--resume", is_flag=True, help="Continue an interrupted run in --out; done cases are kept."
)
@click.option(
    "--record",
    "record_dir",
    type=click.Path(path_type=Path),
    help="Store every answer of the target in DIR.",
)
@click.option(
    "--replay",
    "replay_dir",
    type=click.Path(path_type=Path),
    help="Answer from a recording in DIR instead of the target (no network).",
)
@click.option(
    "--restart",
    is_flag=True,
    help="Discard an interrupted run in --out and start again (instead of --resume).",
)
@click.option(
    "--allow-shared-state",
    is_flag=True,
    help="Run several ingesting packs against a target that cannot reset (results then "
    "depend on pack order).",
)
@click.option(
    "--max-consecutive-failures",
    type=int,
    help="Stop a pack after N consecutive transport failures; 0: never [default: 5].",
)
@click.option(
    "--max-fail-rate",
    "max_fail_rates",
    multiple=True,
    metavar="[PACK=]RATE",
    callback=_fail_rates,
    help="Share (0 to 1) of a gated value's scored cases that may fail while the pack still "
    "passes: RATE for every pack, PACK=RATE for one. Repeatable [default: 0].",
)
@click.option(
    "--max-corrected-rate",
    type=float,
    metavar="RATE",
    help="Gate instead on the rate at which the harm truly happened, corrected for each "
    "metric's error measured by calibration: a value passes when its interval's upper limit is "
    "at most RATE (docs/labelling.md).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    help="Who answers the cases: this process, or Ray workers (pip install 'ragleaklab[ray]') "
    "[default: local].",
)
@click.option(
    "--ray-address",
    metavar="ADDR",
    help="With --executor ray: an existing cluster's address (host:port, ray://host:port, "
    "auto) [default: start a local cluster].",
)
@click.option(
    "--ray-workers", type=int, help="With --executor ray: workers [default: CPUs per worker fit]."
)
@click.option(
    "--ray-cpus-per-worker", type=float, help="With --executor ray: CPUs per worker [default: 1]."
)
@click.option(
    "--ray-gpus-per-worker", type=float, help="With --executor ray: GPUs per worker [default: 0]."
)
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A previous run's report.json: show what changed from it and gate on it (--fail-on).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="What fails the run: verdict (its thresholds), regression (a failing rate rose "
    "significantly from --baseline) or new-failures (a case that passed in --baseline fails) "
    "[default: verdict].",
)
@click.option(
    "--baseline-level",
    type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
    help=f"One-sided level of the regression test against --baseline [default: {DEFAULT_LEVEL}].",
)
@click.option(
    "--force-baseline",
    is_flag=True,
    help="Compare with a --baseline of other pack versions, metric options, case selection "
    "or target.",
)
@click.option(
    "--markdown-max-chars",
    type=int,
    metavar="N",
    help="The most characters of the Markdown rendering (--markdown, the step summary): case "
    "lists are cut first, then pack tables, never the verdict; 0: no cap [default: "
    f"{MARKDOWN_MAX_CHARS}, what a pull-request comment holds].",
)
@rendering_options
@handle_errors
def run(
    config_path: Path | None,
    packs: tuple[str, ...],
    exclude: tuple[str, ...],
    out: Path | None,
    target_name: str | None,
    target_options: tuple[str, ...],
    epochs: int | None,
    reducer: str | None,
    smoke: bool,
    tags: tuple[str, ...],
    exclude_tags: tuple[str, ...],
    thresholds_path: Path | None,
    tolerate_errors: bool,
    concurrency: int | None,
    rate_limit: float | None,
    resume: bool,
    record_dir: Path | None,
    replay_dir: Path | None,
    restart: bool,
    allow_shared_state: bool,
    max_consecutive_failures: int | None,
    max_fail_rates: dict[str, float],
    max_corrected_rate: float | None,
    executor: str | None,
    ray_address: str | None,
    ray_workers: int | None,
    ray_cpus_per_worker: float | None,
    ray_gpus_per_worker: float | None,
    baseline_path: Path | None,
    fail_on: str | None,
    baseline_level: float | None,
    force_baseline: bool,
    markdown_max_chars: int | None,
    **renderings: Path | None,
) -> None:
    """Run attack packs against a RAG target and gate on their thresholds.

    Writes <out>/report.json and <out>/runs.jsonl and prints a summary. Every input is checked
    before anything is written. Exit code: 0 every pack was tested and passed, 1 a tested pack
    failed (a threshold failed or a case errored), 2 bad input, 3 a plugin could not be used or
    a pack was not tested (the attack never reached the system, ingest or reset failed, the
    target became unreachable). 1 wins over 3 when packs end differently. With --fail-on
    regression or new-failures, a threshold failing as it did in --baseline no longer fails the
    run; a regression, a new failure or anything the baseline measured and this run did not does.
    """
    from ragleaklab_core._signals import received, termination_as_interrupt
    from ragleaklab_core.errors import RunInterrupted, UsageError
    from ragleaklab_core.session import RunRequest, RunSession

    request = RunRequest(
        config_path=find_config(config_path),
        packs=packs,
        exclude=exclude,
        out=out,
        target=target_name,
        target_options=key_values(target_options, flag="--target-option"),
        epochs=epochs,
        reducer=reducer,
        smoke=smoke,
        tags=tags,
        exclude_tags=exclude_tags,
        thresholds_path=thresholds_path,
        tolerate_errors=tolerate_errors,
        concurrency=concurrency,
        rate_limit=rate_limit,
        resume=resume,
        restart=restart,
        record=record_dir,
        replay=replay_dir,
        allow_shared_state=allow_shared_state,
        max_consecutive_failures=max_consecutive_failures,
        max_fail_rates=max_fail_rates,
        max_corrected_rate=max_corrected_rate,
        executor=executor,
        ray={
            "address": ray_address,
            "workers": ray_workers,
            "cpus_per_worker": ray_cpus_per_worker,
            "gpus_per_worker": ray_gpus_per_worker,
        },
        baseline=baseline_path,
        fail_on=fail_on,
        baseline_level=baseline_level,
        force_baseline=force_baseline,
        renderings=requested_renderings(renderings),
        markdown_max_chars=markdown_max_chars,
    )
    try:
        with termination_as_interrupt():  # SIGTERM, SIGHUP: as Ctrl-C, planted documents removed
            result = RunSession(request, progress=_progress_callbacks()).run()
    except UsageError as exc:
        raise click.UsageError(exc.message) from None
    except RunInterrupted as exc:
        click.echo(f"\n{exc}", err=True)
        signum = received()
        sys.exit(exc.exit_code if signum is None else 128 + signum)
    except KeyboardInterrupt:  # before any case was asked (removing an earlier run's plants)
        click.echo("\ninterrupted before any case was asked: nothing was written", err=True)
        signum = received()
        sys.exit(130 if signum is None else 128 + signum)
    # The summary is report.json's text rendering: `ragleaklab report --format text` prints it.
    click.echo(result.summary, nl=False)
    click.echo(f"wrote {(result.out / 'report.json').as_posix()}, runs.jsonl")
    for path in request.renderings.values():
        click.echo(f"wrote {path.as_posix()}")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        # ragleaklab's own workflow commands: the only lines printed past the neutralising
        # streams (their text is escaped by GitHub's rules).
        for line in result.annotations:
            write_workflow_command(line)
    step_summary(result.report, max_chars=result.markdown_max_chars)
    sys.exit(result.exit_code)


@cli.command("cleanup")
@click.argument("out", type=click.Path(path_type=Path))
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="The run's TOML config [default: the one the run in OUT was given].",
)
@_target_flags()
@handle_errors
def cleanup(
    out: Path, config_path: Path | None, target_name: str | None, target_options: tuple[str, ...]
) -> None:
    """Remove the documents a run in OUT planted in a store and did not remove.

    A run records the ids of what it plants in a store that outlives it in OUT/planted.jsonl
    before planting, and removes them after each pack, on Ctrl-C, SIGTERM and SIGHUP. After a
    run killed outright (SIGKILL, a lost machine) or a store that failed to delete, this
    removes what is left, through a target built from the run's configuration (the same -c,
    --target and --target-option). Exit code: 0 nothing planted by a run in OUT is left, 1 some
    documents could not be removed (their ids are printed and stay listed), 2 bad input, 3 the
    target cannot remove them (another store, no way to remove) or the ledger lists ids nothing
    proves ragleaklab planted (they are named and left alone; the others are removed): an id
    is removed only when the target derives it again from the ledger's run and pack and, when
    the target can read it back, the store holds it tagged with that run.
    """
    from ragleaklab_core._discovery import TARGETS, load_plugin
    from ragleaklab_core._signals import received, termination_as_interrupt
    from ragleaklab_core.config import Overrides, read_config
    from ragleaklab_core.errors import UsageError
    from ragleaklab_core.run.cleanup import remove_outstanding
    from ragleaklab_core.run.ownership import refusal_message
    from ragleaklab_core.run.planted import LEDGER, read_outstanding

    if out.exists() and not out.is_dir():
        raise UsageError(f"OUT {out.as_posix()} is not a directory")
    outstanding = read_outstanding(out)
    if not outstanding:
        click.echo(f"nothing planted by a run in {out.as_posix()} is left")
        return
    if config_path is None:
        recorded = sorted(set(outstanding.configs.values()))
        if len(recorded) == 1 and Path(recorded[0]).is_file():
            named = Path(recorded[0])
            if named.resolve().is_relative_to(out.resolve()):
                # A run never writes its config into OUT: one there was put by someone else,
                # and building its target would import what it names.
                raise UsageError(
                    f"{(out / LEDGER).as_posix()} names the config {named.as_posix()}, inside "
                    "OUT, where a run never writes its config: give the run's configuration "
                    "yourself (-c CONFIG, --target, --target-option)"
                )
            config_path = named
            click.echo(f"using {config_path.as_posix()}, the config the run was given", err=True)
    overrides = Overrides(
        target=target_name, target_options=key_values(target_options, flag="--target-option")
    )
    config = read_config(config_path, overrides)
    target = load_plugin(
        TARGETS, config.target.name, config.target.options, path="$.target.options"
    )
    try:
        with termination_as_interrupt():
            result = remove_outstanding(out, target)
    except KeyboardInterrupt:
        click.echo(
            f"\ninterrupted: what was not removed stays listed in {(out / LEDGER).as_posix()}",
            err=True,
        )
        signum = received()
        sys.exit(130 if signum is None else 128 + signum)
    for store, count in result.removed.items():
        click.echo(f"removed {count} planted documents from {store}")
    for store, ids in result.left.items():
        shown = ", ".join(ids[:10]) + (f", ... ({len(ids) - 10} more)" if len(ids) > 10 else "")
        click.echo(f"{len(ids)} planted documents are still in {store}: {shown}", err=True)
    if result.left:
        click.echo(
            f"their ids stay in {(out / LEDGER).as_posix()}: run this command again once the "
            "store can be reached",
            err=True,
        )
    if result.refused:
        # Named and left alone: a file in OUT never decides alone what is deleted.
        fail(refusal_message((out / LEDGER).as_posix(), result.refused), 3)
    if result.left:
        sys.exit(1)
    click.echo(f"nothing planted by a run in {out.as_posix()} is left")


cli.add_command(new_pack_command)
cli.add_command(pack_group)
cli.add_command(label_group)
cli.add_command(report_command)
cli.add_command(diff_command)
cli.add_command(plugins_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    Everything the command prints, on stdout and stderr (results, errors, warnings, logs,
    click's own usage errors), goes through :func:`ragleaklab_core._safe_text.neutralise`:
    text a target or plugin controls never starts a GitHub Actions workflow command."""
    with neutralised_output():
        try:
            cli.main(args=argv, prog_name="ragleaklab")
        except Exception:
            # A bug's traceback may quote a target's text: printed here, through the
            # neutralising stderr, not by the interpreter once the streams are given back.
            # Exit 1, as Python exits on an uncaught exception.
            traceback.print_exc()
            raise SystemExit(1) from None


if __name__ == "__main__":  # pragma: no cover
    main()
