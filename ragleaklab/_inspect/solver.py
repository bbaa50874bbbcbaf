"""The solver that asks a ragleaklab target: no model call, the target's answer is the output.

One solver instance (inspect builds one per task) keeps one target per pack, loaded through
ragleaklab's plugin loader and fed that pack's documents before its first case, exactly as
``ragleaklab run`` gives every pack a fresh target. When the task ends, each target is reset
(``reset``/``areset``: what ``ingest`` planted is removed) and closed, through an inspect hook
that is enabled only while a ragleaklab solver exists.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
from attrs import field, frozen
from inspect_ai.hooks import Hooks, RunEnd, SampleStart, TaskEnd, hooks
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ragleaklab._inspect._common import (
    ERROR_KEY,
    RETRIEVED_KEY,
    TARGET_METADATA_KEY,
    jsonable,
)
from ragleaklab_core import Response

# Sample uuid -> eval id, filled by the hook so a solver learns which task execution it serves.
_EVAL_OF_SAMPLE: dict[str, str] = {}
# Every target pool a solver holds; weak, so a finished task's pool does not keep the hook on.
_POOLS: weakref.WeakSet[_TargetPool] = weakref.WeakSet()


@frozen
class TargetSettings:
    """A target and what a config file adds to it.

    Attributes:
        name: The target plugin's name.
        options: Its options.
        metric_options: The config's ``[metrics.<name>]`` tables.
        thresholds: The config's ``[thresholds.<pack>.<value>]`` tables.
        config: The config file's path, or None.
    """

    name: str
    options: Mapping[str, Any]
    metric_options: Mapping[str, Mapping[str, Any]] = field(factory=dict)
    thresholds: Mapping[str, Mapping[str, Any]] = field(factory=dict)
    config: str | None = None


def target_settings(
    target: str | None,
    target_options: Mapping[str, Any] | str | None,
    config: str | None,
) -> TargetSettings:
    """The target, its options, and a config file's metric options and thresholds.

    *target* may also be the path of a TOML config file (``-T target=ragleaklab.toml``). Given
    arguments win over the config file; the config's target options apply only to its own
    target. *target_options* may be a JSON object in a string (as a shell passes it).

    Raises:
        ConfigError: The config file is missing or invalid, or the options are not an object.
    """
    from ragleaklab_core.config import DEFAULT_TARGET, load_config, read_config_file
    from ragleaklab_core.errors import ConfigError

    if target is not None and target.endswith(".toml") and config is None:
        config, target = target, None
    if isinstance(target_options, str):
        try:
            target_options = json.loads(target_options)
        except ValueError as exc:
            raise ConfigError("target_options", [f"not a JSON object: {exc}"]) from None
    if target_options is not None and not isinstance(target_options, Mapping):
        raise ConfigError(
            "target_options", [f"expected an object, got {type(target_options).__name__}"]
        )
    if config is None:
        return TargetSettings(target or DEFAULT_TARGET, dict(target_options or {}))
    loaded = load_config(read_config_file(Path(config)), source=config)
    name, options = target or loaded.target.name, dict(target_options or {})
    if name == loaded.target.name and target_options is None:
        options = dict(loaded.target.options)
    return TargetSettings(
        name,
        options,
        metric_options={k: dict(v) for k, v in loaded.metrics.items()},
        thresholds={p: dict(v) for p, v in loaded.thresholds.items()},
        config=config,
    )


class _Session:
    """One pack's target: ingested once, asked per sample, reset and closed at the end."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        self.obj = plugin.obj

    async def ingest(self, documents: tuple[Any, ...]) -> None:
        if hasattr(self.obj, "aingest"):
            await self.obj.aingest(documents)
        else:
            self.obj.ingest(documents)

    async def answer(self, query: str) -> Response:
        if hasattr(self.obj, "aanswer"):
            response = await self.obj.aanswer(query)
        elif getattr(self.obj, "thread_safe", False):
            response = await anyio.to_thread.run_sync(self.obj.answer, query)
        else:
            # Not declared thread-safe: asked on the event loop, one sample at a time.
            response = self.obj.answer(query)
        if not isinstance(response, Response):
            raise TypeError(f"answer() returned {type(response).__name__}, expected Response")
        return response

    async def close(self) -> None:
        for name in ("reset", "close"):
            async_hook = getattr(self.obj, f"a{name}", None)
            if callable(async_hook):
                await async_hook()
                continue
            hook = getattr(self.obj, name, None)
            if callable(hook):
                hook()


class _TargetPool:
    """The targets of one solver instance, one per pack, built on first use."""

    def __init__(self, name: str, options: Mapping[str, Any]) -> None:
        from ragleaklab_core import TARGETS, load_plugin

        self.name = name
        self.options = dict(options)
        # Built now so a bad name or option fails when the task is created, not per sample.
        self._spare: Any = load_plugin(TARGETS, name, self.options, path="$.target.options")
        self._sessions: dict[str | None, _Session] = {}
        self._lock: anyio.Lock | None = None
        self.eval_id: str | None = None
        _POOLS.add(self)
        _register_hook()

    async def session(self, pack: str | None) -> _Session:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # the first sample of a pack ingests; the others wait for it
            found = self._sessions.get(pack)
            if found is not None:
                return found
            from ragleaklab_core import TARGETS, load_plugin

            plugin, self._spare = self._spare, None
            if plugin is None:
                plugin = load_plugin(TARGETS, self.name, self.options, path="$.target.options")
            session = _Session(plugin)
            documents: tuple[Any, ...] = ()
            if pack is not None:
                from ragleaklab_core.run.runner import load_pack

                documents = tuple(load_pack(pack).obj.documents())
            await session.ingest(documents)
            self._sessions[pack] = session
            return session

    async def close(self) -> None:
        """Reset and close every target; the pool can then serve another evaluation."""
        sessions = [self._sessions[k] for k in sorted(self._sessions, key=lambda k: k or "")]
        self._sessions.clear()
        self.eval_id = None
        failures = []
        for session in sessions:  # one target failing to close must not keep the others open
            try:
                await session.close()
            except Exception as exc:
                failures.append(exc)
        if failures:
            raise failures[0]

    @property
    def open(self) -> bool:
        return bool(self._sessions)


class _CloseTargets(Hooks):
    """Closes a solver's targets when its task ends (never enabled without a ragleaklab solver)."""

    def enabled(self) -> bool:
        return len(_POOLS) > 0

    async def on_sample_start(self, data: SampleStart) -> None:
        _EVAL_OF_SAMPLE[data.sample_id] = data.eval_id

    async def on_task_end(self, data: TaskEnd) -> None:
        for pool in list(_POOLS):
            if pool.eval_id == data.eval_id:
                await pool.close()
        for uuid in [u for u, e in _EVAL_OF_SAMPLE.items() if e == data.eval_id]:
            del _EVAL_OF_SAMPLE[uuid]

    async def on_run_end(self, data: RunEnd) -> None:
        # A pool that never learnt its task (no sample-start event reached it) closes here.
        for pool in list(_POOLS):
            if pool.eval_id is None and pool.open:
                await pool.close()


_HOOK_REGISTERED = False


def _register_hook() -> None:
    """Register the closing hook, once, when the first ragleaklab solver is made.

    Not at import: inspect imports this module for every evaluation (entry points) and prints a
    "hooks enabled" banner whenever any hook is registered, ragleaklab's or not.
    """
    global _HOOK_REGISTERED
    if not _HOOK_REGISTERED:
        hooks(name="targets", description="Resets and closes the targets of ragleaklab solvers.")(
            _CloseTargets
        )
        _HOOK_REGISTERED = True


def _retrieved(response: Response) -> list[dict[str, Any]] | None:
    if response.retrieved is None:
        return None
    return [
        {"doc_id": r.doc_id, "chunk_id": r.chunk_id, "score": r.score, "text": r.text}
        for r in response.retrieved
    ]


@solver
def ask_target(
    target: str | None = None,
    target_options: dict[str, Any] | str | None = None,
    config: str | None = None,
) -> Solver:
    """Ask the sample's query to a ragleaklab target plugin instead of a model.

    The answer becomes ``state.output`` (and an assistant message); the retrieved documents,
    the target's metadata and any error go to ``state.store`` (see the store contract in
    :mod:`ragleaklab._inspect._common`). A target that raises on one sample does not end the
    evaluation: the error is stored and the ragleaklab scorers leave the sample unscored.

    Args:
        target: Target plugin name (group ``ragleaklab.targets``) or a TOML config path;
            default: the config's target, else ``reference`` (the embedded reference RAG).
        target_options: The target's options (a mapping, or a JSON object as a string).
        config: A ragleaklab TOML config file whose ``[target]`` is used.
    """
    settings = target_settings(target, target_options, config)
    name = settings.name
    pool = _TargetPool(name, settings.options)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if pool.eval_id is None:
            pool.eval_id = _EVAL_OF_SAMPLE.get(getattr(state, "uuid", ""))
        pack = state.metadata.get("pack")
        session = await pool.session(pack if isinstance(pack, str) else None)
        try:
            response = await session.answer(state.input_text)
        except Exception as exc:  # one failing case must not end the evaluation
            plugin = session.plugin
            state.store.set(
                ERROR_KEY,
                {
                    "group": plugin.group,
                    "plugin": plugin.name,
                    "provider": plugin.provider,
                    "message": f"{type(exc).__name__}: {exc}",
                },
            )
            state.output = ModelOutput.from_content(f"ragleaklab/{name}", "")
            return state
        state.store.set(RETRIEVED_KEY, _retrieved(response))
        state.store.set(TARGET_METADATA_KEY, jsonable(response.metadata))
        state.output = ModelOutput.from_content(f"ragleaklab/{name}", response.answer)
        state.messages.append(state.output.message)
        return state

    return solve


__all__ = ["TargetSettings", "ask_target", "target_settings"]
