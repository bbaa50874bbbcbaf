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
import time
from collections.abc import Callable, Mapping, Sequence
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
from ragleaklab_core.run.wiring import Wiring, check_wiring
from ragleaklab_core.stats.aggregation import Reducer, reducer
from ragleaklab_core.values import Case, Document, MetricResult, PackInfo, Response

if TYPE_CHECKING:
    from ragleaklab_core.run.recording import Recorder, Replay

log = get_logger(__name__)


@frozen
class RunSettings:
    """How a pack is run.

    Attributes:
        epochs: How many times each case is asked (for non-deterministic targets).
        reducer: The reducer that turns a case's epoch values into one value.
        tags: Run only cases carrying at least one of these tags (empty: every case).
        concurrency: How many cases are asked at once (targets with ``aanswer``, or a
            ``thread_safe`` target); 1 asks them one after the other.
        rate_limit: At most this many requests per second (None: no limit).
        max_consecutive_failures: After this many consecutive transport failures (the target
            could not be reached) the pack stops asking and counts as not tested; 0 never stops.
    """

    epochs: int = field(default=1, validator=attrs.validators.ge(1))
    reducer: str = "mean"
    tags: tuple[str, ...] = ()
    concurrency: int = field(default=1, validator=attrs.validators.ge(1))
    rate_limit: float | None = None
    max_consecutive_failures: int = field(default=5, validator=attrs.validators.ge(0))


#: The ``error.group`` of a case the runner did not ask (the pack stopped before it).
NOT_ASKED = "ragleaklab.run"


@frozen
class CaseRecord:
    """One case in one epoch: a line of ``runs.jsonl``."""

    pack: str
    test_id: str
    epoch: int
    query: str
    answer: str | None
    retrieved: tuple[Mapping[str, Any], ...] | None
    metrics: Mapping[str, Mapping[str, Any]]
    error: Mapping[str, str] | None
    elapsed_ms: float
    target_metadata: Mapping[str, Any] = field(factory=dict)
    resumed: bool = field(default=False, eq=False)  # taken from an interrupted run's journal

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseRecord:
        """The record a ``runs.jsonl`` line holds (the inverse of :meth:`to_dict`)."""
        retrieved = data["retrieved"]
        return cls(
            pack=data["pack"],
            test_id=data["test_id"],
            epoch=data["epoch"],
            query=data["query"],
            answer=data["answer"],
            retrieved=None if retrieved is None else tuple(dict(r) for r in retrieved),
            metrics={k: dict(v) for k, v in data["metrics"].items()},
            error=None if data["error"] is None else dict(data["error"]),
            elapsed_ms=data["elapsed_ms"],
            target_metadata=dict(data.get("target_metadata", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "test_id": self.test_id,
            "epoch": self.epoch,
            "query": self.query,
            "answer": self.answer,
            "retrieved": None if self.retrieved is None else [dict(r) for r in self.retrieved],
            "metrics": {k: dict(v) for k, v in self.metrics.items()},
            "error": None if self.error is None else dict(self.error),
            "target_metadata": dict(self.target_metadata),
            "elapsed_ms": self.elapsed_ms,
        }


@frozen
class CaseResult:
    """One case's outcome, reduced over its epochs.

    Attributes:
        test_id: The case.
        values: Metric value name -> reduced value (only values every epoch produced).
        unscorable: Metric plugin name -> why it could not score the case.
        error: Why the case errored (a plugin raised), or None.
    """

    test_id: str
    values: Mapping[str, float]
    unscorable: Mapping[str, str]
    error: str | None


@frozen
class PackRun:
    """Everything one pack's run produced."""

    pack: LoadedPlugin
    info: PackInfo
    target: LoadedPlugin
    metrics: tuple[LoadedPlugin, ...]
    settings: RunSettings
    lower_is_worse: frozenset[str]
    value_metric: Mapping[str, str]  # value name -> metric plugin name
    records: tuple[CaseRecord, ...]
    results: tuple[CaseResult, ...]
    n_cases_in_pack: int
    #: What went wrong with the target as a whole (ingest, reset, unreachable): per pack, never
    #: per case, and never a pass.
    problems: tuple[str, ...] = ()
    #: True when the pack stopped before asking every case (ingest failed, target unreachable).
    stopped: bool = False
    wiring: Wiring | None = None
    value_names: Mapping[str, str] = field(factory=dict)  # declared value name -> metric
    case_tags: Mapping[str, tuple[str, ...]] = field(factory=dict)  # test_id -> its tags


def _error(group: str, plugin: LoadedPlugin, exc: BaseException) -> dict[str, str]:
    return {
        "group": group,
        "plugin": plugin.name,
        "provider": plugin.provider,
        "message": describe(exc),
    }


def describe(exc: BaseException) -> str:
    """An exception as reports show it: its type and its (secret-free) message."""
    return f"{type(exc).__name__}: {exc}"


def is_transport_failure(exc: BaseException) -> bool:
    """True when *exc* says the system could not be reached (not that it answered badly).

    Targets say so with a ``transport_failure`` attribute on their exception (the built-in
    network targets do); without one, the standard library's connection errors and time-outs
    count.
    """
    flag = getattr(exc, "transport_failure", None)
    if isinstance(flag, bool):
        return flag
    return isinstance(exc, ConnectionError | TimeoutError)


def _retrieved(response: Response) -> tuple[Mapping[str, Any], ...] | None:
    if response.retrieved is None:
        return None
    return tuple(
        {"doc_id": r.doc_id, "chunk_id": r.chunk_id, "score": r.score} for r in response.retrieved
    )


def _metric_dict(result: MetricResult) -> dict[str, Any]:
    return {
        "values": dict(sorted(result.values.items())),
        "evidence": dict(result.evidence),
        "unscorable": result.unscorable,
    }


def _bad_result(metric: LoadedPlugin, result: Any) -> str | None:
    if not isinstance(result, MetricResult):
        return f"returned {type(result).__name__}, expected MetricResult"
    for name, value in result.values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            return f"value {name!r} must be a number in [0, 1], got {value!r}"
    return None


def load_pack(name: str) -> LoadedPlugin:
    """Load pack *name* and check that its ``info()`` is a :class:`PackInfo`."""
    pack = load_plugin(PACKS, name)
    info = pack_info(pack.obj)
    if not isinstance(info, PackInfo):
        raise PluginContractError(
            PACKS,
            failures=[
                PluginLoadFailure(
                    PACKS,
                    name,
                    pack.target,
                    pack.provider,
                    f"info() returned {type(info).__name__}, expected PackInfo",
                )
            ],
        )
    return pack


def _bind(metric: LoadedPlugin, documents: Sequence[Document]) -> LoadedPlugin:
    bind = getattr(metric.obj, "for_corpus", None)
    if bind is None:
        return metric
    return attrs.evolve(metric, obj=bind(documents))


def load_metric(
    name: str,
    info: PackInfo,
    documents: Sequence[Document],
    options: Mapping[str, Any] | None = None,
) -> LoadedPlugin:
    """Metric plugin *name* as a run of the pack *info* scores with it: built from the pack's
    options for it with *options* over them, and bound to the pack's *documents*."""
    plugin = load_plugin(
        METRICS,
        name,
        {**info.metric_options.get(name, {}), **(options or {})},
        path=f"$.metrics.{name}",
    )
    return _bind(plugin, documents)


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
) -> PackRun:
    """Run every (selected) case of *pack* against a fresh target and score it.

    Cases are asked concurrently (``settings.concurrency``, for targets with ``aanswer``) and
    the records are put back in case order, so the result does not depend on timing. From
    inside a running event loop (an async harness), use :func:`arun_pack`; this function then
    runs the pack on a worker thread with its own loop.

    Args:
        pack: The pack, from :func:`load_pack`.
        target_name: The target plugin; a fresh instance is built and ingests the pack.
        target_options: The target's options.
        metric_options: Per metric plugin, options that override the pack's own.
        settings: Epochs, reducer, tag selection, concurrency, rate limit.
        on_record: Called with each record as it completes (progress, streaming).
        completed: Records of an interrupted run, keyed by (test_id, epoch): not asked again.
        replay: Answer from a recording instead of building the target (no network).
        recorder: Store every answer the target gives, for a later replay.

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
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run).result()


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
) -> PackRun:
    """The asynchronous form of :func:`run_pack` (same arguments)."""
    settings = settings or RunSettings()
    reduce = reducer(settings.reducer)
    info: PackInfo = pack_info(pack.obj)
    overrides = metric_options or {}
    documents = tuple(pack.obj.documents())
    all_cases = tuple(pack.obj.cases())
    cases = _select(all_cases, settings.tags, info.name)
    metrics = tuple(
        load_metric(name, info, documents, overrides.get(name)) for name in info.metrics
    )
    if replay is not None:
        target = replay.target_for(info.name)
    else:
        target = load_plugin(TARGETS, target_name, target_options, path="$.target.options")
    session = _TargetSession(target, settings, recorder)
    problems: list[str] = []
    stop: str | None = None
    if recorder is not None:
        recorder.start_pack(info.name)
    try:
        try:
            await session.ingest(documents)
        except Exception as exc:  # the pack's problem, reported with the target's own message
            stop = f"ingest failed: {describe(exc)}"
            problems.append(stop)
            log.error("pack.ingest_failed", pack=info.name, reason=describe(exc))
        records, unreachable = await _ask_all(
            info.name, cases, session, metrics, settings, on_record, completed, stop
        )
        if unreachable is not None:
            problems.append(unreachable)
            stop = unreachable
    finally:
        problems.extend(await session.close())
    if recorder is not None:
        recorder.finish_pack(info, target)
    lower: set[str] = set()
    for m in metrics:
        lower.update(getattr(m.obj, "lower_is_worse", frozenset()))
    value_metric = {
        value: name
        for r in records
        for name, scored in r.metrics.items()
        for value in scored.get("values", {})
    }
    by_case: dict[str, list[CaseRecord]] = {}
    for r in records:
        by_case.setdefault(r.test_id, []).append(r)
    results = tuple(
        _reduce(case, by_case.get(case.test_id, []), metrics, reduce, frozenset(lower))
        for case in cases
    )
    corpus = [d.doc_id for d in documents]
    wiring = check_wiring(
        corpus,
        [
            None if r.retrieved is None else [str(d["doc_id"]) for d in r.retrieved]
            for r in records
            if r.error is None
        ],
    )
    log.info("pack.ran", pack=info.name, cases=len(cases), epochs=settings.epochs)
    return PackRun(
        pack=pack,
        info=info,
        target=target,
        metrics=metrics,
        settings=settings,
        lower_is_worse=frozenset(lower),
        value_metric=dict(sorted(value_metric.items())),
        records=tuple(records),
        results=results,
        n_cases_in_pack=len(all_cases),
        problems=tuple(problems),
        stopped=stop is not None,
        wiring=wiring,
        value_names=_declared_values(metrics),
        case_tags={c.test_id: tuple(c.tags) for c in cases},
    )


def _declared_values(metrics: tuple[LoadedPlugin, ...]) -> dict[str, str]:
    """Value name -> metric, from what metrics declare (``values``), so a value that no case
    produced (every case unscorable) is still attributed to its metric."""
    declared: dict[str, str] = {}
    for m in metrics:
        for name in metric_values(m.obj):
            declared.setdefault(name, m.name)
    return dict(sorted(declared.items()))


class _RateLimiter:
    """Spaces request starts at least ``1 / rate`` seconds apart (None: no limit).

    The lock is held while waiting and the next start is counted from the moment this one
    really starts, not from its planned slot: a waiter the event loop wakes late then delays the
    next one instead of letting two requests start together (what a server's rate limit sees).
    """

    def __init__(self, rate: float | None) -> None:
        self._interval = 0.0 if rate is None else 1.0 / rate
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self._interval:
            return
        async with self._lock:
            delay = self._next - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self._next = time.monotonic() + self._interval


class _TargetSession:
    """One pack's target: ingest, answer (async, threaded or plain), reset and close."""

    def __init__(
        self, target: LoadedPlugin, settings: RunSettings, recorder: Recorder | None = None
    ) -> None:
        self.plugin = target
        self.obj = target.obj
        self.settings = settings
        self.recorder = recorder

    async def ingest(self, documents: tuple[Document, ...]) -> None:
        if hasattr(self.obj, "aingest"):
            await self.obj.aingest(documents)
        else:
            self.obj.ingest(documents)

    async def answer(self, case: Case, epoch: int) -> Response:
        query = case.query
        if hasattr(self.obj, "answer_case"):  # a replayed recording answers by case and epoch
            response = self.obj.answer_case(case.test_id, epoch, query)
        elif hasattr(self.obj, "aanswer"):
            response = await self.obj.aanswer(query)
        elif self.settings.concurrency > 1 and getattr(self.obj, "thread_safe", False):
            response = await asyncio.to_thread(self.obj.answer, query)
        else:
            response = self.obj.answer(query)
        if not isinstance(response, Response):
            raise TypeError(f"answer() returned {type(response).__name__}, expected Response")
        if self.recorder is not None:
            self.recorder.add(case, epoch, response)
        return response

    async def close(self) -> list[str]:
        """Reset, then close; return what failed (a failure of one still runs the other).

        reset removes what ingest planted (even a partial ingest); close releases clients.
        """
        problems = []
        for name in ("reset", "close"):
            try:
                async_hook = getattr(self.obj, f"a{name}", None)
                if callable(async_hook):
                    await async_hook()
                    continue
                hook = getattr(self.obj, name, None)
                if callable(hook):
                    hook()
            except Exception as exc:
                problems.append(f"{name} failed: {describe(exc)}")
                log.error(f"pack.{name}_failed", plugin=self.plugin.name, reason=describe(exc))
        return problems


async def _ask_all(
    pack: str,
    cases: tuple[Case, ...],
    session: _TargetSession,
    metrics: tuple[LoadedPlugin, ...],
    settings: RunSettings,
    on_record: Callable[[CaseRecord], None] | None,
    completed: Mapping[tuple[str, int], CaseRecord] | None,
    stopped: str | None = None,
) -> tuple[list[CaseRecord], str | None]:
    """Ask every case and epoch; return the records in case order and why the pack stopped
    early (the target was unreachable), if it did.

    A case is never dropped: once the pack stops (or when *stopped* says it cannot start), the
    cases not asked are recorded as errored with the reason, so every case is accounted for.
    """
    done = completed or {}
    gate = asyncio.Semaphore(settings.concurrency)
    limiter = _RateLimiter(settings.rate_limit)
    slots: dict[tuple[int, int], CaseRecord] = {}
    streak = _Streak(settings.max_consecutive_failures, stopped)

    async def one(index: int, case: Case, epoch: int) -> None:
        previous = done.get((case.test_id, epoch))
        if previous is not None and previous.error is None and previous.query == case.query:
            record = attrs.evolve(previous, resumed=True)
            if session.recorder is not None:
                session.recorder.keep(previous)
        else:
            async with gate:
                error: dict[str, str] | None = None
                response: Response | None = None
                start = time.perf_counter()
                if streak.reason is not None:
                    error = _not_asked(session.plugin, streak.reason)
                else:
                    await limiter.wait()
                    start = time.perf_counter()
                    try:
                        response = await session.answer(case, epoch)
                    except Exception as exc:  # a target failing on one case must not end the run
                        error = _error(TARGETS, session.plugin, exc)
                        log.warning(
                            "case.errored",
                            pack=pack,
                            case_id=case.test_id,
                            plugin=session.plugin.name,
                            reason=error["message"],
                        )
                        streak.failed(exc)
                    else:
                        streak.answered()
                elapsed = time.perf_counter() - start
            record = _score_case(pack, case, epoch, response, error, metrics, elapsed)
        slots[(index, epoch)] = record
        if on_record is not None:
            on_record(record)

    await asyncio.gather(
        *(one(i, case, e) for i, case in enumerate(cases) for e in range(settings.epochs))
    )
    unreachable = None if stopped is not None else streak.reason
    if unreachable is not None:
        log.error("pack.target_unreachable", pack=pack, reason=unreachable)
    return [slots[key] for key in sorted(slots)], unreachable


class _Streak:
    """Consecutive transport failures; past the limit, the reason the pack stops asking."""

    def __init__(self, limit: int, reason: str | None = None) -> None:
        self.limit = limit
        self.count = 0
        self.reason = reason

    def answered(self) -> None:
        self.count = 0

    def failed(self, exc: BaseException) -> None:
        if not is_transport_failure(exc):
            self.count = 0
            return
        self.count += 1
        if self.reason is None and self.limit and self.count >= self.limit:
            self.reason = (
                f"target unreachable: {self.count} consecutive requests failed to reach it "
                f"(last: {describe(exc)}); the remaining cases were not asked"
            )


def _not_asked(target: LoadedPlugin, reason: str) -> dict[str, str]:
    return {
        "group": NOT_ASKED,
        "plugin": target.name,
        "provider": target.provider,
        "message": f"not asked: {reason}",
    }


def count_asks(pack: LoadedPlugin, settings: RunSettings) -> int:
    """How many answers a run of *pack* with *settings* asks for (for progress bars)."""
    cases = _select(tuple(pack.obj.cases()), settings.tags, pack.name)
    return len(cases) * settings.epochs


def _select(cases: tuple[Case, ...], tags: tuple[str, ...], pack: str) -> tuple[Case, ...]:
    if not tags:
        return cases
    chosen = tuple(c for c in cases if set(c.tags) & set(tags))
    if not chosen:
        raise ConfigError(
            "$.run.tags", [f"pack {pack!r} has no case tagged {', '.join(sorted(tags))}"]
        )
    return chosen


def _score_case(
    pack: str,
    case: Case,
    epoch: int,
    response: Response | None,
    error: dict[str, str] | None,
    metrics: tuple[LoadedPlugin, ...],
    elapsed: float,
) -> CaseRecord:
    scored: dict[str, dict[str, Any]] = {}
    if response is not None:
        for metric in metrics:
            try:
                result = metric.obj.score(case, response)
                problem = _bad_result(metric, result)
                if problem:
                    raise TypeError(problem)
            except Exception as exc:
                error = _error(METRICS, metric, exc)
                log.warning(
                    "case.errored",
                    pack=pack,
                    case_id=case.test_id,
                    plugin=metric.name,
                    reason=error["message"],
                )
                break
            scored[metric.name] = _metric_dict(result)
    return CaseRecord(
        pack=pack,
        test_id=case.test_id,
        epoch=epoch,
        query=case.query,
        answer=None if response is None else response.answer,
        retrieved=None if response is None else _retrieved(response),
        metrics=scored,
        error=error,
        elapsed_ms=round(elapsed * 1000, 3),
        target_metadata={} if response is None else dict(response.metadata),
    )


def _reduce(
    case: Case,
    records: list[CaseRecord],
    metrics: tuple[LoadedPlugin, ...],
    reduce: Reducer,
    lower_is_worse: frozenset[str],
) -> CaseResult:
    mine = records
    errors = [r.error for r in mine if r.error is not None]
    if errors:
        e = errors[0]
        return CaseResult(case.test_id, {}, {}, f"{e['group']}:{e['plugin']}: {e['message']}")
    unscorable: dict[str, str] = {}
    values: dict[str, float] = {}
    for metric in metrics:
        per_epoch = [r.metrics[metric.name] for r in mine]
        reasons = [m["unscorable"] for m in per_epoch if m["unscorable"]]
        if reasons:
            unscorable[metric.name] = reasons[0]
            continue
        names = sorted(set().union(*(m["values"] for m in per_epoch)))
        for name in names:
            series = [m["values"][name] for m in per_epoch if name in m["values"]]
            if len(series) == len(per_epoch):
                values[name] = float(reduce(series, higher_is_worse=name not in lower_is_worse))
    return CaseResult(case.test_id, dict(sorted(values.items())), unscorable, None)


__all__ = [
    "NOT_ASKED",
    "CaseRecord",
    "CaseResult",
    "PackRun",
    "RunSettings",
    "arun_pack",
    "count_asks",
    "describe",
    "is_transport_failure",
    "load_metric",
    "load_pack",
    "run_pack",
]
