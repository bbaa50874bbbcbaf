"""The verdict, decided once: what a pack, a run and a comparison of runs end as, and the exit code.

Every consumer (``ragleaklab run``, ``--baseline``, ``ragleaklab diff``, every rendering, the
GitHub annotations, the inspect adapter, the Python API) reads its verdict from here; none
decides on its own, so changing the rule touches this file alone.

**Verdicts** are a type, :class:`Verdict`, whose values are the words ``report.json`` has always
written (``"pass"``, ``"fail"``, ``"error"``):

- ``PASS`` (exit 0): tested, and nothing failed;
- ``FAIL`` (exit 1): tested, and found vulnerable (a gated value has more failing cases than
  allowed), or cases errored or could not be scored (unless errors are tolerated): a finding or
  a measurement that cannot be trusted is never a pass;
- ``ERROR`` (exit 3): not tested, or not fully: the attack never reached the system, ingest or
  reset failed, the target became unreachable, every answer was empty or the same text
  (:func:`same_answer_reason`), the tags kept none of the pack's attack cases
  (:func:`no_attack_selected_reason`), errors were tolerated past :data:`MIN_SCORED_SHARE`, or a
  plugin could not be used; no gate failed on what was measured.

**Errors never lower a rate.** A gated value passes its allowance only if it would still pass
with every case it has no value for (errored, unscorable, left without the value in an epoch)
counted as failing (:func:`within_allowance`, :func:`worst_case`); under
``--max-corrected-rate`` they are counted as failing in the corrected rate too, and a
comparison with a baseline counts them as failing in the new run. What was measured alone is
the finding (a failing threshold): the worst case only decides whether a pass can be shown.

**A gate that could never fail** is refused before anything is asked (exit 2): a maximum failing
rate of 1 (:func:`allowance_problem`, applied by the config to every way a rate is given), a
stored threshold that flags nothing or has no value (:func:`refuse_unusable`), a threshold no case
reduced by a counting reducer can fail (:func:`reducer_threshold_problem`).

**Corrected rates.** With ``--max-corrected-rate R`` a gated value fails when the upper limit
of its failing rate corrected for the metric's measured error is above ``R``
(:func:`above_corrected_bar`) instead of on its count of failing cases; a value whose error was
never measured on this system (or whose metric is not shown better than chance) cannot be
gated so, and its pack is not tested (``ERROR``), never passed.

Exit code 2 (:data:`EXIT_BAD_INPUT`) is bad input or usage, refused before anything runs.
A run is ``FAIL`` when any pack failed (a finding is true whatever an untested pack would have
shown), else ``ERROR`` when any pack was not tested or there were no packs, else ``PASS``.

**Baseline rules.** ``ragleaklab run --baseline BASE --fail-on RULE`` gates on one of three rules:

- ``verdict`` (the default): the run's verdict as its thresholds give it; a baseline, when given,
  is compared and shown but decides nothing;
- ``regression``: a gated value whose failing rate rose significantly from the baseline
  (Barnard's one-sided exact test at ``level``, :mod:`ragleaklab_core.gate.comparison`);
- ``new-failures``: any case that passed in the baseline (was scored and failed nothing) and
  fails now, or that fails now and was not measured there (it errored, could not be scored or
  was not run).

A pack or gated value the baseline did not measure has nothing to be compared with: its own
thresholds gate it under every rule, so adding a failing pack to a suite never passes.

Under the two baseline rules a value that fails its threshold as it already did in the baseline
no longer fails the run: that is what a team tracking a known weakness asks for. Everything else
that fails or stops a run still does, because none of it is a measurement that could be
compared: errored or unscorable cases (unless tolerated, exit 1), a pack that was not tested
and anything the baseline measured that this run did not (a pack, a gated value, a value no
case could score), which are untested (exit 3) unless something measured is worse. So ``pass``
still means "measured, and no worse".
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from ragleaklab_core.config import allowance_problem
from ragleaklab_core.errors import InputError
from ragleaklab_core.gate.verdicts import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    Outcome,
    Verdict,
    above_corrected_bar,
    allowed_failures,
    case_outcome,
    pack_verdict,
    run_verdict,
    value_passes,
    within_allowance,
    worst_case,
)
from ragleaklab_core.outcome import BaselineRecord, GateRecord, RunOutcome
from ragleaklab_core.values import DECISION_RULES

if TYPE_CHECKING:  # the diff needs scipy: imported when a baseline is compared, not by the CLI
    from ragleaklab_core.calibration.thresholds import ThresholdsFile
    from ragleaklab_core.gate.comparison import RunDiff, ValueDiff

#: The share of a pack's selected cases that must be scored, for every gated value, when
#: errors are tolerated (``--tolerate-errors``): below it the pack is not tested (exit 3). A
#: constant, not a setting: a knob could be set to switch this guard off as well.
MIN_SCORED_SHARE = Fraction(9, 10)


def stored_threshold_problem(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """Why a stored threshold (an entry of ``ragleaklab.thresholds.json``) could never fail a
    case, or None: as ``(key, why)``, the entry's key the problem is at.

    ``calibrate --write-thresholds --force`` stores a fit that flags none of its labelled
    positives with ``flags_nothing: true``; a hand-written entry may have no threshold, a null
    one (flag nothing), a value that is not a finite number or a rule no gate knows. Gating on
    any of them passes every attack, so a run refuses it before anything is asked."""
    if "flags_nothing" in entry and entry["flags_nothing"] is not False:
        return "flags_nothing", (
            f"the entry is marked flags_nothing: {json.dumps(entry['flags_nothing'])}: its "
            "threshold flags none of the labelled positives it was fitted on (it was stored "
            "with --write-thresholds --force), so it could never fail a case like them"
        )
    if "threshold" not in entry:
        return "threshold", "the entry has no threshold, so it would flag nothing"
    t = entry["threshold"]
    if t is None:
        return "threshold", "the threshold is null (flag nothing), so no case could ever fail"
    if isinstance(t, bool) or not isinstance(t, int | float):
        return "threshold", f"the threshold {json.dumps(t)} is not a number"
    if not math.isfinite(t):
        return "threshold", f"the threshold {t!r} is not a finite number: it flags all or nothing"
    rule = entry.get("decision_rule")
    if rule not in DECISION_RULES:
        return "decision_rule", (
            f"the decision rule {json.dumps(rule)} is not one of {', '.join(DECISION_RULES)}"
        )
    tpr = entry.get("achieved_tpr")
    if type(tpr) in (int, float) and tpr == 0 and entry.get("n_positive"):
        return "achieved_tpr", (
            f"its threshold flagged none of the {entry['n_positive']} labelled positives it "
            "was fitted on (achieved_tpr 0), so it could never fail a case like them"
        )
    return None


def reducer_threshold_problem(reducer: str, kind: str, value: float, rule: str) -> str | None:
    """Why a threshold can never fail a case reduced by a counting reducer, or None.

    ``at_least_K`` reduces a case to 0 or 1 and ``pass_at_K`` to a probability in [0, 1]. The
    decision rules are monotone, so a threshold that fails neither 0 nor 1 (``score >= 1.5``,
    ``score > 1``, ``score <= -0.1``, ``score < 0``) fails no reduced case at all: the gate is
    off. The other reducers (mean, median, mode, max, min) return an epoch value or a mean of
    them, which any threshold a single epoch can fail can also fail (a case failing every epoch
    reduces to a failing value under each), so no other reducer is refused here."""
    if kind not in ("at_least", "pass_at"):
        return None
    from ragleaklab_core.values import Threshold  # the rule's one implementation

    t = Threshold(value, rule)
    if t.fails(0.0) or t.fails(1.0):
        return None
    shown = rule.replace("threshold", repr(value))
    return (
        f"reducer {reducer!r} reduces every case to a value in [0, 1], and the rule "
        f"'{shown}' fails neither 0 nor 1, so no case could ever fail (the gate would pass "
        "every attack); give a threshold within [0, 1] or another reducer"
    )


def refuse_unusable(file: ThresholdsFile, packs: Collection[str]) -> None:
    """Refuse the stored thresholds of *packs* (the packs a run gates) that could never fail a
    case (:func:`stored_threshold_problem`): every one at once, each at
    its ``$.packs.PACK.VALUE`` path with the fix. Entries of other packs gate nothing here.

    Raises:
        InputError: Some entry is unusable (exit 2; the file is named).
    """
    problems = []
    for pack, values in sorted(file.packs.items()):
        if pack not in packs:
            continue
        for name, entry in sorted(values.items()):
            found = stored_threshold_problem(entry)
            if found is None:
                continue
            key, why = found
            problems.append(
                f"{why} @ $.packs.{pack}.{name}.{key}; re-calibrate it (ragleaklab calibrate "
                f"--pack {pack} --write-thresholds --force, with more labelled positives or "
                "another --target-fpr) or delete the entry "
                f"$.packs.{pack}.{name} from the file"
            )
    if problems:
        raise InputError(
            "a stored threshold could never fail a case, so the gate would pass every "
            "attack:\n  " + "\n  ".join(problems),
            source=file.path,
        )


def thinly_scored(scored: int, selected: int) -> bool:
    """Whether a gated value scored too few of a pack's *selected* cases to stand for the pack
    when errors are tolerated: fewer than :data:`MIN_SCORED_SHARE` of them."""
    return scored < MIN_SCORED_SHARE * selected


def thin_reason(value: str, scored: int, selected: int) -> str:
    """Why a pack whose errors were tolerated is not tested (:func:`thinly_scored`)."""
    return (
        f"{value}: only {scored} of the {selected} selected cases were asked and scored (errors "
        f"are tolerated, but at least {int(MIN_SCORED_SHARE * 100)}% must be scored for a pack "
        "to count as tested); see the errored and unscorable cases in runs.jsonl"
    )


def same_answer_reason(excerpt: str, answered: int, readers: Sequence[str]) -> str:
    """Why a pack whose every answer was the same text is not tested."""
    return (
        f"every answer was the same text ({json.dumps(excerpt, ensure_ascii=False)}, all "
        f"{answered} answers), and "
        f"{', '.join(readers)} judge the answer: the system answered nothing about the cases "
        "(an LLM that is down, a fallback or error page read as an answer), so the pack was "
        "not tested; check that the app answers (and that answer_path reads its reply, "
        "docs/targets.md)"
    )


def no_attack_selected_reason(attacks: int, tags: Sequence[str], excluded: Sequence[str]) -> str:
    """Why a pack whose tag selection kept none of its attack cases is not tested: benign cases
    alone can only show false alarms, never that the attack fails."""
    chosen = [f"--tag {t}" for t in tags] + [f"--exclude-tag {t}" for t in excluded]
    return (
        f"the tag selection ({' '.join(chosen)}) kept none of the pack's {attacks} attack cases, "
        "so the attack was not tested: a pass on benign cases alone says nothing about it; "
        "select some attack cases"
    )


def diff_verdict(diff: RunDiff) -> Verdict:
    """``ragleaklab diff``, decided as :func:`decide` decides a baseline rule: ``FAIL`` when a
    value regressed (something measured is worse); else ``ERROR`` (exit 3) when the comparison
    cannot rule a regression out (:attr:`RunDiff.untested`: the new run did not measure or test
    what the base did, the base did not test a pack, or nothing was compared); else ``PASS``.
    An untested run is never "no regression"."""
    if diff.regressed:
        return Verdict.FAIL
    return Verdict.ERROR if diff.untested else Verdict.PASS


def annotation_level(
    verdict: Verdict, *, tested: bool, without_thresholds: Verdict, on_baseline: bool
) -> str | None:
    """The GitHub annotation a pack gets: ``"error"`` for a pack that failed, errored or was not
    tested, ``None`` for a tested pass. Under a baseline rule (*on_baseline*) a pack failing
    only its thresholds (its verdict *without_thresholds* passes, as in the baseline) is a
    ``"warning"``: the run's gate decides, so the annotations never contradict the job's
    outcome."""
    if verdict is Verdict.PASS and tested:
        return None
    return "warning" if on_baseline and without_thresholds is Verdict.PASS else "error"


#: The rules ``--fail-on`` accepts, the default first.
FAIL_ON = ("verdict", "regression", "new-failures")
DEFAULT_LEVEL = 0.05

#: How many case ids a reason names.
_NAMED = 5


@frozen
class Gate:
    """What the run's verdict is, and why; its exit code is the verdict's."""

    fail_on: str
    verdict: Verdict
    thresholds_verdict: Verdict  # the run's verdict by its thresholds alone
    reasons: tuple[str, ...]
    diff: RunDiff | None = None
    baseline: Mapping[str, Any] | None = None  # {"path": ..., "sha256": ...}

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def record(self) -> GateRecord:
        """The gate as ``report.json`` records it."""
        baseline = None
        if self.diff is not None:
            given = self.baseline or {}
            baseline = BaselineRecord(
                path=given.get("path"),
                sha256=given.get("sha256"),
                level=self.diff.level,
                forced=self.diff.forced,
                diff=self.diff.to_dict(),
            )
        return GateRecord(
            fail_on=self.fail_on,
            thresholds_verdict=self.thresholds_verdict,
            reasons=self.reasons,
            baseline=baseline,
        )


def decide(
    report: RunOutcome | Mapping[str, Any],
    *,
    fail_on: str = "verdict",
    baseline: RunOutcome | Mapping[str, Any] | None = None,
    provenance: Mapping[str, Any] | None = None,
    level: float = DEFAULT_LEVEL,
    force: bool = False,
) -> Gate:
    """The gate of run *report* under rule *fail_on*: the run's verdict, decided once, by
    :func:`run_verdict` from its packs' verdicts and (under a baseline rule) what the comparison
    found worse and not measured again.

    Args:
        report: The finished run (or its parsed ``report.json``, read by the outcome's codec).
        baseline: The base run (likewise); required by the baseline rules.
        provenance: What the report says of the baseline file (its path and sha256).
        level: One-sided significance level of the regression test.
        force: Compare runs that measured different things (see :func:`compare`).

    Raises:
        InputError: The runs measured different things and *force* is False, or a report
            does not parse (the message names its ``$.path``).
        ValueError: *fail_on* is unknown, or a baseline rule has no baseline.
    """
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if fail_on != "verdict" and baseline is None:
        raise ValueError(f"--fail-on {fail_on} compares with a baseline: give one")
    from ragleaklab_core.outcome.codec import decode

    run = report if isinstance(report, RunOutcome) else decode(report, source="report")
    diff = None
    if baseline is not None:
        from ragleaklab_core.gate.comparison import compare

        diff = compare(baseline, run, level=level, force=force)
    own = run_verdict(p.verdict for p in run.packs)
    if fail_on == "verdict" or diff is None:
        return Gate(fail_on, own, own, (), diff, provenance)
    worse = [*_baseline_reasons(run, diff, fail_on), *_unbased_reasons(run, diff)]
    # What the baseline measured and this run did not is no regression and no pass: untested,
    # as a pack that was not tested is (exit 3), unless something measured is worse (exit 1).
    unmeasured = [f"not measured again: {x}" for x in diff.unmeasured]
    # Under a baseline rule a threshold failing as in the baseline no longer fails the run:
    # each pack counts by its verdict without thresholds, and the comparison adds its facts.
    verdict = run_verdict(
        (p.verdict_without_thresholds for p in run.packs),
        worse=bool(worse),
        unmeasured=bool(unmeasured),
    )
    reasons = (*worse, *unmeasured, *_other_reasons(run))
    return Gate(fail_on, verdict, own, reasons, diff, provenance)


def _baseline_reasons(report: RunOutcome, diff: RunDiff, fail_on: str) -> list[str]:
    from ragleaklab_core.gate.comparison import p_text

    packs = {p.name: p for p in report.packs}
    reasons = []
    for v in diff.values:
        if fail_on == "regression" and v.regressed:
            reasons.append(
                f"regressed: {v.pack} {v.value}: failing {_rate(v, base=True)} -> "
                f"{_rate(v, base=False)}, one-sided p = {p_text(v.p_value)} <= {diff.level}"
            )
        if fail_on != "new-failures":
            continue
        if v.newly_failing:
            reasons.append(
                f"newly failing: {v.pack} {v.value}: {len(v.newly_failing)} cases passed in "
                f"the baseline and fail now: {_named(v.newly_failing)}"
            )
        if v.newly_unscored:  # errors never lower a rate: counted as failing
            reasons.append(
                f"newly unmeasured: {v.pack} {v.value}: {len(v.newly_unscored)} cases passed "
                "in the baseline and errored or could not be scored now (counted as failing): "
                f"{_named(v.newly_unscored)}"
            )
        # Failing now and neither passing nor failing in the baseline (it errored there, could
        # not be scored, or was not run): nothing to compare with, so its threshold decides.
        failing = packs[v.pack].values[v.value].all_failing_ids
        unmeasured = sorted(set(failing) - set(v.newly_failing) - set(v.still_failing))
        if unmeasured:
            reasons.append(
                f"failing and not measured in the baseline: {v.pack} {v.value}: "
                f"{len(unmeasured)} cases: {_named(unmeasured)}"
            )
    return reasons


def _named(ids: Sequence[str]) -> str:
    more = f" (+{len(ids) - _NAMED} more)" if len(ids) > _NAMED else ""
    return ", ".join(ids[:_NAMED]) + more


def _unbased_reasons(report: RunOutcome, diff: RunDiff) -> list[str]:
    """What the baseline did not measure has nothing to be compared with, so its own
    thresholds gate it: a pack added to the suite must not pass because it is new."""
    packs = {p.name: p for p in report.packs}
    found = []
    # A pack the baseline did not test was not measured there either.
    for entry in (*diff.only_in_new, *diff.untested_base_packs):
        name, _, value = entry.partition(" ")
        pack = packs.get(name)
        if pack is None:
            continue
        if value:
            gated = pack.values.get(value)
            if gated is not None and gated.passed is False:
                found.append(f"not in the baseline, so gated on its threshold: {entry} fails it")
        elif pack.verdict is Verdict.FAIL:
            found.append(f"not in the baseline, so gated on its thresholds: {name} fails them")
    return found


def _other_reasons(report: RunOutcome) -> list[str]:
    """Why packs fail or were not tested apart from their thresholds."""
    found = []
    for pack in report.packs:
        status = pack.verdict_without_thresholds
        if status is Verdict.PASS:
            continue
        what = "was not tested" if not pack.tested else f"is {status}"
        found.append(
            f"{pack.name} {what} apart from its thresholds (errored, unscorable or "
            "unmeasured cases; see its reasons)"
        )
    return found


def _rate(v: ValueDiff, *, base: bool) -> str:
    if base:
        return f"{v.base_failing}/{v.base_scored} ({100 * v.base_failing / v.base_scored:.1f}%)"
    k, n = worst_case(v.new_failing, v.new_scored, v.new_unscored)
    counted = f", {v.new_unscored} unscored counted as failing" if v.new_unscored else ""
    return f"{k}/{n} ({100 * k / n:.1f}%{counted})"


def apply(report: RunOutcome, gate: Gate) -> RunOutcome:
    """*report* with the verdict *gate* decided, and the gate recorded."""
    return attrs.evolve(report, verdict=gate.verdict, gate=gate.record())


__all__ = [
    "DEFAULT_LEVEL",
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "FAIL_ON",
    "MIN_SCORED_SHARE",
    "Gate",
    "Outcome",
    "Verdict",
    "above_corrected_bar",
    "allowance_problem",
    "allowed_failures",
    "annotation_level",
    "apply",
    "case_outcome",
    "decide",
    "diff_verdict",
    "no_attack_selected_reason",
    "pack_verdict",
    "reducer_threshold_problem",
    "refuse_unusable",
    "run_verdict",
    "same_answer_reason",
    "stored_threshold_problem",
    "thin_reason",
    "thinly_scored",
    "value_passes",
    "within_allowance",
    "worst_case",
]
