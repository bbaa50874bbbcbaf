"""The regression between two runs: :func:`compare` two ``report.json`` documents.

What the comparison means for a run's exit code is :mod:`ragleaklab_core.gate`'s to decide;
its console rendering is :mod:`ragleaklab_core.reporting.diff`.

For each pack and gated value present in both reports, the failing counts ``k1/n1`` (base) and
``k2/n2`` (new) give the change in failing rate with an exact interval for the difference and
the exact one-sided p-value that the new rate is higher (Barnard's test with the score statistic,
inverted for the interval: :mod:`ragleaklab_core.stats.difference` says why). The value regressed
when that p-value is at most ``level``; the interval is at confidence ``1 - 2 * level``, so its
lower end is above 0 exactly when the value regressed. Per case: the ids that fail now and passed
(were scored and did not fail) in the base, and the ones that failed and now pass.

Comparing two runs is only meaningful when they measured the same way, so packs whose version,
metric plugins and options, case selection (tags, smoke, case ids), epochs, reducer, or a gated
value's threshold (its value, decision rule and source) differ are refused with an
:class:`InputError` naming every difference, unless ``force`` is given. A changed **target**
(``name@fingerprint`` of its options: a defence switched on, a model swapped, another top_k) is
what a comparison exists to judge: it is named (:attr:`RunDiff.target_changes`) and compared.
Packs or values present in only one report are listed, never dropped; a pack that either run
did not test is never compared, only listed as not tested (never "no regression").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from ragleaklab_core.calibration.labelling import target_identity
from ragleaklab_core.errors import InputError
from ragleaklab_core.gate.verdicts import (
    Verdict,
    allowed_failures,
    case_outcome,
    run_verdict,
    value_passes,
    worst_case,
)
from ragleaklab_core.inputs import read_report
from ragleaklab_core.outcome import Allowances, PackOutcome, RunOutcome, ValueOutcome
from ragleaklab_core.outcome.codec import decode
from ragleaklab_core.stats.aggregation import DECIMALS
from ragleaklab_core.stats.difference import difference_interval, tail_p_value


@frozen
class ValueDiff:
    """One gated value of one pack in both runs."""

    pack: str
    value: str
    base_failing: int
    base_scored: int
    new_failing: int
    new_scored: int
    difference: float  # new rate - base rate
    interval: tuple[float, float]
    confidence: float
    p_value: float  # one-sided: the new failing rate is higher
    regressed: bool
    newly_failing: tuple[str, ...]
    no_longer_failing: tuple[str, ...]
    threshold_changed: bool
    still_failing: tuple[str, ...] = ()  # failing in both runs
    #: Cases the new run has no value for (errored, unscorable): counted as failing in the
    #: test, so errors never lower the new rate (gate.worst_case).
    new_unscored: int = 0
    #: Of those, the cases that passed in the baseline: new failures in the worst case.
    newly_unscored: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "value": self.value,
            "base": {"failing": self.base_failing, "scored": self.base_scored},
            "new": {
                "failing": self.new_failing,
                "scored": self.new_scored,
                "unscored": self.new_unscored,
            },
            "difference": round(self.difference, DECIMALS),
            "interval": [round(x, DECIMALS) for x in self.interval],
            "confidence": round(self.confidence, DECIMALS),
            "p_value": round(self.p_value, DECIMALS),
            "regressed": self.regressed,
            "newly_failing": list(self.newly_failing),
            "no_longer_failing": list(self.no_longer_failing),
            "still_failing": list(self.still_failing),
            "threshold_changed": self.threshold_changed,
        }


@frozen
class RunDiff:
    """Everything :func:`compare` found; ``regressed`` is True when any value regressed."""

    level: float
    forced: bool
    values: tuple[ValueDiff, ...]
    only_in_base: tuple[str, ...]  # "pack" or "pack value"
    only_in_new: tuple[str, ...]
    not_compared: tuple[str, ...]  # "pack value: why"
    differences: tuple[str, ...]  # what --force let through
    #: How the target changed ("" when it did not): named, and compared without --force.
    target_changes: tuple[str, ...] = ()
    #: "pack (why)": packs the new run did not test (verdict error, or tested false).
    untested_new: tuple[str, ...] = ()
    #: "pack (why)": packs the base run did not test: nothing to compare with.
    untested_base: tuple[str, ...] = ()
    #: The names of those packs (the gate gates them on their own thresholds).
    untested_base_packs: tuple[str, ...] = ()

    @property
    def regressed(self) -> bool:
        return any(v.regressed for v in self.values)

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """What the base run measured and the new one did not (a pack or gated value it lacks,
        a pack it did not test, a value none of its cases could score): no regression can be
        ruled out there."""
        return (*self.only_in_base, *self.untested_new, *self.not_compared)

    @property
    def untested(self) -> tuple[str, ...]:
        """Why this comparison cannot say "no regression": what the new run did not measure,
        a pack the base did not test, or nothing compared at all."""
        found = [*self.unmeasured, *self.untested_base]
        if not self.values and not found:
            found.append("no gated value was measured in both runs: nothing was compared")
        return tuple(found)

    @property
    def newly_failing(self) -> int:
        return sum(len(v.newly_failing) for v in self.values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "regressed": self.regressed,
            "level": self.level,
            "forced": self.forced,
            "differences": list(self.differences),
            "target_changes": list(self.target_changes),
            "values": [v.to_dict() for v in self.values],
            "only_in_base": list(self.only_in_base),
            "only_in_new": list(self.only_in_new),
            "not_compared": list(self.not_compared),
            "not_tested_new": list(self.untested_new),
            "not_tested_base": list(self.untested_base),
            "untested": list(self.untested),
        }


def check_level(level: object, *, name: str = "the level") -> float:
    """*level* as the one-sided level of the regression test: a finite number strictly between
    0 and 0.5, else an :class:`InputError` naming it (*name*: the flag, ``--baseline-level``).

    NaN compares false with every bound, so it is refused by name, not by comparison: a run
    given ``--baseline-level nan`` is refused before it asks anything."""
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 0.5:
        raise InputError(
            f"{name} must be a number strictly between 0 and 0.5 (such as 0.05), not {level!r}"
        )
    return float(level)


def compare(
    base: RunOutcome | Mapping[str, Any],
    new: RunOutcome | Mapping[str, Any],
    *,
    level: float = 0.05,
    force: bool = False,
) -> RunDiff:
    """The regression from run *base* to run *new* (finished runs, or parsed ``report.json``
    documents, read by the outcome's codec).

    Raises:
        InputError: *level* is not in (0, 0.5), a document does not parse (its ``$.path``
            named), or the runs measured different things (pack versions, metric options, case
            selection, epochs, reducer, thresholds) and *force* is False. A different target is
            no refusal: it is named in the result.
    """
    check_level(level)
    base = _outcome(base, "base report")
    new = _outcome(new, "new report")
    base_packs = {p.name: p for p in base.packs}
    new_packs = {p.name: p for p in new.packs}
    common = sorted(set(base_packs) & set(new_packs))
    differences = _differences(base_packs, new_packs, common)
    if differences and not force:
        raise not_comparable(differences)
    only_in_base = [n for n in sorted(base_packs) if n not in new_packs]
    only_in_new = [n for n in sorted(new_packs) if n not in base_packs]
    values: list[ValueDiff] = []
    not_compared: list[str] = []
    # A pack either run did not test is no measurement: listed, never compared. Only a pack
    # the other run has (one the new run lacks is in only_in_base already).
    new_untested = [(x, why) for x, why in _untested(new_packs) if x in base_packs]
    base_untested = [(x, why) for x, why in _untested(base_packs) if x in new_packs]
    untested_new = [f"{x} (not tested in the new run: {why})" for x, why in new_untested]
    untested_base = [f"{x} (not tested in the base: {why})" for x, why in base_untested]
    skipped = {x for x, _ in new_untested} | {x for x, _ in base_untested}
    for name in common:
        if name in skipped:  # a pack either run did not test is no measurement to compare
            continue
        b, n = base_packs[name], new_packs[name]
        b_values, n_values = b.gated(), n.gated()
        only_in_base += [f"{name} {v}" for v in sorted(set(b_values) - set(n_values))]
        only_in_new += [f"{name} {v}" for v in sorted(set(n_values) - set(b_values))]
        for value in sorted(set(b_values) & set(n_values)):
            found = _value_diff(name, value, b, n, level)
            if isinstance(found, str):
                not_compared.append(f"{name} {value}: {found}")
            else:
                values.append(found)
    return RunDiff(
        level=level,
        forced=force,
        values=tuple(values),
        only_in_base=tuple(only_in_base),
        only_in_new=tuple(only_in_new),
        not_compared=tuple(not_compared),
        differences=tuple(differences),
        target_changes=tuple(target_changes(base, new)),
        untested_new=tuple(untested_new),
        untested_base=tuple(untested_base),
        untested_base_packs=tuple(x for x, _ in base_untested),
    )


def _outcome(report: RunOutcome | Mapping[str, Any], source: str) -> RunOutcome:
    return report if isinstance(report, RunOutcome) else decode(report, source=source)


def _untested(packs: Mapping[str, PackOutcome]) -> list[tuple[str, str]]:
    """(name, why) of each pack that was not tested: ``tested`` false or verdict ``error``."""
    found = []
    for name, pack in sorted(packs.items()):
        if not pack.tested:
            found.append((name, pack.not_tested_reason or "tested is false"))
        elif pack.verdict is Verdict.ERROR:
            found.append((name, "its verdict is error"))
    return found


def read_comparable(path: Path) -> RunOutcome:
    """The finished run the ``report.json`` at *path* records, read back for a comparison:
    ``ragleaklab diff``'s two reports and ``run --baseline``'s are read by this one function.

    Raises:
        InputError: The file is missing, does not parse as a report (the outcome's codec names
            the ``$.path``), or contradicts itself (:func:`check_consistent`).
    """
    report = read_report(path)
    outcome = decode(report, source=str(path))
    check_consistent(outcome, source=str(path))
    return outcome


def check_report(report: object, *, source: str) -> None:
    """Raise :class:`InputError` naming the ``$.path`` of what in *report* does not parse as a
    ``report.json`` (kept for imports: it is the outcome's codec,
    :func:`ragleaklab_core.outcome.codec.decode`, which :func:`compare` reads with)."""
    decode(report, source=source)


def _differences(
    base_packs: Mapping[str, PackOutcome],
    new_packs: Mapping[str, PackOutcome],
    common: Sequence[str],
) -> list[str]:
    """What makes the two runs measure differently, one phrase each, every one of them (the
    target is not among them: a changed target is what a comparison judges)."""
    found = []
    for name in common:
        b, n = base_packs[name], new_packs[name]
        found.extend(
            _selection_differences(
                name,
                b,
                n.version,
                n.cases.tags,
                epochs=n.cases.epochs,
                reducer=n.cases.reducer,
            )
        )
        found.extend(_case_differences(name, b.cases.ids, n.cases.ids))
        found.extend(_metric_differences(name, b, n))
        found.extend(_threshold_differences(name, b, n))
    return found


def target_changes(base: RunOutcome, new: RunOutcome) -> list[str]:
    """How the target of run *new* differs from run *base*'s, one phrase (empty when it is the
    same): the change a comparison exists to judge, so it is named, never refused."""
    base_target, new_target = _target(base), _target(new)
    if base_target == new_target:
        return []
    b_opts = {} if base.target is None else base.target.options
    n_opts = {} if new.target is None else new.target.options
    changed = [
        f"{k} {json.dumps(b_opts.get(k))} -> {json.dumps(n_opts.get(k))}"
        for k in sorted(set(b_opts) | set(n_opts))
        if b_opts.get(k) != n_opts.get(k)
    ]
    how = f" (options: {', '.join(changed)})" if changed else ""
    return [f"the target is {base_target} in the base and {new_target} in the new run{how}"]


def _selection_differences(
    name: str,
    base: PackOutcome,
    version: str,
    tags: Sequence[str],
    *,
    epochs: int | None = None,
    reducer: str | None = None,
) -> list[str]:
    found = []
    cases = base.cases
    if base.version != version:
        found.append(f"pack {name} is version {base.version} in the base, {version} now")
    if sorted(cases.tags) != sorted(tags):
        found.append(
            f"pack {name} ran the cases tagged {sorted(cases.tags)} in the base, {sorted(tags)} now"
        )
    # Epochs and the reducer decide each case's value: the mean of three answers is not the
    # value of one, and "max" flags what "mean" does not.
    if epochs is not None and cases.epochs != epochs:
        found.append(f"pack {name} ran {cases.epochs} epochs in the base, {epochs} now")
    if reducer is not None and cases.reducer != reducer:
        found.append(f"pack {name} reduced epochs with {cases.reducer} in the base, {reducer} now")
    return found


def _case_differences(name: str, base_ids: Sequence[str], new_ids: Sequence[str]) -> list[str]:
    """Other cases (a selection by id, a hand-edited list): rates of other cases differ."""
    b, n = set(base_ids), set(new_ids)
    if b == n:
        return []
    gone, added = sorted(b - n), sorted(n - b)
    parts = [
        f"{len(x)} only in the {where} ({_first(x)})"
        for x, where in ((gone, "base"), (added, "new run"))
        if x
    ]
    return [f"pack {name} ran other cases: {', '.join(parts)}"]


def _first(ids: Sequence[str], shown: int = 3) -> str:
    more = f", +{len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def metric_option_changes(
    old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, str | None, Any, Any]]:
    """What differs between two sets of metric options (metric name -> its options), in name
    order: ``(metric, None, in_old, in_new)`` for a metric on one side only, and
    ``(metric, key, old value, new value)`` for each option of a metric both have that differs.
    One reading for a comparison of runs and for a replay's check of its recording."""
    found: list[tuple[str, str | None, Any, Any]] = []
    for metric in sorted(set(old) | set(new)):
        if metric not in old or metric not in new:
            found.append((metric, None, metric in old, metric in new))
            continue
        was, now = old[metric] or {}, new[metric] or {}
        found += [
            (metric, k, was.get(k), now.get(k))
            for k in sorted(set(was) | set(now))
            if was.get(k) != now.get(k)
        ]
    return found


def _metric_differences(name: str, b: PackOutcome, n: PackOutcome) -> list[str]:
    lines: dict[str, str] = {}  # one line per metric, in name order
    for metric, key, was, now in metric_option_changes(_metric_options(b), _metric_options(n)):
        if key is None:
            side = "the base only" if was else "the new run only"
            lines[metric] = f"pack {name} is scored by metric {metric} in {side}"
            continue
        change = f"{key} {json.dumps(was)} -> {json.dumps(now)}"
        start = lines.get(metric) or f"pack {name} metric {metric} options differ:"
        lines[metric] = f"{start}{',' if metric in lines else ''} {change}"
    return list(lines.values())


def _threshold_differences(name: str, b: PackOutcome, n: PackOutcome) -> list[str]:
    """A value gated at another threshold, decision rule or source: the failing counts of the
    two runs count different things (a regression hides behind a looser threshold)."""
    b_values, n_values = b.gated(), n.gated()
    found = []
    for value in sorted(set(b_values) & set(n_values)):
        bt, nt = b_values[value].threshold, n_values[value].threshold
        assert bt is not None and nt is not None  # gated
        for key, what in (
            ("value", "threshold"),
            ("decision_rule", "decision rule"),
            ("source", "threshold source"),
        ):
            was, now = getattr(bt, key), getattr(nt, key)
            if was != now:
                found.append(
                    f"pack {name} {value}: {what} {json.dumps(was)} in the base, "
                    f"{json.dumps(now)} now"
                )
    return found


def not_comparable(differences: Sequence[str]) -> InputError:
    """The error refusing to compare runs that measured different things."""
    return InputError(
        "these runs did not measure the same way, so a change in their failing rates would "
        "not be a regression of the system: " + "; ".join(differences) + ". Compare runs of "
        "the same pack versions, metric options, thresholds, epochs, reducer and case "
        "selection (a changed target is compared as it is), or force the comparison "
        "(ragleaklab diff --force, ragleaklab run --force-baseline, force=True)."
    )


def planned_differences(
    base: RunOutcome,
    versions: Mapping[str, str],
    tags: Sequence[str],
    *,
    epochs: int | None = None,
    reducer: str | None = None,
) -> list[str]:
    """What a run of the packs *versions* (name -> version) selecting *tags* with *epochs* and
    *reducer* is known, before it starts, to measure differently from run *base*: pack
    versions, case selection, epochs, reducer. The rest (metric options, thresholds, case ids)
    is compared on the finished run."""
    base_packs = {p.name: p for p in base.packs}
    found = []
    for name in sorted(set(versions) & set(base_packs)):
        found.extend(
            _selection_differences(
                name, base_packs[name], versions[name], tags, epochs=epochs, reducer=reducer
            )
        )
    return found


def _target(report: RunOutcome) -> str:
    target = report.target
    if target is None:
        return "no target"
    return target_identity({"name": target.name, "options": target.options})


def _metric_options(pack: PackOutcome) -> dict[str, Mapping[str, Any]]:
    return {str(m.name): m.options for m in pack.metrics}


def _value_diff(
    pack: str, value: str, b_pack: PackOutcome, n_pack: PackOutcome, level: float
) -> ValueDiff | str:
    b, n = b_pack.values[value], n_pack.values[value]
    if b.fail_rate is None or n.fail_rate is None:
        return "no case could be scored in " + (
            "the base" if b.fail_rate is None else "the new run"
        )
    k1, n1 = b.fail_rate.successes, b.fail_rate.trials
    k2, n2 = n.fail_rate.successes, n.fail_rate.trials
    # Errors never lower a rate: the new run's unscored cases count as failing in the test.
    n_unscored = set(n.unscored_ids)
    u2 = len(n_unscored)
    k2w, n2w = worst_case(k2, n2, u2)
    p_value = tail_p_value(k2w, n2w, k1, n1, delta=0.0, upper=True)
    interval = difference_interval(k2w, n2w, k1, n1, alpha=level)
    b_failing, n_failing = set(b.all_failing_ids), set(n.all_failing_ids)
    # Passed in one run = run there, scored there, and not failing there.
    b_passed = set(b_pack.cases.ids) - set(b.unscored_ids) - b_failing
    n_passed = set(n_pack.cases.ids) - n_unscored - n_failing
    return ValueDiff(
        pack=pack,
        value=value,
        base_failing=k1,
        base_scored=n1,
        new_failing=k2,
        new_scored=n2,
        difference=k2w / n2w - k1 / n1,
        interval=interval,
        confidence=1 - 2 * level,
        p_value=p_value,
        regressed=p_value <= level,
        newly_failing=tuple(sorted(n_failing & b_passed)),
        no_longer_failing=tuple(sorted(b_failing & n_passed)),
        threshold_changed=b.threshold != n.threshold,
        still_failing=tuple(sorted(b_failing & n_failing)),
        new_unscored=u2,
        newly_unscored=tuple(sorted(n_unscored & b_passed)),
    )


def p_text(p: float) -> str:
    """A p-value as the renderings print it."""
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


__all__ = [
    "RunDiff",
    "ValueDiff",
    "check_consistent",
    "check_report",
    "compare",
    "not_comparable",
    "p_text",
    "planned_differences",
    "read_comparable",
    "target_changes",
]


def check_consistent(report: RunOutcome | Mapping[str, Any], *, source: str) -> None:
    """Raise :class:`InputError` when *report* (a finished run read back from a file)
    contradicts itself: a hand-edited baseline that looks "already failing" everywhere (so new
    failures are excused) or whose counts were inflated. Names the ``$.path`` and what
    contradicts what.

    The report is decoded (:func:`ragleaklab_core.outcome.codec.decode`: what does not parse is
    refused there), then decided again with the gate's own functions and compared with what it
    says: the run's verdict (or the gate's thresholds verdict) from its packs'
    (:func:`~ragleaklab_core.gate.verdicts.run_verdict`), each pack's against its tested flag
    and its values, each gated value's passed flag from its counts and allowances
    (:func:`~ragleaklab_core.gate.verdicts.value_passes`), each case's outcome
    (:func:`~ragleaklab_core.gate.verdicts.case_outcome`) and failing values (its threshold's
    rule); and the facts against each other: failing counts against failing ids, scored counts
    against the cases run less the unscored ids.
    """
    outcome = _outcome(report, source)
    problems = _contradictions(outcome)
    if problems:
        raise InputError(
            "this report contradicts itself, so it cannot be compared with: "
            + "; ".join(problems[:5])
            + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else "")
            + ". Use the report.json a run wrote, unedited (run the base again if it is lost).",
            source=source,
        )


def _contradictions(report: RunOutcome) -> list[str]:
    found: list[str] = []
    for i, pack in enumerate(report.packs):
        found += _pack_contradictions(pack, f"$.packs[{i}]")
    statuses = [p.verdict for p in report.packs]
    expected = run_verdict(statuses)
    gate = report.gate
    if gate is not None and gate.on_baseline:
        where, said = "$.gate.thresholds_verdict", gate.thresholds_verdict
    else:
        where, said = "$.verdict", report.verdict
    if said is not expected:
        found.append(
            f"{where} {json.dumps(said.value)} contradicts the packs' verdicts "
            f"{[s.value for s in statuses]} (which make {expected.value!r})"
        )
    return found


def _pack_contradictions(pack: PackOutcome, at: str) -> list[str]:
    found = []
    claims_pass = pack.verdict is Verdict.PASS
    if not pack.tested and claims_pass:
        found.append(f"{at}.verdict 'pass' contradicts {at}.tested false")
    ids = list(pack.cases.ids)
    id_set = set(ids)
    if pack.cases.run != len(ids):
        found.append(
            f"{at}.cases.run {pack.cases.run} contradicts the {len(ids)} ids of {at}.cases.ids"
        )
    # A report written before allowances were recorded allowed its max_fail_rate alone.
    allowances = pack.allowances or Allowances(max_fail_rate=pack.max_fail_rate)
    for name, value in pack.values.items():
        found += _value_contradictions(
            value, f"{at}.values.{name}", ids, id_set, allowances, claims_pass=claims_pass
        )
        if value.threshold is not None and value.passed is False and claims_pass:
            found.append(f"{at}.verdict 'pass' contradicts {at}.values.{name}.passed false")
    found += _case_contradictions(pack, at, id_set)
    return found


def _value_contradictions(
    value: ValueOutcome,
    at: str,
    ids: Sequence[str],
    id_set: set[str],
    allowances: Allowances,
    *,
    claims_pass: bool = True,
) -> list[str]:
    """A gated value's counts and ids against each other, and its passed flag against the
    gate's decision on them. The worst case (every unscored case counted as failing,
    :func:`~ragleaklab_core.gate.verdicts.within_allowance`) is checked where the pack
    *claims_pass*: reports written before that rule marked a value passed beside untolerated
    errors in a failing pack, and stay readable."""
    rate = value.fail_rate
    if value.threshold is None or rate is None:
        return []
    found = []
    k, n = rate.successes, rate.trials
    if not 0 <= k <= n or n < 1:
        return [f"{at}.fail_rate: not a failing count out of at least one scored case"]
    failing, unscored = set(value.all_failing_ids), set(value.unscored_ids)
    if len(failing) != k:
        found.append(
            f"{at}.fail_rate.successes {k} contradicts the {len(failing)} ids of "
            f"{at}.all_failing_ids"
        )
    if value.failing_cases != k:
        found.append(f"{at}.failing_cases {value.failing_cases} contradicts successes {k}")
    if n > len(ids):
        found.append(f"{at}.fail_rate.trials {n} is more than the {len(ids)} cases run")
    elif n != len(ids) - len(unscored):
        found.append(
            f"{at}.fail_rate.trials {n} contradicts the {len(ids)} cases run less the "
            f"{len(unscored)} of {at}.unscored_ids"
        )
    strays = sorted((failing | unscored) - id_set)
    if strays:
        found.append(f"{at}: ids that were not run are listed ({_first(strays)})")
    both = sorted(failing & unscored)
    if both:
        found.append(f"{at}: ids both failing and unscored ({_first(both)})")
    if value.passed is not True:
        return found
    u = len(unscored) if claims_pass else 0
    corrected = value.corrected_rate
    high = None if corrected is None else corrected.high
    bar = allowances.max_corrected_rate
    if value_passes(allowances, failing=k, scored=n, unscored=u, corrected_high=high):
        # The gated upper limit counts every unscored case as failing (gate.worst_case).
        counted = None if corrected is None else (corrected.failing, corrected.cases)
        if bar is not None and claims_pass and counted not in (None, worst_case(k, n, u)):
            assert corrected is not None
            found.append(
                f"{at}.corrected_rate counts {corrected.failing} failing of "
                f"{corrected.cases} cases, not the {k} failing of {n} scored and the {u} of "
                f"{at}.unscored_ids counted as failing"
            )
        return found
    if bar is not None:
        found.append(
            f"{at}.passed true without a corrected rate to gate it on"
            if high is None
            else f"{at}.passed true contradicts its corrected rate's upper limit {high} "
            f"(at most {bar} allowed)"
        )
        return found
    allowed = allowed_failures(allowances.max_fail_rate, n)
    if k > allowed:
        found.append(f"{at}.passed true contradicts {k} failing of {n} (at most {allowed} allowed)")
    else:
        worst_k, worst_n = worst_case(k, n, u)
        found.append(
            f"{at}.passed true contradicts {k} failing of {n} scored with the {u} of "
            f"{at}.unscored_ids counted as failing ({worst_k} of {worst_n}, at most "
            f"{allowed_failures(allowances.max_fail_rate, worst_n)} allowed)"
        )
    return found


def _case_contradictions(pack: PackOutcome, at: str, id_set: set[str]) -> list[str]:
    """Each case's outcome and failing values against the values' failing ids and thresholds."""
    from ragleaklab_core.values import Threshold

    gated = pack.gated()
    failing_of = {name: set(v.all_failing_ids) for name, v in gated.items()}
    rules = {}
    for name, value in gated.items():
        t = value.threshold
        assert t is not None  # gated
        try:
            rules[name] = Threshold(t.value, t.decision_rule)
        except (TypeError, ValueError):
            return [f"{at}.values.{name}.threshold: not a threshold ragleaklab writes"]
    seen: set[str] = set()
    found: list[str] = []
    for j, case in enumerate(pack.case_results):
        where = f"{at}.case_results[{j}]"
        tid = case.test_id
        seen.add(tid)
        listed = set(case.failing)
        for name, rule in rules.items():
            if (tid in failing_of[name]) != (name in listed):
                found.append(
                    f"{where}.failing {sorted(listed)} contradicts {at}.values.{name}."
                    f"all_failing_ids (case {tid})"
                )
            score = case.values.get(name)
            if score is not None and rule.fails(score) != (name in listed):
                found.append(
                    f"{where}.values.{name} {score} contradicts its failing list under "
                    f"{rule.decision_rule} with threshold {rule.value} (case {tid})"
                )
        expected = case_outcome(
            errored=case.error is not None,
            failing=bool(listed),
            unscorable=bool(case.unscorable),
        )
        if case.outcome is not expected:
            found.append(
                f"{where}.outcome {json.dumps(case.outcome.value)} contradicts its "
                f"error, failing and unscorable entries ({expected.value!r})"
            )
        if len(found) > 5:
            return found
    if seen != id_set:
        found.append(
            f"{at}.case_results: its {len(seen)} cases are not the {len(id_set)} of {at}.cases.ids"
        )
    return found
