"""Benchmark the http target: concurrent requests against one at a time, and its client CPU
per request against a minimal aiohttp client, same server, one run.

A loopback server (``tests/support/fake_rag_server.py``, started as a separate process so it
does not share the benchmark's interpreter lock or its CPU time) waits ``--latency`` seconds
(default 50 ms) before each answer, like a RAG service calling a model, then answers from an
empty reference target (so its own work stays small next to the client's). Each client asks
the same ``--queries`` queries (default 128) with ``POST /simple`` and parses the JSON reply:

* **target, sequential** (the throughput baseline): one ``HttpTarget``, ``await
  target.aanswer(q)`` one after the other;
* **target, concurrent**: the same target, ``asyncio.gather`` over all queries behind a
  semaphore of ``--concurrency`` (default 64), which is what the runner does with
  ``run.concurrency``; its pool allows ``--concurrency`` connections;
* **aiohttp, minimal** (the CPU baseline): the fewest lines of aiohttp that do the same POST and
  JSON parse: one ``ClientSession`` over a ``TCPConnector(limit=--concurrency)``,
  ``async with session.post(url, json=...) as r: await r.json()``, same concurrency; no
  retries, timeouts, redaction or response paths;
* **httpx, minimal** (for comparison, when httpx is installed): the same few lines with one
  ``httpx.AsyncClient`` whose pool allows ``--concurrency`` connections (the client the target
  used before).

Client CPU is the benchmark process's CPU time (``time.process_time``: user + system, every
thread of this process, none of the server's) over all the concurrent runs of that client,
divided by the requests they sent. After a warm-up, the sequential mode runs ``--repeat``
times and each concurrent client five times as often, the clients taking turns run by run so a
busy moment on the machine does not fall on one of them only; the best time of each is kept (a
concurrent run lasts about a tenth of a second, so one busy moment skews it). The script checks
that every client got the same answers.

Goals, at 64 concurrent requests and 50 ms: the target's concurrent throughput is at least
48x its sequential throughput (75% of the 64x a client costing nothing would reach). The CPU
ratio (target over minimal aiohttp) has no goal; it says what the target's own work costs.

Run it from the repository root::

    pip install -e . --group bench
    python benchmarks/bench_http_concurrency.py
    python benchmarks/bench_http_concurrency.py --queries 512 --concurrency 128 --latency 0.02
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from ragleaklab_plugins.targets.http import HttpTarget

ROOT = Path(__file__).resolve().parents[1]
GOAL_RATIO = 48.0
GOAL_CONCURRENCY = 64
GOAL_LATENCY = 0.05
CONCURRENT_RUNS_PER_SEQUENTIAL = 5
WORDS = ("vault", "refund", "office", "policy", "code", "schedule", "travel", "badge")

Ask = Callable[[str], Awaitable[str]]


def queries(n: int) -> list[str]:
    return [f"what about the {WORDS[i % len(WORDS)]} note number {i}" for i in range(n)]


async def sequential(ask: Ask, qs: list[str]) -> list[str]:
    return [await ask(q) for q in qs]


async def concurrent(ask: Ask, qs: list[str], limit: int) -> list[str]:
    gate = asyncio.Semaphore(limit)

    async def one(q: str) -> str:
        async with gate:
            return await ask(q)

    return list(await asyncio.gather(*(one(q) for q in qs)))


class Client:
    """One way of asking, with its best concurrent time and its CPU over all its runs."""

    def __init__(self, name: str, ask: Ask, close: Callable[[], Awaitable[Any]]) -> None:
        self.name, self.ask, self.close = name, ask, close
        self.best = float("inf")
        self.cpu = 0.0
        self.requests = 0
        self.answers: list[str] = []

    async def run(self, qs: list[str], limit: int) -> None:
        cpu0, t0 = time.process_time(), time.perf_counter()
        self.answers = await concurrent(self.ask, qs, limit)
        self.best = min(self.best, time.perf_counter() - t0)
        self.cpu += time.process_time() - cpu0
        self.requests += len(qs)

    @property
    def cpu_per_request(self) -> float:
        return self.cpu / self.requests


def clients(url: str, limit: int) -> list[Client]:
    target = HttpTarget(
        url=url,
        doc_texts_path="sources[*].text",
        doc_scores_path="sources[*].score",
        max_connections=limit,
        timeout=30.0,
    )

    async def ask_target(q: str) -> str:
        return (await target.aanswer(q)).answer

    made = [Client("target", ask_target, target.aclose)]

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=limit))

    async def ask_aiohttp(q: str) -> str:
        async with session.post(url, json={"query": q}) as r:
            return str((await r.json())["answer"])

    made.append(Client("aiohttp, minimal", ask_aiohttp, session.close))
    try:
        import httpx
    except ImportError:  # an optional comparison: `--group bench` installs it
        return made
    pool = httpx.Limits(max_connections=limit, max_keepalive_connections=limit)
    client = httpx.AsyncClient(limits=pool)

    async def ask_httpx(q: str) -> str:
        return str((await client.post(url, json={"query": q})).json()["answer"])

    made.append(Client("httpx, minimal", ask_httpx, client.aclose))
    return made


async def measure(base_url: str, args: argparse.Namespace) -> tuple[float, list[Client]]:
    qs = queries(args.queries)
    made = clients(f"{base_url}/simple", args.concurrency)
    target = made[0]
    try:
        for client in made:  # open every pool, warm every code path
            await concurrent(client.ask, qs[: args.concurrency], args.concurrency)
        best_seq = float("inf")
        seq_answers: list[str] = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            seq_answers = await sequential(target.ask, qs)
            best_seq = min(best_seq, time.perf_counter() - t0)
        for _ in range(args.repeat * CONCURRENT_RUNS_PER_SEQUENTIAL):
            for client in made:  # turn by turn: a busy moment is shared between clients
                await client.run(qs, args.concurrency)
    finally:
        for client in made:
            await client.close()
    for client in made:
        if client.answers != seq_answers:
            raise SystemExit(f"{client.name} got other answers than the sequential run")
    return best_seq, made


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
    parser.add_argument("--queries", type=int, default=128, help="queries per run")
    parser.add_argument("--concurrency", type=int, default=GOAL_CONCURRENCY, help="in flight")
    parser.add_argument("--latency", type=float, default=GOAL_LATENCY, help="server s per answer")
    parser.add_argument(
        "--repeat", type=int, default=3, help="sequential runs (best kept); 5x as many concurrent"
    )
    args = parser.parse_args(argv)

    server, base_url = start_server(args.latency)
    try:
        t_seq, made = asyncio.run(measure(base_url, args))
    finally:
        assert server.stdin is not None
        server.stdin.close()  # the server exits when its standard input closes
        server.wait(timeout=10)

    n = args.queries
    versions = [f"aiohttp {aiohttp.__version__}"]
    if len(made) > 2:
        import httpx

        versions.append(f"httpx {httpx.__version__}")
    print(
        f"queries={n}  latency={args.latency * 1000:g} ms  concurrency={args.concurrency}  "
        f"runs={args.repeat} sequential, {args.repeat * CONCURRENT_RUNS_PER_SEQUENTIAL} "
        f"concurrent per client  Python {platform.python_version()}  {'  '.join(versions)}  "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    header = f"{'client':<30}  {'seconds':>8}  {'queries/s':>10}  {'x seq':>6}  {'CPU ms/req':>10}"
    print(header)
    print("-" * len(header))
    print(f"{'target, sequential (baseline)':<30}  {t_seq:>8.3f}  {n / t_seq:>10.1f}  {1:>6.1f}")
    for client in made:
        name = f"{client.name}, {args.concurrency} concurrent"
        print(
            f"{name:<30}  {client.best:>8.3f}  {n / client.best:>10.1f}  "
            f"{t_seq / client.best:>6.1f}  {client.cpu_per_request * 1000:>10.3f}"
        )
    target, minimal = made[0], made[1]
    ratio = t_seq / target.best
    cpu_ratio = target.cpu_per_request / minimal.cpu_per_request
    print(f"speed-up of the target: {ratio:.1f}x its sequential throughput")
    print(
        f"client CPU per request, target / minimal aiohttp: {cpu_ratio:.2f} "
        f"({target.cpu_per_request * 1000:.3f} / {minimal.cpu_per_request * 1000:.3f} ms)"
    )
    if args.concurrency != GOAL_CONCURRENCY or args.latency != GOAL_LATENCY:
        print(f"goal (>= {GOAL_RATIO:g}x at 64 concurrent, 50 ms): not measured")
        return 0
    print(
        f"goal (64 concurrent requests >= {GOAL_RATIO:g}x the sequential throughput at 50 ms): "
        f"{'MET' if ratio >= GOAL_RATIO else 'NOT MET'} ({ratio:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
