"""Config-driven runs: the packs a config names, against its target, gated on its thresholds.

This is what ``ragleaklab run`` and ``calibrate --pack`` call, and what an embedding harness
calls to get the same results from Python::

    from ragleaklab_core.config import Config
    from ragleaklab_core.run.suite import run_suite

    outcome = run_suite(Config(), packs=["relevance-hijack"])
    assert outcome.passed, outcome.verdicts[0].reasons
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from ragleaklab_core._discovery import (
    PACKS,
    TARGETS,
    LoadedPlugin,
    available_names,
    load_plugin,
    pack_info,
)
from ragleaklab_core._log import get_logger
from ragleaklab_core.calibration.thresholds import ThresholdsFile, read_thresholds
from ragleaklab_core.config import AllowanceSources, Config, unstructure
from ragleaklab_core.errors import ConfigError, PluginError, did_you_mean
from ragleaklab_core.gate import (
    Verdict,
    reducer_threshold_problem,
    refuse_unusable,
    run_verdict,
)
from ragleaklab_core.interfaces import ISOLATIONS, target_traits
from ragleaklab_core.run.evaluation import Allowances, PackVerdict, evaluate, not_tested_verdict
from ragleaklab_core.run.executor import Executor, LocalExecutor
from ragleaklab_core.run.journal import Journal, fingerprint
from ragleaklab_core.run.names import check_config_names, check_stored_names
from ragleaklab_core.run.planted import PlantLedger
from ragleaklab_core.run.principal import principal_problem
from ragleaklab_core.run.recording import Recorder, Replay, metric_options
from ragleaklab_core.run.runner import (
    CaseRecord,
    RunSettings,
    check_metric,
    count_asks,
    load_pack,
    run_pack,
    select_cases,
    survey_cases,
    untested_run,
)
from ragleaklab_core.stats.aggregation import reducer
from ragleaklab_core.values import PackInfo, Threshold

log = get_logger(__name__)


@frozen
class SuiteOutcome:
    """The verdicts of every pack, and the inputs the report records."""

    verdicts: tuple[PackVerdict, ...]
    settings: dict[str, Any]
    inputs: dict[str, Any]

    @property
    def verdict(self) -> Verdict:
        """The run's verdict (:func:`ragleaklab_core.gate.run_verdict`): no pack is no pass."""
        return run_verdict(v.status for v in self.verdicts)

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASS


def settings_of(config: Config, tags: Sequence[str] = ()) -> RunSettings:
    """The runner settings a config asks for (``tags`` from the command line win)."""
    return RunSettings(
        epochs=config.run.epochs,
        reducer=config.run.reducer,
        tags=tuple(sorted(set(tags or config.run.tags))),
        exclude_tags=tuple(sorted(set(config.run.exclude_tags))),
        concurrency=config.run.concurrency,
        rate_limit=config.run.rate_limit,
        max_consecutive_failures=config.run.max_consecutive_failures,
    )


def resolve_thresholds(
    info: PackInfo, config: Config, stored: ThresholdsFile | None
) -> dict[str, Threshold]:
    """Thresholds for one pack: the config's win over the thresholds file over the pack's."""
    resolved = dict(info.thresholds)
    if stored is not None:
        resolved.update(stored.thresholds_for(info.name))
    for name, t in config.thresholds.get(info.name, {}).items():
        resolved[name] = Threshold(t.threshold, t.decision_rule, source="config")
    return dict(sorted(resolved.items()))


def pack_names(config: Config, names: Sequence[str] = ()) -> list[str]:
    """The packs to run: given names, else the config's, else every installed pack; less the
    config's ``run.exclude`` (which wins over ``[run] packs``: a config listing every pack and
    ``--exclude`` one leaves that one out).

    Raises:
        ConfigError: An excluded name is not an installed pack (with "did you mean"), a pack
            *names* asks for (``-p``) is excluded (it would be left out without a word), or
            nothing is left.
    """
    chosen = list(names) or list(config.run.packs) or available_names(PACKS)
    if not chosen:
        raise PluginError(PACKS, missing={"(any pack)": []})
    chosen = list(dict.fromkeys(chosen))  # keep order, drop repeats
    excluded = list(dict.fromkeys(config.run.exclude))
    if not excluded:
        return chosen
    installed = available_names(PACKS)
    problems = [
        f"{name!r} is not an installed pack{did_you_mean(name, installed)} @ $.run.exclude"
        for name in excluded
        if name not in installed
    ]
    problems += [
        f"pack {name!r} is asked for (-p) and excluded: drop one @ $.run.exclude"
        for name in dict.fromkeys(names)
        if name in excluded
    ]
    left = [name for name in chosen if name not in excluded]
    if not left:
        problems.append(
            f"every pack of the run is excluded ({', '.join(excluded)}): nothing would be "
            "tested @ $.run.exclude"
        )
    if problems:
        raise ConfigError("$.run.exclude", problems)
    return left


def isolation_of(target: Any) -> str:
    """How a target keeps packs apart: ``"fresh"`` (a new instance holds no earlier pack's
    state), ``"reset"`` (its reset removes what ingest planted) or ``"shared"`` (documents it
    ingests outlive it and nothing removes them). A target that declares nothing is ``"reset"``
    when it has a reset hook, else ``"fresh"`` (the runner builds one instance per pack)."""
    if isinstance(target, LoadedPlugin):
        return target.target_traits.isolation
    return target_traits(target).isolation


@frozen
class RunPlan:
    """A run whose inputs were all checked before anything is asked or written.

    Attributes:
        asks: Pack name -> how many answers its run asks for (its selected cases times the
            epochs), counted in the one read of its cases the checks needed.
    """

    packs: tuple[LoadedPlugin, ...]
    settings: RunSettings
    thresholds_path: Path
    stored: ThresholdsFile
    explicit_thresholds: bool
    replay: Replay | None
    asks: Mapping[str, int] = attrs.field(factory=dict)
    #: Where each allowance in force was set (shown with every verdict, written in report.json).
    sources: AllowanceSources = attrs.field(factory=AllowanceSources)
    #: Pack name -> why the run cannot test it, known before anything is asked (its cases ask
    #: as a principal the target cannot carry): reported not tested beside the others.
    not_tested: Mapping[str, str] = attrs.field(factory=dict)
    #: The target as checked (its identity names the system tested even when no pack runs).
    target: LoadedPlugin | None = None
    # The target built to check the options, never used: the first pack runs against it, so a
    # run builds one target per pack. A list, emptied when taken, so that it is used only once.
    _fresh: list[LoadedPlugin] = attrs.field(factory=list, alias="fresh")

    def take_fresh_target(self) -> LoadedPlugin | None:
        """The checked, never-used target (once; None after, or when replaying)."""
        return self._fresh.pop() if self._fresh else None

    def peek_fresh_target(self) -> LoadedPlugin | None:
        """The same target, left in place (it removes what an earlier run left planted before
        the first pack plants with it)."""
        return self._fresh[-1] if self._fresh else None


def plan_suite(
    config: Config,
    *,
    packs: Sequence[str] = (),
    tags: Sequence[str] = (),
    thresholds_file: Path | None = None,
    replay: Replay | None = None,
    source: str = "the configuration",
    sources: AllowanceSources | None = None,
) -> RunPlan:
    """Check every input of a run before it starts: every name the configuration uses
    (:mod:`ragleaklab_core.run.names`), packs, tags, thresholds, the target's options (it is
    built once and closed), the recording, and pack isolation.

    Args:
        source: Where *config* came from, for its errors (the file, with command-line options).
        sources: Where the allowances were set; default: "the configuration" for each one
            not at its default (a caller that knows the flags and the file says which).

    Raises:
        ConfigError, InputError, PluginError: What a run would otherwise find half-way.
    """
    names = pack_names(config, packs)
    check_config_names(config, source=source)
    loaded = tuple(load_pack(name) for name in names)  # unknown or broken packs: exit 3
    # Every metric of every pack, built as the run builds it (a misspelt member, an import
    # error, options that do not fit): refused now, not after the first pack wrote a journal.
    for pack in loaded:
        info = pack_info(pack.obj)
        for metric in info.metrics:
            check_metric(metric, info, config.metrics.get(metric))
    settings = settings_of(config, tags)
    # A tag no case carries is a usage error now, not later.
    surveyed = {pack.name: survey_cases(pack, settings) for pack in loaded}
    asks = {name: n for name, (n, _) in surveyed.items()}
    # Tags select cases carrying any of them, so a misspelt one beside a real one (--tag smoke
    # --tag hard-case) would select nothing of its own without a word: each must be carried.
    carried = set().union(*(tags for _, tags in surveyed.values()))
    for key, flag, named in (
        ("tags", "--tag", settings.tags),
        ("exclude_tags", "--exclude-tag", settings.exclude_tags),
    ):
        missing = sorted(set(named) - carried)  # an excluded tag nothing carries: a typo too
        if missing:
            raise ConfigError(
                f"$.run.{key}",
                [
                    f"no case of {', '.join(p.name for p in loaded)} is tagged {t!r} "
                    f"({flag}, [run] {key}) @ $.run.{key}"
                    for t in missing
                ],
            )
    explicit = thresholds_file is not None
    path = thresholds_file or Path(config.run.thresholds_file)
    stored = read_thresholds(path, missing_ok=not explicit)
    check_stored_names(stored)
    # A stored threshold of a pack this run gates that can never fail (flags nothing, has no
    # value): refused now, not found after every case was asked.
    refuse_unusable(stored, {pack.obj.info().name for pack in loaded})
    _check_reduced_thresholds(config, loaded, settings, stored)
    fresh = []
    not_tested: dict[str, str] = {}
    target: LoadedPlugin | None = None
    if replay is not None:
        for pack in loaded:
            # Every pack recorded, every line readable, and recorded as this run would ask it:
            # the same pack version, metric options, and every selected case and epoch.
            info = pack_info(pack.obj)
            replay.check_pack(
                info,
                select_cases(pack.obj.cases(), settings.tags, info.name, settings.exclude_tags),
                epochs=settings.epochs,
                metrics=metric_options(info, config.metrics),
            )
    else:
        target = _check_target(config, loaded)
        for pack in loaded:
            # Every pack, before the first is run: a pack asking as a principal the target
            # cannot carry is reported not tested beside the others, never the end of the run.
            problem = principal_problem(pack, settings, target)
            if problem is not None:
                not_tested[pack.name] = problem
        fresh.append(target)
    chosen = sources if sources is not None else configured_sources(config)
    return RunPlan(
        loaded,
        settings,
        path,
        stored,
        explicit,
        replay,
        asks,
        chosen,
        not_tested=not_tested,
        target=target,
        fresh=fresh,
    )


def configured_sources(config: Config, where: str = "the configuration") -> AllowanceSources:
    """Sources of a configuration whose origin is unknown: *where* for every allowance not at
    its default."""
    run = config.run
    return AllowanceSources(
        where if run.max_fail_rate else "default",
        {pack: where for pack in run.max_fail_rates},
        where if run.tolerate_errors else "default",
        where if run.max_corrected_rate is not None else "default",
    )


def _check_reduced_thresholds(
    config: Config, packs: Sequence[LoadedPlugin], settings: RunSettings, stored: ThresholdsFile
) -> None:
    """Refuse a threshold in force that no case reduced by the run's reducer could fail
    (:func:`ragleaklab_core.gate.reducer_threshold_problem`), naming where it was set."""
    chosen = reducer(settings.reducer)
    problems = []
    for pack in packs:
        info = pack.obj.info()
        for name, t in resolve_thresholds(info, config, stored).items():
            if t.value is None:
                continue
            problem = reducer_threshold_problem(chosen.name, chosen.kind, t.value, t.decision_rule)
            if problem is not None:
                problems.append(
                    f"{info.name} {name} (threshold from {t.source}): {problem} "
                    f"@ $.thresholds.{info.name}.{name}"
                )
    if problems:
        raise ConfigError("$.run.reducer", problems)


def _check_target(config: Config, packs: Sequence[LoadedPlugin]) -> LoadedPlugin:
    # Built once to check its options; the first pack then runs against it (it has ingested
    # nothing). Never closed here: that could close an app that lives in the user's module.
    target = load_plugin(
        TARGETS, config.target.name, config.target.options, path="$.target.options"
    )
    isolation = isolation_of(target)
    ingesting = [p.name for p in packs if any(True for _ in p.obj.documents())]
    if isolation == "shared" and len(ingesting) > 1 and not config.run.allow_shared_state:
        raise ConfigError(
            "$.target",
            [
                f"target {config.target.name!r} ingests the pack's documents but cannot remove "
                f"them again, so the {len(ingesting)} packs of this run "
                f"({', '.join(ingesting)}) would each see the documents of the packs before it "
                "and the results would depend on pack order. Give the target a way to reset "
                "(http: reset_url; python: reset_callable, or a factory that builds a fresh "
                "app), run one pack per invocation, or accept shared state with "
                "--allow-shared-state @ $.run.allow_shared_state"
            ],
        )
    return target


def executor_for(config: Config) -> Executor:
    """The executor ``[run] executor`` names (not started: the Ray executor connects to its
    cluster on first use, or when its ``start()`` is called)."""
    if config.run.executor == "ray":
        from ragleaklab_core.run.ray_executor import RayExecutor, RayOptions

        return RayExecutor(RayOptions.from_config(config.run.ray))
    return LocalExecutor()


def close_executor(executor: Executor) -> None:
    """Release what the executor holds (a Ray cluster it started)."""
    close = getattr(executor, "close", None)
    if callable(close):
        close()


def file_input(path: Path) -> dict[str, Any]:
    """Provenance of an input file: its path as given and its sha256."""
    return {"path": path.as_posix(), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def run_suite(
    config: Config,
    *,
    packs: Sequence[str] = (),
    tags: Sequence[str] = (),
    thresholds_file: Path | None = None,
    on_record: Callable[[CaseRecord], None] | None = None,
    on_pack: Callable[[LoadedPlugin, int], None] | None = None,
    journal: Journal | None = None,
    recorder: Recorder | None = None,
    replay: Replay | None = None,
    plan: RunPlan | None = None,
    executor: Executor | None = None,
    sources: AllowanceSources | None = None,
    ledger: PlantLedger | None = None,
) -> SuiteOutcome:
    """Run the packs against the config's target and gate each on its thresholds.

    Args:
        config: The configuration (target, metric options, thresholds, epochs...).
        packs: Pack names; default: the config's ``run.packs``, else every installed pack.
        tags: Run only cases with one of these tags (``smoke``); default: the config's.
        thresholds_file: The thresholds file; default: ``run.thresholds_file`` when it exists.
        on_record: Called with every case record as it completes.
        on_pack: Called with each pack and its number of selected cases before it runs.
        journal: Stream records to this journal; its completed records are not asked again.
        recorder: Record every answer for a later replay.
        replay: Answer from this recording instead of the config's target.
        plan: The checked inputs from :func:`plan_suite` (then *packs*, *tags*,
            *thresholds_file* and *replay* are taken from it); checked here when not given.
        executor: Who answers (one for every pack); default: the one ``[run] executor``
            names, built here and closed at the end (a caller that passes one closes it).
        sources: Where the allowances were set (see :func:`plan_suite`), without *plan*.
        ledger: Where the ids of documents planted in a store that outlives the run are
            recorded before each pack plants them (``<out>/planted.jsonl``).
    """
    if plan is None:
        plan = plan_suite(
            config,
            packs=packs,
            tags=tags,
            thresholds_file=thresholds_file,
            replay=replay,
            sources=sources,
        )
    path, stored, settings, replay = plan.thresholds_path, plan.stored, plan.settings, plan.replay
    verdicts = []
    chosen = executor or executor_for(config)
    try:
        for pack in plan.packs:
            untestable = plan.not_tested.get(pack.name)
            if untestable is not None and plan.target is not None:
                log.warning("pack.not_tested", pack=pack.name, reason=untestable)
                untested = untested_run(pack, plan.target, settings, untestable)
                verdicts.append(not_tested_verdict(untested, untestable))
                continue
            if on_pack is not None:
                asks = plan.asks.get(pack.name)
                on_pack(pack, count_asks(pack, settings) if asks is None else asks)
            name = pack.obj.info().name
            run = run_pack(
                pack,
                target_name=config.target.name,
                target_options=config.target.options,
                metric_options=config.metrics,
                settings=settings,
                on_record=on_record,
                journal=None if journal is None else journal.write_line,
                completed=None if journal is None else journal.completed.get(name),
                replay=replay,
                recorder=recorder,
                executor=chosen,
                fresh_target=plan.take_fresh_target(),
                checked=True,
                ledger=ledger,
            )
            verdicts.append(
                evaluate(
                    run,
                    resolve_thresholds(run.info, config, stored),
                    allowances=Allowances(
                        config.run.fail_rate_for(name),
                        plan.sources.fail_rate(name),
                        config.run.tolerate_errors,
                        plan.sources.tolerate_errors,
                        config.run.max_corrected_rate,
                        plan.sources.max_corrected_rate,
                    ),
                )
            )
    finally:
        if executor is None:
            close_executor(chosen)
    inputs: dict[str, Any] = {
        "thresholds_file": file_input(path) if stored.packs and path.is_file() else None
    }
    run_settings = unstructure(config.run)
    run_settings["tags"] = list(settings.tags)
    run_settings.pop("out", None)
    # Who answered does not change the answers: report.json is the same for every executor.
    run_settings.pop("executor", None)
    run_settings.pop("ray", None)
    run_settings.pop("markdown_max_chars", None)  # a rendering's, not the measurement's
    run_settings["replay"] = None if replay is None else replay.directory.as_posix()
    # Where each allowance in force was set (each pack's own are in its "allowances").
    run_settings["allowance_sources"] = plan.sources.to_dict()
    return SuiteOutcome(tuple(verdicts), run_settings, inputs)


def run_fingerprint(config: Config, packs: Sequence[LoadedPlugin], tags: Sequence[str]) -> str:
    """What must not change between an interrupted run and its ``--resume``."""
    return fingerprint(
        {
            "target": unstructure(config.target),
            "metrics": config.metrics,
            "packs": [(p.name, p.obj.info().version) for p in packs],
            "epochs": config.run.epochs,
            "tags": sorted(set(tags or config.run.tags)),
            # Absent when empty: a journal written before exclusions resumes as before.
            **(
                {"exclude_tags": sorted(set(config.run.exclude_tags))}
                if config.run.exclude_tags
                else {}
            ),
        }
    )


__all__ = [
    "ISOLATIONS",
    "RunPlan",
    "SuiteOutcome",
    "close_executor",
    "configured_sources",
    "executor_for",
    "isolation_of",
    "pack_names",
    "plan_suite",
    "resolve_thresholds",
    "run_fingerprint",
    "run_suite",
    "settings_of",
]
