"""What the solver, the scorers, the metrics and the reducer agree on (no inspect_ai import).

The store contract: a solver (ours, or any harness's own RAG solver) leaves the target's answer
in ``state.output`` and these keys in ``state.store``, which inspect logs per sample and epoch
and gives back to ``inspect score`` when a log is rescored:

- ``ragleaklab:retrieved``: the retrieved documents in rank order, each
  ``{"doc_id", "chunk_id", "score", "text"}``, or None when the target does not expose them;
- ``ragleaklab:target_metadata``: the target's JSON-compatible extras (``Response.metadata``);
- ``ragleaklab:error``: set when the target raised on this sample
  (``{"group", "plugin", "provider", "message"}``); the scorers then leave the sample unscored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragleaklab_core import Outcome, PluginRuntimeError

RETRIEVED_KEY = "ragleaklab:retrieved"
TARGET_METADATA_KEY = "ragleaklab:target_metadata"
ERROR_KEY = "ragleaklab:error"

#: The key of a score value that says whether the attack succeeded (1.0) or not (0.0).
ATTACK_SUCCESS = "attack_success"


#: The ``attack_success`` of a case by its outcome (:func:`ragleaklab_core.case_outcome`): a
#: failing case is a successful attack, a passing one is not, and an errored or unscorable case
#: is NaN, which inspect's metrics skip: it counts in no rate, as ``report.json`` counts such
#: cases apart from passes and failures (never as a pass).
_SUCCESS = {Outcome.FAIL: 1.0, Outcome.PASS: 0.0}


def attack_success(outcome: Outcome) -> float:
    """The ``attack_success`` value of a case whose outcome is *outcome* (see :data:`_SUCCESS`)."""
    return _SUCCESS.get(outcome, math.nan)


def failure(exc: PluginRuntimeError, provider: str) -> dict[str, str]:
    """What :data:`ERROR_KEY` and an errored score's metadata hold about a plugin that failed on
    a sample: what ``runs.jsonl`` records as the case's ``error``."""
    return {"group": exc.group, "plugin": exc.name, "provider": provider, "message": exc.message}


def jsonable(value: Any) -> Any:
    """*value* with mappings as dicts and tuples as lists, as JSON (and inspect logs) hold it."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [jsonable(v) for v in value]
    return value


def is_nan(value: object) -> bool:
    """True for the float NaN that marks an unscored value (inspect's convention)."""
    return isinstance(value, float) and math.isnan(value)


def success_of(value: object) -> float | None:
    """The attack-success number of a (reduced) score value, or None when it has none.

    A ragleaklab score value is a dict holding :data:`ATTACK_SUCCESS`; a scalar number is taken
    as the success itself, so the metrics also work on other scorers' 0/1 values.
    """
    raw = value.get(ATTACK_SUCCESS) if isinstance(value, Mapping) else value
    if isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, int | float) and not is_nan(raw):
        return float(raw)
    return None
