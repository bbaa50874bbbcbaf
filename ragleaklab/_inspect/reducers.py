"""An epoch reducer that judges a case as ``ragleaklab run --epochs N --reducer R`` does.

inspect's own reducers (``mean``, ``max``, ``median``, ``mode``, ``at_least_k``, ``pass_at_k``)
work on ragleaklab scores key by key, so ``attack_success`` reduces to "share of epochs that
leaked", "leaked in any epoch" and so on: the threshold is applied per epoch, then reduced.
``ragleaklab run`` reduces the raw values first and applies the threshold to the reduced value
(a case whose mean ``poison_rate_at_k`` over epochs is 0.2 fails a 0.2 threshold). :func:`gated`
does the latter, with ragleaklab's own reducers, so the numbers match ``ragleaklab run``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from inspect_ai.scorer import Score, ScoreReducer, score_reducer, value_to_float

from ragleaklab._inspect._common import ATTACK_SUCCESS, is_nan
from ragleaklab_core import ConfigError, Threshold
from ragleaklab_core import reducer as ragleaklab_reducer


def _gate_of(metadata: Mapping[str, Any] | None) -> tuple[str | None, Threshold | None]:
    info = (metadata or {}).get("threshold")
    if not isinstance(info, Mapping) or info.get("decision_rule") is None:
        return None, None
    return info.get("value_name"), Threshold(info.get("threshold"), info["decision_rule"])


@score_reducer
def gated(reducer: str = "mean") -> ScoreReducer:
    """Reduce each raw value with ragleaklab's reducer *reducer*, then re-apply the gate.

    The gate (value, threshold, rule) is read from the ragleaklab score's metadata. As in
    ``ragleaklab run``, a sample with an unscored epoch (the target or metric errored, or the
    case could not be scored) is unscored, and lower-is-worse values are reduced in their own
    direction. Other scorers' values are reduced with the same reducer (strings through
    ``value_to_float``). ``pass_at_k`` with fewer than k epochs gives NaN, as inspect's does.

    Registered as ``ragleaklab/gated`` (mean); from Python, ``Epochs(3, gated("max"))``.

    Raises:
        ConfigError: *reducer* is not a ragleaklab reducer.
    """
    reduce = ragleaklab_reducer(reducer)
    to_float = value_to_float()

    def series(values: list[float], higher_is_worse: bool) -> float:
        if any(is_nan(v) for v in values):
            return math.nan
        try:
            return reduce(values, higher_is_worse=higher_is_worse)
        except ConfigError:  # pass_at_k with fewer than k epochs
            return math.nan

    def apply(scores: list[Score]) -> Score:
        first = scores[0]
        if any(is_nan(s.value) for s in scores):
            return Score(
                value=math.nan,
                answer=first.answer,
                explanation="an epoch was not scored, so the case is not scored (as ragleaklab)",
                metadata=first.metadata,
            )
        values: list[Any] = [s.value for s in scores]
        reduced: Any
        if isinstance(values[0], Mapping):
            lower = set((first.metadata or {}).get("lower_is_worse") or ())
            reduced = {
                key: series([to_float(v[key]) for v in values], higher_is_worse=key not in lower)
                for key in values[0]
            }
            name, threshold = _gate_of(first.metadata)
            if ATTACK_SUCCESS in reduced and threshold is not None:
                raw = reduced.get(name) if name is not None else None
                reduced[ATTACK_SUCCESS] = (
                    math.nan
                    if raw is None or is_nan(raw)
                    else (1.0 if threshold.fails(raw) else 0.0)
                )
        elif isinstance(values[0], list):
            reduced = [
                series([to_float(v[i]) for v in values], higher_is_worse=True)
                for i in range(len(values[0]))
            ]
        else:
            reduced = series([to_float(v) for v in values], higher_is_worse=True)
        return Score(
            value=reduced,
            answer=first.answer,
            explanation=first.explanation,
            metadata=first.metadata,
        )

    return apply


__all__ = ["gated"]
