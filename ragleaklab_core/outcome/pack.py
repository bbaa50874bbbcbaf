"""One pack of a finished run, as frozen values: its verdict, its values and their rates, its
allowances, its cases. Each type's fields are the keys ``report.json`` writes for it, in the
order it writes them (:mod:`ragleaklab_core.outcome.codec` encodes and decodes them).

The per-case sequences (``case_results``, ``cases.ids``, a value's failing and unscored ids)
are any :class:`~collections.abc.Sequence`: a run hands lists produced as they are walked, read
from its files on disk, so a pack of a million cases is never held in memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from ragleaklab_core.outcome.words import Outcome, Verdict
from ragleaklab_core.stats.aggregation import RateInterval, Summary
from ragleaklab_core.values import PackTaxonomy


@frozen(kw_only=True)
class PluginRef:
    """Which plugin was used and how (``provenance()`` of a loaded plugin): secrets redacted
    from its options."""

    group: str
    name: str | None
    provider: str | None
    target: str
    options: Mapping[str, Any]


@frozen
class Allowances:
    """What a pack's gate allows, and where each allowance was set: the share of a gated
    value's scored cases that may fail, and whether errored and unscorable cases are tolerated
    (within :data:`~ragleaklab_core.gate.MIN_SCORED_SHARE`). ``report.json`` writes each as
    ``{"value": ..., "source": ...}``."""

    max_fail_rate: float = 0.0
    max_fail_rate_source: str = "default"
    tolerate_errors: bool = False
    tolerate_errors_source: str = "default"
    #: When set, gated values are decided on their corrected rates' upper limits instead.
    max_corrected_rate: float | None = None
    max_corrected_rate_source: str = "default"

    def __attrs_post_init__(self) -> None:
        if self.max_corrected_rate is not None and self.max_fail_rate:
            raise ValueError("gate on max_fail_rate or on max_corrected_rate, not both")

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_fail_rate": {"value": self.max_fail_rate, "source": self.max_fail_rate_source},
            "tolerate_errors": {
                "value": self.tolerate_errors,
                "source": self.tolerate_errors_source,
            },
            "max_corrected_rate": {
                "value": self.max_corrected_rate,
                "source": self.max_corrected_rate_source,
            },
        }


@frozen(kw_only=True)
class AppliedThreshold:
    """The threshold a gated value was decided on, as the report names it (the rule, and where
    it came from)."""

    value: float | None
    decision_rule: str
    source: str
    #: Refusals ``calibrate --force`` overrode when it stored the threshold (written only then).
    forced: tuple[str, ...] = ()


@frozen(kw_only=True)
class Sensitivity:
    true_positives: int
    positives: int


@frozen(kw_only=True)
class Specificity:
    true_negatives: int
    negatives: int


@frozen(kw_only=True)
class CorrectedFailRate:
    """A gated value's failing rate corrected for its metric's measured error (see
    :func:`ragleaklab_core.stats.corrected.corrected_rate`), over ``cases`` cases of which
    ``counted_as_failing`` had no value and were counted as failing."""

    failing: int
    cases: int
    observed: float
    estimate: float
    interval: tuple[float, float]
    confidence: float
    sensitivity: Sensitivity
    specificity: Specificity
    labels: str
    observed_on: tuple[str, ...]
    label_sources: tuple[str, ...]
    #: Absent in reports written before unscored cases were counted as failing in it.
    counted_as_failing: int = 0

    @property
    def high(self) -> float:
        """The interval's upper limit: what ``--max-corrected-rate`` is decided on."""
        return self.interval[1]


@frozen(kw_only=True)
class ValueOutcome:
    """One metric value of one pack: its summary and, when gated, its threshold, failing cases
    and rates (``packs[i].values[NAME]``)."""

    metric: str
    lower_is_worse: bool
    summary: Summary
    threshold: AppliedThreshold | None
    failing_cases: int
    #: The first failing ids (the report lists at most 50 here; ``all_failing_ids`` has all).
    failing_ids: tuple[str, ...]
    failing_ids_truncated: bool
    all_failing_ids: Sequence[str]
    #: The cases run that have no value (errored, unscorable, or without it in some epoch).
    unscored_ids: Sequence[str]
    fail_rate: RateInterval | None
    unscorable_cases: int
    #: None when the value is not gated.
    passed: bool | None
    corrected_rate: CorrectedFailRate | None = None
    #: The failing rate among attack and benign cases, and among attack cases by family.
    by_kind: Mapping[str, RateInterval] | None
    by_family: Mapping[str, RateInterval] | None

    @property
    def gated(self) -> bool:
        return self.threshold is not None


@frozen(kw_only=True)
class CaseCounts:
    """How many cases a pack has, ran, and how they ended; how they were selected and reduced;
    and the ids run, in the pack's order (``packs[i].cases``)."""

    in_pack: int
    run: int
    errored: int
    #: Cases failing at least one gated value (absent in reports written before it was counted).
    failing: int | None = None
    #: Case epochs answered again because the worker answering them was lost (Ray).
    retried: int
    #: How many failing or errored cases carry their detail, and how many more there are.
    detailed: int
    not_detailed: int
    epochs: int
    reducer: str
    tags: tuple[str, ...]
    #: Written only when some tag was excluded.
    exclude_tags: tuple[str, ...] = ()
    ids: Sequence[str]


@frozen(kw_only=True)
class WiringCounts:
    """Whether the pack's documents reached the system, as the retrieved ids tell
    (:class:`ragleaklab_core.run.wiring.Wiring`, counted during the run)."""

    corpus_documents: int
    answered: int
    answered_with_retrieval: int
    retrieved_ids: int
    unknown_ids: int
    unknown_id_examples: tuple[str, ...]
    reached: bool | None


@frozen(kw_only=True)
class UnscorableCases:
    """How many cases a metric could not score, and why for the first 50 (test id -> why)."""

    count: int
    ids: Mapping[str, str]


@frozen(kw_only=True)
class CaseDetail:
    """A failing or errored case, as a reader judges it: the query and, from the first epoch
    the target answered, an answer excerpt and the retrieved ids in rank order."""

    query: str | None
    answer: str | None
    answer_truncated: bool
    retrieved_ids: tuple[str, ...] | None
    #: The fields in which a configured secret was written as *** (written only then).
    masked: tuple[str, ...] = ()
    #: The fields in which a lone surrogate was replaced before scoring (written only then).
    repaired: tuple[str, ...] = ()


@frozen(kw_only=True)
class CaseOutcome:
    """One case run (``packs[i].case_results[j]``): its outcome, epoch-reduced values
    (unrounded: a value rounded below its threshold would seem to pass it), the gated values
    it fails, why it errored or could not be scored, and for the cases detailed, their detail
    and each metric's evidence in every epoch."""

    test_id: str
    kind: str | None
    tags: tuple[str, ...]
    outcome: Outcome
    values: Mapping[str, float]
    failing: tuple[str, ...]
    error: str | None
    unscorable: Mapping[str, str]
    detail: CaseDetail | None
    #: Metric -> its evidence in each epoch (the metric's own JSON, bounded); null for an
    #: epoch that errored before the metric scored it.
    evidence: Mapping[str, tuple[Any, ...]]


@frozen(kw_only=True)
class PackOutcome:
    """One pack of a finished run (``packs[i]`` of ``report.json``).

    Attributes:
        verdict: The pack's verdict (:class:`~ragleaklab_core.outcome.words.Verdict`).
        verdict_without_thresholds: Its verdict had no gated value failed its threshold: what
            a run gated on a baseline still fails on.
        tested: False when the pack tested nothing trustworthy (``not_tested_reason`` says why).
        reasons: Why the pack did not pass, one sentence each.
        warnings: What a reader should know about a pass.
        defaults_fitted_on: The system its default thresholds were fitted on, when that is not
            this target and the pack is gated on them.
        errored: The first 50 errored cases, test id -> error.
        unscorable: Metric -> the cases it could not score.
    """

    name: str
    version: str
    pack_type: str
    primary_metric: str
    plugin: PluginRef
    metrics: tuple[PluginRef, ...]
    cases: CaseCounts
    verdict: Verdict
    verdict_without_thresholds: Verdict
    max_fail_rate: float
    #: Absent in reports written before allowances were recorded with their sources.
    allowances: Allowances | None = None
    tested: bool
    not_tested_reason: str | None
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    defaults_fitted_on: str | None
    wiring: WiringCounts | None
    values: Mapping[str, ValueOutcome]
    errored: Mapping[str, str]
    unscorable: Mapping[str, UnscorableCases]
    description: str
    taxonomy: PackTaxonomy | None
    case_results: Sequence[CaseOutcome]

    def gated(self) -> dict[str, ValueOutcome]:
        """The values that have a threshold, by name."""
        return {name: v for name, v in self.values.items() if v.threshold is not None}


__all__ = [
    "Allowances",
    "AppliedThreshold",
    "CaseCounts",
    "CaseDetail",
    "CaseOutcome",
    "CorrectedFailRate",
    "PackOutcome",
    "PluginRef",
    "Sensitivity",
    "Specificity",
    "UnscorableCases",
    "ValueOutcome",
    "WiringCounts",
]
