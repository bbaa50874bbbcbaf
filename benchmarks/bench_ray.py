"""Benchmark ``--executor ray`` against ``--executor local`` on this machine.

Two measurements, each a ratio in one run:

* **CPU-bound target**: the reference target with its defences on (``filter_injections`` and
  ``paraphrase``) over a 10,000-document seeded corpus (``bench_reference.make_corpus``) plus
  the pack's own documents, behind the ``python`` target (:class:`CorpusReference`, a factory,
  so every worker builds and indexes its own copy, as a model target would load its own
  weights). The pack's cases are asked ``--epochs`` times. Baseline: the same run with the local
  executor (one process). Timed: ``run_pack`` from start to end, ingest included; Ray's cluster
  start-up is excluded and reported apart. The goal on the 2-core machine, with 2 workers: at
  least 1.6x the local executor's throughput.
* **Driver ingest rate**: the same pack against an instant target (``instant`` below: a
  constant answer), many epochs, so the workers do almost nothing and the driver's share shows:
  records per second of wall time, and records per second of the driver process's own CPU time
  (what one driver can take in, whatever the number of workers: the capacity plan in
  docs/scaling.md divides by it).

Both run every batch size given (``--batch-sizes``); the report.json of each Ray run is checked
to equal the local run's before any figure is printed.

Run it from the repository root::

    pip install -e '.[ray]'
    python benchmarks/bench_ray.py
    python benchmarks/bench_ray.py --epochs 2 --instant-epochs 20 --batch-sizes 16
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# A single-machine benchmark: keep every Ray address on loopback, and report nothing outside.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# The reports of the two executors are compared byte for byte: generated_at too.
os.environ.setdefault("SOURCE_DATE_EPOCH", "0")

HERE = Path(__file__).resolve().parent
GOAL = 1.6
PACK = "relevance-hijack"


class CorpusReference:
    """The reference target, defences on, over the seeded corpus plus the pack's documents."""

    def __init__(self, docs: int = 10_000, seed: int = 0) -> None:
        from bench_reference import make_corpus
        from ragleaklab_plugins.targets.reference import ReferenceTarget

        self.inner = ReferenceTarget(filter_injections=True, paraphrase=True)
        self.corpus, _ = make_corpus(seed, docs, 0)

    def ingest(self, documents: Iterable[Any]) -> None:
        self.inner.ingest([*self.corpus, *documents])

    def answer(self, query: str) -> Any:
        return self.inner.answer(query)


def instant(query: str) -> Any:
    """An answer at no cost: what the driver takes in when workers are instant."""
    from ragleaklab_core import Response

    return Response(answer="I cannot help with that.", retrieved=())


def run(executor: Any, target: dict[str, Any], epochs: int) -> tuple[float, float, float, Any]:
    """Wall seconds, driver CPU seconds, steady records/s (first record to last: no start-up,
    no ingest) and the report of one run of the pack."""
    from ragleaklab_core.config import Config, unstructure
    from ragleaklab_core.run.evaluation import evaluate
    from ragleaklab_core.run.report import build_report, dumps
    from ragleaklab_core.run.runner import RunSettings, load_pack, run_pack

    pack = load_pack(PACK)
    settings = RunSettings(epochs=epochs, concurrency=1)
    seen: list[float] = []

    def on_record(record: Any) -> None:
        seen.append(time.perf_counter())

    wall, cpu = time.perf_counter(), time.process_time()
    result = run_pack(
        pack,
        target_name="python",
        target_options=target,
        settings=settings,
        executor=executor,
        on_record=on_record,
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steady = (len(seen) - 1) / (seen[-1] - seen[0])
    report = dumps(
        build_report(
            [evaluate(result, dict(pack.obj.info().thresholds))],
            settings=unstructure(Config().run),
            inputs={},
        )
    )
    return wall, cpu, steady, (len(list(result.records)), report)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20, help="epochs of the CPU-bound run")
    parser.add_argument("--instant-epochs", type=int, default=40)
    parser.add_argument("--batch-sizes", default="4,16,64")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    import ray

    from ragleaklab_core.run.executor import LocalExecutor
    from ragleaklab_core.run.ray_executor import RayExecutor, RayOptions

    # The workers import this module (the python target's callable) from the same directory.
    env = {
        "env_vars": {"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    }
    started = time.perf_counter()
    ray.init(address="local", include_dashboard=False, logging_level="WARNING", runtime_env=env)
    start_up = time.perf_counter() - started
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    heavy = {"callable": "bench_ray:CorpusReference"}
    light = {"callable": "bench_ray:instant"}
    print(f"Ray {ray.__version__}, {os.cpu_count()} CPUs; local cluster start-up {start_up:.1f} s")
    print()
    rows = []
    for name, target, epochs in (
        ("cpu-bound", heavy, args.epochs),
        ("instant", light, args.instant_epochs),
    ):
        base_wall, base_cpu, base_steady, (n, base_report) = run(LocalExecutor(), target, epochs)
        rows.append((name, "local", "-", n, base_wall, base_cpu, base_steady, 1.0, 1.0))
        for size in sizes:
            executor = RayExecutor(RayOptions(workers=args.workers, batch_size=size))
            wall, cpu, steady, (m, report) = run(executor, target, epochs)
            if report != base_report or m != n:
                for label, text in (("local", base_report), ("ray", report)):
                    Path(f"bench_ray.{label}.json").write_text(text, encoding="utf-8")
                sys.exit(
                    f"{name}, batch {size}: the Ray run's report differs from the local one "
                    "(both written to bench_ray.local.json and bench_ray.ray.json)"
                )
            rows.append(
                (
                    name,
                    "ray",
                    str(size),
                    n,
                    wall,
                    cpu,
                    steady,
                    base_wall / wall,
                    steady / base_steady,
                )
            )
    print(
        "| target | executor | batch | records | wall (with ingest) | vs local | "
        "steady records/s | vs local | driver CPU | records/s of driver CPU |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, executor_name, size, n, wall, cpu, steady, ratio, steady_ratio in rows:
        print(
            f"| {name} | {executor_name} | {size} | {n:,} | {wall:.2f} s | {ratio:.2f}x | "
            f"{steady:,.0f} | {steady_ratio:.2f}x | {cpu:.2f} s | {n / cpu:,.0f} |"
        )
    best = max(r[8] for r in rows if r[0] == "cpu-bound" and r[1] == "ray")
    print()
    verdict = "met" if best >= GOAL else "NOT met"
    print(f"goal (cpu-bound, steady throughput, ray >= {GOAL}x local): {verdict} ({best:.2f}x)")
    ray.shutdown()


if __name__ == "__main__":
    main()
