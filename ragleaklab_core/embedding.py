"""ragleaklab inside another harness: a target session and metric scoring, case by case."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from attrs import define, field, frozen

from ragleaklab_core._discovery import (
    METRICS,
    TARGETS,
    LoadedPlugin,
    load_plugin,
    pack_info,
)
from ragleaklab_core._wellformed import repair_response
from ragleaklab_core.config import Config, Overrides, read_config_with_overrides
from ragleaklab_core.errors import PluginRuntimeError
from ragleaklab_core.inputs import parse_labels
from ragleaklab_core.run.executor import PackTarget, bad_result, describe
from ragleaklab_core.run.runner import RunSettings, load_metric, load_pack, select_cases
from ragleaklab_core.values import Case, MetricResult, PackInfo, Response

T = TypeVar("T")


def read_config(
    path: str | os.PathLike[str] | None = None,
    *,
    target: str | None = None,
    target_options: Mapping[str, Any] | None = None,
) -> Config:
    """The configuration a run uses: the file at *path* (none: the defaults), with *target*
    and *target_options* applied over its ``[target]`` table as ``ragleaklab run --target``
    and ``--target-option`` apply them (a target name replaces the table; options are merged
    over its options).

    Raises:
        ConfigError: The file is missing or invalid (every problem is listed).
    """
    overrides = Overrides(target=target, target_options=dict(target_options or {}))
    given = " (with target arguments)" if overrides else ""
    source = f"{os.fspath(path)}{given}" if path is not None else "target arguments"
    return read_config_with_overrides(
        None if path is None else Path(path), overrides, source=source
    )


def _pack(pack: str | LoadedPlugin) -> LoadedPlugin:
    return load_pack(pack) if isinstance(pack, str) else pack


def pack_cases(pack: str | LoadedPlugin, tags: Sequence[str] = ()) -> tuple[Case, ...]:
    """The cases of *pack* a run with *tags* asks, in the pack's order (no tags: every case).

    Raises:
        PluginError: The pack is not installed or cannot be loaded.
        ConfigError: No case carries any of *tags*.
    """
    loaded = _pack(pack)
    info = pack_info(loaded.obj)
    return select_cases(loaded.obj.cases(), tuple(tags), info.name)


def pack_labels(pack: str | LoadedPlugin) -> dict[str, bool]:
    """The labels *pack* ships (``default_labels()``): test_id -> True for a positive case
    (the attack succeeded); {} when it ships none.

    Raises:
        InputError: The shipped labels are malformed.
    """
    loaded = _pack(pack)
    raw = loaded.obj.default_labels() if loaded.pack_traits.default_labels else None
    if raw is None:
        return {}
    source = f"labels of pack {pack_info(loaded.obj).name}"
    return dict(parse_labels(raw, source=source).records)


class _PrivateLoop:
    """The one event loop of a session used synchronously, for its whole life (an async client
    stays bound to the loop it was made on); on a worker thread when the caller already runs a
    loop, as :func:`~ragleaklab_core.run.runner.run_pack` does."""

    def __init__(self) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._thread = None
        else:
            self._thread = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        # A loop factory: the Runner then leaves the thread's current event loop alone (a
        # library must not replace, or drop, the one its caller set).
        self._runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if self._thread is None:
            return self._runner.run(coroutine)
        return self._thread.submit(self._runner.run, coroutine).result()

    def close(self) -> None:
        if self._thread is None:
            self._runner.close()
            return
        try:
            self._thread.submit(self._runner.close).result()
        finally:
            self._thread.shutdown()


@define(eq=False)
class _Lifecycle:
    closed: bool = False


@frozen(eq=False)  # a session is a resource: equal only to itself
class TargetSession:
    """A target plugin fed one pack's documents, answering cases as a run asks them.

    Open it with :meth:`open` and use :meth:`answer` and :meth:`close` (or ``with``), or from
    async code with :meth:`aopen`, :meth:`aanswer` and :meth:`aclose` (or ``async with``). The
    target is built through the plugin loader, ingests the pack's documents once (``aingest``
    when it has one), answers through ``aanswer`` when it has one, and on closing is reset and
    closed: the runner's own :class:`~ragleaklab_core.run.executor.PackTarget` does each step.

    Attributes:
        target: The target plugin as loaded (``.obj`` is the instance; ``.provenance()`` is
            what reports record).
        pack: The pack whose documents it ingested, or None (it ingested nothing).
    """

    target: LoadedPlugin
    pack: PackInfo | None
    _session: PackTarget = field(repr=False)
    _loop: _PrivateLoop | None = field(repr=False)
    _state: _Lifecycle = field(factory=_Lifecycle, repr=False)

    @classmethod
    def open(
        cls,
        target: str | LoadedPlugin | None = None,
        options: Mapping[str, Any] | None = None,
        *,
        config: str | os.PathLike[str] | None = None,
        pack: str | LoadedPlugin | None = None,
        concurrency: int = 1,
    ) -> TargetSession:
        """Build the target and feed it *pack*'s documents; for synchronous use.

        Args:
            target: A target plugin's name; default: the config's target, else the default
                one (``ragleaklab run``'s). Or a target already built with
                :func:`~ragleaklab_core.load_plugin` (then no *options* or *config*).
            options: The target's options, over the config's (``--target-option``).
            config: A ragleaklab TOML config file whose ``[target]`` is used.
            pack: The pack (a name, or loaded) whose documents the target ingests.
            concurrency: How many answers the caller asks at once (``run.concurrency``):
                above 1, a target that declares ``thread_safe = True`` answers on threads.

        Raises:
            ConfigError: Bad options or config file.
            PluginError: The target or the pack cannot be loaded or built.
            PluginRuntimeError: The target failed to ingest the documents (it was then reset
                and closed); the message is the one a run reports.
        """
        loop = _PrivateLoop()
        try:
            return loop.run(cls._start(target, options, config, pack, concurrency, loop))
        except BaseException:
            loop.close()
            raise

    @classmethod
    async def aopen(
        cls,
        target: str | LoadedPlugin | None = None,
        options: Mapping[str, Any] | None = None,
        *,
        config: str | os.PathLike[str] | None = None,
        pack: str | LoadedPlugin | None = None,
        concurrency: int = 1,
    ) -> TargetSession:
        """:meth:`open` for async code: the session runs on the caller's event loop."""
        return await cls._start(target, options, config, pack, concurrency, None)

    @classmethod
    async def _start(
        cls,
        target: str | LoadedPlugin | None,
        options: Mapping[str, Any] | None,
        config: str | os.PathLike[str] | None,
        pack: str | LoadedPlugin | None,
        concurrency: int,
        loop: _PrivateLoop | None,
    ) -> TargetSession:
        loaded = None if pack is None else _pack(pack)
        info = None if loaded is None else pack_info(loaded.obj)
        documents = () if loaded is None else tuple(loaded.obj.documents())
        if isinstance(target, LoadedPlugin):
            if options is not None or config is not None:
                raise TypeError("options and config apply to a target name, not a built target")
            plugin = target
        else:
            chosen = read_config(config, target=target, target_options=options).target
            plugin = load_plugin(TARGETS, chosen.name, chosen.options, path="$.target.options")
        session = PackTarget(plugin, RunSettings(concurrency=concurrency))
        try:
            await session.ingest(documents)
        except Exception as exc:  # what a run reports as the pack's problem, then raised
            problems = [f"ingest failed: {describe(exc)}", *await session.close()]
            raise PluginRuntimeError(TARGETS, plugin.name, "; ".join(problems)) from exc
        return cls(plugin, info, session, loop)

    def _check(self, synchronous: bool) -> None:
        if self._state.closed:
            raise RuntimeError(f"the session of target {self.target.name!r} is closed")
        if synchronous and self._loop is None:
            raise RuntimeError("this session was opened with aopen(): use its async methods")
        if not synchronous and self._loop is not None:
            raise RuntimeError("this session was opened with open(): use answer() and close()")

    async def _answer(self, case: Case) -> Response:
        try:
            response = await self._session.answer(case, 0)
        except Exception as exc:  # what a run records as the case's error
            raise PluginRuntimeError(
                TARGETS, self.target.name, describe(exc), case_id=case.test_id
            ) from exc
        # Lone surrogates as U+FFFD, as a run makes them before scoring: what the caller
        # scores and logs is what a run would score and write.
        return repair_response(response)[0]

    def answer(self, case: Case) -> Response:
        """The target's answer to *case*'s query.

        Raises:
            PluginRuntimeError: The target raised or did not return a :class:`Response`
                (``__cause__`` is the original exception; the message is what a run records).
        """
        self._check(synchronous=True)
        assert self._loop is not None
        return self._loop.run(self._answer(case))

    async def aanswer(self, case: Case) -> Response:
        """:meth:`answer` for a session opened with :meth:`aopen`; safe to await concurrently."""
        self._check(synchronous=False)
        return await self._answer(case)

    async def _close(self) -> None:
        if self._state.closed:
            return
        self._state.closed = True
        problems = await self._session.close()
        if problems:
            raise PluginRuntimeError(TARGETS, self.target.name, "; ".join(problems))

    def close(self) -> None:
        """Reset the target (remove what it ingested), then close it; closing twice is a no-op.

        Raises:
            PluginRuntimeError: Reset or close failed (the other step still ran).
        """
        if self._state.closed:
            return
        self._check(synchronous=True)
        assert self._loop is not None
        try:
            self._loop.run(self._close())
        finally:
            self._loop.close()

    async def aclose(self) -> None:
        """:meth:`close` for a session opened with :meth:`aopen`."""
        if self._state.closed:
            return
        self._check(synchronous=False)
        await self._close()

    def __enter__(self) -> TargetSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> TargetSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def score_case(metric: LoadedPlugin, case: Case, response: Response) -> MetricResult:
    """Score *response* to *case* with *metric* and check the result as the runner does.

    Returns:
        The metric's result: values (numbers in [0, 1]) and evidence, or why the case is
        unscorable (then no values: never read an unscorable case as a 0).

    Raises:
        PluginRuntimeError: The metric raised, or returned something a run refuses (not a
            :class:`MetricResult`, a value that is not a number in [0, 1]); the message is what
            a run records for the case, ``__cause__`` the original exception.
    """
    try:
        result: MetricResult = metric.obj.score(case, response)
        problem = bad_result(result)
        if problem:
            raise TypeError(problem)
    except Exception as exc:
        raise PluginRuntimeError(METRICS, metric.name, describe(exc), case_id=case.test_id) from exc
    return result


@frozen
class MetricSession:
    """A metric plugin as a run of a pack scores with it, loaded once to score case after case.

    Attributes:
        metric: The metric plugin as loaded: built from the pack's options for it with yours
            over them, and bound to the pack's documents (``for_corpus``).
        pack: The pack it is bound to, or None.
        values: The value names the metric declares (``values``; empty when it declares none:
            then only its results tell).
        lower_is_worse: The values where lower is worse (``lower_is_worse``).
    """

    metric: LoadedPlugin
    pack: PackInfo | None
    values: tuple[str, ...]
    lower_is_worse: frozenset[str]

    @classmethod
    def load(
        cls,
        metric: str,
        *,
        pack: str | LoadedPlugin | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> MetricSession:
        """Load metric plugin *metric*, for *pack* (a name, or loaded) when given.

        Raises:
            ConfigError: Bad options.
            PluginError: The metric or the pack cannot be loaded or built.
        """
        if pack is None:
            plugin = load_plugin(METRICS, metric, options, path=f"$.metrics.{metric}")
            info = None
        else:
            loaded = _pack(pack)
            info = pack_info(loaded.obj)
            plugin = load_metric(metric, info, tuple(loaded.obj.documents()), options)
        traits = plugin.metric_traits
        return cls(plugin, info, traits.values, traits.lower_is_worse)

    def score(self, case: Case, response: Response) -> MetricResult:
        """:func:`score_case` with this metric."""
        return score_case(self.metric, case, response)


__all__ = [
    "MetricSession",
    "TargetSession",
    "pack_cases",
    "pack_labels",
    "read_config",
    "score_case",
]
