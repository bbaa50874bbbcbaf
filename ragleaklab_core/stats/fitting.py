"""Helpers every fitter needs: input checks and the counts behind a rate (imports numpy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragleaklab_core.errors import InputError

if TYPE_CHECKING:
    import numpy.typing as npt


def check_fit_inputs(
    scores: npt.ArrayLike, labels: npt.ArrayLike, target_fpr: float
) -> tuple[np.ndarray, np.ndarray]:
    """Validate the arguments of ``ThresholdFitter.fit`` and return them as numpy arrays.

    Returns ``(scores, labels)`` as a 1-D float64 array and a 1-D bool array. Raises
    :class:`InputError` for anything a fitter must not guess about: different lengths,
    non-finite scores, non-boolean labels, a class with no cases, a target outside [0, 1].

    .. versionadded:: 0.1
    """
    if isinstance(target_fpr, bool) or not isinstance(target_fpr, float | int):
        raise InputError(f"target_fpr must be a number in [0, 1], got {target_fpr!r}")
    if not 0.0 <= target_fpr <= 1.0:
        raise InputError(f"target_fpr must be in [0, 1], got {target_fpr!r}")
    s = np.asarray(scores)
    y = np.asarray(labels)
    if s.ndim != 1 or y.ndim != 1:
        raise InputError(f"scores and labels must be 1-D, got shapes {s.shape} and {y.shape}")
    if s.shape != y.shape:
        raise InputError(f"scores ({s.size}) and labels ({y.size}) differ in length")
    if s.dtype.kind not in "fiu" or s.dtype == np.bool_:
        raise InputError(f"scores must be numbers, got dtype {s.dtype}")
    if y.dtype != np.bool_:
        raise InputError(f"labels must be booleans (True = positive), got dtype {y.dtype}")
    s = s.astype(np.float64, copy=False)
    if not np.isfinite(s).all():
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise InputError(f"scores must be finite; index {bad} is {s[bad]!r}")
    n_pos = int(np.count_nonzero(y))
    if n_pos == 0 or n_pos == y.size:
        missing = "positive" if n_pos == 0 else "negative"
        raise InputError(
            f"both classes are needed to fit a threshold; there are no {missing} cases"
        )
    return s, y


def max_false_positives(target_fpr: float, n_negative: int) -> int:
    """The largest count k in [0, n] with ``k / n <= target_fpr``, compared exactly as reports do.

    ``floor(target_fpr * n)`` alone is off by one for targets like 0.29 * 100 = 28.999999999999996.
    """
    k = min(n_negative, int(np.floor(target_fpr * n_negative)))
    while k < n_negative and (k + 1) / n_negative <= target_fpr:
        k += 1
    while k > 0 and k / n_negative > target_fpr:
        k -= 1
    return k
