"""The runner: one pack, one target, its metrics; every case and epoch recorded, nothing dropped.

``run_pack`` composes plugins that are already chosen (by name, through the loader) and returns
a :class:`PackRun`: the per-epoch records that ``runs.jsonl`` holds and the per-case values,
reduced over epochs, that the verdict and calibration use. A plugin that raises on a case does
not stop the run and is never skipped: the case is recorded as errored, with the plugin's
identity, and counted apart from passes and failures.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence, Sized
from typing import TYPE_CHECKING, Any

import attrs
from attrs import field, frozen

from ragleaklab_core._discovery import (
    METRICS,
    PACKS,
    TARGETS,
    LoadedPlugin,
    load_plugin,
    metric_values,
    pack_info,
)
from ragleaklab_core._log import get_logger
from ragleaklab_core.config import DEFAULT_TARGET
from ragleaklab_core.errors import ConfigError, PluginContractError, PluginLoadFailure
from ragleaklab_core.run.case_kinds import kind_of
from ragleaklab_core.run.executor import (
    NOT_ASKED,
    Ask,
    Executor,
    LocalExecutor,
    PackWork,
    WorkerSpec,
    describe,
    is_transport_failure,
)
from ragleaklab_core.run.planted import PlantLedger, new_run_id
from ragleaklab_core.run.principal import principal_support, refuse_principals
from ragleaklab_core.run.recording import metric_options as requested_options
from ragleaklab_core.run.records import CaseRecord, CaseResult, RunSettings, case_selected
from ragleaklab_core.run.sink import PackSink, reduce_case
from ragleaklab_core.run.wiring import Wiring
from ragleaklab_core.stats.aggregation import reducer
from ragleaklab_core.values import Case, Document, PackInfo

if TYPE_CHECKING:
    from ragleaklab_core.run.recording import Recorder, Replay

log = get_logger(__name__)


@frozen
class PackRun:
    """Everything one pack's run produced.

    ``records`` (every case epoch) and ``results`` (every case, reduced over its epochs) are
    sequences in case order kept on disk (:class:`~ragleaklab_core.run.spool.Spool`): iterate
    them; a run of a million cases does not hold them in memory.
    """

    pack: LoadedPlugin
    info: PackInfo
    target: LoadedPlugin
    metrics: tuple[LoadedPlugin, ...]
    settings: RunSettings
    lower_is_worse: frozenset[str]
    value_metric: Mapping[str, str]  # value name -> metric plugin name
    records: Sequence[CaseRecord]
    results: Sequence[CaseResult]
    n_cases_in_pack: int
    #: What went wrong with the target as a whole (ingest, reset, unreachable): per pack, never
    #: per case, and never a pass.
    problems: tuple[str, ...] = ()
    #: True when the pack stopped before asking every case (ingest failed, target unreachable).
    stopped: bool = False
    wiring: Wiring | None = None
    value_names: Mapping[str, str] = field(factory=dict)  # declared value name -> metric
    #: The executor that answered (``local``, ``ray``), and how many case epochs it answered
    #: again because the worker answering them was lost.
    executor: str = "local"
    retried: int = 0
    #: How many of the pack's cases are attacks (tagged ``attack``), and how many of those the
    #: tags selected: a selection that kept none tested no attack.
    n_attacks_in_pack: int = 0
    n_attacks_selected: int = 0
    #: Every case's test id, in case order, as ``results`` has them (kept apart so that walking
    #: the ids does not read every result); None: read them from ``results``.
    case_ids: Sequence[str] | None = None
    #: What a reader should know about how the pack was answered (a replay names the cases
    #: the recorded run errored on): shown with the pack's warnings.
    notes: tuple[str, ...] = ()

    @property
    def ids(self) -> Sequence[str]:
        """Every case's test id, in case order."""
        if self.case_ids is not None:
            return self.case_ids
        return [r.test_id for r in self.results]

    @property
    def case_tags(self) -> dict[str, tuple[str, ...]]:
        """test_id -> the case's tags (read from ``results``)."""
        return {r.test_id: r.tags for r in self.results}


def _replay_notes(replay: Replay | None, pack: str) -> tuple[str, ...]:
    note = None if replay is None else replay.errored_note(pack)
    return () if note is None else (note,)


def load_pack(name: str) -> LoadedPlugin:
    """Load pack *name* and check that its ``info()`` is a :class:`PackInfo`."""
    pack = load_plugin(PACKS, name)
    info = pack_info(pack.obj)
    if not isinstance(info, PackInfo):
        raise _unusable(pack, f"info() returned {type(info).__name__}, expected PackInfo")
    return pack


def _unusable(plugin: LoadedPlugin, problem: str) -> PluginContractError:
    """*plugin* loaded but cannot be used as declared (exit 3)."""
    return PluginContractError(
        plugin.group,
        failures=[
            PluginLoadFailure(plugin.group, plugin.name, plugin.target, plugin.provider, problem)
        ],
    )


def _bind(metric: LoadedPlugin, documents: Sequence[Document]) -> LoadedPlugin:
    if not metric.metric_traits.for_corpus:
        return metric
    # evolve reads the bound metric's own traits (LoadedPlugin.traits is derived from obj).
    return attrs.evolve(metric, obj=metric.obj.for_corpus(documents))


def load_metric(
    name: str,
    info: PackInfo,
    documents: Sequence[Document],
    options: Mapping[str, Any] | None = None,
) -> LoadedPlugin:
    """Metric plugin *name* as a run of the pack *info* scores with it: built from the pack's
    options for it with *options* over them, and bound to the pack's *documents*.

    Raises:
        PluginContractError: It declares an optional member in the wrong shape (a
            ``lower_is_worse`` that is no collection of value names, say): ignoring the
            declaration would reduce and report its values in the wrong direction.
    """
    return _bind(check_metric(name, info, options), documents)


def check_metric(
    name: str, info: PackInfo, options: Mapping[str, Any] | None = None
) -> LoadedPlugin:
    """Metric plugin *name* built as a run of the pack *info* builds it (:func:`load_metric`),
    not yet bound to the pack's documents: what a run checks of each metric before anything
    is written.

    Raises:
        PluginError, PluginContractError, ConfigError: as :func:`load_metric`.
    """
    plugin = load_plugin(
        METRICS,
        name,
        {**info.metric_options.get(name, {}), **(options or {})},
        path=f"$.metrics.{name}",
    )
    if plugin.metric_traits.problems:
        raise _unusable(plugin, "; ".join(plugin.metric_traits.problems))
    return plugin


def run_pack(
    pack: LoadedPlugin,
    *,
    target_name: str = DEFAULT_TARGET,
    target_options: Mapping[str, Any] | None = None,
    metric_options: Mapping[str, Mapping[str, Any]] | None = None,
    settings: RunSettings | None = None,
    on_record: Callable[[CaseRecord], None] | None = None,
    completed: Mapping[tuple[str, int], CaseRecord] | None = None,
    replay: Replay | None = None,
    recorder: Recorder | None = None,
    executor: Executor | None = None,
    journal: Callable[[str], None] | None = None,
    fresh_target: LoadedPlugin | None = None,
    checked: bool = False,
    ledger: PlantLedger | None = None,
) -> PackRun:
    """Run every (selected) case of *pack* against a fresh target and score it.

    Cases are read from the pack as a stream and asked concurrently (``settings.concurrency``,
    for targets with ``aanswer``); the records are put back in case order, so the result does
    not depend on timing or on the executor. From inside a running event loop (an async
    harness), use :func:`arun_pack`; this function then runs the pack on a worker thread with
    its own loop.

    Args:
        pack: The pack, from :func:`load_pack`.
        target_name: The target plugin; a fresh instance is built and ingests the pack.
        target_options: The target's options.
        metric_options: Per metric plugin, options that override the pack's own.
        settings: Epochs, reducer, tag selection, concurrency, rate limit.
        on_record: Called with each record as it completes (progress, journal).
        completed: Records of an interrupted run, keyed by (test_id, epoch): not asked again.
        replay: Answer from a recording instead of building the target (no network).
        recorder: Store every answer the target gives, for a later replay.
        executor: Who answers (default: :class:`~ragleaklab_core.run.executor.LocalExecutor`,
            in this process).
        journal: Called with each new record's JSON line as it completes (what runs.jsonl
            holds; records kept from ``completed`` are not passed again).
        fresh_target: The target, already built from *target_name* and *target_options* and
            never used (the one :func:`~ragleaklab_core.run.suite.plan_suite` built to check
            the options), so that it is not built twice; default: built here.
        checked: The selected cases were already checked (a tag no case carries, a principal
            the target cannot carry): they are not read again for it.
        ledger: Where the ids of documents the target plants in a store that outlives the run
            are recorded before they are planted (``<out>/planted.jsonl``), or None.

    Raises:
        PluginError: A plugin could not be loaded or built (never raised for per-case errors).
        ConfigError: Bad options or reducer.
    """
    run = arun_pack(
        pack,
        target_name=target_name,
        target_options=target_options,
        metric_options=metric_options,
        settings=settings,
        on_record=on_record,
        completed=completed,
        replay=replay,
        recorder=recorder,
        executor=executor,
        journal=journal,
        fresh_target=fresh_target,
        checked=checked,
        ledger=ledger,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run).result()


#: How far the runner reads ahead of the oldest unanswered case, beyond what the executor works
#: on at once: records answered out of order wait this long for their turn.
READ_AHEAD = 256


async def arun_pack(
    pack: LoadedPlugin,
    *,
    target_name: str = DEFAULT_TARGET,
    target_options: Mapping[str, Any] | None = None,
    metric_options: Mapping[str, Mapping[str, Any]] | None = None,
    settings: RunSettings | None = None,
    on_record: Callable[[CaseRecord], None] | None = None,
    completed: Mapping[tuple[str, int], CaseRecord] | None = None,
    replay: Replay | None = None,
    recorder: Recorder | None = None,
    executor: Executor | None = None,
    journal: Callable[[str], None] | None = None,
    fresh_target: LoadedPlugin | None = None,
    checked: bool = False,
    ledger: PlantLedger | None = None,
) -> PackRun:
    """The asynchronous form of :func:`run_pack` (same arguments)."""
    settings = settings or RunSettings()
    chosen: Executor = executor or LocalExecutor()
    reduce = reducer(settings.reducer)
    info: PackInfo = pack_info(pack.obj)
    overrides = metric_options or {}
    documents = tuple(pack.obj.documents())
    if settings.selecting and not checked:
        _check_selection(pack.obj.cases(), settings, info.name)
    metrics = tuple(
        load_metric(name, info, documents, overrides.get(name)) for name in info.metrics
    )
    if replay is not None:
        target = replay.target_for(info.name)
    else:
        target = fresh_target or load_plugin(
            TARGETS, target_name, target_options, path="$.target.options"
        )
        if not checked:
            refuse_principals(pack, settings, target)
    # A target that knows only once built (a python factory's app) is judged then, by the same
    # rule, before any case: the executor only reports what its built target says.
    once_built = replay is None and principal_support(target) is None
    lower: set[str] = set()
    for m in metrics:
        lower.update(m.metric_traits.lower_is_worse)
    sink = PackSink(
        metrics,
        reduce,
        frozenset(lower),
        settings.epochs,
        (d.doc_id for d in documents),
        on_record,
        journal,
        chosen.in_flight(settings),
        chosen.in_flight(settings) + READ_AHEAD,
    )
    tally = _Tally()
    spec = WorkerSpec(
        pack=pack.name,
        target_name=target_name,
        target_options=dict(target_options or {}),
        metric_options={k: dict(v) for k, v in overrides.items()},
        settings=settings,
        replay=None if replay is None else replay.directory.as_posix(),
        run_id=ledger.run_id if ledger is not None else new_run_id(),
    )
    work = PackWork(pack, documents, target, metrics, settings, spec, recorder, ledger, once_built)
    if recorder is not None:
        recorder.start_pack(info.name)
    execution = await chosen.execute(
        work, _asks(pack, settings, sink, tally, completed or {}, recorder), sink.emit
    )
    sink.finish(tally.asks)
    if recorder is not None:
        recorder.finish_pack(info, target, requested_options(info, overrides))
    log.info("pack.ran", pack=info.name, cases=tally.selected, epochs=settings.epochs)
    return PackRun(
        pack=pack,
        info=info,
        target=target,
        metrics=metrics,
        settings=settings,
        lower_is_worse=frozenset(lower),
        value_metric=dict(sorted(sink.value_metric.items())),
        records=sink.records,
        results=sink.results,
        case_ids=sink.ids,
        n_cases_in_pack=tally.in_pack,
        notes=_replay_notes(replay, info.name),
        problems=execution.problems,
        stopped=execution.stopped is not None,
        wiring=sink.wiring.result(),
        value_names=_declared_values(metrics),
        executor=chosen.name,
        retried=execution.retried,
        n_attacks_in_pack=tally.attacks_in_pack,
        n_attacks_selected=tally.attacks_selected,
    )


def untested_run(
    pack: LoadedPlugin, target: LoadedPlugin, settings: RunSettings, reason: str
) -> PackRun:
    """A pack's run that asked nothing because *reason* was known before it started: its
    identity, its size and the target it could not be tested on, for the report."""
    cases = pack.obj.cases()
    return PackRun(
        pack=pack,
        info=pack_info(pack.obj),
        target=target,
        metrics=(),
        settings=settings,
        lower_is_worse=frozenset(),
        value_metric={},
        records=(),
        results=(),
        n_cases_in_pack=len(cases) if isinstance(cases, Sized) else sum(1 for _ in cases),
        problems=(reason,),
        stopped=True,
    )


class _Tally:
    """What the stream of a pack's cases held, counted as it was read."""

    def __init__(self) -> None:
        self.in_pack = 0
        self.selected = 0
        self.asks = 0
        self.attacks_in_pack = 0
        self.attacks_selected = 0


async def _asks(
    pack: LoadedPlugin,
    settings: RunSettings,
    sink: PackSink,
    tally: _Tally,
    completed: Mapping[tuple[str, int], CaseRecord],
    recorder: Recorder | None,
) -> AsyncIterator[Ask]:
    """The pack's selected cases in each epoch, read lazily and no further ahead than the sink's
    window; a case epoch an interrupted run completed goes straight to the sink."""
    seq = 0
    for case in pack.obj.cases():
        tally.in_pack += 1
        attack = kind_of(case.tags) == "attack"
        tally.attacks_in_pack += attack
        if not settings.selects(case.tags):
            continue
        tally.attacks_selected += attack
        index = tally.selected
        tally.selected += 1
        for epoch in range(settings.epochs):
            await sink.room(seq)
            ask = Ask(seq, index, epoch, case)
            seq += 1
            tally.asks = seq
            previous = completed.get((case.test_id, epoch))
            if previous is not None and previous.error is None and previous.query == case.query:
                if recorder is not None:
                    recorder.keep(previous)
                sink.keep(ask, attrs.evolve(previous, resumed=True))
            else:
                sink.hand(ask)
                yield ask


def _declared_values(metrics: tuple[LoadedPlugin, ...]) -> dict[str, str]:
    """Value name -> metric, from what metrics declare (``values``), so a value that no case
    produced (every case unscorable) is still attributed to its metric."""
    declared: dict[str, str] = {}
    for m in metrics:
        for name in metric_values(m.obj):
            declared.setdefault(name, m.name)
    return dict(sorted(declared.items()))


def count_asks(pack: LoadedPlugin, settings: RunSettings) -> int:
    """How many answers a run of *pack* with *settings* asks for (for progress bars).

    Raises:
        ConfigError: ``settings.tags`` select no case of the pack.
    """
    return survey_cases(pack, settings)[0]


def survey_cases(pack: LoadedPlugin, settings: RunSettings) -> tuple[int, frozenset[str]]:
    """How many answers a run of *pack* with *settings* asks for, and which of the wanted
    ``settings.tags`` and ``settings.exclude_tags`` its cases carry, in one read of its cases
    (none without tags).

    Raises:
        ConfigError: The tags select no case of the pack.
    """
    cases = pack.obj.cases()
    if not settings.selecting and isinstance(cases, Sized):  # a CaseFile knows its length
        return len(cases) * settings.epochs, frozenset()
    named = set(settings.tags) | set(settings.exclude_tags)
    selected, carried = 0, set()
    for case in cases:
        carried |= named.intersection(case.tags)
        selected += settings.selects(case.tags)
    if not selected:
        raise _nothing_selected(pack.name, settings)
    return selected * settings.epochs, frozenset(carried)


def select_cases(
    cases: Iterable[Case], tags: Sequence[str], pack: str, exclude_tags: Sequence[str] = ()
) -> tuple[Case, ...]:
    """The cases a run with *tags* (and *exclude_tags*) asks, in the pack's order (no tags:
    every case).

    Raises:
        ConfigError: No case is selected.
    """
    chosen = tuple(c for c in cases if case_selected(c.tags, tags, exclude_tags))
    if (tags or exclude_tags) and not chosen:
        raise _nothing_selected(
            pack, RunSettings(tags=tuple(tags), exclude_tags=tuple(exclude_tags))
        )
    return chosen


def _check_selection(cases: Iterable[Case], settings: RunSettings, pack: str) -> None:
    if not any(settings.selects(c.tags) for c in cases):  # stops at the first match
        raise _nothing_selected(pack, settings)


def _nothing_selected(pack: str, settings: RunSettings) -> ConfigError:
    if not settings.tags:
        return ConfigError(
            "$.run.exclude_tags",
            [
                f"pack {pack!r}: every case carries a tag of "
                f"{', '.join(sorted(settings.exclude_tags))} (--exclude-tag, [run] exclude_tags)"
            ],
        )
    excluded = (
        f" and none of {', '.join(sorted(settings.exclude_tags))}" if settings.exclude_tags else ""
    )
    return ConfigError(
        "$.run.tags",
        [f"pack {pack!r} has no case tagged {', '.join(sorted(settings.tags))}{excluded}"],
    )


__all__ = [
    "NOT_ASKED",
    "CaseRecord",
    "CaseResult",
    "PackRun",
    "RunSettings",
    "arun_pack",
    "check_metric",
    "count_asks",
    "describe",
    "is_transport_failure",
    "load_metric",
    "load_pack",
    "reduce_case",
    "run_pack",
    "select_cases",
    "untested_run",
]
