"""Benchmark what a run costs before its first case: start-up time and fixed memory.

The named baseline is ``ragleaklab --help``: the command line's own start-up, which every
command pays. Against it, in the same run on the same machine, each in its own process:

* **a passing run**: ``ragleaklab run`` of a generated data-only sentinel pack against an
  instant in-process function that never leaks (no case fails);
* **a failing run**: the same pack against the function of ``bench_runner.py``, which leaks one
  case in sixteen (the pack fails, so each failing rate gets its exact interval).

Each run is measured at a small and a large number of cases (``--sizes``, default 100 and
10,000), with no baseline and no other option. The script reports each process's wall time and
peak resident memory (``ru_maxrss``), the median of ``--repeat`` runs, and from them: the
start-up time (wall time at the small size) and the fixed memory (peak at the small size), both
also as a ratio to ``--help``; and the memory per case (the growth of the peak from the small to
the large size, per case). It checks the goal of issue 40: a run with no baseline peaks within
1.3x of ``ragleaklab --help`` (at the large size).

Before measuring, the bytecode of ragleaklab's own packages is written (``compileall``), as an
install writes it. The pack is generated and installed as ``bench_runner.py`` does (its
``generate`` and ``measure`` are reused). Run it from the repository root::

    pip install -e . --group bench
    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --sizes 1e2,1e5 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_runner import PACK, PACKAGE, generate, measure

GOAL_PEAK = 1.3  # a run's peak at the large size over --help's, at most

QUIET_APP = '''
"""The instant target that never leaks: a canned answer and the ids it retrieved."""

from ragleaklab_core import Response, RetrievedDocument

_RETRIEVED = tuple(RetrievedDocument(f"doc-{i}", score=1.0 - i / 10) for i in range(3))


def answer(query: str) -> Response:
    return Response(answer="The answer is in the handbook, " + query[-6:], retrieved=_RETRIEVED)
'''


def _compile_bytecode() -> None:
    """Write the bytecode of ragleaklab's own packages first, as an install does: a checkout
    imported under ``PYTHONDONTWRITEBYTECODE`` compiles every module from source in every
    process, which measures the compiler (a third of a run's start-up), not the start-up."""
    import ragleaklab_plugins

    import ragleaklab_core

    packages = [str(Path(m.__file__).parent) for m in (ragleaklab_core, ragleaklab_plugins)]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True)


def _median(command: list[str], env: dict[str, str], cwd: Path, repeat: int) -> tuple[float, float]:
    """(seconds, peak MiB) of *command*, each the median of *repeat* fresh processes."""
    seconds, peaks = [], []
    for _ in range(repeat):
        elapsed, peak, code = measure(command, env, cwd)
        if code not in (0, 1):  # 1: the failing run fails, as it should
            sys.exit(f"{' '.join(command[2:5])} exited {code}")
        seconds.append(elapsed)
        peaks.append(peak)
    return statistics.median(seconds), statistics.median(peaks)


def _site(work: Path, n: int, seed: int, leaks: bool) -> Path:
    site = work / f"site-{'failing' if leaks else 'passing'}-{n}"
    generate(site, n, seed)
    if not leaks:
        (site / PACKAGE / "app.py").write_text(QUIET_APP, encoding="utf-8")
    return site


def _env(site: Path | None) -> dict[str, str]:
    paths = (str(site) if site else None, os.environ.get("PYTHONPATH"))
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.pop("RAGLEAKLAB_LOG", None)
    env.pop("GITHUB_ACTIONS", None)
    return env


def _run(work: Path, site: Path, n: int, repeat: int, verdict: str) -> tuple[float, float]:
    out = work / f"out-{site.name}"
    command = [
        sys.executable,
        "-m",
        "ragleaklab_core.cli",
        "run",
        "--pack",
        PACK,
        "--target",
        "python",
        "--target-option",
        f"callable={PACKAGE}.app:answer",
        "--out",
        str(out),
    ]
    result = _median(command, _env(site), work, repeat)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    totals = report["totals"]
    if totals["cases"] != n or totals["errored"] or report["verdict"] != verdict:
        sys.exit(
            f"expected {n} cases, none errored, {verdict}; got {totals['cases']} cases, "
            f"{totals['errored']} errored, {report['verdict']}"
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e2,1e4", help="small and large case counts")
    parser.add_argument("--repeat", type=int, default=3, help="processes per measurement")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    small, large = sorted(int(float(s)) for s in args.sizes.split(","))
    _compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="rlk-bench-startup-") as tmp:
        work = Path(tmp)
        help_cmd = [sys.executable, "-m", "ragleaklab_core.cli", "--help"]
        help_s, help_mib = _median(help_cmd, _env(None), work, args.repeat)
        print(f"ragleaklab --help: {help_s:.2f} s, peak {help_mib:.1f} MiB (the baseline)")
        for leaks, verdict in ((False, "pass"), (True, "fail")):
            name = "failing" if leaks else "passing"
            rows = {}
            for n in (small, large):
                rows[n] = _run(work, _site(work, n, args.seed, leaks), n, args.repeat, verdict)
            (small_s, small_mib), (large_s, large_mib) = rows[small], rows[large]
            per_case = (large_mib - small_mib) * 2**20 / (large - small)
            ratio = large_mib / help_mib
            print(
                f"{name} run: start-up {small_s:.2f} s ({small_s / help_s:.1f}x --help, "
                f"{small} cases), fixed memory {small_mib:.1f} MiB "
                f"({small_mib / help_mib:.2f}x --help), {per_case:,.0f} bytes per case; "
                f"at {large} cases {large_s:.2f} s, peak {large_mib:.1f} MiB = {ratio:.2f}x "
                f"--help (goal <= {GOAL_PEAK}x: {'met' if ratio <= GOAL_PEAK else 'NOT met'})",
                flush=True,
            )


if __name__ == "__main__":
    main()
