"""The executor seam: whatever order an executor answers in, the run is the same.

An executor is handed a stream of asks and emits each record when it likes; the runner puts
them back in case order. These tests drive the runner with executors that answer out of order,
twice, or not at all, on a built-in pack against the reference target.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest

from ragleaklab_core.run.executor import (
    Ask,
    Emit,
    Execution,
    LocalExecutor,
    PackTarget,
    PackWork,
    answer_asks,
)
from ragleaklab_core.run.records import RunSettings
from ragleaklab_core.run.runner import load_pack, run_pack

PACK = "relevance-hijack"


class Shuffling:
    """Takes up to *batch* asks from the stream, then answers them in a seeded random order."""

    name = "shuffling"

    def __init__(self, batch: int, seed: int, *, drop: int | None = None, twice: bool = False):
        self.batch = batch
        self.random = random.Random(seed)
        self.drop = drop
        self.twice = twice
        self.ahead = 0  # the furthest the stream was read past what the runner had in place

    def in_flight(self, settings: RunSettings) -> int:
        return self.batch

    async def execute(self, work: PackWork, asks: AsyncIterator[Ask], emit: Emit) -> Execution:
        session = PackTarget(work.target, work.settings)
        await session.ingest(work.documents)
        pending: list[Ask] = []
        async for ask in asks:
            pending.append(ask)
            if len(pending) == self.batch:
                await self._answer(work, session, pending, emit)
                pending = []
        await self._answer(work, session, pending, emit)
        return Execution(problems=tuple(await session.close()))

    async def _answer(self, work, session, batch, emit) -> None:
        self.random.shuffle(batch)
        records = []

        async def stream():
            for ask in batch:
                yield ask

        await answer_asks(
            work.spec.pack,
            session,
            work.metrics,
            work.settings,
            stream(),
            lambda ask, record: records.append((ask, record)),
        )
        for ask, record in records:
            if ask.seq == self.drop:
                continue
            emit(ask, record)
            if self.twice:
                emit(ask, record)


def _run(executor=None, **settings):
    return run_pack(load_pack(PACK), settings=RunSettings(**settings), executor=executor)


@pytest.fixture(scope="module")
def local():
    return _run(epochs=2)


@pytest.mark.parametrize(("batch", "seed"), [(1, 0), (7, 1), (64, 2), (500, 3)])
def test_any_answer_order_gives_the_local_run(local, batch, seed):
    shuffled = _run(Shuffling(batch, seed), epochs=2)
    assert shuffled.executor == "shuffling" and local.executor == "local"
    assert [r.test_id for r in shuffled.results] == [r.test_id for r in local.results]
    assert list(shuffled.results) == list(local.results)
    assert [(r.test_id, r.epoch, r.answer, r.metrics) for r in shuffled.records] == [
        (r.test_id, r.epoch, r.answer, r.metrics) for r in local.records
    ]
    assert shuffled.wiring == local.wiring
    assert shuffled.value_metric == local.value_metric


def test_records_are_in_case_then_epoch_order(local):
    keys = [(r.test_id, r.epoch) for r in local.records]
    order = {r.test_id: i for i, r in enumerate(local.results)}
    assert keys == sorted(keys, key=lambda k: (order[k[0]], k[1]))
    assert len(keys) == 2 * len(local.results) == 2 * local.n_cases_in_pack


def test_an_ask_answered_twice_is_an_error_not_a_double_count():
    with pytest.raises(RuntimeError, match="answered twice"):
        _run(Shuffling(5, 0, twice=True))


def test_an_ask_that_never_comes_back_is_an_error_not_a_shorter_run():
    with pytest.raises(RuntimeError, match="never came back"):
        _run(Shuffling(5, 0, drop=3))


def test_the_stream_is_read_no_further_ahead_than_the_window():
    from ragleaklab_core.run.runner import READ_AHEAD

    seen: list[tuple[int, int]] = []

    class Watching(LocalExecutor):
        async def execute(self, work, asks, emit):
            taken = 0

            def counting(ask, record):
                nonlocal taken
                taken += 1
                emit(ask, record)

            async def watched():
                async for ask in asks:
                    seen.append((ask.seq, taken))
                    yield ask

            return await super().execute(work, watched(), counting)

    run = _run(Watching(), concurrency=3)
    assert len(seen) == len(run.records)
    # A bare window check: with in-order answers the stream is never further ahead than the
    # executor's in-flight count plus the read-ahead.
    assert max(seq - taken for seq, taken in seen) <= 3 + READ_AHEAD


def test_the_results_live_on_disk_and_read_back_equal(local):
    results = local.results
    assert type(results).__name__ == "Spool"
    assert results[0] == next(iter(results)) and results[-1] == list(results)[-1]
    assert results == tuple(results)
    with pytest.raises(IndexError):
        results[len(results)]


def test_an_async_executor_stream_can_be_consumed_by_many_workers():
    # answer_asks takes asks from one stream with several workers: none is taken twice.
    taken: list[int] = []

    async def main():
        async def stream():
            for i in range(50):
                await asyncio.sleep(0)
                yield i

        gate = asyncio.Lock()
        source = stream()

        async def worker():
            while True:
                async with gate:
                    item = await anext(source, None)
                if item is None:
                    return
                taken.append(item)
                await asyncio.sleep(0)

        await asyncio.gather(*(worker() for _ in range(8)))

    asyncio.run(main())
    assert sorted(taken) == list(range(50))
