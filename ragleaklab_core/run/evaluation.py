"""Evaluation: the facts a pack's results hold, gathered for the gate to decide on
(thresholds, failing cases, rates, aggregates). It was ``run/verdict.py`` until 0.4; the
verdict is the gate's (:mod:`ragleaklab_core.gate`).

A case fails a metric value when its epoch-reduced value satisfies the threshold's decision
rule. This module counts, in one pass over a pack's results, what the verdict rules need (how
many cases of a gated value fail, were cases errored or unscorable, was the pack reached at all)
and hands them to the gate's functions, which alone decide:
:func:`~ragleaklab_core.gate.value_passes` for a gated value,
:func:`~ragleaklab_core.gate.pack_verdict` for the pack (pass, fail, error).
The printed verdict, ``report.json`` and the exit code all come from the resulting
:class:`PackVerdict`, so they cannot disagree.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
from attrs import frozen

from ragleaklab_core.calibration.labelling import target_identity
from ragleaklab_core.gate import (
    Verdict,
    above_corrected_bar,
    allowed_failures,
    no_attack_selected_reason,
    pack_verdict,
    same_answer_reason,
    thin_reason,
    thinly_scored,
    value_passes,
    worst_case,
)
from ragleaklab_core.outcome.pack import Allowances, CorrectedFailRate, Sensitivity, Specificity
from ragleaklab_core.run.case_kinds import DETAILED, KINDS, families_of, kind_of
from ragleaklab_core.run.records import CaseResult
from ragleaklab_core.run.runner import NOT_ASKED, PackRun
from ragleaklab_core.run.streamed import Streamed, StreamedMapping
from ragleaklab_core.stats.aggregation import RateInterval, Summary, rate_interval, summarize
from ragleaklab_core.values import Threshold

if TYPE_CHECKING:
    import numpy as np

#: How many failing/errored ids a report lists per value (the counts are always complete).
LISTED = 50


@frozen
class ValueVerdict:
    """One metric value of one pack: aggregates, and the gate when it has a threshold.

    The id lists are in the pack's case order and produced as they are walked
    (:class:`~ragleaklab_core.run.streamed.Streamed`): a pack of a million cases keeps a float
    per case for each value, not the ids.
    """

    name: str
    metric: str
    lower_is_worse: bool
    summary: Summary
    threshold: Threshold | None
    n_failing: int
    failing_ids: Sequence[str]
    fail_rate: RateInterval | None
    n_unscorable: int
    passed: bool | None  # None when not gated
    # Cases run that have no value (errored, or their metric could not score them): with
    # failing_ids, what tells a case that passed from one that was never measured.
    unscored_ids: Sequence[str] = ()
    #: The first :data:`LISTED` failing ids (what the report lists without walking them all).
    listed_failing: tuple[str, ...] = ()
    #: The failing rate among attack and benign cases, and among attack cases by family.
    by_kind: Mapping[str, RateInterval] | None = None
    by_family: Mapping[str, RateInterval] | None = None
    #: The rate at which the harm truly happened, corrected for the metric's measured error
    #: (:func:`corrected`), when the threshold carries it.
    corrected_rate: CorrectedFailRate | None = None


#: The defaults: no failing case allowed, errors not tolerated, no corrected-rate gate.
NO_ALLOWANCE = Allowances()

#: The verdicts, by their names before :class:`~ragleaklab_core.gate.Verdict` (kept for imports).
PASS, FAIL, ERROR = Verdict.PASS, Verdict.FAIL, Verdict.ERROR


@frozen
class PackVerdict:
    """A pack's verdict and everything the report says about it.

    Attributes:
        status: The pack's :class:`~ragleaklab_core.gate.Verdict`.
        tested: False when the pack tested nothing trustworthy (``not_tested`` says why).
        warnings: Caveats that do not change the status (some retrieved ids unknown...).
        defaults_fitted_on: The system the pack's default thresholds were fitted on, when the
            pack is gated on them and that is not this target (None otherwise): a pass is then
            not calibrated. It is said once per run, for every pack it concerns
            (:func:`run_warnings`), not among each pack's warnings.
        errored_ids, errors, unscorable: Every errored or unscorable case, in case order,
            produced as they are walked; ``listed_errors`` and ``listed_unscorable`` hold the
            first :data:`LISTED` of each, and ``detailed`` the cases the report details.
    """

    run: PackRun
    values: tuple[ValueVerdict, ...]
    errored_ids: Sequence[str]
    errors: Mapping[str, str]
    unscorable: Mapping[str, Mapping[str, str]]  # metric -> test_id -> reason
    reasons: tuple[str, ...]
    status: Verdict = Verdict.PASS
    tested: bool = True
    not_tested: str | None = None
    warnings: tuple[str, ...] = ()
    defaults_fitted_on: str | None = None
    max_fail_rate: float = 0.0
    allowances: Allowances = NO_ALLOWANCE
    # The status had no gated value failed its threshold: what a run gated on a baseline
    # (--fail-on regression|new-failures) still fails on (errors, unscorable cases, not tested).
    status_without_thresholds: Verdict = Verdict.PASS
    listed_errors: Mapping[str, str] = attrs.field(factory=dict)
    listed_unscorable: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict)
    #: The test ids of the failing or errored cases the report details (the first DETAILED).
    detailed: frozenset[str] = frozenset()
    #: Their positions among the pack's results (where their records are on disk).
    detailed_at: tuple[int, ...] = ()
    #: How many failing or errored cases there are (detailed or not).
    n_triaged: int = 0
    #: How many cases fail at least one gated value.
    n_failing_cases: int = 0

    @property
    def passed(self) -> bool:
        return self.status is Verdict.PASS

    def value(self, name: str) -> ValueVerdict | None:
        return next((v for v in self.values if v.name == name), None)


class _Column:
    """One value's per-case column from the single pass over a pack's results: the value of
    each case (NaN where it has none) and what the gate and the report count."""

    def __init__(self, name: str, threshold: Threshold | None) -> None:
        self.name = name
        self.threshold = threshold
        self.values = array("d")
        self.n_failing = 0
        self.listed: list[str] = []
        # frozenset of the metrics that could not score a case lacking the value -> count
        self.missing: dict[frozenset[str], int] = {}
        self.kinds = {kind: [0, 0] for kind in KINDS}
        self.families: dict[str, list[int]] = {}
        self.errored = 0  # cases with no value because they errored

    def add(self, result: CaseResult) -> bool:
        """Take one case; return whether it fails this value's threshold."""
        value = result.values.get(self.name)
        if value is None:
            self.values.append(math.nan)
            self.errored += result.error is not None
            if result.error is None and result.unscorable:
                key = frozenset(result.unscorable)
                self.missing[key] = self.missing.get(key, 0) + 1
            return False
        self.values.append(value)
        fails = self.threshold is not None and self.threshold.fails(value)
        if fails:
            self.n_failing += 1
            if len(self.listed) < LISTED:
                self.listed.append(result.test_id)
        if self.threshold is not None:
            kind = kind_of(result.tags)
            if kind is not None:
                self.kinds[kind][1] += 1
                self.kinds[kind][0] += fails
            if kind == "attack":
                for family in families_of(result.tags):
                    tally = self.families.setdefault(family, [0, 0])
                    tally[1] += 1
                    tally[0] += fails
        return fails

    def scored(self) -> np.ndarray:
        import numpy as np  # imported when used: the core's import stays light

        column = np.frombuffer(self.values, dtype=np.float64) if self.values else np.empty(0)
        missing = np.isnan(column)
        return column[~missing] if missing.any() else column  # no copy when every case has it

    def by_kind(self) -> dict[str, RateInterval] | None:
        if self.threshold is None or not any(n for _, n in self.kinds.values()):
            return None
        return {kind: rate_interval(k, n) for kind, (k, n) in self.kinds.items()}

    def by_family(self) -> dict[str, RateInterval] | None:
        if self.threshold is None or not self.families:
            return None
        return {f: rate_interval(k, n) for f, (k, n) in sorted(self.families.items())}

    def ids(self, ids: Sequence[str], wanted: Callable[[float], bool], count: int) -> Streamed:
        column = self.values
        return Streamed(count, lambda: (i for i, v in zip(ids, column, strict=True) if wanted(v)))


def evaluate(
    run: PackRun,
    thresholds: Mapping[str, Threshold],
    *,
    allowances: Allowances = NO_ALLOWANCE,
) -> PackVerdict:
    """Gate *run* on *thresholds* (value name -> threshold), in one pass over its results.

    A gated value fails when more of its scored cases fail than ``allowances.max_fail_rate``
    allows; or, with ``allowances.max_corrected_rate``, when the upper limit of its corrected
    rate (:func:`corrected`) is above it, and a value whose rate cannot be corrected leaves the
    pack not tested. The verdict shows every allowance in force and where it was set, PASS
    included."""
    max_fail_rate = allowances.max_fail_rate
    tolerate_errors = allowances.tolerate_errors
    max_corrected_rate = allowances.max_corrected_rate
    names = sorted(set(run.value_metric) | set(thresholds))
    columns = [_Column(name, thresholds.get(name)) for name in names]
    n_errored = n_not_asked = n_triaged = n_failing_cases = 0
    listed_errors: dict[str, str] = {}
    listed_unscorable: dict[str, dict[str, str]] = {}
    unscorable_counts: dict[str, int] = {}
    detailed: set[str] = set()
    detailed_at: list[int] = []
    for index, r in enumerate(run.results):
        failing = False
        for column in columns:
            failing = column.add(r) or failing
        if r.error is not None:
            n_errored += 1
            n_not_asked += r.error.startswith(NOT_ASKED + ":")
            if len(listed_errors) < LISTED:
                listed_errors[r.test_id] = r.error
        for metric, reason in r.unscorable.items():
            unscorable_counts[metric] = unscorable_counts.get(metric, 0) + 1
            listed = listed_unscorable.setdefault(metric, {})
            if len(listed) < LISTED:
                listed[r.test_id] = reason
        n_failing_cases += failing
        if r.error is not None or failing:
            n_triaged += 1
            if len(detailed) < DETAILED:
                detailed.add(r.test_id)
                detailed_at.append(index)
    results, ids = run.results, run.ids
    verdicts = []
    reasons: list[str] = []
    threshold_reasons: list[str] = []
    thin: list[str] = []  # gated values scored on too few cases while errors are tolerated
    uncorrected: list[str] = []  # gated on corrected rates, and this value's cannot be
    uncorrected_notes: list[str] = []  # not gated on them, and stored counts give none
    here = target_identity(run.target.provenance())
    names_of = {*run.value_metric.values(), *run.value_names.values()}
    for column in columns:
        name, threshold = column.name, column.threshold
        metric = _metric_of(name, run, column.missing)
        n_unscorable = sum(
            n for keys, n in column.missing.items() if metric in keys or metric not in names_of
        )
        scored = column.scored()
        n_scored = int(scored.size)
        n_failing = column.n_failing
        fail_rate = None
        passed = None
        correction: CorrectedFailRate | None = None
        if threshold is not None:
            fail_rate = rate_interval(n_failing, n_scored) if n_scored else None
            # Errors never lower a rate: a value passes only if it would still pass with every
            # case it has no value for counted as failing (gate.within_allowance). What it
            # measured alone is the finding (a failing threshold); the worst case only decides
            # whether a pass can be shown, so an untested pack stays untested, not "vulnerable".
            unscored = len(column.values) - n_scored
            counted = _unscored_words(column, unscored)
            rule = threshold.decision_rule.replace("threshold", repr(threshold.value))
            correction, why_not = corrected(column, n_failing, n_scored, here, unscored)
            if max_corrected_rate is None:
                if correction is None and (threshold.measured or threshold.not_measured):
                    # Counts stored, and no corrected rate: said, never left to be guessed.
                    uncorrected_notes.append(f"{name}: no corrected rate: {why_not}")
                allowed = allowed_failures(max_fail_rate, n_scored)
                excess = n_failing > allowed
                passed = value_passes(
                    allowances,
                    failing=n_failing,
                    scored=n_scored,
                    unscored=unscored,
                    corrected_high=None,
                )
                allowance = f", at most {allowed} allowed" if max_fail_rate else ""
                failing_text = f"{n_failing} of {n_scored} cases fail ({rule}{allowance})"
                worst_failing, worst_cases = worst_case(n_failing, n_scored, unscored)
                worst_text = (
                    f"{n_failing} of {n_scored} scored cases fail ({rule}), {counted}: counted "
                    f"as failing, {worst_failing} of {worst_cases} fail, at most "
                    f"{allowed_failures(max_fail_rate, worst_cases)} allowed "
                    f"({_percent(max_fail_rate)}): a pass cannot be shown"
                )
            else:
                measured = (
                    correction
                    if not unscored
                    else corrected(column, n_failing, n_scored, here, 0)[0]
                )
                high = None if correction is None else correction.high
                measured_high = None if measured is None else measured.high
                excess = measured_high is not None and above_corrected_bar(
                    measured_high, max_corrected_rate
                )
                passed = value_passes(
                    allowances,
                    failing=n_failing,
                    scored=n_scored,
                    unscored=unscored,
                    corrected_high=high,
                )
                if high is None and n_scored:
                    uncorrected.append(f"{name}: {why_not}, so --max-corrected-rate cannot gate it")
                failing_text = f"{n_failing} of {n_scored} cases fail ({rule})" + (
                    ""
                    if measured is None
                    else f"; {corrected_text(measured)}: its upper "
                    f"limit is above the {_percent(max_corrected_rate)} allowed"
                )
                worst_text = (
                    f"{n_failing} of {n_scored} scored cases fail ({rule}), {counted}: counted "
                    "as failing"
                    + (
                        ""
                        if correction is None
                        else f", {corrected_text(correction)}: its upper limit is above the "
                        f"{_percent(max_corrected_rate)} allowed: a pass cannot be shown"
                    )
                )
            if not n_scored:
                reasons.append(f"{name}: no case could be scored, so nothing was checked")
            elif excess:
                threshold_reasons.append(f"{name}: {failing_text}")
                reasons.append(threshold_reasons[-1])
            elif (
                not passed
                and unscored
                and tolerate_errors  # untolerated, errors and unscorable cases have reasons
                and (max_corrected_rate is None or correction)
            ):
                reasons.append(f"{name}: {worst_text}")
            if n_unscorable and not tolerate_errors:
                passed = False
                reasons.append(f"{name}: {n_unscorable} cases could not be scored by {metric}")
            # A case neither errored nor said unscorable can still lack the value (a metric
            # that left it out in one epoch): unscored all the same, never a pass.
            left_out = unscored - column.errored - sum(column.missing.values())
            if left_out and not tolerate_errors:
                passed = False
                reasons.append(
                    f"{name}: {left_out} cases have no value in every epoch ({metric} left it "
                    "out), so they were not scored"
                )
            # Tolerated errors have a bound: a value scored on few of the cases says little of
            # the pack, so it is not tested (the share is the gate's, not a setting).
            if tolerate_errors and n_scored and thinly_scored(n_scored, len(column.values)):
                thin.append(thin_reason(name, n_scored, len(column.values)))
        fails = threshold.fails if threshold is not None else _never
        verdicts.append(
            ValueVerdict(
                name=name,
                metric=metric,
                lower_is_worse=name in run.lower_is_worse,
                summary=summarize(scored),
                threshold=threshold,
                n_failing=n_failing,
                failing_ids=column.ids(ids, _failing(fails), n_failing),
                fail_rate=fail_rate,
                n_unscorable=n_unscorable,
                passed=passed,
                unscored_ids=column.ids(ids, math.isnan, len(column.values) - n_scored),
                listed_failing=tuple(column.listed),
                by_kind=column.by_kind(),
                by_family=column.by_family(),
                corrected_rate=correction,
            )
        )
    n_asked_errors = n_errored - n_not_asked
    if n_asked_errors and not tolerate_errors:
        reasons.append(f"{n_asked_errors} cases errored (a plugin raised); see runs.jsonl")
    wiring = run.wiring
    unjudged = _nothing_judged(run, columns)
    unreached_problem = [] if wiring is None or wiring.problem is None else [wiring.problem]
    # Not tested, but a gated value that fails still stands (an app answering the same leak to
    # every question is vulnerable): these make the pack ERROR only when nothing failed.
    untested = [*_same_answers(run), *_no_attack_selected(run), *thin, *uncorrected]
    problems = [*unjudged, *unreached_problem, *untested, *run.problems]
    if run.stopped:  # what stopped it (ingest, a principal it cannot carry) is the reason
        problems = [*run.problems, *unjudged, *unreached_problem, *untested]
    if n_not_asked and not run.problems:  # stopped for a reason given in problems otherwise
        problems.append(f"{n_not_asked} cases were not asked")
    tested = (
        not run.stopped
        and (wiring is None or wiring.reached is not False)
        and not unjudged
        and not untested
    )
    unreached = (wiring is not None and wiring.reached is False) or bool(unjudged)
    other_reasons = [r for r in reasons if r not in threshold_reasons]
    status = pack_verdict(
        unreached=unreached,
        vulnerable=bool(threshold_reasons),
        problems=problems,
        reasons=other_reasons,
    )
    warnings = [] if wiring is None or not wiring.warning else [wiring.warning]
    warnings.extend(uncorrected_notes)
    warnings += run.notes
    reset_failed = any(p.startswith("reset failed") for p in run.problems)
    if reset_failed:
        warnings.append("the target could not be reset: later packs may see this pack's documents")
    return PackVerdict(
        run=run,
        values=tuple(verdicts),
        errored_ids=Streamed(n_errored, lambda: (r.test_id for r in results if r.error)),
        errors=StreamedMapping(n_errored, _errors(results)),
        unscorable={
            metric: StreamedMapping(count, _unscorable(results, metric))
            for metric, count in sorted(unscorable_counts.items())
        },
        reasons=tuple([*problems, *reasons]),
        status=status,
        tested=tested,
        not_tested=None if tested else (problems[0] if problems else None),
        warnings=tuple(warnings),
        defaults_fitted_on=_fitted_elsewhere(run, thresholds),
        max_fail_rate=max_fail_rate,
        allowances=allowances,
        status_without_thresholds=pack_verdict(
            unreached=unreached, vulnerable=False, problems=problems, reasons=other_reasons
        ),
        listed_errors=listed_errors,
        listed_unscorable={m: listed_unscorable[m] for m in sorted(listed_unscorable)},
        detailed=frozenset(detailed),
        detailed_at=tuple(detailed_at),
        n_triaged=n_triaged,
        n_failing_cases=n_failing_cases,
    )


def corrected(
    column: _Column, failing: int, scored: int, here: str, unscored: int = 0
) -> tuple[CorrectedFailRate | None, str]:
    """A gated value's rate of cases where the harm truly happened, corrected for its
    threshold's measured error (:func:`ragleaklab_core.stats.corrected.corrected_rate`), as
    report.json writes it; or None and why there is none.

    The rate is over every scored case, benign questions included: a poison document that
    hijacks a question nobody planted it for is harm too (the built-in packs label hundreds of
    such cases positive), and the labels that measured the error mix both kinds as the run
    does. Over the attack cases alone, a system harmed on the benign questions could pass. The
    sensitivity and specificity are the rule's on the labelled cases it was fitted on, and only
    where calibrate wrote them (:mod:`ragleaklab_core.calibration.measured`) from labels that
    judged this system's answers and no other's (*here*, its identity): another system's error
    is no measure of this one's, and labels that do not say whose answers they judged measure
    nobody's.

    The *unscored* cases (errored, unscorable) are counted as failing, among the cases too
    (:func:`ragleaklab_core.gate.worst_case`): a case never measured must not lower the upper
    limit a gate reads. ``counted_as_failing`` says how many were.
    """
    threshold = column.threshold
    measured = None if threshold is None else threshold.measured
    if threshold is not None and threshold.not_measured is not None:
        return None, f"its threshold carries no measured error: {threshold.not_measured}"
    if threshold is None or measured is None:
        return None, (
            f"its threshold ({'none' if threshold is None else threshold.source}) carries no "
            "measured error; calibrate it on labelled answers of this system "
            "(`ragleaklab calibrate --write-thresholds`, docs/labelling.md)"
        )
    # Every system the labels judged must be this one: labels partly of another system's
    # answers measure that system's error in part, and a file naming none measures nobody's.
    elsewhere = [system for system in measured.observed_on if system != here]
    if elsewhere or not measured.observed_on:
        named = ", ".join(elsewhere) if elsewhere else "no system"
        return None, (
            f"its error was measured on labels of {named}'s answers, not of this target's "
            f"({here}); calibrate it on labelled answers of this system"
        )
    if not measured.positives or not measured.negatives:
        return None, (
            f"its calibration had {measured.positives} labelled positives and "
            f"{measured.negatives} negatives, and needs both to measure the metric's error"
        )
    if not scored:
        return None, "no case was scored"
    from ragleaklab_core.stats.corrected import corrected_rate

    failing, scored = worst_case(failing, scored, unscored)
    rate = corrected_rate(
        failing,
        scored,
        true_positives=measured.true_positives,
        positives=measured.positives,
        true_negatives=measured.true_negatives,
        negatives=measured.negatives,
    )
    if rate.estimate is None:
        return None, str(rate.why_not)
    return CorrectedFailRate(
        failing=failing,
        cases=scored,
        observed=rate.observed,
        estimate=rate.estimate,
        interval=(rate.low, rate.high),
        confidence=rate.confidence,
        sensitivity=Sensitivity(
            true_positives=measured.true_positives, positives=measured.positives
        ),
        specificity=Specificity(
            true_negatives=measured.true_negatives, negatives=measured.negatives
        ),
        labels=measured.labels,
        observed_on=tuple(measured.observed_on),
        label_sources=tuple(measured.label_sources),
        counted_as_failing=unscored,
    ), ""


def _unscored_words(column: _Column, unscored: int) -> str:
    """``"3 errored, 1 unscorable"``: why a value's *unscored* cases have no value."""
    unscorable = sum(column.missing.values())
    other = unscored - column.errored - unscorable
    words = [
        f"{n} {what}"
        for n, what in (
            (column.errored, "errored"),
            (unscorable, "unscorable"),
            (other, "without this value in every epoch"),
        )
        if n
    ]
    return ", ".join(words)


def _percent(rate: float) -> str:
    return f"{100 * rate:.1f}%"


def corrected_text(c: CorrectedFailRate) -> str:
    """``"... the true rate is 12.0% (95% interval 4.1%-22.3%) of 40 cases"``: a corrected rate
    in words, as the reasons say it."""
    low, high = c.interval
    return (
        f"corrected for the metric's measured error, the true rate is "
        f"{_percent(c.estimate)} ({round(100 * c.confidence)}% interval "
        f"{_percent(low)}-{_percent(high)}) of {c.cases} cases"
        + (
            f" ({c.counted_as_failing} of them unscored, counted as failing)"
            if c.counted_as_failing
            else ""
        )
    )


def _never(value: float) -> bool:
    return False


def _errors(results: Sequence[CaseResult]) -> Callable[[], Iterator[tuple[str, str]]]:
    return lambda: ((r.test_id, r.error) for r in results if r.error is not None)


def _unscorable(
    results: Sequence[CaseResult], metric: str
) -> Callable[[], Iterator[tuple[str, str]]]:
    return lambda: ((r.test_id, r.unscorable[metric]) for r in results if metric in r.unscorable)


def _failing(fails: Callable[[float], bool]) -> Callable[[float], bool]:
    """Whether a column's entry fails (NaN, no value, never does)."""
    return lambda value: not math.isnan(value) and fails(value)


def _nothing_judged(run: PackRun, columns: Sequence[_Column]) -> list[str]:
    """Why the pack tested nothing that its metrics judge: every answer was empty while a
    metric reads the answer (one that declares ``reads_answer = False``, such as the retrieval
    metric, judges the retrieved ids alone), or a metric's ``subject_value`` is 0 in every
    scored case (the citation metric read no citation in any answer). Either way a 0 on every
    gated value says nothing about the system, and a pass would be false."""
    found = []
    wiring = run.wiring
    readers = [m.name for m in run.metrics if m.metric_traits.reads_answer]
    if wiring is not None and wiring.all_blank and readers:
        found.append(
            f"the target answered all {wiring.answered} cases with no text, and "
            f"{', '.join(readers)} judge the answer: the pack was not tested; check that the "
            "app's reply is read from the right field (answer_path, docs/targets.md)"
        )
    by_name = {c.name: c for c in columns}
    for metric in run.metrics:
        subject = metric.metric_traits.subject_value
        column = by_name.get(subject) if subject is not None else None
        if column is None:
            continue
        scored = column.scored()
        if scored.size and not scored.any():
            found.append(
                f"{metric.name}: none of the {scored.size} scored answers held anything it "
                f"judges ({subject} = 0 in every case), so the pack was not tested; check that "
                f"the target's answers are in a form {metric.name} reads (docs/metrics.md)"
            )
    return found


def _same_answers(run: PackRun) -> list[str]:
    """Why the pack tested nothing when every answer was the same text (an LLM that is down
    answering one apology to every question) while a metric reads the answer: like blank
    answers, a 0 on every gated value then says nothing about the system. At least two cases
    must have answered, over every epoch; blank answers are the blank check's."""
    wiring = run.wiring
    readers = [m.name for m in run.metrics if m.metric_traits.reads_answer]
    if wiring is None or wiring.same_text is None or wiring.all_blank or not readers:
        return []
    return [same_answer_reason(_excerpt(wiring.same_text), wiring.answered, readers)]


def _no_attack_selected(run: PackRun) -> list[str]:
    """Why the pack tested no attack: the run's tags (``--tag``, ``--exclude-tag``) kept none of
    the attack cases the pack has. Its benign cases can still fail it (a false alarm stands), but
    a pass would say nothing about the attack."""
    settings = run.settings
    if not settings.selecting or not run.n_attacks_in_pack or run.n_attacks_selected:
        return []
    return [no_attack_selected_reason(run.n_attacks_in_pack, settings.tags, settings.exclude_tags)]


def _excerpt(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _fitted_elsewhere(run: PackRun, thresholds: Mapping[str, Threshold]) -> str | None:
    """The system the pack's default thresholds were fitted on, when the pack is gated on them
    and that system is not this target; else None.

    A pack's defaults are fitted on labels observed on one system (its ``label_target``); gating
    another system on them can pass an app that the labels never described.
    """
    if not any(t.from_pack for t in thresholds.values()):
        return None  # every threshold was given or calibrated for this run
    provenance = run.pack.obj.label_provenance() if run.pack.pack_traits.label_provenance else None
    observed = getattr(provenance, "label_target", None)
    if not isinstance(observed, str) or not observed:
        return None
    here = target_identity(run.target.provenance())
    if observed in (here, run.target.name):
        return None
    return observed


def run_warnings(verdicts: Sequence[PackVerdict]) -> list[str]:
    """What a reader should know about the whole run, each said once: the packs gated on
    default thresholds fitted on another system than this target, listed in one sentence per
    system they were fitted on (a run of eight packs said it eight times, one pack at a time).
    """
    if not verdicts:
        return []
    here = target_identity(verdicts[0].run.target.provenance())
    by_system: dict[str, list[str]] = {}
    for v in verdicts:
        if v.defaults_fitted_on is not None:
            by_system.setdefault(v.defaults_fitted_on, []).append(v.run.info.name)
    said = []
    for observed, names in sorted(by_system.items()):
        packs = (
            f"pack {names[0]}" if len(names) == 1 else f"{len(names)} packs ({', '.join(names)})"
        )
        said.append(
            f"the default thresholds of {packs} were fitted on labels observed on {observed}, "
            f"not on this target ({here}): a pass here is not calibrated; label this target's "
            "answers and calibrate (`ragleaklab label export`, docs/labelling.md)"
        )
    return said


def _metric_of(name: str, run: PackRun, missing: Mapping[frozenset[str], int]) -> str:
    """The metric plugin that produces value *name*: from the values cases produced, else from
    the metrics' declarations, else the metric that could not score the cases lacking it."""
    found = run.value_metric.get(name) or run.value_names.get(name)
    if found:
        return found
    culprits = sorted({m for keys in missing for m in keys})
    return ", ".join(culprits) if culprits else "?"


def not_tested_verdict(run: PackRun, reason: str) -> PackVerdict:
    """The verdict of a pack the run knew it could not test before asking anything (its cases
    ask as a principal the target cannot carry): ``ERROR``, not tested, *reason* its only
    reason, reported beside the packs that were measured (never a pass, and never the end of
    the run)."""
    return PackVerdict(
        run=run,
        values=(),
        errored_ids=(),
        errors={},
        unscorable={},
        reasons=(reason,),
        status=Verdict.ERROR,
        tested=False,
        not_tested=reason,
        status_without_thresholds=Verdict.ERROR,
    )


__all__ = [
    "ERROR",
    "FAIL",
    "PASS",
    "Allowances",
    "PackVerdict",
    "ValueVerdict",
    "evaluate",
    "not_tested_verdict",
    "run_warnings",
]
