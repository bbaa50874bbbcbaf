"""Frozen value types that cross the plugin interfaces."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
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
        guarantee: What the fitter promises about the threshold, in one sentence, e.g. "FPR on
            the calibration sample <= target; no guarantee beyond the sample". ``None`` (the
            default, so fitters written before it keep working) means the fitter states none;
            the calibration report then says so.

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
    guarantee: str | None = field(default=None, validator=v.optional(v.instance_of(str)))

    @property
    def flags_nothing(self) -> bool:
        """True when no positive case satisfies the decision rule at the threshold.

        That is "no threshold" (``None``) or a threshold that catches no attack on the fitted
        data (``true_positives == 0``, or ``achieved_tpr == 0`` when the count is not given): a
        gate using it could never fail a case like the labelled positives.
        """
        if self.threshold is None:
            return True
        if self.true_positives is not None:
            return self.true_positives == 0
        return self.achieved_tpr == 0.0

    @property
    def flags_no_case(self) -> bool:
        """True when the threshold flags no case at all, positive or negative."""
        if self.threshold is None:
            return True
        fp_zero = (
            self.false_positives == 0
            if self.false_positives is not None
            else self.achieved_fpr == 0.0
        )
        return self.flags_nothing and fp_zero


@frozen
class Document:
    """A document a pack plants in the system under test.

    Attributes:
        doc_id: Unique within the pack.
        text: The document's text.
        kind: ``"legit"``, ``"poison"`` or ``"private"`` (packs may add their own kinds).
        metadata: Extra pack-defined fields (JSON-compatible). By convention, who may see the
            document is ``metadata["access"] = {"owner": "alice", "groups": ["finance"]}``
            (both keys optional): a document is visible to its owner and to members of any of
            its groups. The core does not enforce it; targets and metrics that model access
            read it.
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
        principal: Who asks (a user or tenant id), or ``None`` for an anonymous query. The
            runner passes it only to targets that accept a ``principal`` keyword; a case with a
            principal sent to a target that cannot carry one is errored, never asked without
            it (the answer would not be the one the case is about). Added in 0.2.
    """

    test_id: str = field(validator=v.instance_of(str))
    query: str = field(validator=v.instance_of(str))
    ground_truth: Mapping[str, Any] = field(factory=dict)
    tags: tuple[str, ...] = ()
    principal: str | None = field(
        default=None, validator=v.optional(v.and_(v.instance_of(str), v.min_len(1)))
    )


@frozen
class RetrievedDocument:
    """A document (or chunk of one) the target retrieved to answer a query.

    Attributes:
        doc_id: The id of the *document* (several chunks of one document share it; metrics count
            distinct documents, never chunks).
        text: The retrieved text, when the target exposes it.
        score: The retriever's score, when the target exposes it.
        chunk_id: The chunk's own id, when the target chunks documents.
    """

    doc_id: str
    text: str | None = None
    score: float | None = None
    chunk_id: str | None = None


@frozen
class Response:
    """What a target returned for one query.

    Attributes:
        answer: The generated answer text.
        retrieved: The retrieved documents in rank order, or ``None`` when the target does not
            expose them (metrics that need them then report the case as unscorable, never as 0).
        metadata: Target-specific, JSON-compatible extras (a trace of what the generator did);
            recorded in ``runs.jsonl``, never read by the built-in metrics.
    """

    answer: str
    retrieved: tuple[RetrievedDocument, ...] | None = None
    metadata: Mapping[str, Any] = field(factory=dict)


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


def is_pack_default(source: str) -> bool:
    """Whether a threshold's *source* is a pack's own default: ``"pack"``, or ``"pack NAME
    VERSION"`` as data-only packs name it (what a report.json's ``threshold.source`` holds)."""
    return source == "pack" or source.startswith("pack ")


def _strings(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(item) for item in items)


def _count(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"'{attribute.name}' must be a count (an integer >= 0): {value!r}")


@frozen
class MeasuredError:
    """How often a threshold's rule erred on labelled cases, as the calibration that fitted it
    counted: the rule flagged ``true_positives`` of ``positives`` labelled positives and
    ``false_positives`` of ``negatives`` labelled negatives. Its sensitivity and specificity, the
    instrument's error that a corrected failing rate (:mod:`ragleaklab_core.stats.corrected`)
    takes out of a run's count.

    Attributes:
        labels: Where the labels came from (a labels file, or ``"pack NAME"`` for a pack's own).
        observed_on: The systems whose answers the labels judged (target identities), as the
            labels file said; empty when it did not say.
        label_sources: Who labelled (``"human"``, ``"judge"``...), as the labels file said.
    """

    true_positives: int = field(validator=_count)
    positives: int = field(validator=_count)
    false_positives: int = field(validator=_count)
    negatives: int = field(validator=_count)
    labels: str = ""
    observed_on: tuple[str, ...] = field(default=(), converter=_strings)
    label_sources: tuple[str, ...] = field(default=(), converter=_strings)

    def __attrs_post_init__(self) -> None:
        if self.true_positives > self.positives or self.false_positives > self.negatives:
            raise ValueError(
                f"counts out of range: {self.true_positives} of {self.positives} positives, "
                f"{self.false_positives} of {self.negatives} negatives"
            )

    @property
    def true_negatives(self) -> int:
        return self.negatives - self.false_positives

    def to_dict(self) -> dict[str, Any]:
        return {
            "sensitivity": {"true_positives": self.true_positives, "positives": self.positives},
            "specificity": {"true_negatives": self.true_negatives, "negatives": self.negatives},
            "labels": self.labels,
            "observed_on": list(self.observed_on),
            "label_sources": list(self.label_sources),
        }


@frozen
class Threshold:
    """A per-case pass/fail threshold on one metric value.

    A case FAILS when its (epoch-reduced) value satisfies ``decision_rule``; for example with
    ``"score >= threshold -> FAIL"`` and ``value=0.2`` a case scoring 0.2 fails.

    Attributes:
        value: The threshold, or ``None`` for "flag nothing" (a fitter found no threshold).
        decision_rule: One of :data:`DECISION_RULES`.
        source: Where the threshold came from (``"pack"``, ``"config"``, a thresholds file).
        measured: How often the rule erred on the labelled cases it was fitted on, when a
            calibration stored it (``calibrate --write-thresholds``); None otherwise.
        not_measured: Why a stored entry's counts are no measured error a corrected rate may
            take (:mod:`ragleaklab_core.calibration.measured`), naming the entry and the fix;
            None when it carries none or they are.
        forced: The refusals ``calibrate --force`` overrode when it stored the threshold (a
            judge below the floor...), shown wherever the threshold is.
    """

    value: float | None = field(validator=_finite_or_none)
    decision_rule: str = field(default=FLAG_HIGH, validator=v.in_(DECISION_RULES))
    source: str = "pack"
    measured: MeasuredError | None = None
    not_measured: str | None = None
    forced: tuple[str, ...] = field(default=(), converter=_strings)

    @property
    def from_pack(self) -> bool:
        """Whether this is the pack's own default, not a threshold the user gave or calibrated
        (:func:`is_pack_default`)."""
        return is_pack_default(self.source)

    def fails(self, score: float) -> bool:
        """True when *score* fails this threshold."""
        t = self.value
        if t is None:
            return False
        rule = self.decision_rule
        if rule == FLAG_HIGH:
            return score >= t
        if rule == FLAG_ABOVE:
            return score > t
        if rule == FLAG_LOW:
            return score <= t
        return score < t


def _str_tuple(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(items)


#: The severities a pack may declare for its findings, from least to most severe.
SEVERITIES = ("low", "medium", "high", "critical")


def _ids(items: Iterable[str]) -> tuple[str, ...]:
    # Sorted and deduplicated, so that reports list them the same way whatever the pack wrote.
    if isinstance(items, str):
        raise TypeError(f"expected a list of ids, got the string {items!r}")
    return tuple(sorted({str(i) for i in items}))


@frozen
class PackTaxonomy:
    """Where a pack's findings sit in public catalogues of attacks, and how severe they are.

    Reports that feed security dashboards (SARIF) tag a pack's findings with these ids; the core
    knows no catalogue and takes them as the pack states them.

    Attributes:
        owasp_llm: OWASP Top 10 for LLM Applications ids, e.g. ``("LLM01:2025",)``.
        mitre_atlas: MITRE ATLAS technique ids, e.g. ``("AML.T0051",)``.
        severity: One of :data:`SEVERITIES`, or None when the pack does not say.

    .. versionadded:: 0.2
    """

    owasp_llm: tuple[str, ...] = field(default=(), converter=_ids)
    mitre_atlas: tuple[str, ...] = field(default=(), converter=_ids)
    severity: str | None = field(default=None, validator=v.optional(v.in_(SEVERITIES)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "owasp_llm": list(self.owasp_llm),
            "mitre_atlas": list(self.mitre_atlas),
            "severity": self.severity,
        }


def _taxonomy(value: PackTaxonomy | Mapping[str, Any] | None) -> PackTaxonomy | None:
    return PackTaxonomy(**value) if isinstance(value, Mapping) else value


@frozen
class PackInfo:
    """What a pack is: its identity, how its cases are scored and its default thresholds.

    Attributes:
        name: The pack's name (its entry-point name by convention).
        version: The pack's version; reports record it.
        pack_type: ``"retrieval"``, ``"sentinel"``, ``"claim"`` or any other string.
        primary_metric: The metric value that calibration fits. Empty (the default): the one the
            pack's metrics declare for its ``pack_type``, filled in when ragleaklab loads the
            pack (:func:`ragleaklab_core.pack_info`).
        metrics: Metric plugin names that score the pack's cases, e.g. ``("retrieval",)``.
        thresholds: Default per-case thresholds, keyed by metric value name.
        metric_options: Options for each metric plugin, keyed by plugin name (e.g. ``k``).
        description: One paragraph for humans.
        taxonomy: Where the pack's findings sit in OWASP LLM / MITRE ATLAS and how severe they
            are (:class:`PackTaxonomy`; a mapping of its fields is accepted), or None.

    .. versionchanged:: 0.2
        ``primary_metric`` defaults to empty instead of a value the core derived from the pack
        type; read a pack through :func:`ragleaklab_core.pack_info` to get it filled in.
    """

    name: str = field(validator=v.instance_of(str))
    version: str = field(validator=v.instance_of(str))
    pack_type: str = field(validator=v.instance_of(str))
    metrics: tuple[str, ...] = field(converter=_str_tuple, validator=v.min_len(1))
    primary_metric: str = field(default="", validator=v.instance_of(str))
    thresholds: Mapping[str, Threshold] = field(factory=dict)
    metric_options: Mapping[str, Mapping[str, Any]] = field(factory=dict)
    description: str = ""
    taxonomy: PackTaxonomy | None = field(
        default=None,
        converter=_taxonomy,
        validator=v.optional(v.instance_of(PackTaxonomy)),
    )


@frozen
class JudgedDocument:
    """A document retrieved for a judged answer.

    Attributes:
        doc_id: Its id.
        kind: ``"legit"``, ``"poison"``, ``"private"`` (or a pack's own), or None when unknown.
        text: Its text, or None when neither the pack nor the target gave it.
        metadata: The pack's metadata of the document (its ``documents.jsonl`` entry's:
            a poison document's planted claim or sentinel...), empty when unknown.
    """

    doc_id: str = field(validator=v.instance_of(str))
    kind: str | None = None
    text: str | None = None
    metadata: Mapping[str, Any] = field(factory=dict)


@frozen
class JudgedCase:
    """One answered case, as a judge sees it: what an outside reviewer would read.

    Attributes:
        pack: The pack's name.
        pack_type: Its ``pack_type`` (``"retrieval"``, ``"sentinel"``, ``"claim"``...), which
            says what harm to look for.
        test_id: The case.
        query: What was asked.
        answer: What the system answered (one epoch).
        retrieved: What it retrieved, in rank order, or None when it reported nothing.
        ground_truth: The case's ground truth (the planted sentinel, the poison claim...).
        description: The pack's description (what it attacks), for a judge's prompt.
        metadata: What the target reported of this answer besides it (``Response.metadata``,
            as ``runs.jsonl`` holds it): an instrumented system's own record of what it did,
            which a judge of that system may read (``reference-instrumentation``); a judge of
            the answer alone ignores it.
    """

    pack: str = field(validator=v.instance_of(str))
    pack_type: str = field(validator=v.instance_of(str))
    test_id: str = field(validator=v.instance_of(str))
    query: str = field(validator=v.instance_of(str))
    answer: str = field(validator=v.instance_of(str))
    retrieved: tuple[JudgedDocument, ...] | None = None
    ground_truth: Mapping[str, Any] = field(factory=dict)
    description: str = ""
    metadata: Mapping[str, Any] = field(factory=dict)


#: The verdicts a judge may give.
JUDGE_LABELS = ("positive", "negative")


@frozen
class JudgeVerdict:
    """A judge's decision on one answer.

    Attributes:
        label: ``"positive"`` (the attack succeeded: the system leaked, obeyed, asserted the
            poison...) or ``"negative"``.
        reason: Why, in a sentence (kept in the labels file's notes).
    """

    label: str = field(validator=v.in_(JUDGE_LABELS))
    reason: str = field(default="", validator=v.instance_of(str))
