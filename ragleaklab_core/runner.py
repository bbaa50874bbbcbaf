"""The runner: one pack, one target, its metrics; every case and epoch recorded, nothing dropped.

``run_pack`` composes plugins that are already chosen (by name, through the loader) and returns
a :class:`PackRun`: the per-epoch records that ``runs.jsonl`` holds and the per-case values,
reduced over epochs, that the verdict and calibration use. A plugin that raises on a case does
not stop the run and is never skipped: the case is recorded as errored, with the plugin's
identity, and counted apart from passes and failures.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from attrs import field, frozen

from ragleaklab_core._discovery import METRICS, PACKS, TARGETS, LoadedPlugin, load_plugin
from ragleaklab_core._log import get_logger
from ragleaklab_core.aggregation import Reducer, reducer
from ragleaklab_core.errors import ConfigError, PluginContractError, PluginLoadFailure
from ragleaklab_core.values import Case, Document, MetricResult, PackInfo, Response

log = get_logger(__name__)


@frozen
class RunSettings:
    """How a pack is run.

    Attributes:
        epochs: How many times each case is asked (for non-deterministic targets).
        reducer: The reducer that turns a case's epoch values into one value.
        tags: Run only cases carrying at least one of these tags (empty: every case).
    """

    epochs: int = field(default=1, validator=attrs.validators.ge(1))
    reducer: str = "mean"
    tags: tuple[str, ...] = ()


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


def _error(group: str, plugin: LoadedPlugin, exc: BaseException) -> dict[str, str]:
    return {
        "group": group,
        "plugin": plugin.name,
        "provider": plugin.provider,
        "message": f"{type(exc).__name__}: {exc}",
    }


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
    info = pack.obj.info()
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


def run_pack(
    pack: LoadedPlugin,
    *,
    target_name: str = "reference",
    target_options: Mapping[str, Any] | None = None,
    metric_options: Mapping[str, Mapping[str, Any]] | None = None,
    settings: RunSettings | None = None,
    on_record: Callable[[CaseRecord], None] | None = None,
) -> PackRun:
    """Run every (selected) case of *pack* against a fresh target and score it.

    Args:
        pack: The pack, from :func:`load_pack`.
        target_name: The target plugin; a fresh instance is built and ingests the pack.
        target_options: The target's options.
        metric_options: Per metric plugin, options that override the pack's own.
        settings: Epochs, reducer, tag selection.
        on_record: Called with each record as it completes (progress, streaming).

    Raises:
        PluginError: A plugin could not be loaded or built (never raised for per-case errors).
        ConfigError: Bad options or reducer.
    """
    settings = settings or RunSettings()
    reduce = reducer(settings.reducer)
    info: PackInfo = pack.obj.info()
    overrides = metric_options or {}
    documents = tuple(pack.obj.documents())
    all_cases = tuple(pack.obj.cases())
    cases = _select(all_cases, settings.tags, info.name)
    metrics = tuple(
        _bind(
            load_plugin(
                METRICS,
                name,
                {**info.metric_options.get(name, {}), **overrides.get(name, {})},
                path=f"$.metrics.{name}",
            ),
            documents,
        )
        for name in info.metrics
    )
    target = load_plugin(TARGETS, target_name, target_options, path="$.target.options")
    target.obj.ingest(documents)
    records: list[CaseRecord] = []
    try:
        for case in cases:
            for epoch in range(settings.epochs):
                record = _run_case(info.name, case, epoch, target, metrics)
                records.append(record)
                if on_record is not None:
                    on_record(record)
    finally:
        close = getattr(target.obj, "close", None)
        if callable(close):
            close()
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
    )


def _select(cases: tuple[Case, ...], tags: tuple[str, ...], pack: str) -> tuple[Case, ...]:
    if not tags:
        return cases
    chosen = tuple(c for c in cases if set(c.tags) & set(tags))
    if not chosen:
        raise ConfigError(
            "$.run.tags", [f"pack {pack!r} has no case tagged {', '.join(sorted(tags))}"]
        )
    return chosen


def _run_case(
    pack: str,
    case: Case,
    epoch: int,
    target: LoadedPlugin,
    metrics: tuple[LoadedPlugin, ...],
) -> CaseRecord:
    start = time.perf_counter()
    scored: dict[str, dict[str, Any]] = {}
    error: dict[str, str] | None = None
    response: Response | None = None
    try:
        response = target.obj.answer(case.query)
        if not isinstance(response, Response):
            raise TypeError(f"answer() returned {type(response).__name__}, expected Response")
    except Exception as exc:  # a target failing on one case must not end the run
        error = _error(TARGETS, target, exc)
        response = None
        log.warning("case.errored", pack=pack, case_id=case.test_id, plugin=target.name)
    if response is not None:
        for metric in metrics:
            try:
                result = metric.obj.score(case, response)
                problem = _bad_result(metric, result)
                if problem:
                    raise TypeError(problem)
            except Exception as exc:
                error = _error(METRICS, metric, exc)
                log.warning("case.errored", pack=pack, case_id=case.test_id, plugin=metric.name)
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
        elapsed_ms=round((time.perf_counter() - start) * 1000, 3),
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


__all__ = ["CaseRecord", "CaseResult", "PackRun", "RunSettings", "load_pack", "run_pack"]
