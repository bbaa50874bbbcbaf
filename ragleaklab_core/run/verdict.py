"""From per-case values to a verdict: thresholds, failing cases, aggregates, pass/fail/error.

The printed verdict, ``report.json`` and the exit code all come from :class:`PackVerdict`, so
they cannot disagree. A case fails a metric value when its epoch-reduced value satisfies the
threshold's decision rule. A pack ends in one of three states:

- ``fail``: tested, and a gated value has more failing cases than allowed (found vulnerable),
  or cases errored or could not be scored (unless errors are tolerated);
- ``error``: not (fully) tested: the attack never reached the system (the wiring check), ingest
  or reset failed, or the target became unreachable, and no gate failed on what was measured;
- ``pass``: tested, and nothing above. A case that errored or was unscorable is never a pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from attrs import frozen

from ragleaklab_core.calibration.labelling import target_identity
from ragleaklab_core.run.runner import NOT_ASKED, PackRun
from ragleaklab_core.stats.aggregation import rate_interval, summarize
from ragleaklab_core.values import Threshold

#: How many failing/errored ids a report lists per value (the counts are always complete).
LISTED = 50


@frozen
class ValueVerdict:
    """One metric value of one pack: aggregates, and the gate when it has a threshold."""

    name: str
    metric: str
    lower_is_worse: bool
    summary: Mapping[str, Any]
    threshold: Threshold | None
    n_failing: int
    failing_ids: tuple[str, ...]
    fail_rate: Mapping[str, Any] | None
    n_unscorable: int
    passed: bool | None  # None when not gated
    # Cases run that have no value (errored, or their metric could not score them): with
    # failing_ids, what tells a case that passed from one that was never measured.
    unscored_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        t = self.threshold
        return {
            "metric": self.metric,
            "lower_is_worse": self.lower_is_worse,
            "summary": dict(self.summary),
            "threshold": None
            if t is None
            else {"value": t.value, "decision_rule": t.decision_rule, "source": t.source},
            "failing_cases": self.n_failing,
            "failing_ids": list(self.failing_ids[:LISTED]),
            "failing_ids_truncated": len(self.failing_ids) > LISTED,
            "all_failing_ids": list(self.failing_ids),
            "unscored_ids": list(self.unscored_ids),
            "fail_rate": None if self.fail_rate is None else dict(self.fail_rate),
            "unscorable_cases": self.n_unscorable,
            "passed": self.passed,
        }


#: A pack's possible states, in the order of precedence for a run's exit code.
PASS, FAIL, ERROR = "pass", "fail", "error"


@frozen
class PackVerdict:
    """A pack's verdict and everything the report says about it.

    Attributes:
        status: ``"pass"``, ``"fail"`` or ``"error"`` (see the module docstring).
        tested: False when the pack tested nothing trustworthy (``not_tested`` says why).
        warnings: Caveats that do not change the status (some retrieved ids unknown...).
    """

    run: PackRun
    values: tuple[ValueVerdict, ...]
    errored_ids: tuple[str, ...]
    errors: Mapping[str, str]
    unscorable: Mapping[str, Mapping[str, str]]  # metric -> test_id -> reason
    reasons: tuple[str, ...]
    passed: bool
    status: str = PASS
    tested: bool = True
    not_tested: str | None = None
    warnings: tuple[str, ...] = ()
    max_fail_rate: float = 0.0
    # The status had no gated value failed its threshold: what a run gated on a baseline
    # (--fail-on regression|new-failures) still fails on (errors, unscorable cases, not tested).
    status_without_thresholds: str = PASS

    def value(self, name: str) -> ValueVerdict | None:
        return next((v for v in self.values if v.name == name), None)


def evaluate(
    run: PackRun,
    thresholds: Mapping[str, Threshold],
    *,
    max_fail_rate: float = 0.0,
    tolerate_errors: bool = False,
) -> PackVerdict:
    """Gate *run* on *thresholds* (value name -> threshold)."""
    results = run.results
    errored = tuple(sorted(r.test_id for r in results if r.error is not None))
    errors = {r.test_id: r.error for r in results if r.error is not None}
    unscorable: dict[str, dict[str, str]] = {}
    for r in results:
        for metric, reason in r.unscorable.items():
            unscorable.setdefault(metric, {})[r.test_id] = reason
    names = sorted(set(run.value_metric) | set(thresholds))
    verdicts = []
    reasons: list[str] = []
    threshold_reasons: list[str] = []
    answered = [r for r in results if r.error is None]
    names_of = {*run.value_metric.values(), *run.value_names.values()}
    for name in names:
        scored = [(r.test_id, r.values[name]) for r in results if name in r.values]
        # Cases that were answered but have no value: their metric could not score them.
        missing = [r for r in answered if name not in r.values and r.unscorable]
        metric = _metric_of(name, run, missing)
        n_unscorable = sum(1 for r in missing if metric in r.unscorable or metric not in names_of)
        threshold = thresholds.get(name)
        failing: tuple[str, ...] = ()
        fail_rate = None
        passed = None
        if threshold is not None:
            failing = tuple(sorted(tid for tid, value in scored if threshold.fails(value)))
            fail_rate = rate_interval(len(failing), len(scored)).to_dict() if scored else None
            allowed = _allowed(max_fail_rate, len(scored))
            passed = len(failing) <= allowed and bool(scored)
            if not scored:
                reasons.append(f"{name}: no case could be scored, so nothing was checked")
            elif len(failing) > allowed:
                rule = threshold.decision_rule.replace("threshold", repr(threshold.value))
                allowance = f", at most {allowed} allowed" if max_fail_rate else ""
                threshold_reasons.append(
                    f"{name}: {len(failing)} of {len(scored)} cases fail ({rule}{allowance})"
                )
                reasons.append(threshold_reasons[-1])
            if n_unscorable and not tolerate_errors:
                passed = False
                reasons.append(f"{name}: {n_unscorable} cases could not be scored by {metric}")
        verdicts.append(
            ValueVerdict(
                name=name,
                metric=metric,
                lower_is_worse=name in run.lower_is_worse,
                summary=summarize([v for _, v in scored]).to_dict(),
                threshold=threshold,
                n_failing=len(failing),
                failing_ids=failing,
                fail_rate=fail_rate,
                n_unscorable=n_unscorable,
                passed=passed,
                unscored_ids=tuple(sorted(r.test_id for r in results if name not in r.values)),
            )
        )
    not_asked = {r.test_id for r in results if r.error and r.error.startswith(NOT_ASKED + ":")}
    asked_errors = [tid for tid in errored if tid not in not_asked]
    if asked_errors and not tolerate_errors:
        reasons.append(f"{len(asked_errors)} cases errored (a plugin raised); see runs.jsonl")
    problems = list(run.problems)
    wiring = run.wiring
    if wiring is not None and wiring.problem is not None:
        problems.insert(0, wiring.problem)
    if not_asked and not run.problems:  # stopped for a reason given in problems otherwise
        problems.append(f"{len(not_asked)} cases were not asked")
    tested = not run.stopped and (wiring is None or wiring.reached is not False)
    unreached = wiring is not None and wiring.reached is False
    other_reasons = [r for r in reasons if r not in threshold_reasons]
    status = _status(unreached, bool(threshold_reasons), problems, other_reasons)
    warnings = [
        w for w in (None if wiring is None else wiring.warning, _foreign(run, thresholds)) if w
    ]
    reset_failed = any(p.startswith("reset failed") for p in run.problems)
    if reset_failed:
        warnings.append("the target could not be reset: later packs may see this pack's documents")
    return PackVerdict(
        run=run,
        values=tuple(verdicts),
        errored_ids=errored,
        errors=dict(sorted(errors.items())),
        unscorable={m: dict(sorted(d.items())) for m, d in sorted(unscorable.items())},
        reasons=tuple([*problems, *reasons]),
        passed=status == PASS,
        status=status,
        tested=tested,
        not_tested=None if tested else (problems[0] if problems else None),
        warnings=tuple(warnings),
        max_fail_rate=max_fail_rate,
        status_without_thresholds=_status(unreached, False, problems, other_reasons),
    )


def _allowed(max_fail_rate: float, scored: int) -> int:
    """How many of *scored* cases may fail: the rate as the decimal the user wrote, so 0.57 of
    100 allows 57 (in binary floating point 0.57 * 100 is 56.99999999999999)."""
    return math.floor(Fraction(repr(max_fail_rate)) * scored)


def _status(
    unreached: bool, vulnerable: bool, problems: Sequence[str], reasons: Sequence[str]
) -> str:
    if unreached:
        return ERROR  # nothing measured is about the pack's documents: no finding stands
    if vulnerable:
        return FAIL
    if problems:
        return ERROR
    return FAIL if reasons else PASS


def _foreign(run: PackRun, thresholds: Mapping[str, Threshold]) -> str | None:
    """Why the pack's default thresholds may not fit this target, or None.

    A pack's defaults are fitted on labels observed on one system (its ``label_target``); gating
    another system on them can pass an app that the labels never described.
    """
    if not any(t.from_pack for t in thresholds.values()):
        return None  # every threshold was given or calibrated for this run
    declared = getattr(run.pack.obj, "label_provenance", None)
    provenance = declared() if callable(declared) else None
    observed = getattr(provenance, "label_target", None)
    if not isinstance(observed, str) or not observed:
        return None
    here = target_identity(run.target.provenance())
    if observed in (here, run.target.name):
        return None
    return (
        f"the pack's default thresholds were fitted on labels observed on {observed}, not on "
        f"this target ({here}): a pass here is not calibrated; label this target's answers and "
        "calibrate (`ragleaklab label export`, docs/labelling.md)"
    )


def _metric_of(name: str, run: PackRun, missing: list[Any]) -> str:
    """The metric plugin that produces value *name*: from the values cases produced, else from
    the metrics' declarations, else the metric that could not score the cases lacking it."""
    found = run.value_metric.get(name) or run.value_names.get(name)
    if found:
        return found
    culprits = sorted({m for r in missing for m in r.unscorable})
    return ", ".join(culprits) if culprits else "?"


def run_status(verdicts: Sequence[PackVerdict]) -> tuple[str, int]:
    """A run's verdict and exit code from its packs'.

    ``fail`` (exit 1) when any pack was tested and failed: a finding outranks a pack that could
    not be tested, because it is true whatever the other pack would have shown; else ``error``
    (exit 3) when any pack was not (fully) tested; else ``pass`` (exit 0). Exit 0 therefore
    means only "every pack was tested and passed".
    """
    statuses = {v.status for v in verdicts}
    if FAIL in statuses:
        return FAIL, 1
    if ERROR in statuses or not verdicts:
        return ERROR, 3
    return PASS, 0


__all__ = ["ERROR", "FAIL", "PASS", "PackVerdict", "ValueVerdict", "evaluate", "run_status"]
