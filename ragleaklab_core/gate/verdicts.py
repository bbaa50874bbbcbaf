"""The rules behind the words of the verdict: what a pack, a run and a case end as (the words
themselves, :class:`Verdict` and :class:`Outcome`, are the outcome's,
:mod:`ragleaklab_core.outcome.words`, re-exported here), and how many failing cases an allowance
lets pass. :mod:`ragleaklab_core.gate` decides with them and re-exports them; the comparison of
runs (:mod:`ragleaklab_core.gate.comparison`) checks a report against them, so the two share
one reading without importing each other.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragleaklab_core.outcome.words import EXIT_BAD_INPUT, EXIT_INTERRUPTED, Outcome, Verdict


def case_outcome(*, errored: bool, failing: bool, unscorable: bool) -> Outcome:
    """``error`` (a plugin raised, or the case was not asked) outranks ``fail`` (a gated value
    fails its threshold), which outranks ``unscorable``; otherwise ``pass``."""
    if errored:
        return Outcome.ERROR
    if failing:
        return Outcome.FAIL
    return Outcome.UNSCORABLE if unscorable else Outcome.PASS


def pack_verdict(
    *, unreached: bool, vulnerable: bool, problems: Sequence[str], reasons: Sequence[str]
) -> Verdict:
    """A pack's verdict.

    Args:
        unreached: Nothing measured is about the pack's documents (the wiring check, or no
            answer a metric could judge): no finding stands, so not even a failing threshold.
        vulnerable: A gated value has more failing cases than allowed.
        problems: Why the pack was stopped or not fully tested.
        reasons: Other reasons it cannot pass (errored or unscorable cases not tolerated).
    """
    if unreached:
        return Verdict.ERROR
    if vulnerable:
        return Verdict.FAIL
    if problems:
        return Verdict.ERROR
    return Verdict.FAIL if reasons else Verdict.PASS


def run_verdict(packs: Iterable[Verdict | str]) -> Verdict:
    """A run's verdict from its packs': ``FAIL`` when any pack failed (a finding outranks a pack
    that could not be tested, because it is true whatever the other pack would have shown); else
    ``ERROR`` when any pack was not (fully) tested, or there was none; else ``PASS``. Exit 0
    therefore means only "every pack was tested and passed"."""
    verdicts = {Verdict.read(p) for p in packs}
    if Verdict.FAIL in verdicts:
        return Verdict.FAIL
    if Verdict.ERROR in verdicts or not verdicts:
        return Verdict.ERROR
    return Verdict.PASS


def gated_on_baseline(gate: Mapping[str, Any] | None) -> bool:
    """Whether a report's recorded gate decided on a baseline rule, not on the thresholds."""
    return gate is not None and gate.get("fail_on", "verdict") != "verdict"


def allowed_failures(max_fail_rate: float, scored: int) -> int:
    """How many of *scored* cases may fail: the rate as the decimal the user wrote, so 0.57 of
    100 allows 57 (in binary floating point 0.57 * 100 is 56.99999999999999)."""
    return math.floor(Fraction(repr(max_fail_rate)) * scored)


def worst_case(failing: int, scored: int, unscored: int) -> tuple[int, int]:
    """A gated value's failing cases and cases with every case it has no value for (*unscored*:
    errored, unscorable, or missing a value in some epoch) counted as failing: what an
    allowance is decided on. A case that was never measured cannot be shown to pass, so
    leaving it out of the rate would let an error (a metric that raises on the case that tips
    the rate, a service failing the leaking questions) lower it."""
    return failing + unscored, scored + unscored


def within_allowance(max_fail_rate: float, failing: int, scored: int, unscored: int) -> bool:
    """Whether a gated value passes ``max_fail_rate``: it would still pass with every unscored
    case counted as failing (:func:`worst_case`). The one rule the run's verdict and the check
    of a report read back both apply."""
    k, n = worst_case(failing, scored, unscored)
    return k <= allowed_failures(max_fail_rate, n)


def above_corrected_bar(high: float, bar: float) -> bool:
    """Whether a gated value whose rate is corrected for its metric's measured error fails
    ``--max-corrected-rate`` *bar*: its interval's upper limit *high* is above it. The upper
    limit, not the estimate: a pass must show, at the interval's confidence, that at most *bar*
    of the attacks succeeded, and a run too small to show it fails."""
    return high > bar


__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "Outcome",
    "Verdict",
    "above_corrected_bar",
    "allowed_failures",
    "case_outcome",
    "gated_on_baseline",
    "pack_verdict",
    "run_verdict",
    "within_allowance",
    "worst_case",
]
