"""The Ray executor (``--executor ray``, extra ``ragleaklab[ray]``): cases answered on Ray actors.

Each worker is a Ray actor (:class:`RayWorker`) built from the pack's
:class:`~ragleaklab_core.run.executor.WorkerSpec`, plain names and options sent once per actor:
it loads the pack by name, its documents and metrics, and builds its own target (or opens the
recording it replays), in its own process and on the node Ray places it on, so a model target
that needs a GPU lives where the GPU is. The driver sends it batches of asks and gets records
back (``CaseRecord.to_dict()``, plus each response when the run records); the driver alone puts
them in order, journals, records and writes the reports, exactly as with the local executor, so
report.json does not depend on the executor.

Where ingest and reset happen is the target's to say, with an optional ``ingest_scope``:

* ``"system"`` (the http target): the documents land in an external
  system every process reaches. The driver ingests once with its own target before any worker
  answers, and resets and closes it when the pack is done; workers only answer (and close their
  clients).
* ``"process"`` (the default: the reference and python targets): each worker ingests the
  documents into its own target instance when it starts, and resets and closes it at the end.

Either way an ingest that fails stops the pack as the local executor does: every case is
recorded as not asked, with the reason, never as a pass.

``run.rate_limit`` is split evenly across the workers (each spaces its own requests), and
``run.concurrency`` applies within each worker. A worker whose target becomes unreachable
(``run.max_consecutive_failures``) stops the pack: the cases not yet asked are recorded as not
asked. A worker that dies (its process killed, its node lost) has its unfinished batches answered
again by a replacement; ``Execution.retried`` counts those asks, and no ask is lost or counted
twice because the driver only takes the records of batches that came back whole.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import socket
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import attrs
from attrs import field, frozen
from attrs import validators as v

from ragleaklab_core._discovery import TARGETS, LoadedPlugin, load_plugin, pack_info
from ragleaklab_core._log import configure_cli_logging, get_logger
from ragleaklab_core.errors import ExecutorUnavailable
from ragleaklab_core.interfaces import INGEST_SCOPES, target_traits
from ragleaklab_core.run.executor import (
    Ask,
    Emit,
    Execution,
    PackTarget,
    PackWork,
    RateLimiter,
    Streak,
    WorkerSpec,
    answer_asks,
    describe,
)
from ragleaklab_core.run.records import CaseRecord, RunSettings
from ragleaklab_core.values import Case, Response

if TYPE_CHECKING:
    from ragleaklab_core.config import RayConfig
    from ragleaklab_core.run.recording import Recorder

log = get_logger(__name__)

#: What to install when Ray is missing.
INSTALL_HINT = "pip install 'ragleaklab[ray]'"
#: Batches each worker holds at once: one it answers and one waiting, so it never idles while
#: the driver takes in the last batch's records and sends the next.
OUTSTANDING = 2
#: A pack gives up (an error, exit 3) once its workers have died this many times each.
DEATHS_PER_WORKER = 3
#: Seconds to reach a cluster's address before calling it unreachable.
CONNECT_TIMEOUT = 5.0
#: Seconds a worker gets to reset and close its target when the pack is done.
CLOSE_TIMEOUT = 60.0


@frozen
class RayOptions:
    """How the Ray executor runs (``[run.ray]``; docs/scaling.md).

    Attributes:
        address: An existing cluster: ``host:port`` of its head (``ray start --head``),
            ``ray://host:port`` (Ray Client) or ``auto`` (the cluster ``RAY_ADDRESS`` or the
            last ``ray start`` on this machine names); None starts a local cluster for the run
            and stops it at the end.
        workers: Ray actors answering at once; None: the cluster's CPUs divided by
            ``cpus_per_worker`` (and its GPUs by ``gpus_per_worker`` when that is set), at
            least 1.
        cpus_per_worker: CPUs Ray reserves for each worker.
        gpus_per_worker: GPUs Ray reserves for each worker (a model target per GPU).
        batch_size: Asks sent to a worker at a time (benchmarks/bench_ray.py: 16 was the
            fastest of 4, 16 and 64 for a CPU-bound target, and less is sent again when a
            worker dies; larger batches cost the driver less per record, for fast targets and
            many workers).
        runtime_env: Ray's runtime environment for the workers (``pip``, ``working_dir``,
            ``env_vars``...), passed to ``ray.init``: how third-party packs reach the workers.
    """

    address: str | None = None
    workers: int | None = field(default=None, validator=v.optional(v.ge(1)))
    cpus_per_worker: float = field(default=1.0, validator=v.gt(0))
    gpus_per_worker: float = field(default=0.0, validator=v.ge(0))
    batch_size: int = field(default=16, validator=v.ge(1))
    runtime_env: Mapping[str, Any] | None = None

    @classmethod
    def from_config(cls, config: RayConfig) -> RayOptions:
        """The options a ``[run.ray]`` table gives."""
        return cls(
            address=config.address,
            workers=config.workers,
            cpus_per_worker=config.cpus_per_worker,
            gpus_per_worker=config.gpus_per_worker,
            batch_size=config.batch_size,
            runtime_env=None if config.runtime_env is None else dict(config.runtime_env),
        )


def ingest_scope(target: Any) -> str:
    """Where *target*'s documents live: ``"system"`` (an external system every process reaches:
    the driver ingests once) or ``"process"`` (in the target instance: each worker ingests)."""
    if isinstance(target, LoadedPlugin):
        return target.target_traits.ingest_scope
    return target_traits(target).ingest_scope


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorUnavailable(
            f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}"
        ) from None
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """The (host, port) to try for *address*, or None when it names no socket (``auto``)."""
    text = address.removeprefix("ray://")
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse an address nothing listens on, within *timeout* seconds.

    ``ray.init`` retries an unreachable cluster for minutes; a CI job should hear at once that
    the address is wrong.

    Raises:
        ExecutorUnavailable: Nothing accepts a connection at *address*.
    """
    where = _host_port(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout):
            pass
    except OSError as exc:
        raise ExecutorUnavailable(
            f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}): start one "
            "with `ray start --head` and pass its address to --ray-address (or [run.ray] "
            "address), or drop --ray-address to start a local cluster"
        ) from None


# ---- the worker (a Ray actor) --------------------------------------------------------------------


class _Captured:
    """Stands in for the recorder on a worker: keeps each response until its record is sent."""

    def __init__(self) -> None:
        self.responses: dict[tuple[str, int], Response] = {}

    def add(self, case: Case, epoch: int, response: Response) -> None:
        self.responses[(case.test_id, epoch)] = response

    def add_error(self, case: Case, epoch: int, error: Any, **_: Any) -> None:
        """Nothing to keep: the driver records the error from the record it is sent."""


async def _each(items: Iterable[Ask]) -> AsyncIterator[Ask]:
    for item in items:
        yield item


class RayWorker:
    """One worker of a pack: builds its target and metrics from a :class:`WorkerSpec` and
    answers batches of asks with :func:`answer_asks` on its own event loop.

    Ray makes it an actor (``ray.remote(RayWorker)``); it is plain Python, so it imports and
    tests without Ray. Its methods run one at a time, in order.
    """

    def __init__(self, spec: WorkerSpec, ingest: bool, record: bool, log_level: int | None):
        if log_level is not None:
            verbosity = 2 if log_level <= logging.DEBUG else 1 if log_level <= logging.INFO else 0
            configure_cli_logging(verbosity)
        self._spec = spec
        self._ingest = ingest
        self._captured = _Captured() if record else None
        self._loop = asyncio.new_event_loop()
        self._session: PackTarget | None = None
        self._metrics: tuple[Any, ...] = ()
        self._limiter = RateLimiter(spec.settings.rate_limit)
        self._streak = Streak(spec.settings.max_consecutive_failures)

    def setup(self) -> tuple[str, str | bool | None]:
        """Load the pack, its metrics and the target, and ingest (``"process"`` scope).

        Returns:
            ``("ok", support)``: ready, with what the target, built (and ingested), says of
            principals (``principal_support``: a python factory's app exists only now; the
            driver decides what follows, by the runner's rule); ``("ingest", reason)`` when
            the ingest failed, or ``("build", message)`` when the pack or a plugin cannot be
            loaded here (not installed on this node, say).
        """
        from ragleaklab_core.run.recording import Replay
        from ragleaklab_core.run.runner import load_metric, load_pack

        spec = self._spec
        try:
            pack = load_pack(spec.pack)
            info = pack_info(pack.obj)
            documents = tuple(pack.obj.documents())
            self._metrics = tuple(
                load_metric(name, info, documents, spec.metric_options.get(name))
                for name in info.metrics
            )
            if spec.replay is not None:
                target = Replay.open(Path(spec.replay)).target_for(info.name)
            else:
                target = load_plugin(
                    TARGETS, spec.target_name, spec.target_options, path="$.target.options"
                )
        except Exception as exc:
            return "build", str(exc) or describe(exc)
        self._session = PackTarget(
            target,
            spec.settings,
            cast("Recorder", self._captured),
            pack=spec.pack,
            run_id=spec.run_id,
        )
        if not self._ingest:
            self._session.tell_run(documents)  # the driver planted them, under this run
        if self._ingest:
            try:
                self._loop.run_until_complete(self._session.ingest(documents))
            except Exception as exc:
                log.error("pack.ingest_failed", pack=spec.pack, reason=describe(exc))
                return "ingest", f"ingest failed: {describe(exc)}"
        return "ok", target_traits(self._session.obj).principal_support

    def answer(
        self, asks: Sequence[Ask]
    ) -> tuple[list[tuple[int, dict[str, Any], dict[str, Any] | None]], str | None]:
        """Answer and score *asks*; return each one's ``(seq, record, response)`` (the response
        only when the run records) and why the pack stopped, if it just did."""
        from ragleaklab_core.run.recording import masked_response

        assert self._session is not None, "setup() first"
        out: list[tuple[int, dict[str, Any], dict[str, Any] | None]] = []
        captured = self._captured

        def emit(ask: Ask, record: CaseRecord) -> None:
            response = None
            if captured is not None:
                kept = captured.responses.pop((ask.case.test_id, ask.epoch), None)
                # Masked here: this worker's environment may hold a secret the driver lacks.
                response = None if kept is None else masked_response(kept)
            out.append((ask.seq, record.to_dict(), response))

        reason = self._loop.run_until_complete(
            answer_asks(
                self._spec.pack,
                self._session,
                self._metrics,
                self._spec.settings,
                _each(asks),
                emit,
                limiter=self._limiter,
                streak=self._streak,
            )
        )
        return out, reason

    def close(self) -> list[str]:
        """Reset and close the target (``"process"`` scope), or only close its clients
        (``"system"``: the driver resets the shared system); return what failed."""
        session = self._session
        self._session = None
        try:
            if session is None:  # setup failed before the target was built
                return []
            if self._ingest:
                return self._loop.run_until_complete(session.close())
            return self._loop.run_until_complete(_close_only(session))
        finally:
            self._loop.close()


async def _close_only(session: PackTarget) -> list[str]:
    try:
        if session.traits.aclose:
            await session.obj.aclose()
        elif session.traits.close:
            session.obj.close()
    except Exception as exc:
        log.error("pack.close_failed", plugin=session.plugin.name, reason=describe(exc))
        return [f"close failed: {describe(exc)}"]
    return []


# ---- the driver ----------------------------------------------------------------------------------


class RayExecutor:
    """Answers on Ray actors; see the module docstring.

    One executor serves a whole run: :meth:`start` connects to the cluster (or starts a local
    one) once, each pack gets fresh workers, and :meth:`close` stops a cluster it started.
    """

    name = "ray"

    def __init__(self, options: RayOptions | None = None) -> None:
        self.options = options or RayOptions()
        self._ray: Any = None
        self._remote: Any = None
        self._started = False
        self._workers = 0

    @property
    def workers(self) -> int:
        """Workers per pack (known once started)."""
        return self._workers

    def start(self) -> None:
        """Connect to the cluster, or start a local one (nothing when already done).

        Raises:
            ExecutorUnavailable: Ray is not installed, or the cluster cannot be reached.
        """
        if self._ray is not None:
            return
        ray = _import_ray()
        options = self.options
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"logging_level": logging.WARNING}
            if options.runtime_env is not None:
                kwargs["runtime_env"] = dict(options.runtime_env)
            if options.address in (None, "local"):
                # A test tool should not report usage to a third party unasked (Ray's own
                # RAY_USAGE_STATS_ENABLED=1 opts in).
                os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
                kwargs["include_dashboard"] = False
            else:
                check_reachable(options.address)
            # "local", not None: ray.init() would join whatever cluster RAY_ADDRESS or the
            # last `ray start` on this machine names, not start the one asked for.
            address = "local" if options.address is None else options.address
            try:
                ray.init(address=address, **kwargs)
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
                where = options.address or "a local cluster"
                raise ExecutorUnavailable(f"cannot start Ray on {where}: {exc}") from None
            self._started = True
        self._ray = ray
        self._remote = ray.remote(RayWorker)
        self._workers = options.workers or self._fitting_workers(ray.cluster_resources())
        log.info(
            "ray.started",
            address=options.address or "local",
            workers=self._workers,
            batch_size=options.batch_size,
        )

    def _fitting_workers(self, resources: Mapping[str, float]) -> int:
        options = self.options
        fits = math.floor(float(resources.get("CPU", 1.0)) / options.cpus_per_worker)
        if options.gpus_per_worker:
            gpus = math.floor(float(resources.get("GPU", 0.0)) / options.gpus_per_worker)
            fits = min(fits, gpus)
        return max(1, fits)

    def close(self) -> None:
        """Stop the cluster if this executor started it (a cluster it joined keeps running)."""
        if self._ray is not None and self._started:
            self._ray.shutdown()
        self._ray = None
        self._started = False

    def in_flight(self, settings: RunSettings) -> int:
        self.start()
        return self._workers * OUTSTANDING * self.options.batch_size

    async def execute(self, work: PackWork, asks: AsyncIterator[Ask], emit: Emit) -> Execution:
        self.start()
        pack = work.spec.pack
        problems: list[str] = []
        stop: str | None = None
        scope = ingest_scope(work.target)
        driver = (
            PackTarget(
                work.target, work.settings, ledger=work.ledger, pack=pack, run_id=work.spec.run_id
            )
            if scope == "system"
            else None
        )
        pool: _Pool | None = None
        try:
            if driver is not None:
                try:
                    await driver.ingest(work.documents)
                except Exception as exc:
                    stop = f"ingest failed: {describe(exc)}"
                    problems.append(stop)
                    log.error("pack.ingest_failed", pack=pack, reason=describe(exc))
                else:
                    stop = work.stop_once_built(target_traits(driver.obj).principal_support)
                    if stop is not None:
                        problems.append(stop)
            if stop is None:
                pool = _Pool(self, work, ingest=driver is None)
                stop = await pool.run(asks, emit)
                if stop is not None:
                    problems.append(stop)
            if stop is not None:
                # What the pack did not ask, as the local executor records it (in the recording
                # too: a replay must find every case the run selected).
                session = PackTarget(work.target, work.settings, work.recorder)
                await answer_asks(pack, session, work.metrics, work.settings, asks, emit, stop)
        finally:
            if pool is not None:
                problems.extend(await pool.close())
            if driver is not None:
                problems.extend(await driver.close())
        return Execution(
            problems=tuple(problems),
            stopped=stop,
            retried=0 if pool is None else pool.retried,
        )


class _Slot:
    """One worker actor as the driver tracks it."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.ready = False
        self.dead = False
        self.busy = 0  # batches sent and not yet back


class _Pool:
    """One pack's workers and the batches they hold (the driver's side of :class:`RayWorker`)."""

    def __init__(self, executor: RayExecutor, work: PackWork, *, ingest: bool) -> None:
        self.ray = executor._ray
        self.remote = executor._remote
        self.options = executor.options
        self.size = executor.workers
        self.work = work
        self.ingest = ingest
        settings = work.settings
        if settings.rate_limit is not None:  # each worker spaces its own requests
            settings = attrs.evolve(settings, rate_limit=settings.rate_limit / self.size)
        replay = work.spec.replay
        self.spec = attrs.evolve(
            work.spec,
            settings=settings,
            replay=None if replay is None else Path(replay).resolve().as_posix(),
        )
        self.slots: list[_Slot] = []
        self.retried = 0
        self.deaths = 0
        root = logging.getLogger()
        self.log_level = root.getEffectiveLevel() if root.handlers else None
        self.futures: dict[asyncio.Future[Any], tuple[str, _Slot, list[Ask]]] = {}

    def _spawn(self) -> None:
        options = self.options
        handle = self.remote.options(
            num_cpus=options.cpus_per_worker,
            num_gpus=options.gpus_per_worker,
            max_restarts=0,
            max_task_retries=0,
        ).remote(self.spec, self.ingest, self.work.recorder is not None, self.log_level)
        slot = _Slot(handle)
        self.slots.append(slot)
        self._watch(handle.setup.remote(), "setup", slot, [])

    def _watch(self, ref: Any, kind: str, slot: _Slot, batch: list[Ask]) -> None:
        self.futures[asyncio.wrap_future(ref.future())] = (kind, slot, batch)

    def _died(self, slot: _Slot, exc: BaseException) -> None:
        if slot.dead:
            return
        slot.dead = True
        self.deaths += 1
        log.warning("ray.worker_died", pack=self.spec.pack, deaths=self.deaths, reason=str(exc))
        self.ray.kill(slot.handle, no_restart=True)
        if self.deaths >= self.size * DEATHS_PER_WORKER:
            raise ExecutorUnavailable(
                f"pack {self.spec.pack}: Ray workers died {self.deaths} times (last: "
                f"{describe(exc)}); giving up (is a worker running out of memory, or the "
                "target crashing its process?)"
            )
        self._spawn()

    async def run(self, asks: AsyncIterator[Ask], emit: Emit) -> str | None:
        """Answer *asks* on the workers; return why the pack stopped, if it did (a worker's
        ingest failed, or its target became unreachable)."""
        ray_errors = self.ray.exceptions
        batch_size = self.options.batch_size
        capacity = self.size * OUTSTANDING  # batches held at once (the in-flight contract)
        waiting: deque[list[Ask]] = deque()  # batches taken (or given back) but not sent
        stop: str | None = None
        taking: asyncio.Task[list[Ask]] | None = None
        ended = False

        async def take() -> list[Ask]:
            batch: list[Ask] = []
            while len(batch) < batch_size and (ask := await anext(asks, None)) is not None:
                batch.append(ask)
            return batch

        for _ in range(self.size):
            self._spawn()
        while True:
            if stop is None:
                for slot in self.slots:
                    while waiting and slot.ready and not slot.dead and slot.busy < OUTSTANDING:
                        self._send(slot, waiting.popleft())
                held = sum(s.busy for s in self.slots) + len(waiting)
                if taking is None and not ended and not waiting and held < capacity:
                    taking = asyncio.ensure_future(take())
            else:
                while waiting:  # never to be sent: recorded as not asked, freeing the window
                    await self._not_asked(waiting.popleft(), emit, stop)
            # Batches out are always awaited; workers still starting only while there is
            # something left for them (one the cluster cannot place must not hang the run).
            wanted = ("answer", "setup") if stop is None and (waiting or not ended) else ("answer",)
            pending = {f for f, (kind, _, _) in self.futures.items() if kind in wanted}
            if taking is not None:
                pending.add(taking)
            if not pending:
                break
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if taking is not None and taking in done:
                batch = taking.result()
                taking = None
                if batch:
                    waiting.append(batch)
                else:
                    ended = True
            for future in done:
                if future not in self.futures:
                    continue
                kind, slot, batch = self.futures.pop(future)
                try:
                    result = future.result()
                except ray_errors.RayActorError as exc:  # the worker's process is gone
                    if kind == "answer":
                        slot.busy -= 1
                        self.retried += len(batch)
                        waiting.appendleft(batch)  # answered again, first
                    self._died(slot, exc)
                    continue
                if kind == "setup":
                    status, detail = result
                    if status == "build":
                        raise ExecutorUnavailable(
                            f"a Ray worker cannot load pack {self.spec.pack!r} and its "
                            f"plugins: {detail}; install them on every node (a runtime_env in "
                            "[run.ray], docs/scaling.md)"
                        )
                    if status == "ingest" and stop is None:
                        stop = cast("str", detail)
                    elif status == "ok" and stop is None:
                        # Decided before this worker is sent anything: no ask has been.
                        stop = self.work.stop_once_built(cast("bool | None", detail))
                    slot.ready = True
                    continue
                slot.busy -= 1
                records, reason = result
                self._take(batch, records, emit)
                if reason is not None and stop is None:
                    stop = reason
        return stop

    def _send(self, slot: _Slot, batch: list[Ask]) -> None:
        slot.busy += 1
        self._watch(slot.handle.answer.remote(batch), "answer", slot, batch)

    def _take(
        self,
        batch: list[Ask],
        records: list[tuple[int, dict[str, Any], dict[str, Any] | None]],
        emit: Emit,
    ) -> None:
        from ragleaklab_core.run.recording import _response

        by_seq = {ask.seq: ask for ask in batch}
        recorder = self.work.recorder
        for seq, data, response in records:
            ask = by_seq.pop(seq)
            if recorder is not None and response is not None:
                masked = tuple(response.get("masked", ()))
                recorder.add(ask.case, ask.epoch, _response(response), masked)
            elif recorder is not None and data.get("error"):
                # The target's error (or a case not asked): a replay reproduces it.
                recorder.add_error(ask.case, ask.epoch, data["error"])
            emit(ask, CaseRecord.from_dict(data))
        if by_seq:  # a worker that answers short is a bug; never a silently shorter run
            raise RuntimeError(f"a Ray worker did not answer {len(by_seq)} asks of its batch")

    async def _not_asked(self, batch: list[Ask], emit: Emit, reason: str) -> None:
        work = self.work
        session = PackTarget(work.target, work.settings, work.recorder)
        await answer_asks(
            work.spec.pack, session, work.metrics, work.settings, _each(batch), emit, reason
        )

    async def close(self) -> list[str]:
        """Close every live worker's target, then end the actors; return what failed."""
        problems: list[str] = []
        for future in self.futures:  # workers still starting: nothing to wait for
            future.cancel()
        self.futures.clear()
        live = [s for s in self.slots if not s.dead]
        closing = [asyncio.wrap_future(s.handle.close.remote().future()) for s in live if s.ready]
        if closing:
            done, _ = await asyncio.wait(closing, timeout=CLOSE_TIMEOUT)
            for future in done:
                if future.exception() is None:
                    problems.extend(p for p in future.result() if p not in problems)
        for slot in self.slots:
            if not slot.dead:
                self.ray.kill(slot.handle, no_restart=True)
        return problems


__all__ = [
    "INGEST_SCOPES",
    "INSTALL_HINT",
    "RayExecutor",
    "RayOptions",
    "RayWorker",
    "check_reachable",
    "ingest_scope",
]
