"""Frozen value types that cross the plugin interfaces."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs
from attrs import field, frozen
from attrs import validators as v

FLAG_HIGH = "score >= threshold -> FAIL"
FLAG_LOW = "score <= threshold -> FAIL"
FLAG_ABOVE = "score > threshold -> FAIL"
FLAG_BELOW = "score < threshold -> FAIL"
#: The decision rules a FitResult may state; the report recounts FP/TP by them.
DECISION_RULES = (FLAG_HIGH, FLAG_LOW, FLAG_ABOVE, FLAG_BELOW)


def decision_rule(higher_is_worse: bool) -> str:
    """The exact-sweep decision rule for a score direction, as reports state it."""
    return FLAG_HIGH if higher_is_worse else FLAG_LOW


def _rate(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, float | int) and 0.0 <= value <= 1.0):
        raise ValueError(f"'{attribute.name}' must be a rate in [0, 1]: {value!r}")


def _finite_or_none(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not (isinstance(value, float | int) and math.isfinite(value)):
        raise ValueError(f"'{attribute.name}' must be a finite number or None: {value!r}")


@frozen
class FitResult:
    """What a :class:`~ragleaklab_core.ThresholdFitter` chose, and how it does on the fitted data.

    Attributes:
        threshold: The chosen threshold, or ``None`` when the fitter flags nothing (no threshold
            meets the target); ``reason`` then says why.
        achieved_fpr: False positives / negatives at the threshold, on the fitted data.
        achieved_tpr: True positives / positives at the threshold, on the fitted data.
        n_positive: Number of positive cases (the attack succeeded).
        n_negative: Number of negative cases (security held).
        decision_rule: How to apply the threshold, e.g. ``"score >= threshold -> FAIL"``.
        false_positives: Negatives flagged at the threshold (the numerator of ``achieved_fpr``);
            optional, the calibration report recounts it from the data either way.
        true_positives: Positives flagged at the threshold (the numerator of ``achieved_tpr``).
        reason: Why there is no threshold, or any other caveat the fitter wants reported.
        details: Fitter-specific extras (intervals, alternative thresholds); JSON-compatible.

    .. versionadded:: 0.1
    """

    threshold: float | None = field(validator=_finite_or_none)
    achieved_fpr: float = field(validator=_rate)
    achieved_tpr: float = field(validator=_rate)
    n_positive: int = field(validator=v.ge(0))
    n_negative: int = field(validator=v.ge(0))
    decision_rule: str = field(validator=v.in_(DECISION_RULES))
    false_positives: int | None = field(default=None, validator=v.optional(v.ge(0)))
    true_positives: int | None = field(default=None, validator=v.optional(v.ge(0)))
    reason: str | None = None
    details: Mapping[str, Any] = field(factory=dict)

    @property
    def flags_nothing(self) -> bool:
        """True when the fitter could not find a threshold and flags no case at all."""
        return self.threshold is None


@frozen
class Document:
    """A document a pack plants in the system under test.

    Attributes:
        doc_id: Unique within the pack.
        text: The document's text.
        kind: ``"legit"``, ``"poison"`` or ``"private"`` (packs may add their own kinds).
        metadata: Extra pack-defined fields (JSON-compatible).
    """

    doc_id: str = field(validator=v.instance_of(str))
    text: str = field(validator=v.instance_of(str))
    kind: str = "legit"
    metadata: Mapping[str, Any] = field(factory=dict)


@frozen
class Case:
    """One test case of a pack: a query and what a secure system should (not) do.

    Attributes:
        test_id: Unique within the pack; labels files refer to cases by it.
        query: The question sent to the target.
        ground_truth: Pack-defined expectations (poisoned ids, sentinel, claims...).
        tags: Free-form tags, e.g. ``"smoke"`` for the quick subset.
    """

    test_id: str = field(validator=v.instance_of(str))
    query: str = field(validator=v.instance_of(str))
    ground_truth: Mapping[str, Any] = field(factory=dict)
    tags: tuple[str, ...] = ()


@frozen
class RetrievedDocument:
    """A document (or chunk of one) the target retrieved to answer a query."""

    doc_id: str
    text: str | None = None
    score: float | None = None


@frozen
class Response:
    """What a target returned for one query.

    Attributes:
        answer: The generated answer text.
        retrieved: The retrieved documents in rank order, or ``None`` when the target does not
            expose them (metrics that need them then report the case as unscorable, never as 0).
    """

    answer: str
    retrieved: tuple[RetrievedDocument, ...] | None = None


@frozen
class MetricResult:
    """One metric's verdict on one case.

    Attributes:
        values: Named values in [0, 1] (higher is worse unless the metric declares otherwise).
        evidence: JSON-compatible evidence: which documents, sentinel, claims or spans.
        unscorable: Why the case could not be scored (then ``values`` is empty); never a 0.
    """

    values: Mapping[str, float] = field(factory=dict)
    evidence: Mapping[str, Any] = field(factory=dict)
    unscorable: str | None = None
