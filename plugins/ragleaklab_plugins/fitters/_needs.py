"""How many negatives a fitter that flags at the exact sweep's threshold needs."""

from __future__ import annotations

import math


def to_resolve(target_fpr: float) -> int:
    """The fewest negatives at which one false positive is not already above *target_fpr*:
    ``ceil(1 / target_fpr)``, guarded against float error (1 / 0.1 is 10 negatives, not 11).

    With fewer, any threshold that flags a single negative breaks the target, so the sample
    cannot tell a threshold that meets it from one that does not.
    """
    if not 0.0 < target_fpr < 1.0:
        raise ValueError(f"target_fpr must be in (0, 1), got {target_fpr!r}")
    n = max(1, math.ceil(1.0 / target_fpr))
    while n > 1 and 1.0 / (n - 1) <= target_fpr:
        n -= 1
    return n
