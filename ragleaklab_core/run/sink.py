"""Where an executor's records go: back in case order, reduced per case, kept on disk.

Executors emit records in the order answers come back. The sink journals each one as it comes
(so an interrupted run keeps everything finished), then puts it in its place in the pack's
(case, epoch) order, reduces each case's epochs to a :class:`CaseResult`, and appends records
and results to spools on disk. What stays in memory is bounded by the read-ahead window, not by
the number of cases: the run streams.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence

from ragleaklab_core._discovery import LoadedPlugin
from ragleaklab_core.run.executor import Ask
from ragleaklab_core.run.records import CaseRecord, CaseResult, mask_record
from ragleaklab_core.run.spool import Spool
from ragleaklab_core.run.wiring import WiringTally
from ragleaklab_core.stats.aggregation import LITERAL_REDUCERS, Reducer
from ragleaklab_core.values import Case


class PackSink:
    """Collects one pack's records (see the module docstring).

    Args:
        metrics: The pack's metrics (reducing a case needs to know which ones scored it).
        reduce: The epoch reducer.
        lower_is_worse: Value names for which a lower value is worse.
        epochs: Epochs per case.
        corpus: The pack's document ids (for the wiring check).
        on_record: Called with each record as it comes (progress).
        journal: Called with each new record's JSON line as it comes (serialised once: the
            same line goes to the records spool).
        in_flight: How many asks the executor may hold unanswered at once.
        window: How far ahead of the oldest unfinished ask the stream may be read.
    """

    def __init__(
        self,
        metrics: Sequence[LoadedPlugin],
        reduce: Reducer,
        lower_is_worse: frozenset[str],
        epochs: int,
        corpus: Iterable[str],
        on_record: Callable[[CaseRecord], None] | None,
        journal: Callable[[str], None] | None,
        in_flight: int,
        window: int,
    ) -> None:

        self.records: Spool[CaseRecord] = Spool(CaseRecord.from_dict, CaseRecord.to_dict)
        self.results: Spool[CaseResult] = Spool(CaseResult.from_dict, CaseResult.to_dict)
        self.ids: Spool[str] = Spool(str)
        self.value_metric: dict[str, str] = {}
        self.wiring = WiringTally(corpus)
        self._metrics = tuple(metrics)
        self._reduce = reduce
        self._lower = lower_is_worse
        self._epochs = epochs
        self._on_record = on_record
        self._journal = journal
        self._in_flight = in_flight
        self._window = window
        self._out = 0  # asks handed to the executor and not yet answered
        self._pending: dict[int, tuple[Ask, CaseRecord, str]] = {}
        self._next = 0
        self._epochs_of_case: list[CaseRecord] = []
        self._moved: asyncio.Event | None = None

    @property
    def taken(self) -> int:
        """How many asks are in their place (every ask before this position has its record)."""
        return self._next

    def hand(self, ask: Ask) -> None:
        """Note that *ask* goes to the executor.

        An executor holds at most its ``in_flight`` asks unanswered: one that asks for more has
        lost one. Refusing it here turns a lost ask into an error at once, where waiting for it
        (the window) would hang the run.
        """
        if self._out >= self._in_flight:
            raise RuntimeError(
                f"the executor asked for more while holding {self._out} unanswered asks, its "
                f"in-flight limit: the ask at position {self._next} never came back"
            )
        self._out += 1

    def emit(self, ask: Ask, record: CaseRecord) -> None:
        """Take the executor's record of *ask* (any order; each ask exactly once)."""
        self._out -= 1
        self.keep(ask, record)

    def keep(self, ask: Ask, record: CaseRecord) -> None:
        """Take the record of *ask* (from the executor, or kept from an interrupted run)."""
        if ask.seq < self._next or ask.seq in self._pending:
            raise RuntimeError(f"ask {ask.seq} ({ask.case.test_id}) was answered twice")
        # Every record written passes here (from any executor, or a journal): this run's secrets
        # are masked in it once more with what this process knows.
        record = mask_record(record)
        line = json.dumps(record.to_dict(), ensure_ascii=False, allow_nan=False)
        if self._journal is not None and not record.resumed:
            self._journal(line)
        if self._on_record is not None:
            self._on_record(record)
        self._pending[ask.seq] = (ask, record, line)
        moved = False
        while self._next in self._pending:
            self._take(*self._pending.pop(self._next))
            self._next += 1
            moved = True
        if moved and self._moved is not None:
            self._moved.set()

    async def room(self, seq: int) -> None:
        """Wait until ask *seq* is within the window of the oldest unfinished one."""
        while seq >= self._next + self._window:
            if self._moved is None:
                self._moved = asyncio.Event()
            self._moved.clear()
            await self._moved.wait()

    def finish(self, asked: int) -> None:
        """Check that all *asked* asks came back (an executor that loses one is a bug, never a
        silently shorter run), and seal the spools."""
        for spool in (self.records, self.results, self.ids):
            spool.seal()
        if self._pending or self._next != asked:
            missing = asked - self._next
            raise RuntimeError(
                f"{missing} of {asked} asks never came back from the executor "
                f"(first missing: position {self._next})"
            )

    def _take(self, ask: Ask, record: CaseRecord, line: str) -> None:
        self.records.append_line(line)
        if record.error is None:
            retrieved = record.retrieved
            ids = None if retrieved is None else [str(d["doc_id"]) for d in retrieved]
            self.wiring.add(ids, record.answer or "", ask.case.test_id)
            for name, scored in record.metrics.items():
                for value in scored.get("values", {}):
                    self.value_metric[value] = name
        self._epochs_of_case.append(record)
        if ask.epoch == self._epochs - 1:
            self.results.append(
                reduce_case(
                    ask.case,
                    self._epochs_of_case,
                    self._metrics,
                    self._reduce,
                    self._lower,
                )
            )
            self.ids.append(ask.case.test_id)
            self._epochs_of_case = []


def reduce_case(
    case: Case,
    records: Sequence[CaseRecord],
    metrics: Sequence[LoadedPlugin],
    reduce: Reducer,
    lower_is_worse: frozenset[str],
) -> CaseResult:
    """One case's :class:`CaseResult` from the records of its epochs."""
    mine = records
    tags = tuple(case.tags)
    errors = [r.error for r in mine if r.error is not None]
    if errors:
        e = errors[0]
        message = f"{e['group']}:{e['plugin']}: {e['message']}"
        return CaseResult(case.test_id, {}, {}, message, tags)
    unscorable: dict[str, str] = {}
    values: dict[str, float] = {}
    if len(mine) == 1 and reduce.kind in LITERAL_REDUCERS:  # one epoch reduces to its values
        scored = mine[0].metrics
        for metric in metrics:
            m = scored[metric.name]
            if m["unscorable"]:
                unscorable[metric.name] = m["unscorable"]
            else:
                values.update((k, float(v)) for k, v in m["values"].items())
        return CaseResult(case.test_id, dict(sorted(values.items())), unscorable, None, tags)
    for metric in metrics:
        per_epoch = [r.metrics[metric.name] for r in mine]
        reasons = [m["unscorable"] for m in per_epoch if m["unscorable"]]
        if reasons:
            unscorable[metric.name] = reasons[0]
            continue
        names = sorted(set().union(*(m["values"] for m in per_epoch)))
        for name in names:
            series = [m["values"][name] for m in per_epoch if name in m["values"]]
            if len(series) == len(per_epoch):
                values[name] = float(reduce(series, higher_is_worse=name not in lower_is_worse))
    return CaseResult(case.test_id, dict(sorted(values.items())), unscorable, None, tags)


__all__ = ["PackSink", "reduce_case"]
