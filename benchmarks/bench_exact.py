"""Benchmark the exact sweep fitter against the strongest baselines: a few lines of numpy and a
scikit-learn ROC sweep, with one masked pass over the scores as the floor.

For each size the script makes seeded uniform random float64 scores and random boolean labels
and fits a threshold at a 1% target false-positive rate:

* ``ExactSweepFitter().fit(scores, labels, target_fpr=0.01)`` (selection, no class split);
* numpy (the strongest baseline): sort the negatives, sort the positives, read the (k+1)-th
  highest negative and search the positives for the lowest one above it;
* ``sklearn.metrics.roc_curve(labels, scores, drop_intermediate=False)`` followed by the
  constrained argmax (the highest TPR with ``fpr <= target``, the highest threshold on ties);
* the floor: one masked pass, ``scores[labels]``, which any split of the classes costs.

It checks that all three choose the same threshold with the same rates (it exits with a message
if not), times each (best of ``--repeat`` runs, ``time.perf_counter``), measures the peak extra
memory of the exact fitter and the numpy baseline with ``tracemalloc`` in separate, untimed runs,
and prints a table and whether the goals are met at 4e6 cases: at least 5x faster than the numpy
baseline, and within 3x of one masked pass.

Run it from the repository root::

    pip install -e . --group bench      # or: pip install scikit-learn
    python benchmarks/bench_exact.py
    python benchmarks/bench_exact.py --sizes 1e5,1e6,4e6 --repeat 5 --seed 1
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
from ragleaklab_plugins.fitters.exact import ExactSweepFitter

from ragleaklab_core import max_false_positives

TARGET_FPR = 0.01
GOAL_SIZE = 4_000_000
GOAL_SPEEDUP = 5.0  # over the numpy baseline
GOAL_MASKED = 3.0  # at most this many masked passes
MIB = 2**20

# (threshold or None for "flag nothing", achieved FPR, achieved TPR)
Choice = tuple[float | None, float, float]


def exact_choice(scores: np.ndarray, labels: np.ndarray) -> Choice:
    r = ExactSweepFitter().fit(scores, labels, target_fpr=TARGET_FPR)
    return r.threshold, r.achieved_fpr, r.achieved_tpr


def numpy_choice(scores: np.ndarray, labels: np.ndarray) -> Choice:
    neg, pos = np.sort(scores[~labels]), np.sort(scores[labels])
    k = max_false_positives(TARGET_FPR, neg.size)
    floor = neg[neg.size - k - 1] if k < neg.size else -np.inf
    i = int(np.searchsorted(pos, floor, side="right"))  # the lowest positive above the floor
    if i == pos.size:
        return None, 0.0, 0.0
    t = pos[i]
    fp = neg.size - int(np.searchsorted(neg, t, side="left"))
    return float(t), fp / neg.size, (pos.size - i) / pos.size


def masked_pass(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return scores[labels]


def sklearn_choice(scores: np.ndarray, labels: np.ndarray) -> Choice:
    from sklearn.metrics import roc_curve

    fpr, tpr, thresholds = roc_curve(labels, scores, drop_intermediate=False)
    feasible = fpr <= TARGET_FPR  # fpr[0] == 0 at thresholds[0] == +inf: always feasible
    i = int(np.argmax(np.where(feasible, tpr, -1.0)))  # first max = highest threshold
    if i == 0 or tpr[i] == 0.0:
        return None, 0.0, 0.0  # flag nothing
    return float(thresholds[i]), float(fpr[i]), float(tpr[i])


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak memory allocated while ``fn`` runs, above what was allocated before it started."""
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


def parse_sizes(text: str) -> list[int]:
    sizes = [int(float(part)) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) < 2:
        raise argparse.ArgumentTypeError(f"sizes must be integers >= 2, got {text!r}")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=parse_sizes("1e5,1e6,4e6,1e7"),
        help="comma-separated case counts (default: 1e5,1e6,4e6,1e7)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per size (best kept)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random data")
    args = parser.parse_args(argv)
    try:
        import sklearn
    except ImportError:
        raise SystemExit(
            "scikit-learn is needed: pip install -e . --group bench (or pip install scikit-learn)"
        ) from None

    print(
        f"target_fpr={TARGET_FPR}  repeat={args.repeat}  seed={args.seed}  "
        f"numpy {np.__version__}  scikit-learn {sklearn.__version__}"
    )
    header = (
        f"{'size':>10}  {'exact ms':>9}  {'numpy ms':>9}  {'sklearn ms':>10}  {'mask ms':>8}  "
        f"{'vs numpy':>8}  {'vs sklearn':>10}  {'masks':>6}  {'exact MiB':>9}  {'numpy MiB':>9}"
    )
    print(header)
    print("-" * len(header))
    rows: dict[int, tuple[float, float, float]] = {}
    for size in args.sizes:
        rng = np.random.default_rng([args.seed, size])
        scores = rng.random(size)  # float64 in [0, 1)
        labels = rng.random(size) < 0.5

        got = exact_choice(scores, labels)
        for name, other in (("numpy", numpy_choice), ("scikit-learn", sklearn_choice)):
            want = other(scores, labels)
            if got != want:
                raise SystemExit(
                    f"size {size}: the exact fitter chose (threshold, FPR, TPR) = {got}, "
                    f"the {name} baseline {want}"
                )
        timed = {
            fn.__name__: best_time(lambda f=fn, s=scores, y=labels: f(s, y), args.repeat)
            for fn in (exact_choice, numpy_choice, sklearn_choice, masked_pass)
        }
        t_exact, t_numpy = timed["exact_choice"], timed["numpy_choice"]
        t_sklearn, t_mask = timed["sklearn_choice"], timed["masked_pass"]
        m_exact = peak_bytes(lambda s=scores, y=labels: exact_choice(s, y))
        m_numpy = peak_bytes(lambda s=scores, y=labels: numpy_choice(s, y))
        rows[size] = (t_exact, t_numpy, t_mask)
        print(
            f"{size:>10,}  {1e3 * t_exact:>9.2f}  {1e3 * t_numpy:>9.2f}  {1e3 * t_sklearn:>10.2f}  "
            f"{1e3 * t_mask:>8.2f}  {t_numpy / t_exact:>7.1f}x  {t_sklearn / t_exact:>9.1f}x  "
            f"{t_exact / t_mask:>5.2f}x  {m_exact / MIB:>9.1f}  {m_numpy / MIB:>9.1f}",
            flush=True,
        )
        del scores, labels

    if GOAL_SIZE not in rows:
        print("goals (at 4e6 cases): not measured")
        return 0
    t_exact, t_numpy, t_mask = rows[GOAL_SIZE]
    speedup, masks = t_numpy / t_exact, t_exact / t_mask
    print(
        f"goal (>= {GOAL_SPEEDUP:g}x faster than the numpy baseline at 4e6): "
        f"{'MET' if speedup >= GOAL_SPEEDUP else 'NOT MET'} ({speedup:.1f}x)"
    )
    print(
        f"goal (within {GOAL_MASKED:g}x of one masked pass at 4e6): "
        f"{'MET' if masks <= GOAL_MASKED else 'NOT MET'} ({masks:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
