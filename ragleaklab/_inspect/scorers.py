"""Scorers ``ragleaklab/<metric>``: a ragleaklab metric plugin's values plus attack success.

One implementation (:func:`make_scorer`) scores with any installed metric plugin through
:class:`ragleaklab_core.MetricSession`, as ``ragleaklab run`` scores. A score's value is a dict:
every value the metric declares (its ``values``; NaN where a case has none, so all its scores
have the same keys) plus any other value it returns, and ``attack_success``: 1.0 when the gated
value fails its threshold, 0.0 when it passes, NaN when nothing is gated. Raw values live in the
value, not only in the metadata, because inspect's epoch reducers keep the first epoch's
metadata only.

The registered scorers are made from the metric's own declaration: a mean and standard error
per declared value, plus :func:`~ragleaklab._inspect.metrics.leak_rate` and
:func:`~ragleaklab._inspect.metrics.leak_stderr`. Every installed metric plugin (the
``ragleaklab.metrics`` entry points, built-in and third-party alike) gets its
``ragleaklab/<metric>`` scorer when this module is imported (:func:`register_installed`), so
``inspect eval --scorer ragleaklab/<metric>`` finds it by name and no list of metrics is kept
here; :func:`scorer_for` registers a metric installed since. ``ragleaklab/metric_scorer``
(``-S metric=NAME``) scores with any metric by name from the command line.

The threshold comes from, in order: the ``threshold`` argument, the ``calibration`` report, the
pack's default for the gated value (see :func:`~ragleaklab._inspect.thresholds.choose_gate`).
The metadata records it (value, rule, source, calibration file and sha256), the metric's
evidence and the retrieved document ids. A sample whose target raised or that the metric cannot
score is left unscored (inspect's NaN value, with the reason), never counted as a pass. A metric
that raises is a sample error (:class:`MetricRaised`): inspect marks the sample errored and the
evaluation does not succeed unless its ``fail_on_error`` allows that many errors, so an
exception can never show as a leak rate of 0.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from ragleaklab._inspect._common import (
    ATTACK_SUCCESS,
    ERROR_KEY,
    RETRIEVED_KEY,
    TARGET_METADATA_KEY,
    failure,
    jsonable,
)
from ragleaklab._inspect.dataset import case_of
from ragleaklab._inspect.metrics import leak_rate, leak_stderr
from ragleaklab._inspect.thresholds import ARGUMENT, Calibration, choose_gate, read_calibration
from ragleaklab_core import (
    DECISION_RULES,
    METRICS,
    MetricSession,
    PluginRuntimeError,
    Response,
    RetrievedDocument,
    available_names,
    metric_values,
)

log = logging.getLogger(__name__)


class MetricRaised(RuntimeError):
    """A ragleaklab metric raised on a sample: raised out of the scorer, so inspect records the
    sample as errored (with this message, the metric's error redacted) instead of scoring it."""


def unscored(reason: str, metadata: Mapping[str, Any], keys: tuple[str, ...] = ()) -> Score:
    """A score that inspect's metrics and reducers skip, with the reason.

    ``Score.unscored`` (a NaN value) where inspect has it. Older releases (0.3.150) refuse a
    NaN value from a scorer whose metrics are per key, but skip NaN keys: there the value is a
    dict of NaN over *keys*.
    """
    make = getattr(Score, "unscored", None)
    if make is not None:
        return make(reason=reason, explanation=reason, metadata=dict(metadata))
    value: Any = {key: math.nan for key in keys} if keys else math.nan
    return Score(value=value, explanation=reason, metadata=dict(metadata))


def _response(state: TaskState) -> Response:
    retrieved = state.store.get(RETRIEVED_KEY)
    return Response(
        answer=state.output.completion,
        retrieved=None
        if retrieved is None
        else tuple(
            RetrievedDocument(
                doc_id=r["doc_id"],
                text=r.get("text"),
                score=r.get("score"),
                chunk_id=r.get("chunk_id"),
            )
            for r in retrieved
        ),
        metadata=state.store.get(TARGET_METADATA_KEY) or {},
    )


def _explanation(name: str | None, values: Mapping[str, float], gate: Any, success: float) -> str:
    if gate.threshold is None or name is None or name not in values:
        return f"{name or 'no value'} is not gated (no threshold): attack success not judged"
    t = gate.threshold
    rule = t.decision_rule.replace("threshold", repr(t.value))
    verdict = "attack succeeded" if success == 1.0 else "attack did not succeed"
    return f"{verdict}: {name} = {values[name]:.6g}; rule {rule} (threshold from {t.source})"


def make_scorer(
    metric: str,
    *,
    threshold: float | None = None,
    decision_rule: str | None = None,
    calibration: str | None = None,
    value: str | None = None,
    options: Mapping[str, Any] | None = None,
    pack: str | None = None,
    threshold_source: str = ARGUMENT,
) -> Scorer:
    """The scoring function of a ragleaklab scorer for metric plugin *metric* (see module doc).

    Raises:
        ValueError: A decision rule that is not one of ragleaklab's, or without a threshold.
        InputError: The calibration report cannot be read.
        PluginError: The metric (or *pack*) is not installed or cannot be loaded.
    """
    if decision_rule is not None and decision_rule not in DECISION_RULES:
        raise ValueError(f"decision_rule must be one of {', '.join(DECISION_RULES)}")
    if decision_rule is not None and threshold is None:
        raise ValueError("decision_rule applies to a threshold argument; give threshold too")
    report: Calibration | None = None if calibration is None else read_calibration(calibration)
    overrides = dict(options or {})
    sessions: dict[str | None, MetricSession] = {}

    def bind(pack_name: str | None) -> MetricSession:
        found = sessions.get(pack_name)
        if found is None:
            found = MetricSession.load(metric, pack=pack_name, options=overrides)
            sessions[pack_name] = found
        return found

    known = metric_values(metric)  # an unknown metric fails when the scorer is made
    if pack is not None:
        bind(pack)  # so do a wrong pack and wrong options
    nan_keys = (*known, ATTACK_SUCCESS) if known else ()

    async def score(state: TaskState, target: Target) -> Score:
        error = state.store.get(ERROR_KEY)
        if error is not None:
            return unscored(f"errored: {error.get('message')}", {"error": error}, nan_keys)
        sample_pack = pack or state.metadata.get("pack")
        session = bind(sample_pack if isinstance(sample_pack, str) else None)
        case = case_of(state.metadata, state.sample_id, state.input_text)
        response = _response(state)
        retrieved_ids = (
            None if response.retrieved is None else [r.doc_id for r in response.retrieved]
        )
        try:
            result = session.score(case, response)
            if ATTACK_SUCCESS in result.values:
                raise PluginRuntimeError(
                    METRICS,
                    session.metric.name,
                    f"TypeError: value name {ATTACK_SUCCESS!r} is reserved for the scorer",
                    case_id=case.test_id,
                )
        except PluginRuntimeError as exc:
            # A metric that raises is a sample error, never an unscored sample: left out of
            # the leak rate, errors on the leaking cases would show 0.000 and the eval would
            # succeed. Raised, inspect marks the sample errored and the eval ends in error
            # (unless its fail_on_error lets some samples error, which then says so).
            failed = failure(exc, session.metric.provider)
            raise MetricRaised(
                f"ragleaklab metric {session.metric.name!r} raised on case {case.test_id!r}: "
                f"{failed['message']}"
            ) from exc
        if result.unscorable:
            return unscored(
                f"unscorable: {result.unscorable}",
                {"unscorable": result.unscorable, "retrieved_ids": retrieved_ids},
                nan_keys,
            )
        gate = choose_gate(
            produced=known or tuple(sorted(result.values)),
            lower_is_worse=session.lower_is_worse,
            info=session.pack,
            value=value,
            threshold=threshold,
            decision_rule=decision_rule,
            calibration=report,
            threshold_source=threshold_source,
        )
        values = {name: math.nan for name in known}
        values.update((name, float(v)) for name, v in result.values.items())
        success = gate.attack_success(result.values)
        return Score(
            value={**dict(sorted(values.items())), ATTACK_SUCCESS: success},
            answer=response.answer,
            explanation=_explanation(gate.value_name, result.values, gate, success),
            metadata={
                "metric": session.metric.provenance(),
                "threshold": gate.to_dict(),
                "lower_is_worse": sorted(session.lower_is_worse),
                "evidence": jsonable(result.evidence),
                "retrieved_ids": retrieved_ids,
            },
        )

    return score


def scorer_metrics(values: Sequence[str]) -> list[Any]:
    """The inspect metrics of a scorer whose metric declares *values*: the leak rate and its
    standard error, then a mean and standard error per value (by name)."""
    per_value = {name: [mean(), stderr()] for name in sorted(values)}
    return [leak_rate(), leak_stderr(), per_value] if per_value else [leak_rate(), leak_stderr()]


class ScorerFactory(Protocol):
    """A registered ragleaklab scorer: called with the scorer arguments, it gives a Scorer."""

    def __call__(
        self,
        threshold: float | None = None,
        decision_rule: str | None = None,
        calibration: str | None = None,
        value: str | None = None,
        options: dict[str, Any] | None = None,
        pack: str | None = None,
        threshold_source: str = ARGUMENT,
    ) -> Scorer: ...


_ARGS_DOC = """
    Args:
        threshold: Gate on this threshold (overrides the calibration and the pack default).
        decision_rule: With *threshold*: e.g. ``"score >= threshold -> FAIL"``; default by the
            value's direction (``<=`` for a lower-is-worse value).
        calibration: Path of a ``calibration_report.json``: its threshold and decision rule
            (and its ``metric_name`` as the gated value).
        value: The metric value to gate; default: the calibrated one, else the pack's primary.
        options: Metric options over the pack's (``{"k": 3}``).
        pack: The pack, when the samples' metadata does not name it.
        threshold_source: How the metadata names an explicit threshold's origin.
"""

#: The registered scorer of each metric, by (metric, declared values): a metric whose
#: declaration changes (a reinstalled plugin) gets a scorer with the new per-value metrics.
_REGISTERED: dict[tuple[str, tuple[str, ...]], ScorerFactory] = {}


def _register(metric: str, values: tuple[str, ...]) -> ScorerFactory:
    """Register ``ragleaklab/<metric>``, a scorer whose metrics come from *values*."""
    found = _REGISTERED.get((metric, values))
    if found is not None:
        return found

    def factory(
        threshold: float | None = None,
        decision_rule: str | None = None,
        calibration: str | None = None,
        value: str | None = None,
        options: dict[str, Any] | None = None,
        pack: str | None = None,
        threshold_source: str = ARGUMENT,
    ) -> Scorer:
        return make_scorer(
            metric,
            threshold=threshold,
            decision_rule=decision_rule,
            calibration=calibration,
            value=value,
            options=options,
            pack=pack,
            threshold_source=threshold_source,
        )

    produced = ", ".join(f"``{v}``" for v in values) or "the values each result holds"
    factory.__name__ = factory.__qualname__ = metric
    factory.__doc__ = f"Scorer of metric plugin ``{metric}``: {produced}.\n{_ARGS_DOC}"
    registered: ScorerFactory = scorer(metrics=scorer_metrics(values), name=metric)(factory)
    _REGISTERED[(metric, values)] = registered
    return registered


#: The by-name scorer's own name, which no metric's scorer may take (a metric of that name is
#: scored through ``metric_scorer(metric="metric_scorer")``).
BY_NAME = "metric_scorer"


def _installed(metric: str) -> ScorerFactory:
    """The registered scorer of installed metric *metric*. Never raises: inspect imports this
    module for every evaluation, and one broken third-party metric must not hide every other
    scorer. A metric whose class cannot be read gets the leak metrics only; making its scorer
    then raises the reason (:func:`make_scorer` reads the declaration again)."""
    try:
        values = metric_values(metric)
    except Exception as exc:  # a third-party plugin's import may raise anything (docstring)
        log.debug("metric %r: no declared values (%s: %s)", metric, type(exc).__name__, exc)
        values = ()
    return _register(metric, values)


def register_installed() -> dict[str, ScorerFactory]:
    """Register ``ragleaklab/<metric>`` for every installed metric plugin, built-in or
    third-party, from the metric's declared ``values``; return them by metric name.

    Run when this module is imported, which is when inspect loads ragleaklab's entry point:
    inspect then finds ``ragleaklab/<metric>`` by name (``--scorer``, ``registry_create``) with
    no list of metrics to keep here. Calling it again registers a metric installed since, and
    re-registers one whose declaration changed. Never raises (see :func:`_installed`).
    """
    return {name: _installed(name) for name in available_names(METRICS) if name != BY_NAME}


#: The scorers registered on import, by metric name.
INSTALLED: Mapping[str, ScorerFactory] = register_installed()


def __getattr__(name: str) -> ScorerFactory:
    # ``scorers.retrieval``, ``scorers.citation``, ``scorers.<any installed metric>``: the names
    # this module has always offered for the built-ins, now for every installed metric alike.
    if name.startswith("_") or name == BY_NAME or name not in available_names(METRICS):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _installed(name)


@scorer(metrics=[leak_rate(), leak_stderr()])
def metric_scorer(
    metric: str,
    threshold: float | None = None,
    decision_rule: str | None = None,
    calibration: str | None = None,
    value: str | None = None,
    options: dict[str, Any] | None = None,
    pack: str | None = None,
    threshold_source: str = ARGUMENT,
) -> Scorer:
    """Any installed metric plugin by its name in ``ragleaklab.metrics`` (``-S metric=NAME``).

    Its values are those the metric declares or returns for each case; its inspect metrics are
    the leak rate and its standard error only (a registered scorer's metrics are fixed): for a
    mean per value, use :func:`scorer_for`. Other arguments as for ``ragleaklab/retrieval``.
    """
    return make_scorer(
        metric,
        threshold=threshold,
        decision_rule=decision_rule,
        calibration=calibration,
        value=value,
        options=options,
        pack=pack,
        threshold_source=threshold_source,
    )


def scorer_for(metric: str, **args: Any) -> Scorer:
    """A scorer for installed metric plugin *metric*, built from the metric's declaration.

    The scorer is ``ragleaklab/<metric>`` (registered now if it is not yet), with a mean and
    standard error for each value the metric declares; *args* are the scorer arguments
    (``threshold``, ``decision_rule``, ``calibration``, ``value``, ``options``, ``pack``).

    Raises:
        PluginError: *metric* is not installed or cannot be loaded.
        ValueError, InputError: As ``ragleaklab/retrieval``.
    """
    if metric == BY_NAME:  # the name of the by-name scorer itself
        return metric_scorer(metric, **args)
    return _register(metric, metric_values(metric))(**args)


__all__ = [
    "BY_NAME",
    "INSTALLED",
    "MetricRaised",
    "ScorerFactory",
    "make_scorer",
    "metric_scorer",
    "register_installed",
    "scorer_for",
    "scorer_metrics",
    "unscored",
]
