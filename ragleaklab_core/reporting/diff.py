"""The console rendering of a comparison of two runs (``ragleaklab diff``).

The comparison itself (:func:`compare`) lives with the gate that acts on it,
:mod:`ragleaklab_core.gate.comparison`; it is re-exported here, where it was until 0.3.
"""

from __future__ import annotations

from ragleaklab_core.gate.comparison import (
    RunDiff,
    ValueDiff,
    check_report,
    compare,
    not_comparable,
    p_text,
    planned_differences,
)

#: How many newly failing / no longer failing ids the console rendering shows per value.
SHOWN = 10


def render(diff: RunDiff) -> str:
    """The console rendering: one line per value, then its case ids, then what was not compared."""
    lines = [f"target changed: {x}" for x in diff.target_changes]
    if diff.differences:
        lines.append("compared with --force although: " + "; ".join(diff.differences))
    for v in diff.values:
        status = "REGRESSED" if v.regressed else "ok"
        low, high = v.interval
        line = (
            f"{status:<9}  {v.pack} {v.value}: failing {v.base_failing}/{v.base_scored} "
            f"({_pct(v.base_failing / v.base_scored)}) -> {v.new_failing}/{v.new_scored} "
            f"({_pct(v.new_failing / v.new_scored)}{_counted(v.new_unscored)}), "
            f"change {_signed(v.difference)} "
            f"[{_signed(low)}, {_signed(high)}] ({_pct(v.confidence)} CI), "
            f"p = {p_text(v.p_value)}"
        )
        lines.append(line)
        if v.threshold_changed:
            lines.append("    note: the threshold differs between the runs")
        for label, ids in (
            ("newly failing", v.newly_failing),
            ("no longer failing", v.no_longer_failing),
        ):
            if ids:
                more = f" (+{len(ids) - SHOWN} more)" if len(ids) > SHOWN else ""
                lines.append(f"    {label} ({len(ids)}): {', '.join(ids[:SHOWN])}{more}")
    lines.extend(f"only in base: {x}" for x in diff.only_in_base)
    lines.extend(f"only in new: {x}" for x in diff.only_in_new)
    lines.extend(f"not compared: {x}" for x in diff.not_compared)
    lines.extend(f"not tested: {x}" for x in (*diff.untested_new, *diff.untested_base))
    regressed = sum(v.regressed for v in diff.values)
    if regressed:
        verdict = (
            f"REGRESSED ({regressed} of {len(diff.values)} values, one-sided level {diff.level})"
        )
    elif diff.untested:
        # Never "no regression" about what was not measured in both runs.
        verdict = (
            f"NOT TESTED ({len(diff.untested)} not measured in both runs; "
            f"{len(diff.values)} values compared, one-sided level {diff.level})"
        )
    else:
        verdict = f"no regression ({len(diff.values)} values, one-sided level {diff.level})"
    lines.append(f"diff: {verdict}; {diff.newly_failing} cases newly failing")
    return "\n".join(lines) + "\n"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _signed(x: float) -> str:
    return f"{100 * x:+.1f}pp"


def _counted(unscored: int) -> str:
    """How many unscored cases of the new run the comparison counts as failing."""
    return f"; with {unscored} unscored counted as failing" if unscored else ""


__all__ = [
    "RunDiff",
    "ValueDiff",
    "check_report",
    "compare",
    "not_comparable",
    "p_text",
    "planned_differences",
    "render",
]
