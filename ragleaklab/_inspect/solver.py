"""The solver that asks a ragleaklab target: no model call, the target's answer is the output.

One solver instance (inspect builds one per task) keeps one
:class:`~ragleaklab_core.TargetSession` per pack: the target is built through ragleaklab's
plugin loader and fed that pack's documents before its first case, exactly as
``ragleaklab run`` gives every pack a fresh target. When the task ends, each session is closed
(the target is reset, removing what ``ingest`` planted, then closed), through an inspect hook
that is enabled only while a ragleaklab solver exists.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from typing import Any

import anyio
from inspect_ai.hooks import Hooks, RunEnd, SampleStart, TaskEnd, hooks
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ragleaklab._inspect._common import (
    ERROR_KEY,
    RETRIEVED_KEY,
    TARGET_METADATA_KEY,
    failure,
    jsonable,
)
from ragleaklab._inspect.dataset import case_of
from ragleaklab_core import (
    TARGETS,
    ConfigError,
    LoadedPlugin,
    PluginRuntimeError,
    Response,
    TargetSession,
    load_plugin,
    read_config,
)

# Sample uuid -> eval id, filled by the hook so a solver learns which task execution it serves.
_EVAL_OF_SAMPLE: dict[str, str] = {}
# Every target pool a solver holds; weak, so a finished task's pool does not keep the hook on.
_POOLS: weakref.WeakSet[_TargetPool] = weakref.WeakSet()
# inspect asks several samples at once (``--max-samples``), as ``run.concurrency`` > 1 does: a
# target that declares ``thread_safe = True`` then answers on worker threads.
_CONCURRENT = 2


def run_config(
    target: str | None,
    target_options: Mapping[str, Any] | str | None,
    config: str | None,
) -> tuple[Any, str | None]:
    """The run configuration (:func:`ragleaklab_core.read_config`) and its file, if any.

    *target* may also be the path of a TOML config file (``-T target=ragleaklab.toml``), and
    *target_options* a JSON object in a string (as a shell passes it). A target name replaces
    the config's ``[target]``; options are merged over its options, as ``ragleaklab run
    --target``/``--target-option`` do.

    Raises:
        ConfigError: The config file is missing or invalid, or the options are not an object.
    """
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
    return read_config(config, target=target, target_options=target_options), config


class _TargetPool:
    """The target sessions of one solver instance, one per pack, opened on first use."""

    def __init__(self, name: str, options: Mapping[str, Any]) -> None:
        self.name = name
        self.options = dict(options)
        # Built now so a bad name or option fails when the task is created, not per sample.
        self._spare: LoadedPlugin | None = load_plugin(
            TARGETS, name, self.options, path="$.target.options"
        )
        self._sessions: dict[str | None, TargetSession] = {}
        self._lock: anyio.Lock | None = None
        self.eval_id: str | None = None
        _POOLS.add(self)
        _register_hook()

    async def session(self, pack: str | None) -> TargetSession:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # the first sample of a pack ingests; the others wait for it
            found = self._sessions.get(pack)
            if found is not None:
                return found
            spare, self._spare = self._spare, None
            if spare is not None:
                session = await TargetSession.aopen(spare, pack=pack, concurrency=_CONCURRENT)
            else:
                session = await TargetSession.aopen(
                    self.name, self.options, pack=pack, concurrency=_CONCURRENT
                )
            self._sessions[pack] = session
            return session

    async def close(self) -> None:
        """Close every session; the pool can then serve another evaluation."""
        sessions = [self._sessions[k] for k in sorted(self._sessions, key=lambda k: k or "")]
        self._sessions.clear()
        self.eval_id = None
        failures = []
        for session in sessions:  # one target failing to close must not keep the others open
            try:
                await session.aclose()
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
    evaluation: the error is stored and the ragleaklab scorers leave the sample unscored. A
    target that cannot ingest a pack's documents fails the sample (the pack is not tested).

    Args:
        target: Target plugin name (group ``ragleaklab.targets``) or a TOML config path;
            default: the config's target, else ``reference`` (the embedded reference RAG).
        target_options: The target's options (a mapping, or a JSON object as a string).
        config: A ragleaklab TOML config file whose ``[target]`` is used.
    """
    chosen = run_config(target, target_options, config)[0].target
    name = chosen.name
    pool = _TargetPool(name, chosen.options)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if pool.eval_id is None:
            pool.eval_id = _EVAL_OF_SAMPLE.get(getattr(state, "uuid", ""))
        pack = state.metadata.get("pack")
        session = await pool.session(pack if isinstance(pack, str) else None)
        case = case_of(state.metadata, state.sample_id, state.input_text)
        try:
            response = await session.aanswer(case)
        except PluginRuntimeError as exc:  # one failing case must not end the evaluation
            state.store.set(ERROR_KEY, failure(exc, session.target.provider))
            state.output = ModelOutput.from_content(f"ragleaklab/{name}", "")
            return state
        state.store.set(RETRIEVED_KEY, _retrieved(response))
        state.store.set(TARGET_METADATA_KEY, jsonable(response.metadata))
        state.output = ModelOutput.from_content(f"ragleaklab/{name}", response.answer)
        state.messages.append(state.output.message)
        return state

    return solve


__all__ = ["ask_target", "run_config"]
