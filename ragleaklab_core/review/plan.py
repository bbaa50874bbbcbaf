"""How many cases of a run to review, and which: a labelling plan whose calibration can hold.

A threshold fitted at a false-positive rate F carries a Clopper-Pearson guarantee ("its FPR is at
most F with confidence 1 - delta") only with enough labelled negatives: with none of them above
the threshold, ``(1 - F)**n <= delta``, so ``n >= ln(delta) / ln(1 - F)`` (299 at F = 1%, delta
= 5%; :func:`ragleaklab_core.calibration.report.negatives_needed`, which calibration
reports use too). The fitter the calibration will use may need more: each declares how many
(its ``negatives_needed``, asked, never looked up by name), and the plan sizes for the larger of
the two; a fitter that declares nothing leaves the guarantee's count, and a note says so. Its
true-positive rate is worth reading only with enough positives for a narrow
interval (:func:`positives_needed`). Nobody knows which cases are which
before reviewing them, so the plan sizes the sample from the shares the metric's outcome
suggests (its failing cases for the positives, its passing ones for the negatives) and says
when the run is too small for the target.

**Which cases.** A stratified random sample: every case of the pack has (up to rounding) the
same chance to be picked, and the strata (attack or benign, family, hard kind, the metric's
outcome) each get their share, so families and hard kinds are all represented and the metric's
failing cases (the likely positives) are in it in proportion. Why not every failing case plus a
few passing ones: the reviewed negatives must be a random sample of the negatives for the
guarantee to mean anything, and the reviewed positives one of the positives for the TPR to;
over-sampling the cases the metric flags would make the calibration's TPR look better than it
is. The sample is drawn with a seeded generator: the same run, target and seed give the same
plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from attrs import frozen

from ragleaklab_core._discovery import LoadedPlugin
from ragleaklab_core.calibration.report import negatives_needed
from ragleaklab_core.contracts.fitters import negatives_needed_by
from ragleaklab_core.stats.aggregation import rate_interval

#: The half-width of the TPR interval a plan aims for, by default.
TPR_MARGIN = 0.1


def positives_needed(margin: float = TPR_MARGIN, confidence: float = 0.95) -> int:
    """The fewest positives whose two-sided Clopper-Pearson interval at *confidence* is at most
    *margin* either side of the rate, whatever the rate (the widest is at one half)."""
    if not 0.0 < margin < 0.5:
        raise ValueError("margin must be in (0, 0.5)")
    n = 2
    while True:
        interval = rate_interval(n // 2, n, confidence)
        assert interval.lower is not None and interval.upper is not None
        if (interval.upper - interval.lower) / 2 <= margin:
            return n
        n += 2


@frozen
class PlanCase:
    """A case of the run, as the plan sees it."""

    pack: str
    test_id: str
    stratum: tuple[str, ...]
    outcome: str


@frozen
class PackPlan:
    """The plan for one pack: how many cases to review, why, and which."""

    pack: str
    cases_in_run: int
    flagged: int
    negatives_needed: int
    positives_needed: int
    sample_size: int
    expected_negatives: float
    expected_positives: float
    notes: tuple[str, ...]
    strata: tuple[tuple[tuple[str, ...], int, int], ...]  # (stratum, cases, sampled)
    chosen: tuple[str, ...]  # test ids, in the run's order

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "cases_in_run": self.cases_in_run,
            "flagged_by_metric": self.flagged,
            "negatives_needed": self.negatives_needed,
            "positives_needed": self.positives_needed,
            "sample_size": self.sample_size,
            "expected_negatives": round(self.expected_negatives, 1),
            "expected_positives": round(self.expected_positives, 1),
            "notes": list(self.notes),
            "strata": [
                {"stratum": "/".join(key), "cases": cases, "sampled": sampled}
                for key, cases, sampled in self.strata
            ],
            "cases": list(self.chosen),
        }


def _allocate(sizes: Sequence[int], total: int) -> list[int]:
    """Proportional allocation of *total* over strata of *sizes*, by largest remainder (ties
    to the earlier stratum), never more than a stratum holds."""
    population = sum(sizes)
    if total >= population:
        return list(sizes)
    exact = [total * s / population for s in sizes]
    shares = [math.floor(e) for e in exact]
    order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in order[: total - sum(shares)]:
        shares[i] += 1
    return [min(s, size) for s, size in zip(shares, sizes, strict=True)]


def negatives_to_plan(
    target_fpr: float, confidence: float, fitter: LoadedPlugin | None = None
) -> tuple[int, tuple[str, ...]]:
    """How many negatives a plan aims for, and any note on why: the guarantee's count
    (:func:`~ragleaklab_core.calibration.report.negatives_needed`), or what *fitter* declares
    it needs (its ``negatives_needed``) when that is more.

    Raises:
        ValueError: *target_fpr* is not above 0.
        PluginRuntimeError: The fitter's ``negatives_needed`` raised or gave no positive count.
    """
    guarantee = negatives_needed(target_fpr, 1.0 - confidence)
    if guarantee is None:
        raise ValueError(f"target_fpr must be above 0, got {target_fpr!r}")
    if fitter is None:
        return guarantee, ()
    declared = negatives_needed_by(
        fitter.obj,
        fitter.fitter_traits,
        name=fitter.name,
        target_fpr=target_fpr,
        confidence=confidence,
    )
    if declared is None:
        return guarantee, (
            f"the {fitter.name} fitter does not say how many negatives it needs (it declares no "
            f"negatives_needed): the plan aims for the {guarantee} the guarantee needs, which "
            "may not be enough for it",
        )
    if declared > guarantee:
        return declared, (
            f"the {fitter.name} fitter needs {declared} negatives at FPR {target_fpr:g} (its "
            f"negatives_needed), more than the {guarantee} of the guarantee: the plan aims for "
            f"{declared}",
        )
    return guarantee, ()


def plan_pack(
    pack: str,
    cases: Sequence[PlanCase],
    *,
    target_fpr: float,
    confidence: float,
    margin: float,
    seed: int,
    fitter: LoadedPlugin | None = None,
) -> PackPlan:
    """The labelling plan for one pack's *cases* (in the run's order), for a calibration with
    *fitter* (None: the guarantee's count of negatives alone; :func:`negatives_to_plan`).

    .. versionchanged:: 0.4
        *fitter*.
    """
    n = len(cases)
    flagged = sum(1 for c in cases if c.outcome == "fail")
    passed = sum(1 for c in cases if c.outcome == "pass")
    need_neg, fitter_notes = negatives_to_plan(target_fpr, confidence, fitter)
    need_pos = positives_needed(margin, confidence)
    neg_share = passed / n if n else 0.0
    pos_share = flagged / n if n else 0.0
    notes: list[str] = list(fitter_notes)
    wanted = 0
    if neg_share > 0:
        wanted = max(wanted, math.ceil(need_neg / neg_share))
    if pos_share > 0:
        wanted = max(wanted, math.ceil(need_pos / pos_share))
    size = min(n, wanted) if wanted else n
    if passed < need_neg:
        reachable = 1.0 - (1.0 - confidence) ** (1.0 / passed) if passed else 1.0
        notes.append(
            f"the run has about {passed} negatives (cases the metric passes), fewer than the "
            f"{need_neg} a guarantee at FPR {target_fpr:g} needs: review every case, and run "
            f"more cases (epochs do not count) for that target; {passed} negatives with none "
            f"above the threshold guarantee FPR <= {reachable:.3g} at best"
        )
    if flagged < need_pos:
        notes.append(
            f"the run has about {flagged} positives (cases the metric fails), fewer than the "
            f"{need_pos} for a TPR within +/-{margin:g}: its TPR interval will be wider"
        )
    by_stratum: dict[tuple[str, ...], list[int]] = {}
    for i, case in enumerate(cases):
        by_stratum.setdefault(case.stratum, []).append(i)
    keys = sorted(by_stratum)
    shares = _allocate([len(by_stratum[k]) for k in keys], size)
    rng = np.random.default_rng(seed)
    chosen: set[int] = set()
    strata = []
    for key, share in zip(keys, shares, strict=True):
        members = by_stratum[key]
        picked = rng.choice(len(members), size=share, replace=False) if share else ()
        chosen.update(members[int(p)] for p in picked)
        strata.append((key, len(members), share))
    return PackPlan(
        pack=pack,
        cases_in_run=n,
        flagged=flagged,
        negatives_needed=need_neg,
        positives_needed=need_pos,
        sample_size=len(chosen),
        expected_negatives=len(chosen) * neg_share,
        expected_positives=len(chosen) * pos_share,
        notes=tuple(notes),
        strata=tuple(strata),
        chosen=tuple(cases[i].test_id for i in sorted(chosen)),
    )


def stratum_of(
    kind: str | None, families: Sequence[str], hard: Sequence[str], outcome: str
) -> tuple[str, ...]:
    """A case's stratum: attack or benign, its families, its hard kinds, the metric's outcome."""
    return (
        kind or "untagged",
        "+".join(families) or "-",
        "+".join(f"hard:{h}" for h in hard) or "-",
        outcome,
    )


def render_plan(
    plans: Sequence[PackPlan],
    *,
    target_fpr: float,
    confidence: float,
    margin: float,
    seed: int,
    run: Mapping[str, Any],
    fitter: str | None = None,
) -> dict[str, Any]:
    """The plan file's content (JSON-ready, deterministic); *fitter* names the fitter it was
    sized for (written when given)."""
    sized_for = {} if fitter is None else {"fitter": fitter}
    return {
        "ragleaklab_plan": 1,
        "run": dict(run),
        "target_fpr": target_fpr,
        **sized_for,
        "confidence": confidence,
        "tpr_margin": margin,
        "seed": seed,
        "packs": [p.to_dict() for p in plans],
    }


__all__ = [
    "TPR_MARGIN",
    "PackPlan",
    "PlanCase",
    "negatives_to_plan",
    "plan_pack",
    "positives_needed",
    "render_plan",
    "stratum_of",
]
