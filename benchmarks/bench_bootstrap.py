"""Benchmark the bootstrap-ci fitter against one exact fit on the same data.

For each size and data shape the script makes seeded scores and labels and times, best of
``--repeat`` runs (``time.perf_counter``):

* the baseline: one ``ExactSweepFitter().fit(scores, labels, target_fpr=0.01)``;
* ``BootstrapCIFitter(resamples=2000).fit(...)`` on the same arrays: the exact fit, 2000
  stratified bootstrap refits of it, the conservative threshold and the rate intervals;
* for scale, a materialised bootstrap: ``--materialised`` resamples drawn as index arrays and
  refitted with the exact fitter, timed and extrapolated to 2000 (one such refit costs about
  one exact fit, so 2000 of them cost about 2000x).

Data shapes: ``random`` (uniform float64 scores, random boolean labels, as in bench_exact.py)
and ``separated`` (half negatives N(0, 1), half positives N(2, 1)). The script checks that the
bootstrap's ``details["exact"]`` is the exact fitter's result (it exits with a message if not),
prints a table and whether the goal is met: 2000 resamples at 1e6 scores in at most 10x the
time of one exact fit, for every data shape.

Run it from the repository root::

    pip install -e .
    python benchmarks/bench_bootstrap.py
    python benchmarks/bench_bootstrap.py --sizes 1e5,1e6,4e6 --repeat 5 --seed 1
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from ragleaklab_plugins.fitters.bootstrap_ci import BootstrapCIFitter
from ragleaklab_plugins.fitters.exact import ExactSweepFitter

TARGET_FPR = 0.01
RESAMPLES = 2000
GOAL_SIZE = 1_000_000
GOAL_RATIO = 10.0
SHAPES = ("random", "separated")


def make_data(shape: str, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, size, SHAPES.index(shape)])
    if shape == "random":
        return rng.random(size), rng.random(size) < 0.5
    half = size // 2
    scores = np.r_[rng.normal(0.0, 1.0, size - half), rng.normal(2.0, 1.0, half)]
    labels = np.r_[np.zeros(size - half, bool), np.ones(half, bool)]
    return scores, labels


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def materialised_refits(scores: np.ndarray, labels: np.ndarray, resamples: int) -> None:
    """The naive stratified bootstrap: build each resample, refit the exact rule on it."""
    rng = np.random.default_rng(0)
    neg, pos = scores[~labels], scores[labels]
    y = np.r_[np.zeros(neg.size, bool), np.ones(pos.size, bool)]
    fitter = ExactSweepFitter()
    for _ in range(resamples):
        s = np.r_[
            neg[rng.integers(0, neg.size, neg.size)], pos[rng.integers(0, pos.size, pos.size)]
        ]
        fitter.fit(s, y, target_fpr=TARGET_FPR)


def parse_sizes(text: str) -> list[int]:
    sizes = [int(float(part)) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) < 4:
        raise argparse.ArgumentTypeError(f"sizes must be integers >= 4, got {text!r}")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=parse_sizes("1e5,1e6"),
        help="comma-separated case counts (default: 1e5,1e6)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per size (best kept)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random data")
    parser.add_argument(
        "--materialised",
        type=int,
        default=3,
        help="materialised resamples to time and extrapolate to 2000 (0 to skip)",
    )
    args = parser.parse_args(argv)

    print(
        f"target_fpr={TARGET_FPR}  resamples={RESAMPLES}  repeat={args.repeat}  "
        f"seed={args.seed}  numpy {np.__version__}"
    )
    header = (
        f"{'size':>10}  {'data':>9}  {'exact s':>8}  {'bootstrap s':>11}  {'ratio':>7}  "
        f"{'materialised s (est.)':>21}"
    )
    print(header)
    print("-" * len(header))
    goal_ratios: dict[str, float] = {}
    bootstrap = BootstrapCIFitter(resamples=RESAMPLES)
    for size in args.sizes:
        for shape in SHAPES:
            scores, labels = make_data(shape, size, args.seed)
            exact = ExactSweepFitter().fit(scores, labels, target_fpr=TARGET_FPR)
            boot = bootstrap.fit(scores, labels, target_fpr=TARGET_FPR)
            summary = boot.details["exact"]
            if (summary["threshold"], summary["false_positives"], summary["true_positives"]) != (
                exact.threshold,
                exact.false_positives,
                exact.true_positives,
            ):
                raise SystemExit(
                    f"size {size} ({shape}): the bootstrap's exact threshold {summary} differs "
                    f"from the exact fitter's {exact}"
                )
            t_exact = best_time(
                partial(ExactSweepFitter().fit, scores, labels, target_fpr=TARGET_FPR), args.repeat
            )
            t_boot = best_time(
                partial(bootstrap.fit, scores, labels, target_fpr=TARGET_FPR), args.repeat
            )
            ratio = t_boot / t_exact
            if size == GOAL_SIZE:
                goal_ratios[shape] = ratio
            materialised = "-"
            if args.materialised > 0:
                t0 = time.perf_counter()
                materialised_refits(scores, labels, args.materialised)
                per_refit = (time.perf_counter() - t0) / args.materialised
                materialised = f"{per_refit * RESAMPLES:.1f}"
            print(
                f"{size:>10,}  {shape:>9}  {t_exact:>8.4f}  {t_boot:>11.4f}  {ratio:>6.1f}x  "
                f"{materialised:>21}",
                flush=True,
            )
            del scores, labels

    if len(goal_ratios) < len(SHAPES):
        print(f"goal (2000 resamples at 1e6 in <= {GOAL_RATIO:g}x one exact fit): not measured")
        return 0
    met = all(r <= GOAL_RATIO for r in goal_ratios.values())
    shown = ", ".join(f"{shape} {r:.1f}x" for shape, r in goal_ratios.items())
    print(
        f"goal (2000 resamples at 1e6 scores in <= {GOAL_RATIO:g}x the time of one exact fit): "
        f"{'MET' if met else 'NOT MET'} ({shown})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
