"""Benchmark the http target: concurrent requests against one at a time, same server.

A loopback server (``tests/support/fake_rag_server.py``, started as a separate process so it
does not share the benchmark's interpreter lock) waits ``--latency`` seconds (default 50 ms)
before each answer, like a RAG service calling a model, then answers from an empty reference
target (so its own work, about 0.3 ms a request, stays small next to the client's).
One ``HttpTarget`` (one shared ``httpx.AsyncClient`` whose pool allows ``--concurrency``
connections) asks ``--queries`` queries (default 128):

* the baseline: sequentially, ``await target.aanswer(q)`` one after the other;
* concurrently: ``asyncio.gather`` over all queries behind a semaphore of ``--concurrency``
  (default 64), which is what the runner does with ``run.concurrency``.

The target's connection pool is split into small ``httpx.AsyncClient`` lanes (4 connections
each, see ``ragleaklab_plugins.targets._net.HttpCaller``); ``--lane-connections 64`` makes it one
client with one 64-connection pool instead, to show what that costs (httpcore's pool does work
quadratic in the number of requests in flight).

After a warm-up, the sequential mode runs ``--repeat`` times and the concurrent mode five times
as often (best kept: a short run is easily skewed by another process). The script checks that
both modes got the same responses, prints the throughput of each and the ratio, and whether the
goal is met: at least 30x the sequential throughput with 64 concurrent requests.

Run it from the repository root::

    pip install -e .
    python benchmarks/bench_http_concurrency.py
    python benchmarks/bench_http_concurrency.py --queries 256 --concurrency 128 --latency 0.02
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import subprocess
import sys
import time
from pathlib import Path

import httpx
from ragleaklab_plugins.targets import _net
from ragleaklab_plugins.targets.http import HttpTarget

from ragleaklab_core import Response

ROOT = Path(__file__).resolve().parents[1]
GOAL_RATIO = 30.0
GOAL_CONCURRENCY = 64
CONCURRENT_RUNS_PER_SEQUENTIAL = 5
WORDS = ("vault", "refund", "office", "policy", "code", "schedule", "travel", "badge")


def queries(n: int) -> list[str]:
    return [f"what about the {WORDS[i % len(WORDS)]} note number {i}" for i in range(n)]


async def sequential(target: HttpTarget, qs: list[str]) -> list[Response]:
    return [await target.aanswer(q) for q in qs]


async def concurrent(target: HttpTarget, qs: list[str], limit: int) -> list[Response]:
    gate = asyncio.Semaphore(limit)

    async def one(q: str) -> Response:
        async with gate:
            return await target.aanswer(q)

    return list(await asyncio.gather(*(one(q) for q in qs)))


async def measure(base_url: str, args: argparse.Namespace) -> tuple[float, float]:
    target = HttpTarget(
        url=f"{base_url}/simple",
        doc_texts_path="sources[*].text",
        doc_scores_path="sources[*].score",
        max_connections=args.concurrency,
        timeout=30.0,
    )
    qs = queries(args.queries)
    try:
        await concurrent(target, qs[: args.concurrency], args.concurrency)  # open the pool
        best_seq = best_con = float("inf")
        seq_answers: list[Response] = []
        con_answers: list[Response] = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            seq_answers = await sequential(target, qs)
            best_seq = min(best_seq, time.perf_counter() - t0)
        # The concurrent runs are short (a few tenths of a second), so a busy machine skews one
        # of them easily; they are repeated more often, which costs little.
        for _ in range(args.repeat * CONCURRENT_RUNS_PER_SEQUENTIAL):
            t0 = time.perf_counter()
            con_answers = await concurrent(target, qs, args.concurrency)
            best_con = min(best_con, time.perf_counter() - t0)
    finally:
        await target.aclose()
    strip = [(r.answer, r.retrieved) for r in seq_answers]
    if strip != [(r.answer, r.retrieved) for r in con_answers]:
        raise SystemExit("sequential and concurrent runs got different responses")
    return best_seq, best_con


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_rag_server", "--latency", str(latency)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    if not base_url.startswith("http://127.0.0.1:"):
        server.kill()
        raise SystemExit(f"the fake server did not start (it printed {base_url!r})")
    return server, base_url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=128, help="queries per mode")
    parser.add_argument("--concurrency", type=int, default=GOAL_CONCURRENCY, help="in flight")
    parser.add_argument("--latency", type=float, default=0.05, help="server seconds per answer")
    parser.add_argument(
        "--repeat", type=int, default=3, help="sequential runs (best kept); 5x as many concurrent"
    )
    parser.add_argument(
        "--lane-connections",
        type=int,
        default=_net.LANE_CONNECTIONS,
        help="connections per async client of the target's pool (default: the target's own)",
    )
    args = parser.parse_args(argv)
    _net.LANE_CONNECTIONS = args.lane_connections

    server, base_url = start_server(args.latency)
    try:
        t_seq, t_con = asyncio.run(measure(base_url, args))
    finally:
        assert server.stdin is not None
        server.stdin.close()  # the server exits when its standard input closes
        server.wait(timeout=10)

    n = args.queries
    print(
        f"queries={n}  latency={args.latency * 1000:g} ms  concurrency={args.concurrency}  "
        f"lane connections={args.lane_connections}  runs={args.repeat} sequential, "
        f"{args.repeat * CONCURRENT_RUNS_PER_SEQUENTIAL} concurrent  "
        f"Python {platform.python_version()}  httpx {httpx.__version__}"
    )
    header = f"{'mode':<28}  {'seconds':>8}  {'queries/s':>10}"
    print(header)
    print("-" * len(header))
    print(f"{'sequential (baseline)':<28}  {t_seq:>8.3f}  {n / t_seq:>10.1f}")
    print(f"{f'concurrent ({args.concurrency})':<28}  {t_con:>8.3f}  {n / t_con:>10.1f}")
    ratio = t_seq / t_con
    print(f"speed-up: {ratio:.1f}x")
    if args.concurrency != GOAL_CONCURRENCY or args.latency != 0.05:
        print(f"goal (>= {GOAL_RATIO:g}x at 64 concurrent, 50 ms): not measured")
        return 0
    print(
        f"goal (64 concurrent requests >= {GOAL_RATIO:g}x the sequential throughput at 50 ms): "
        f"{'MET' if ratio >= GOAL_RATIO else 'NOT MET'} ({ratio:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
