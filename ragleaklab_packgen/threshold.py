"""Each pack's default threshold: the exact rule at a 1% false-positive rate on its own labels.

A copy of the rule rather than a call to the exact fitter plugin, so the tests can check the two
agree (tests/plugins/test_packs.py).
"""

from __future__ import annotations

from collections.abc import Sequence

TARGET_FPR = 0.01


def exact_threshold(
    scores: Sequence[float], labels: Sequence[bool], target_fpr: float
) -> tuple[float, int, int]:
    """The exact rule: among thresholds equal to observed scores, the highest TPR with
    FPR <= target (flagged = score >= threshold), ties to the higher threshold.

    Returns (threshold, false positives, true positives).
    """
    n_pos = sum(labels)
    n_neg = len(labels) - n_pos
    best: tuple[int, float, int] | None = None
    for t in sorted(set(scores)):
        fp = sum(1 for s, y in zip(scores, labels, strict=True) if not y and s >= t)
        tp = sum(1 for s, y in zip(scores, labels, strict=True) if y and s >= t)
        if fp / n_neg <= target_fpr and (best is None or tp >= best[0]):
            best = (tp, t, fp)
    if best is None or n_pos == 0:
        raise SystemExit("no threshold meets the target false-positive rate")
    tp, t, fp = best
    return t, fp, tp
