"""How far two labellers agree on the same cases: Cohen's kappa with an interval.

Two reviewers (or a reviewer and a judge) label the same cases positive or negative. Raw
agreement flatters them when one label dominates (two reviewers who both say "negative" to 95%
of cases agree on 90% by chance alone), so the measure is Cohen's kappa, ``(p_o - p_e) / (1 -
p_e)``: the observed agreement beyond what their label rates alone would give.

The interval is a percentile bootstrap over cases. With two binary labels a case falls in one of
four cells (both positive, first only, second only, both negative), so resampling cases is
drawing the four counts from a multinomial: exact, and a few microseconds for 10,000 resamples.
The generator is seeded, so the same labels give the same interval on every run. A resample in
which kappa is undefined (both labellers gave one and the same label to every case: ``p_e =
1``) is left out, and how many were is reported, never hidden.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from attrs import frozen

#: Resamples of the bootstrap, and its fixed seed (same labels, same interval).
RESAMPLES = 10_000
SEED = 20261129


@frozen
class Kappa:
    """Cohen's kappa of two labellers on the cases both labelled.

    Attributes:
        cases: How many cases both labelled.
        agreed: On how many they gave the same label.
        kappa: Cohen's kappa, or None when undefined (every case given one same label by both).
        low: The interval's lower end (None when no resample was defined).
        high: Its upper end.
        confidence: The interval's confidence level.
        undefined_resamples: Resamples left out because kappa was undefined in them.
    """

    cases: int
    agreed: int
    kappa: float | None
    low: float | None
    high: float | None
    confidence: float
    undefined_resamples: int


def _kappa_of_cells(both: np.ndarray, first: np.ndarray, second: np.ndarray, n: int) -> np.ndarray:
    """Kappa for arrays of cell counts (both positive, first only, second only) of *n* cases."""
    neither = n - both - first - second
    p_o = (both + neither) / n
    p1 = (both + first) / n  # the first labeller's positive rate
    p2 = (both + second) / n
    p_e = p1 * p2 + (1 - p1) * (1 - p2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_e < 1.0, (p_o - p_e) / (1.0 - p_e), np.nan)


def cohen_kappa(first: Sequence[bool], second: Sequence[bool], confidence: float = 0.95) -> Kappa:
    """Cohen's kappa of two equally long label sequences (``True`` is positive), with a
    bootstrap percentile interval at *confidence*.

    Raises:
        ValueError: The sequences differ in length or are empty, or *confidence* is not in (0, 1).
    """
    if len(first) != len(second):
        raise ValueError(f"{len(first)} labels against {len(second)}: label the same cases")
    if not first:
        raise ValueError("no case was labelled by both")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    n = len(first)
    both = sum(1 for a, b in zip(first, second, strict=True) if a and b)
    only_first = sum(1 for a, b in zip(first, second, strict=True) if a and not b)
    only_second = sum(1 for a, b in zip(first, second, strict=True) if b and not a)
    agreed = n - only_first - only_second
    point = _kappa_of_cells(np.array([both]), np.array([only_first]), np.array([only_second]), n)[0]
    kappa = None if math.isnan(point) else float(point)
    rng = np.random.default_rng(SEED)
    cells = rng.multinomial(n, _probabilities(both, only_first, only_second, n), size=RESAMPLES)
    values = _kappa_of_cells(cells[:, 0], cells[:, 1], cells[:, 2], n)
    defined = values[~np.isnan(values)]
    alpha = 1.0 - confidence
    if defined.size:
        low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
        interval: tuple[float | None, float | None] = (float(low), float(high))
    else:
        interval = (None, None)
    return Kappa(
        cases=n,
        agreed=agreed,
        kappa=kappa,
        low=interval[0],
        high=interval[1],
        confidence=confidence,
        undefined_resamples=int(values.size - defined.size),
    )


def _probabilities(both: int, only_first: int, only_second: int, n: int) -> np.ndarray:
    neither = n - both - only_first - only_second
    return np.array([both, only_first, only_second, neither], dtype=float) / n


__all__ = ["RESAMPLES", "SEED", "Kappa", "cohen_kappa"]
