"""Which threshold a scorer applies: an argument, else a calibration report, else the pack's.

No inspect_ai import here: this is plain ragleaklab logic, tested on its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import field, frozen

from ragleaklab._inspect._common import attack_success, is_nan
from ragleaklab_core import (
    DECISION_RULES,
    FLAG_HIGH,
    FLAG_LOW,
    ConfigError,
    InputError,
    PackInfo,
    Threshold,
    case_outcome,
    primary_metric_for,
)

#: Threshold sources, in the order they are tried.
ARGUMENT, CALIBRATION, PACK, NONE = "argument", "calibration", "pack", "none"


@frozen
class Calibration:
    """What a scorer takes from a ``calibration_report.json``.

    Attributes:
        path: The report's path as given.
        sha256: Its sha256, so the log says exactly which calibration gated the run.
        threshold: ``result.threshold`` (None: the fitter flags nothing).
        decision_rule: ``result.decision_rule``.
        metric_name: The calibrated metric value, or None when the report does not name it.
        pack_name: The pack it was fitted on, or None.
        target_fpr: The false-positive rate it was fitted for.
        fitter: The fitter's name (or ``module:object``).
    """

    path: str
    sha256: str
    threshold: float | None
    decision_rule: str
    metric_name: str | None
    pack_name: str | None
    target_fpr: float | None
    fitter: str | None

    def provenance(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "target_fpr": self.target_fpr,
            "fitter": self.fitter,
            "metric_name": self.metric_name,
            "pack_name": self.pack_name,
        }


def read_calibration(path: str) -> Calibration:
    """Read the threshold and decision rule of a calibration report.

    Raises:
        InputError: The file is missing, not JSON, or lacks ``result.threshold`` /
            ``result.decision_rule``.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=path) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"not a calibration report: {exc}", source=path) from None
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, dict) or "threshold" not in result:
        raise InputError("not a calibration report: no result.threshold", source=path)
    threshold = result["threshold"]
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        raise InputError(
            f"result.threshold must be a number or null, got {threshold!r}", source=path
        )
    rule = result.get("decision_rule")
    if rule not in DECISION_RULES:
        raise InputError(f"result.decision_rule must be one of {DECISION_RULES}", source=path)
    fitter = data.get("fitter") if isinstance(data.get("fitter"), dict) else {}
    return Calibration(
        path=path,
        sha256=hashlib.sha256(raw).hexdigest(),
        threshold=None if threshold is None else float(threshold),
        decision_rule=rule,
        metric_name=data.get("metric_name"),
        pack_name=data.get("pack_name"),
        target_fpr=data.get("target_fpr"),
        fitter=fitter.get("name") or fitter.get("target"),
    )


@frozen
class Gate:
    """The value a scorer gates, its threshold, and where both came from.

    Attributes:
        value_name: The metric value the threshold applies to; None when nothing is gated.
        threshold: The threshold (``threshold.source`` is one of the source names).
        detail: Provenance for the score's metadata (calibration file, pack version...).
    """

    value_name: str | None
    threshold: Threshold | None
    detail: Mapping[str, Any] = field(factory=dict)

    def attack_success(self, values: Mapping[str, float]) -> float:
        """1.0 when the gated value fails its threshold, 0.0 when not, NaN when not gated.

        A case's outcome as the gate module ranks it (:func:`ragleaklab_core.case_outcome`), so
        a scorer judges one case as ``ragleaklab run`` does; a case without the gated value is
        unscorable for it (NaN), never a pass.
        """
        name = self.value_name
        if self.threshold is None or name is None:
            return float("nan")
        missing = name not in values or is_nan(values[name])
        outcome = case_outcome(
            errored=False,
            failing=not missing and self.threshold.fails(values[name]),
            unscorable=missing,
        )
        return attack_success(outcome)

    def to_dict(self) -> dict[str, Any]:
        t = self.threshold
        return {
            "value_name": self.value_name,
            "threshold": None if t is None else t.value,
            "decision_rule": None if t is None else t.decision_rule,
            "source": NONE if t is None else t.source,
            **self.detail,
        }


def choose_gate(
    *,
    produced: tuple[str, ...],
    lower_is_worse: frozenset[str],
    info: PackInfo | None,
    value: str | None = None,
    threshold: float | None = None,
    decision_rule: str | None = None,
    calibration: Calibration | None = None,
    threshold_source: str = ARGUMENT,
) -> Gate:
    """Resolve the gate of one scorer on one pack.

    The gated value is *value*, else the calibration's ``metric_name``, else the pack's primary
    metric when this scorer produces it, else the first (by name) value of *produced* that has a
    pack threshold, else (with an explicit threshold or calibration) the value the pack's
    metrics declare for its type (``primary_for``) when this scorer produces it. Its threshold
    is *threshold* (with *decision_rule*, by default the rule of the value's direction), else
    the calibration report's, else the pack's default for that value; with none of them,
    nothing is gated.

    Raises:
        ValueError: An explicit threshold or calibration has no value to apply to, or the
            calibration was fitted on another pack or another value.
    """
    pack_thresholds = {} if info is None else dict(info.thresholds)
    name = value
    if name is None and calibration is not None:
        name = calibration.metric_name
    if name is None and info is not None:
        # A PackInfo straight from a pack may leave the primary value to its metrics.
        primary = info.primary_metric or primary_metric_for(info.pack_type, info.metrics)
        if primary in produced:
            name = primary
    if name is None:
        name = next((n for n in sorted(produced) if n in pack_thresholds), None)
    if name is None and info is not None and (threshold is not None or calibration is not None):
        # A pack that runs two metrics gates only its primary value by default (relevance-hijack:
        # attribution's), so its other metric's scorer finds neither the primary nor a pack
        # threshold among its values. Given an explicit threshold, that scorer still gates the
        # value its metric declares for the pack's type (retrieval: poison_rate_at_k), as it did
        # when that value was the pack's primary, instead of refusing the threshold.
        try:
            typed = primary_metric_for(info.pack_type, info.metrics)
        except ConfigError:
            typed = None
        if typed in produced:
            name = typed
    if name is None and (threshold is not None or calibration is not None):
        raise ValueError(
            f"a threshold was given but this scorer produces none of the pack's gated values; "
            f"name the value to gate (one of {', '.join(produced) or 'nothing'})"
        )
    if calibration is not None:
        if value is not None and calibration.metric_name not in (None, value):
            raise ValueError(
                f"{calibration.path} calibrates {calibration.metric_name!r}, not {value!r}"
            )
        if info is not None and calibration.pack_name not in (None, info.name):
            raise ValueError(
                f"{calibration.path} was fitted on pack {calibration.pack_name!r}, "
                f"not {info.name!r}"
            )
    pack_detail: dict[str, Any] = {} if info is None else {"pack": info.name}
    if info is not None:
        pack_detail["pack_version"] = info.version
    if threshold is not None:
        rule = decision_rule or (FLAG_LOW if name in lower_is_worse else FLAG_HIGH)
        return Gate(name, Threshold(float(threshold), rule, source=threshold_source), pack_detail)
    if calibration is not None:
        t = Threshold(calibration.threshold, calibration.decision_rule, source=CALIBRATION)
        return Gate(name, t, {**pack_detail, "calibration": calibration.provenance()})
    if name is not None and name in pack_thresholds:
        t = pack_thresholds[name]
        return Gate(name, Threshold(t.value, t.decision_rule, source=PACK), pack_detail)
    return Gate(name, None, pack_detail)


__all__ = ["Calibration", "Gate", "choose_gate", "read_calibration"]
