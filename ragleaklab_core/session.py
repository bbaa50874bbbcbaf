"""A whole run, as ``ragleaklab run`` performs it: :class:`RunSession`.

``ragleaklab run`` is a thin adapter over this module (flags to a :class:`RunRequest`, a session,
printing), and the Python API exposes the same session, so a harness reproduces ``ragleaklab
run`` exactly, files and exit code included::

    from ragleaklab_core import RunRequest, RunSession

    result = RunSession(RunRequest(packs=("relevance-hijack",), out=Path("out"))).run()
    print(result.summary, end="")
    raise SystemExit(result.exit_code)

A run goes, in one pass and in this order:

1. **Check** (:meth:`RunSession.prepare`): the request's own consistency, the configuration (file
   and overrides merged by :func:`ragleaklab_core.config.apply_overrides`), the packs, tags,
   thresholds, the target's options, the recording, the baseline's comparability, the journal
   of an earlier run in ``out``, the executor. Every refusal happens here, before ``out`` is
   touched.
2. **Answer** (:func:`ragleaklab_core.run.suite.run_suite`): every pack's cases against the
   target, streamed to the journal; an interrupt keeps what was answered for ``--resume``.
3. **Decide** (:mod:`ragleaklab_core.gate`): the packs' verdicts, then the run's gate (its
   thresholds, or its change from a baseline).
4. **Write**: ``runs.jsonl``, ``report.json`` and every requested rendering, atomically, then the
   journal is closed as finished.

The result (:class:`RunResult`) carries the verdict, the exit code, the written document, the
text summary and the GitHub annotations; printing them is the caller's business.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from attrs import field, frozen

from ragleaklab_core._atomic import output_problem, same_file, write_all
from ragleaklab_core.config import (
    MARKDOWN_MAX_CHARS,
    AllowanceSources,
    Config,
    Overrides,
    apply_overrides,
    command_line_source,
    load_config,
    read_config_file,
)
from ragleaklab_core.errors import (
    ConfigError,
    InputError,
    PluginRuntimeError,
    RagleaklabError,
    RunInterrupted,
    UsageError,
)
from ragleaklab_core.gate import DEFAULT_LEVEL, FAIL_ON, Gate, Verdict, decide
from ragleaklab_core.gate import apply as apply_gate
from ragleaklab_core.gate.comparison import (
    check_level,
    not_comparable,
    planned_differences,
    read_comparable,
)
from ragleaklab_core.outcome import RunOutcome
from ragleaklab_core.reporting.console import render as render_summary
from ragleaklab_core.reporting.model import RunReport
from ragleaklab_core.reporting.outputs import check_reporters, github_annotations, rendered_files
from ragleaklab_core.run.cleanup import PlantedLeft, before_planting
from ragleaklab_core.run.executor import Executor
from ragleaklab_core.run.journal import META, PARTIAL, Journal
from ragleaklab_core.run.planted import (
    LEDGER,
    PlantLedger,
    cleanup_command,
    new_run_id,
    read_outstanding,
)
from ragleaklab_core.run.recording import Recorder, Replay
from ragleaklab_core.run.report import build_outcome, chunks, encode, plain, runs_lines
from ragleaklab_core.run.suite import (
    RunPlan,
    close_executor,
    executor_for,
    file_input,
    plan_suite,
    run_fingerprint,
    run_suite,
)


class Progress(Protocol):
    """What a session tells about its progress (the CLI's bar or steady lines)."""

    def start(self, pack: Any, total: int) -> None: ...

    def advance(self, record: Any) -> None: ...

    def finish(self) -> None: ...


def _paths(value: Mapping[str, str | os.PathLike[str]]) -> dict[str, Path]:
    return {key: Path(path) for key, path in value.items()}


#: The flag of ``ragleaklab run`` that sets each ``$.run`` key (``ray.*``: a ``[run.ray]`` key).
_RUN_FLAGS = {
    "exclude": "--exclude",
    "exclude_tags": "--exclude-tag",
    "epochs": "--epochs",
    "reducer": "--reducer",
    "concurrency": "--concurrency",
    "rate_limit": "--rate-limit",
    "out": "--out",
    "max_consecutive_failures": "--max-consecutive-failures",
    "max_fail_rate": "--max-fail-rate",
    "max_fail_rates": "--max-fail-rate",
    "max_corrected_rate": "--max-corrected-rate",
    "executor": "--executor",
    "ray.address": "--ray-address",
    "ray.workers": "--ray-workers",
    "ray.cpus_per_worker": "--ray-cpus-per-worker",
    "ray.gpus_per_worker": "--ray-gpus-per-worker",
    "markdown_max_chars": "--markdown-max-chars",
}


def _naming_flags(error: ConfigError, overrides: Overrides) -> ConfigError:
    """*error* with each problem at a ``$.run`` key a flag set prefixed by that flag, so
    ``--rate-limit nan`` is refused as ``--rate-limit: ... @ $.run.rate_limit`` (a key the file
    set, and no flag, is left as the file's)."""
    given = {
        f"$.run.{key}.{sub}" if isinstance(value, Mapping) else f"$.run.{key}": key
        for key, value in overrides.run.items()
        for sub in (value if isinstance(value, Mapping) else [None])
    }
    problems = []
    for problem in error.problems:
        path = problem.rpartition(" @ ")[2]
        key = given.get(path)
        if key is not None:
            sub = path.removeprefix(f"$.run.{key}").lstrip(".")
            flag = _RUN_FLAGS.get(f"{key}.{sub}" if key == "ray" else key)
            if flag is not None:
                problem = f"{flag}: {problem}"
        problems.append(problem)
    return ConfigError(error.source, problems)


@frozen
class RunRequest:
    """Everything ``ragleaklab run`` takes: a config file and what its flags set over it.

    Each attribute is a flag of ``ragleaklab run`` (``docs/running.md``); None or empty means
    "as the config file says, else the default". Values are checked when the session prepares,
    with the config file's, so a bad one is reported at its ``$.path`` like a bad file value.
    """

    config_path: Path | None = None
    packs: tuple[str, ...] = ()
    #: ``--exclude``: packs left out (replaces ``[run] exclude`` when given).
    exclude: tuple[str, ...] = ()
    out: Path | None = None
    target: str | None = None
    target_options: Mapping[str, Any] = field(factory=dict)
    epochs: int | None = None
    reducer: str | None = None
    smoke: bool = False
    tags: tuple[str, ...] = ()
    #: ``--exclude-tag``: cases carrying one are left out (replaces ``[run] exclude_tags``).
    exclude_tags: tuple[str, ...] = ()
    thresholds_path: Path | None = None
    tolerate_errors: bool = False
    concurrency: int | None = None
    rate_limit: float | None = None
    resume: bool = False
    restart: bool = False
    record: Path | None = None
    replay: Path | None = None
    allow_shared_state: bool = False
    max_consecutive_failures: int | None = None
    #: ``{pack: rate}``; the key ``""`` sets the rate of every pack.
    max_fail_rates: Mapping[str, float] = field(factory=dict)
    #: ``--max-corrected-rate``: gate on failing rates corrected for the metrics' error.
    max_corrected_rate: float | None = None
    executor: str | None = None
    #: ``--ray-*``: ``address``, ``workers``, ``cpus_per_worker``, ``gpus_per_worker``.
    ray: Mapping[str, Any] = field(factory=dict)
    baseline: Path | None = None
    fail_on: str | None = None
    baseline_level: float | None = None
    force_baseline: bool = False
    #: ``{reporter: file}``: the renderings written beside report.json.
    renderings: Mapping[str, Path] = field(factory=dict, converter=_paths)
    #: The most characters of the Markdown rendering and the step summary (0: no cap).
    markdown_max_chars: int | None = None

    @property
    def selected_tags(self) -> tuple[str, ...]:
        return (*self.tags, "smoke") if self.smoke else self.tags

    def overrides(self) -> Overrides:
        """What this request sets over the config file (:func:`apply_overrides` merges it)."""
        run: dict[str, Any] = {
            "exclude": list(self.exclude) or None,
            "exclude_tags": list(self.exclude_tags) or None,
            "epochs": self.epochs,
            "reducer": self.reducer,
            "tolerate_errors": True if self.tolerate_errors else None,
            "concurrency": self.concurrency,
            "rate_limit": self.rate_limit,
            "out": None if self.out is None else self.out.as_posix(),
            "allow_shared_state": True if self.allow_shared_state else None,
            "max_consecutive_failures": self.max_consecutive_failures,
            "max_fail_rate": self.max_fail_rates.get(""),
            "max_fail_rates": {k: r for k, r in self.max_fail_rates.items() if k},
            "max_corrected_rate": self.max_corrected_rate,
            "executor": self.executor,
            "ray": {k: v for k, v in self.ray.items() if v is not None},
            "markdown_max_chars": self.markdown_max_chars,
        }
        return Overrides(
            target=self.target,
            target_options=dict(self.target_options),
            run={k: v for k, v in run.items() if v is not None},
        )

    def check(self) -> None:
        """The request's own consistency, before any file is read.

        Raises:
            UsageError: Two parts contradict each other.
        """
        if self.record is not None and self.replay is not None:
            raise UsageError("--record and --replay exclude each other")
        if self.resume and self.restart:
            raise UsageError("--resume and --restart exclude each other")
        if self.replay is not None and (self.target is not None or self.target_options):
            raise UsageError(
                "--replay answers from the recording: --target and --target-option would be "
                "ignored, so they are refused (drop them, or run against the target without "
                "--replay)"
            )
        if self.fail_on is not None and self.fail_on not in FAIL_ON:
            raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {self.fail_on!r}")
        if self.baseline_level is not None:
            # The gate's own check, now: after the run it would come too late (every case asked,
            # the journal written).
            try:
                check_level(self.baseline_level, name="--baseline-level")
            except InputError as exc:
                raise UsageError(exc.message) from None
        if self.baseline is None:
            for flag, given in (
                ("--fail-on", self.fail_on not in (None, "verdict")),
                ("--baseline-level", self.baseline_level is not None),
                ("--force-baseline", self.force_baseline),
            ):
                if given:
                    raise UsageError(f"{flag} compares with a baseline: give --baseline FILE")
        for fmt, path in self.renderings.items():
            if path.is_dir():
                raise UsageError(f"--{fmt} {path.as_posix()} is a directory, expected a file")


@frozen
class RunResult:
    """What a finished run wrote and decided.

    Attributes:
        verdict: The gate's verdict (:class:`~ragleaklab_core.gate.Verdict`).
        exit_code: What ``ragleaklab run`` exits with.
        gate: The decision, with its reasons (and the comparison with a baseline).
        report: The ``report.json`` document as written (its per-case lists are read back
            from the run's files as they are walked).
        summary: The text rendering ``ragleaklab run`` prints (``report --format text``).
        written: Every file written, report.json and runs.jsonl first, then the renderings.
        annotations: GitHub Actions workflow commands for the run (printed under Actions).
        markdown_max_chars: The cap on the Markdown rendering in force (0: none), which the
            step summary honours too.
    """

    verdict: Verdict
    exit_code: int
    gate: Gate
    report: Mapping[str, Any]
    summary: str
    out: Path
    written: tuple[Path, ...]
    annotations: tuple[str, ...]
    markdown_max_chars: int = MARKDOWN_MAX_CHARS
    #: The finished run as values (report.json is its encoding).
    outcome: RunOutcome | None = None

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASS


@frozen
class _Prepared:
    """A run whose every input was checked: what :meth:`RunSession.run` acts on."""

    config: Config
    plan: RunPlan
    out: Path
    baseline: RunOutcome | None
    journal: Journal
    executor: Executor
    recorder: Recorder | None
    ledger: PlantLedger


class RunSession:
    """One run of ``ragleaklab run``: :meth:`prepare` checks, :meth:`run` answers, decides and
    writes (preparing first when not yet prepared).

    Args:
        request: The flags of the run.
        progress: Told of each pack and case as they go (the CLI's progress bar).
    """

    def __init__(self, request: RunRequest, *, progress: Progress | None = None) -> None:
        self.request = request
        self.progress = progress
        self._prepared: _Prepared | None = None

    def prepare(self) -> None:
        """Check every input of the run, in the order a user fixes them, before ``out`` is
        touched; then open the journal (the only thing written before answers exist).

        Raises:
            UsageError, ConfigError, InputError, PluginError: nothing was written.
        """
        if self._prepared is not None:
            return
        request = self.request
        request.check()
        baseline = None if request.baseline is None else read_comparable(request.baseline)
        source = command_line_source(request.config_path)
        raw = read_config_file(request.config_path) if request.config_path else {}
        # The file's own [target], before the overrides are merged into it (in place).
        table = raw.get("target")
        configured_target = dict(table) if isinstance(table, dict) else None
        # Where each allowance is set (a flag, or the file's own [run] key, before the merge).
        file_run = raw.get("run")
        sources = AllowanceSources.of(
            dict(file_run) if isinstance(file_run, dict) else None,
            None if request.config_path is None else request.config_path.as_posix(),
            request.overrides(),
        )
        try:
            config = load_config(apply_overrides(raw, request.overrides()), source=source)
        except ConfigError as exc:
            raise _naming_flags(exc, request.overrides()) from None
        if config.run.executor != "ray" and any(v is not None for v in request.ray.values()):
            raise UsageError('--ray-* options need --executor ray (or [run] executor = "ray")')
        out = Path(config.run.out)
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out} exists and is not a directory")
        for flag, folder in (("--record", request.record), ("--replay", request.replay)):
            if folder is not None and folder.exists() and not folder.is_dir():
                raise UsageError(f"{flag} {folder} exists and is not a directory")
        replay = Replay.open(request.replay) if request.replay is not None else None
        if replay is not None and configured_target is not None:
            replay.check_target(configured_target, source=source)
        tags = request.selected_tags
        # Packs (exit 3), tags, the thresholds file, the target's options, the recording, pack
        # isolation: all refused here, before --out is touched.
        plan = plan_suite(
            config,
            packs=request.packs,
            tags=tags,
            thresholds_file=request.thresholds_path,
            replay=replay,
            source=source,
            sources=sources,
        )
        if baseline is not None and not request.force_baseline:
            versions = {p.obj.info().name: p.obj.info().version for p in plan.packs}
            differences = planned_differences(
                baseline,
                versions,
                plan.settings.tags,
                epochs=plan.settings.epochs,
                reducer=plan.settings.reducer,
            )
            if differences:
                raise not_comparable(differences)
        _check_outputs(request, out)
        # Every plugin the run will use is loaded by now (packs, their metrics, the target in
        # plan_suite; the reporters here): one that cannot be used leaves OUT as it was.
        check_reporters(request.renderings)
        description = run_fingerprint(config, plan.packs, tags)
        replayed = f":replay={request.replay}" if request.replay is not None else ""
        journal = Journal(out, description + replayed)
        try:
            journal.check(resume=request.resume, restart=request.restart)
        except InputError as exc:
            raise _naming_planted(exc, out) from None
        executor = executor_for(config)
        start = getattr(executor, "start", None)
        if callable(start):
            start()  # a cluster that cannot be reached is refused before --out is touched
        # What an earlier run in OUT planted and never removed (killed outright, a store that
        # failed) goes first, with this run's target, or the run is refused: nothing is planted
        # over it and nothing is asked.
        ledger = PlantLedger(
            out,
            new_run_id(),
            config={
                "config": None if request.config_path is None else request.config_path.as_posix(),
                "target": config.target.name,
            },
        )
        fresh = plan.peek_fresh_target()
        if fresh is not None:
            before_planting(out, fresh)
        elif read_outstanding(out):
            raise PlantedLeft(
                f"{(out / LEDGER).as_posix()} lists documents an earlier run planted and did not "
                f"remove, and a replay cannot remove them: run `{cleanup_command(out)}` with "
                "that run's target configuration first"
            )
        recorder = (
            Recorder(request.record, resume=request.resume) if request.record is not None else None
        )
        journal.open(resume=request.resume)
        self._prepared = _Prepared(config, plan, out, baseline, journal, executor, recorder, ledger)

    def run(self) -> RunResult:
        """Prepare (unless done), answer every pack, decide, write; the result says what.

        Raises:
            RunInterrupted: Ctrl-C; the answers so far are kept for ``resume``.
            InputError: The baseline cannot be compared with what this run measured (the
                answers are kept for ``resume``; nothing else is written).
        """
        self.prepare()
        prepared = self._prepared
        assert prepared is not None
        request, journal, progress = self.request, prepared.journal, self.progress
        try:
            outcome = run_suite(
                prepared.config,
                on_record=None if progress is None else progress.advance,
                on_pack=None if progress is None else progress.start,
                journal=journal,
                recorder=prepared.recorder,
                plan=prepared.plan,
                executor=prepared.executor,
                ledger=prepared.ledger,
            )
        except KeyboardInterrupt:
            journal.close()
            if prepared.recorder is not None:
                prepared.recorder.close()
            raise RunInterrupted(journal.partial) from None
        finally:
            journal.close()
            # Gone when every planting was removed; else it lists what `cleanup` removes.
            prepared.ledger.finish()
            close_executor(prepared.executor)
            if progress is not None:
                progress.finish()
        # report.json as `ragleaklab report` reads it back: what the gate and every rendering
        # read. Its per-case lists are produced as they are walked, from the run's files.
        finished = build_outcome(
            outcome.verdicts,
            settings=outcome.settings,
            inputs=outcome.inputs,
            config=None if request.config_path is None else request.config_path.as_posix(),
        )
        gate = self._gate(finished, prepared)
        finished = apply_gate(finished, gate)
        document = plain(encode(finished))
        out = prepared.out
        try:
            # All or nothing: every rendering is made, then every file is written to a
            # temporary beside it, and only then are they renamed into place. A failure leaves
            # report.json and runs.jsonl as they were, so the exit code and the directory agree.
            write_all(
                [
                    (out / "runs.jsonl", runs_lines(outcome.verdicts)),
                    (out / "report.json", chunks(document)),
                    *rendered_files(
                        RunReport.of(finished, document),
                        request.renderings,
                        options=_rendering_options(prepared.config),
                    ),
                ]
            )
        except RagleaklabError as exc:
            raise _answers_kept(exc, journal) from None
        journal.finish()
        return RunResult(
            verdict=gate.verdict,
            exit_code=gate.exit_code,
            gate=gate,
            report=document,
            summary=render_summary(document),
            out=out,
            written=(out / "report.json", out / "runs.jsonl", *request.renderings.values()),
            annotations=tuple(github_annotations(document)),
            markdown_max_chars=prepared.config.run.markdown_max_chars,
            outcome=finished,
        )

    def _gate(self, finished: RunOutcome, prepared: _Prepared) -> Gate:
        request = self.request
        try:
            return decide(
                finished,
                fail_on=request.fail_on or "verdict",
                baseline=prepared.baseline,
                provenance=None if request.baseline is None else file_input(request.baseline),
                level=DEFAULT_LEVEL if request.baseline_level is None else request.baseline_level,
                force=request.force_baseline,
            )
        except InputError as exc:
            # Nothing is written, and the answers are kept: the same request with --resume and
            # a baseline it can compare with (or --force-baseline) finishes without asking again.
            raise InputError(
                f"--baseline: {exc.message.rstrip('.')}; the answers are kept in "
                f"{prepared.journal.partial.as_posix()}: run again with --resume",
                source=None if request.baseline is None else request.baseline.as_posix(),
            ) from None


def _rendering_options(config: Config) -> dict[str, Any]:
    """The options the renderings are given, each by the reporters that accept it: the cap on
    a rendering's length (the built-in Markdown's)."""
    return {"max_chars": config.run.markdown_max_chars}


def _check_outputs(request: RunRequest, out: Path) -> None:
    """Refuse, before anything is asked, an output that cannot be written: ``--out`` or a
    rendering in a folder that cannot be made or written, a rendering on the run's own files
    (report.json, runs.jsonl, the journal), on an input of the run or on another rendering.

    Raises:
        UsageError: Naming the flag and the file.
    """
    for name in ("report.json", "runs.jsonl"):
        problem = output_problem(out / name)
        if problem is not None:
            raise UsageError(f"--out {out.as_posix()}: {name} {problem}")
    owned = {
        f"the run's own {name} (--out {out.as_posix()})": out / name
        for name in ("report.json", "runs.jsonl", PARTIAL, META)
    }
    inputs = {
        "--config": request.config_path,
        "--thresholds": request.thresholds_path,
        "--baseline": request.baseline,
    }
    taken = {**owned, **{f"the {flag} file": p for flag, p in inputs.items() if p is not None}}
    for name, path in request.renderings.items():
        flag = f"--{name} {path.as_posix()}"
        problem = output_problem(path)
        if problem is not None:
            raise UsageError(f"{flag}: {problem}")
        for what, other in taken.items():
            if same_file(path, other):
                raise UsageError(
                    f"{flag}: the file is {what}; writing the rendering there would replace it "
                    "(name another file)"
                )
        taken[f"the file of --{name}"] = path
    record = request.record
    if record is not None and (problem := output_problem(record / "index.json")) is not None:
        raise UsageError(f"--record {record.as_posix()}: {problem}")


def _naming_planted(error: InputError, out: Path) -> InputError:
    """*error* (a run refused in OUT), saying what an interrupted run there left planted."""
    left = read_outstanding(out)
    if not left:
        return error
    stores = ", ".join(left.by_store)
    return InputError(
        f"{error.message.rstrip('.')}; the interrupted run also left {left.count} planted "
        f"documents in {stores} (listed in {LEDGER}): --resume and --restart remove them "
        f"first, and so does `{cleanup_command(out)}`",
        source=error.source,
    )


def _answers_kept(error: RagleaklabError, journal: Journal) -> RagleaklabError:
    """*error* (an output that could not be made or written after the cases were answered),
    saying that nothing was written and how to finish without asking again."""
    kept = (
        f"; nothing was written (report.json and runs.jsonl are as they were before this run), "
        f"and the answers are kept in {journal.partial.as_posix()}: fix the output and run the "
        "same command again with --resume (or discard them with --restart)"
    )
    if isinstance(error, InputError):
        return InputError(error.message.rstrip(".") + kept, source=error.source)
    if isinstance(error, PluginRuntimeError):
        return PluginRuntimeError(
            error.group, error.name, error.message.rstrip(".") + kept, case_id=error.case_id
        )
    return error


def run(request: RunRequest, *, progress: Progress | None = None) -> RunResult:
    """Perform the run *request* describes (:class:`RunSession`), as ``ragleaklab run`` does."""
    return RunSession(request, progress=progress).run()


__all__ = ["Progress", "RunRequest", "RunResult", "RunSession", "run"]
