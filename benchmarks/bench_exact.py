"""Benchmark the exact sweep fitter against a scikit-learn ROC sweep.

For each size the script makes seeded uniform random float64 scores and random boolean labels
and fits a threshold at a 1% target false-positive rate two ways:

* ``ExactSweepFitter().fit(scores, labels, target_fpr=0.01)`` (selection, O(n));
* the baseline: ``sklearn.metrics.roc_curve(labels, scores, drop_intermediate=False)`` followed
  by the constrained argmax: among the points with ``fpr <= target`` take the highest TPR, the
  first maximum (the highest threshold) on ties; ``thresholds[0]`` is ``+inf``, i.e. "flag
  nothing".

It checks that both choose the same threshold with the same rates (it exits with a message if
not), times each (best of ``--repeat`` runs, ``time.perf_counter``), measures each one's peak
extra memory with ``tracemalloc`` in a separate, untimed run (numpy reports its array
allocations to tracemalloc), and prints a table and whether the goal is met: at least 5x faster
than the scikit-learn sweep at 4e6 cases, with no more peak memory.

Run it from the repository root::

    pip install -e . --group bench      # or: pip install scikit-learn
    python benchmarks/bench_exact.py
    python benchmarks/bench_exact.py --sizes 1e5,1e6,4e6 --repeat 5 --seed 1

A size of 1e7 needs a few GiB of memory for the scikit-learn baseline.
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

TARGET_FPR = 0.01
GOAL_SIZE = 4_000_000
GOAL_SPEEDUP = 5.0
MIB = 2**20

# (threshold or None for "flag nothing", achieved FPR, achieved TPR)
Choice = tuple[float | None, float, float]


def exact_choice(scores: np.ndarray, labels: np.ndarray) -> Choice:
    r = ExactSweepFitter().fit(scores, labels, target_fpr=TARGET_FPR)
    return r.threshold, r.achieved_fpr, r.achieved_tpr


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
        f"{'size':>10}  {'exact s':>9}  {'sklearn s':>9}  {'ratio':>7}  "
        f"{'exact MiB':>9}  {'sklearn MiB':>11}"
    )
    print(header)
    print("-" * len(header))
    rows: dict[int, tuple[float, float, int, int]] = {}
    for size in args.sizes:
        rng = np.random.default_rng([args.seed, size])
        scores = rng.random(size)  # float64 in [0, 1)
        labels = rng.random(size) < 0.5

        got, want = exact_choice(scores, labels), sklearn_choice(scores, labels)
        if got != want:
            raise SystemExit(
                f"size {size}: the exact fitter chose (threshold, FPR, TPR) = {got}, "
                f"the scikit-learn sweep {want}"
            )
        t_exact = best_time(lambda s=scores, y=labels: exact_choice(s, y), args.repeat)
        t_sklearn = best_time(lambda s=scores, y=labels: sklearn_choice(s, y), args.repeat)
        m_exact = peak_bytes(lambda s=scores, y=labels: exact_choice(s, y))
        m_sklearn = peak_bytes(lambda s=scores, y=labels: sklearn_choice(s, y))
        rows[size] = (t_exact, t_sklearn, m_exact, m_sklearn)
        print(
            f"{size:>10,}  {t_exact:>9.4f}  {t_sklearn:>9.4f}  {t_sklearn / t_exact:>6.1f}x  "
            f"{m_exact / MIB:>9.1f}  {m_sklearn / MIB:>11.1f}",
            flush=True,
        )
        del scores, labels

    if GOAL_SIZE not in rows:
        print(f"goal (>= {GOAL_SPEEDUP:g}x faster and no more peak memory at 4e6): not measured")
        return 0
    t_exact, t_sklearn, m_exact, m_sklearn = rows[GOAL_SIZE]
    speedup = t_sklearn / t_exact
    met = speedup >= GOAL_SPEEDUP and m_exact <= m_sklearn
    print(
        f"goal (>= {GOAL_SPEEDUP:g}x faster than the sklearn sweep at 4e6 and no more peak "
        f"memory): {'MET' if met else 'NOT MET'} ({speedup:.1f}x, {m_exact / MIB:.1f} MiB vs "
        f"{m_sklearn / MIB:.1f} MiB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
