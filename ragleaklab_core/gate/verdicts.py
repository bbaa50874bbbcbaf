"""The rules behind the words of the verdict: what a pack, a run and a case end as (the words
themselves, :class:`Verdict` and :class:`Outcome`, are the outcome's,
:mod:`ragleaklab_core.outcome.words`, re-exported here), and how many failing cases an allowance
lets pass, and whether a gated value passes them (:func:`value_passes`).
:mod:`ragleaklab_core.gate` decides with them and re-exports them; the check of a report read
back (:mod:`ragleaklab_core.gate.comparison`) decides again with them and compares, so the two
share one reading without importing each other.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

from ragleaklab_core.outcome.pack import Allowances
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


def run_verdict(
    packs: Iterable[Verdict | str], *, worse: bool = False, unmeasured: bool = False
) -> Verdict:
    """A run's verdict: the one function that decides it, from its packs' verdicts and, under a
    baseline rule, two facts of the comparison.

    ``FAIL`` when any pack failed or something measured is *worse* than in the baseline (a
    finding outranks a pack that could not be tested, because it is true whatever the other
    pack would have shown); else ``ERROR`` when any pack was not (fully) tested, something the
    baseline measured was *unmeasured* this time, or there was no pack; else ``PASS``. Exit 0
    therefore means only "every pack was tested and passed" (and "no worse")."""
    verdicts = {Verdict.read(p) for p in packs}
    if worse or Verdict.FAIL in verdicts:
        return Verdict.FAIL
    if unmeasured or Verdict.ERROR in verdicts or not verdicts:
        return Verdict.ERROR
    return Verdict.PASS


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


def value_passes(
    allowances: Allowances,
    *,
    failing: int,
    scored: int,
    unscored: int,
    corrected_high: float | None,
) -> bool:
    """Whether a gated value passes its *allowances*, from its counts: *failing* of *scored*
    cases, *unscored* more with no value, and the upper limit of its corrected rate (None when
    it has none). The one rule a pack's evaluation and the check of a report read back both
    decide with. No scored case is never a pass; with ``max_corrected_rate`` the corrected
    upper limit decides (it already counts the unscored cases as failing), and a value without
    one cannot pass; otherwise the worst case decides (:func:`within_allowance`)."""
    if not scored:
        return False
    bar = allowances.max_corrected_rate
    if bar is not None:
        return corrected_high is not None and not above_corrected_bar(corrected_high, bar)
    return within_allowance(allowances.max_fail_rate, failing, scored, unscored)


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
    "pack_verdict",
    "run_verdict",
    "value_passes",
    "within_allowance",
    "worst_case",
]
