"""From per-case values to a verdict: thresholds, failing cases, aggregates, pass/fail.

The printed verdict, ``report.json`` and the exit code all come from :class:`PackVerdict`, so
they cannot disagree. A case fails a metric value when its epoch-reduced value satisfies the
threshold's decision rule; a pack fails when any gated value has more failing cases than allowed,
when any case errored, or when a gated value could not be scored on some case (unless errors
are tolerated). A case that errored or was unscorable is never counted as a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from ragleaklab_core.aggregation import rate_interval, summarize
from ragleaklab_core.runner import PackRun
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
            "fail_rate": None if self.fail_rate is None else dict(self.fail_rate),
            "unscorable_cases": self.n_unscorable,
            "passed": self.passed,
        }


@frozen
class PackVerdict:
    """A pack's verdict and everything the report says about it."""

    run: PackRun
    values: tuple[ValueVerdict, ...]
    errored_ids: tuple[str, ...]
    errors: Mapping[str, str]
    unscorable: Mapping[str, Mapping[str, str]]  # metric -> test_id -> reason
    reasons: tuple[str, ...]
    passed: bool

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
    for name in names:
        metric = run.value_metric.get(name, "?")
        scored = [(r.test_id, r.values[name]) for r in results if name in r.values]
        n_unscorable = len(unscorable.get(metric, {}))
        threshold = thresholds.get(name)
        failing: tuple[str, ...] = ()
        fail_rate = None
        passed = None
        if threshold is not None:
            failing = tuple(sorted(tid for tid, value in scored if threshold.fails(value)))
            fail_rate = rate_interval(len(failing), len(scored)).to_dict() if scored else None
            allowed = max_fail_rate * len(scored)
            passed = len(failing) <= allowed and bool(scored)
            if not scored:
                reasons.append(f"{name}: no case could be scored, so nothing was checked")
            elif len(failing) > allowed:
                rule = threshold.decision_rule.replace("threshold", repr(threshold.value))
                reasons.append(f"{name}: {len(failing)} of {len(scored)} cases fail ({rule})")
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
            )
        )
    if errored and not tolerate_errors:
        reasons.append(f"{len(errored)} cases errored (a plugin raised); see runs.jsonl")
    passed_all = not reasons
    return PackVerdict(
        run=run,
        values=tuple(verdicts),
        errored_ids=errored,
        errors=dict(sorted(errors.items())),
        unscorable={m: dict(sorted(d.items())) for m, d in sorted(unscorable.items())},
        reasons=tuple(reasons),
        passed=passed_all,
    )


__all__ = ["PackVerdict", "ValueVerdict", "evaluate"]
