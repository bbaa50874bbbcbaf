"""Executors: who answers and scores a pack's cases, in this process or elsewhere.

The runner reads a pack's cases as a stream and hands them, one :class:`Ask` (a case in one
epoch) at a time, to an executor; the executor answers each ask with the target, scores it with
the pack's metrics and gives back a :class:`CaseRecord` through ``emit``, in whatever order the
answers come. The runner alone puts records in case order, journals and aggregates them, so the
report does not depend on the executor or on timing.

:class:`LocalExecutor` answers in this process, ``run.concurrency`` asks at a time. The Ray
executor (``ragleaklab_core.run.ray_executor``, extra ``ragleaklab[ray]``) answers on Ray
actors, each building its own target and metrics from the same :class:`WorkerSpec`; both call
:func:`answer_asks` to do the work, so a case is answered and scored the same way wherever it
runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs
from attrs import frozen

from ragleaklab_core._discovery import METRICS, TARGETS, LoadedPlugin
from ragleaklab_core._log import get_logger
from ragleaklab_core._redact import redact_text
from ragleaklab_core._signals import notice, shielded
from ragleaklab_core._wellformed import repair_response
from ragleaklab_core.errors import PluginContractError
from ragleaklab_core.interfaces import TargetTraits, target_traits
from ragleaklab_core.run.planted import (
    Planting,
    PlantLedger,
    StoreLock,
    cleanup_command,
    new_run_id,
    run_key,
)
from ragleaklab_core.run.principal import PrincipalUnsupported, unsupported_problem
from ragleaklab_core.run.recording import RecordedError
from ragleaklab_core.run.records import (
    NOT_ASKED,
    CaseRecord,
    RunSettings,
    mask_record,
    repair_record,
)
from ragleaklab_core.values import Case, Document, MetricResult, Response

if TYPE_CHECKING:
    from ragleaklab_core.run.recording import Recorder

log = get_logger(__name__)


@frozen
class Ask:
    """One case in one epoch, with its place in the run's order.

    Attributes:
        seq: Position in the pack's (case, epoch) order: ``index * epochs + epoch``.
        index: The case's position among the selected cases.
        epoch: Which epoch (0-based).
        case: The case.
    """

    seq: int
    index: int
    epoch: int
    case: Case


@frozen
class WorkerSpec:
    """What a worker in another process needs to build the same target and metrics: names and
    options only (plain data, so it pickles), never live objects.

    Attributes:
        pack: The pack's plugin name (installed on the worker too).
        target_name: The target plugin's name.
        target_options: The target's options.
        metric_options: Per metric plugin, options over the pack's own.
        settings: Epochs, concurrency, rate limit and the rest.
        replay: The recording directory to answer from instead of the target, or None.
        run_id: The run's id: what the target plants is named after it, and a worker that
            only answers (the driver planted) tells its target, so that it knows the
            documents the driver planted as this run's own.
    """

    pack: str
    target_name: str
    target_options: Mapping[str, Any]
    metric_options: Mapping[str, Mapping[str, Any]]
    settings: RunSettings
    replay: str | None = None
    run_id: str = attrs.field(factory=new_run_id)


@frozen
class PackWork:
    """A pack's run as an executor receives it.

    Attributes:
        pack: The pack (already loaded by the driver).
        documents: The documents the target ingests.
        target: The target as the driver built it (the local executor answers with it; others
            use it for its identity, and to ingest once into a shared external system).
        metrics: The metrics as the driver built them (bound to the documents).
        settings: How the pack is run.
        spec: The same, as names and options, for workers that build their own.
        recorder: Where answers are recorded for a later replay, or None.
        ledger: Where what the target plants in a store that outlives the run is recorded
            before it is planted, or None (a library caller's run: nothing recorded).
        principal_once_built: See below.
    """

    pack: LoadedPlugin
    documents: tuple[Document, ...]
    target: LoadedPlugin
    metrics: tuple[LoadedPlugin, ...]
    settings: RunSettings
    spec: WorkerSpec
    recorder: Recorder | None = None
    ledger: PlantLedger | None = None
    #: The target could not say when it was loaded whether it can ask as a principal (a python
    #: factory's app exists only after ingest): :meth:`stop_once_built` judges it then, before
    #: any case, in every executor alike.
    principal_once_built: bool = False

    def stop_once_built(self, support: bool | None) -> str | None:
        """Why none of the pack's asks is asked, given what the target, built and ingested,
        says of principals (``target_traits(obj).principal_support``, read again: a factory's
        app did not exist when the plugin was loaded), or None.

        Every executor calls it once its target is ready and before it asks anything (a Ray
        worker reports the support of its own target), so the rule is the runner's alone.
        """
        if not self.principal_once_built or support is not False:
            return None
        return unsupported_problem(self.pack, self.settings, self.target)


@frozen
class Execution:
    """How an executor's work on a pack ended.

    Attributes:
        problems: What went wrong with the target as a whole (ingest, reset, close).
        stopped: Why the remaining asks were not asked (ingest failed, target unreachable), or
            None when every ask was answered or errored on its own.
        retried: Asks answered again because the worker answering them was lost.
    """

    problems: tuple[str, ...] = ()
    stopped: str | None = None
    retried: int = 0


#: What an executor calls with each ask and its record, in any order.
Emit = Callable[[Ask, "CaseRecord"], None]


class Executor(Protocol):
    """Answers and scores a pack's asks; see the module docstring."""

    @property
    def name(self) -> str:
        """What reports call it (``local``, ``ray``)."""
        ...

    def in_flight(self, settings: RunSettings) -> int:
        """How many asks it works on at once (the runner reads that far ahead, no further)."""
        ...

    async def execute(self, work: PackWork, asks: AsyncIterator[Ask], emit: Emit) -> Execution:
        """Answer and score every ask (through :func:`answer_asks`) and emit its record."""
        ...


def describe(exc: BaseException) -> str:
    """An exception as reports show it: its type and its message, secret-free.

    A plugin's message may quote what it was given (an app failing to connect names its
    DSN): every registered secret and every credential written in it (a URL's password, a
    connection string's ``Password=``) is replaced by ``***`` before it reaches ``report.json``,
    ``runs.jsonl``, a log line or the console.
    """
    return redact_text(f"{type(exc).__name__}: {exc}")  # well-formed too (lone surrogates)


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


def plugin_error(group: str, plugin: LoadedPlugin, exc: BaseException) -> dict[str, str]:
    """A record's ``error``: which plugin raised what."""
    return {
        "group": group,
        "plugin": plugin.name,
        "provider": plugin.provider,
        "message": describe(exc),
    }


def not_asked(target: LoadedPlugin, reason: str) -> dict[str, str]:
    """The ``error`` of an ask the pack stopped before."""
    return {
        "group": NOT_ASKED,
        "plugin": target.name,
        "provider": target.provider,
        "message": f"not asked: {reason}",
    }


class RateLimiter:
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


class Streak:
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


class PackTarget:
    """One pack's target as a run drives it: ingest (what it plants recorded first), answer
    (async, threaded or plain), reset and close (what it planted checked gone).

    The embedding API's :class:`~ragleaklab_core.TargetSession` is built on it; this one is the
    runner's own (named apart, so that one name is one class).
    """

    def __init__(
        self,
        target: LoadedPlugin,
        settings: RunSettings,
        recorder: Recorder | None = None,
        *,
        ledger: PlantLedger | None = None,
        pack: str = "",
        run_id: str | None = None,
    ) -> None:
        self.plugin = target
        self.obj = target.obj
        self.traits = target.target_traits  # read once, when the target was loaded
        self.settings = settings
        self.recorder = recorder
        self.ledger = ledger
        self.pack = pack
        self.run_id = run_id or (ledger.run_id if ledger is not None else new_run_id())
        self.planting: Planting | None = None
        self._lock: StoreLock | None = None

    @property
    def accepts_principal(self) -> bool:
        return self.traits.accepts_principal

    async def ingest(self, documents: Sequence[Document]) -> None:
        await self._record_planting(documents)
        if self.traits.aingest:
            await self.obj.aingest(documents)
        else:
            self.obj.ingest(documents)

    def tell_run(self, documents: Sequence[Document]) -> None:
        """For a pack target that answers what another process planted (a Ray worker when the
        driver ingests): tell the target the run, so the planted documents are its own."""
        if plants_into(self.obj, self.traits) is not None and self.traits.planted_ids:
            self.obj.planted_ids(documents, run=run_key(self.run_id, self.pack))

    async def _record_planting(self, documents: Sequence[Document]) -> None:
        """Before a store that outlives the run is touched: wait for its lock, then record the
        ids about to be planted (durably) in the run's ledger."""
        store = plants_into(self.obj, self.traits)
        if store is None or not documents:
            return
        if not self.traits.planted_ids:
            raise PluginContractError(
                f"target {self.plugin.name!r} plants into {store} (plants_into) but has no "
                "planted_ids(documents, *, run): what it plants could not be recorded before it "
                "is planted, so nothing is"
            )
        run_id = self.run_id
        ids = self.obj.planted_ids(documents, run=run_key(run_id, self.pack))
        ids = tuple(ids) if isinstance(ids, Sequence) and not isinstance(ids, str) else None
        if ids is None or len(ids) != len(documents) or not all(isinstance(i, str) for i in ids):
            raise PluginContractError(
                f"target {self.plugin.name!r}: planted_ids must return one string id per "
                f"document ({len(documents)})"
            )
        lock = StoreLock(store)
        await lock.aacquire()
        self._lock = lock
        self.planting = Planting(run_id, self.pack, self.plugin.name, store, ids)
        if self.ledger is not None:
            self.ledger.planted(self.planting)

    async def answer(self, case: Case, epoch: int) -> Response:
        query = case.query
        # Only a case with a principal passes one: targets written before principals existed
        # keep their answer(query) signature and answer every other case as before.
        extra: dict[str, str] = {}
        traits = self.traits
        if case.principal is not None and not traits.answer_case:
            if not self.accepts_principal:
                raise PrincipalUnsupported(
                    f"case {case.test_id!r} asks as a principal, and target "
                    f"{self.plugin.name!r} cannot ask as one (its answer/aanswer takes no "
                    "'principal' keyword); use a target that passes it to the system"
                )
            extra["principal"] = case.principal
        if traits.answer_case:  # a replayed recording answers by case and epoch
            response = self.obj.answer_case(case.test_id, epoch, query, principal=case.principal)
        elif traits.aanswer:
            response = await self.obj.aanswer(query, **extra)
        elif self.settings.concurrency > 1 and traits.thread_safe:
            response = await asyncio.to_thread(self.obj.answer, query, **extra)
        else:
            response = self.obj.answer(query, **extra)
        if not isinstance(response, Response):
            raise TypeError(f"answer() returned {type(response).__name__}, expected Response")
        if self.recorder is not None:
            self.recorder.add(case, epoch, response)
        return response

    async def close(self) -> list[str]:
        """Reset, then close; return what failed (a failure of one still runs the other).

        reset removes what ingest planted (even a partial ingest); close releases clients. What
        was planted in a store that outlives the run is then checked gone (``remove_planted``)
        and marked removed in the ledger, and the store's lock released; an interrupt during
        the removal is held once (see :mod:`ragleaklab_core._signals`).
        """
        planting = self.planting
        if planting is None:
            return await self._reset_and_close()
        interrupted = _cancelling()
        doing = f"removing {len(planting.ids)} planted documents from {planting.store}"
        if interrupted:
            notice(f"{doing}...")
        try:
            with shielded(lambda: doing, interrupted=interrupted):
                problems = await self._reset_and_close()
                left = await self._still_planted(planting, problems)
        except BaseException:
            self._left_behind(planting, len(planting.ids))
            raise
        finally:
            if self._lock is not None:
                self._lock.release()
        if left:
            problems.append(self._left_behind(planting, len(left)))
        else:
            if self.ledger is not None:
                self.ledger.removed(planting.store, planting.ids)
            if interrupted:
                notice(f"removed {len(planting.ids)} planted documents from {planting.store}")
        self.planting = None
        return problems

    async def _still_planted(self, planting: Planting, problems: list[str]) -> tuple[str, ...]:
        """What *planting* left in its store after reset: all of it when reset failed, else
        what ``remove_planted`` (asked to remove them again) says the store still holds."""
        if any(p.startswith("reset failed") for p in problems):
            return planting.ids
        traits, ids = self.traits, list(planting.ids)
        try:
            if traits.aremove_planted:
                left = await self.obj.aremove_planted(ids)
            elif traits.remove_planted:
                left = self.obj.remove_planted(ids)
            else:
                return ()
        except Exception as exc:
            problems.append(f"removing planted documents failed: {describe(exc)}")
            return planting.ids
        return tuple(str(i) for i in left or ())

    def _left_behind(self, planting: Planting, count: int) -> str:
        problem = f"{count} planted documents are still in {planting.store}"
        if self.ledger is not None:
            problem += (
                f": their ids are in {self.ledger.path.as_posix()}; remove them with "
                f"`{cleanup_command(self.ledger.directory)}`"
            )
        notice(problem)
        log.error("pack.planted_left", pack=self.pack, store=planting.store, count=count)
        return problem

    async def _reset_and_close(self) -> list[str]:
        problems = []
        obj, traits = self.obj, self.traits
        # The async form wins; each hook is looked up only when the traits say it is there.
        hooks: tuple[tuple[str, Callable[[], Any] | None, Callable[[], Any] | None], ...] = (
            ("reset", obj.areset if traits.areset else None, obj.reset if traits.reset else None),
            ("close", obj.aclose if traits.aclose else None, obj.close if traits.close else None),
        )
        for name, async_hook, hook in hooks:
            try:
                if async_hook is not None:
                    await async_hook()
                    continue
                if hook is not None:
                    hook()
            except Exception as exc:
                problems.append(f"{name} failed: {describe(exc)}")
                log.error(f"pack.{name}_failed", plugin=self.plugin.name, reason=describe(exc))
        return problems


def plants_into(target: Any, traits: TargetTraits) -> str | None:
    """The store *target* plants into when what it plants outlives the process, else None."""
    if "plants_into" not in traits.present:
        return None
    store = getattr(target, "plants_into", None)
    return store if isinstance(store, str) and store else None


def _cancelling() -> bool:
    """Whether the running task is being cancelled (an interrupt is ending the pack)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return False
    return task is not None and task.cancelling() > 0


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


def bad_result(result: Any) -> str | None:
    """Why a metric's *result* is refused (not a MetricResult, a value outside [0, 1]), or
    None."""
    if not isinstance(result, MetricResult):
        return f"returned {type(result).__name__}, expected MetricResult"
    for name, value in result.values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            return f"value {name!r} must be a number in [0, 1], got {value!r}"
    return None


def record_case(
    pack: str,
    case: Case,
    epoch: int,
    response: Response | None,
    error: dict[str, str] | None,
    metrics: Sequence[LoadedPlugin],
    elapsed: float,
) -> CaseRecord:
    """The record of one ask: the response scored by every metric (a metric that raises makes
    the record errored, naming it). Not the embedding API's ``score_case``, which scores with
    one metric and returns its result."""
    scored: dict[str, dict[str, Any]] = {}
    repaired: tuple[str, ...] = ()
    if response is not None:
        # Made well-formed before any metric reads it: the text scored is the text written
        # and recorded, so a replay scores it the same (see ragleaklab_core._wellformed).
        response, repaired = repair_response(response)
        for metric in metrics:
            try:
                result = metric.obj.score(case, response)
                problem = bad_result(result)
                if problem:
                    raise TypeError(problem)
            except Exception as exc:
                error = plugin_error(METRICS, metric, exc)
                log.warning(
                    "case.errored",
                    pack=pack,
                    case_id=case.test_id,
                    plugin=metric.name,
                    reason=error["message"],
                )
                break
            scored[metric.name] = _metric_dict(result)
    # Scored above on the real text; what is written (runs.jsonl, report.json, the journal)
    # has this run's secrets masked, here where the record is made (on a Ray worker too,
    # whose own environment may hold a secret the driver never sees).
    return mask_record(
        repair_record(
            CaseRecord(
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
                principal=case.principal,
            ),
            repaired,
        )
    )


async def answer_asks(
    pack: str,
    session: PackTarget,
    metrics: Sequence[LoadedPlugin],
    settings: RunSettings,
    asks: AsyncIterator[Ask],
    emit: Emit,
    stopped: str | None = None,
    *,
    limiter: RateLimiter | None = None,
    streak: Streak | None = None,
) -> str | None:
    """Answer and score *asks* with ``settings.concurrency`` workers; return why the pack
    stopped early (the target became unreachable), if it did.

    An ask is never dropped: once the pack stops (or when *stopped* says it cannot start), the
    asks left are emitted as errored with the reason, so every case is accounted for.

    A caller that answers a pack in several calls (a Ray worker, one batch at a time) passes its
    own *limiter* and *streak*, so request spacing and consecutive failures carry over from one
    batch to the next instead of starting afresh with each.
    """
    gate = asyncio.Lock()  # one worker at a time takes the next ask from the stream
    limiter = limiter or RateLimiter(settings.rate_limit)
    if streak is None:
        streak = Streak(settings.max_consecutive_failures, stopped)
    elif stopped is not None and streak.reason is None:
        streak.reason = stopped
    already = streak.reason

    async def take() -> Ask | None:
        async with gate:
            return await anext(asks, None)

    async def worker() -> None:
        while (ask := await take()) is not None:
            emit(ask, await _answer(pack, session, metrics, ask, limiter, streak))

    await asyncio.gather(*(worker() for _ in range(settings.concurrency)))
    unreachable = None if already is not None else streak.reason
    if unreachable is not None:
        log.error("pack.target_unreachable", pack=pack, reason=unreachable)
    return unreachable


async def _answer(
    pack: str,
    session: PackTarget,
    metrics: Sequence[LoadedPlugin],
    ask: Ask,
    limiter: RateLimiter,
    streak: Streak,
) -> CaseRecord:
    error: dict[str, str] | None = None
    response: Response | None = None
    start = time.perf_counter()
    if streak.reason is not None:
        error = not_asked(session.plugin, streak.reason)
        if session.recorder is not None:
            session.recorder.add_error(ask.case, ask.epoch, error)
    else:
        await limiter.wait()
        start = time.perf_counter()
        try:
            response = await session.answer(ask.case, ask.epoch)
        except Exception as exc:  # a target failing on one case must not end the run
            if isinstance(exc, RecordedError) and exc.not_asked:  # not asked when recorded
                error = not_asked(session.plugin, exc.reason)
                elapsed = time.perf_counter() - start
                return record_case(pack, ask.case, ask.epoch, None, error, metrics, elapsed)
            error = plugin_error(TARGETS, session.plugin, exc)
            log.warning(
                "case.errored",
                pack=pack,
                case_id=ask.case.test_id,
                plugin=session.plugin.name,
                reason=error["message"],
            )
            streak.failed(exc)
            if session.recorder is not None:  # a replay reproduces the error (recording.py)
                session.recorder.add_error(
                    ask.case, ask.epoch, error, transport_failure=is_transport_failure(exc)
                )
        else:
            streak.answered()
    elapsed = time.perf_counter() - start
    return record_case(pack, ask.case, ask.epoch, response, error, metrics, elapsed)


class LocalExecutor:
    """Answers in this process: ingest, then ``run.concurrency`` asks at a time, then reset."""

    name = "local"

    def in_flight(self, settings: RunSettings) -> int:
        return settings.concurrency

    async def execute(self, work: PackWork, asks: AsyncIterator[Ask], emit: Emit) -> Execution:
        pack = work.spec.pack
        session = PackTarget(
            work.target,
            work.settings,
            work.recorder,
            ledger=work.ledger,
            pack=pack,
            run_id=work.spec.run_id,
        )
        problems: list[str] = []
        stop: str | None = None
        try:
            try:
                await session.ingest(work.documents)
            except Exception as exc:  # the pack's problem, reported with the target's own words
                stop = f"ingest failed: {describe(exc)}"
                problems.append(stop)
                log.error("pack.ingest_failed", pack=pack, reason=describe(exc))
            if stop is None:
                stop = work.stop_once_built(target_traits(session.obj).principal_support)
                if stop is not None:
                    problems.append(stop)
            unreachable = await answer_asks(
                pack, session, work.metrics, work.settings, asks, emit, stop
            )
            if unreachable is not None:
                problems.append(unreachable)
                stop = unreachable
        finally:
            problems.extend(await session.close())
        return Execution(problems=tuple(problems), stopped=stop)


def evolve_resumed(record: CaseRecord) -> CaseRecord:
    """*record*, taken from an interrupted run's journal."""
    return attrs.evolve(record, resumed=True)


__all__ = [
    "NOT_ASKED",
    "Ask",
    "Emit",
    "Execution",
    "Executor",
    "LocalExecutor",
    "PackTarget",
    "PackWork",
    "RateLimiter",
    "Streak",
    "WorkerSpec",
    "answer_asks",
    "bad_result",
    "describe",
    "is_transport_failure",
    "not_asked",
    "plants_into",
    "plugin_error",
    "record_case",
]
