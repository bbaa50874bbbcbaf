"""Lists and mappings of a report that are produced as they are walked, never held whole.

A run's per-case lists (every case's outcome, the ids that fail a value, the ids never scored)
grow with the number of cases. They are computed again from the run's spools on disk (or from
the compact columns the verdict keeps) each time something walks them: writing report.json,
printing the summary, comparing with a baseline. Their lengths are known up front, so ``len``
and the counts are free; ``Streamed(memo=True)`` keeps what it produced the first time in a
:class:`~ragleaklab_core.run.spool.Spool`, for lists costly to produce and walked several times.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from ragleaklab_core._walked import Walked
from ragleaklab_core.run.spool import Spool

T = TypeVar("T")
V = TypeVar("V")


class Streamed(Walked[T], Generic[T]):
    """A sequence of *length* items that *produce* yields afresh each time it is walked.

    Args:
        length: How many items *produce* yields (checked: a mismatch is a bug, never a report
            whose count and list disagree).
        produce: Yields the items, the same ones in the same order each time.
        memo: Keep the items (as JSON lines on disk) the first time they are all produced.
    """

    def __init__(self, length: int, produce: Callable[[], Iterable[T]], *, memo: bool = False):
        self._length = length
        self._produce = produce
        self._memo: Spool[T] | None = None
        self._memoise = memo

    def __iter__(self) -> Iterator[T]:
        if self._memo is not None:
            yield from self._memo
            return
        memo: Spool[T] | None = Spool(_same) if self._memoise else None
        count = 0
        for item in self._produce():
            if memo is not None:
                memo.append(item)
            count += 1
            yield item
        if count != self._length:
            raise RuntimeError(f"a streamed list produced {count} items, not {self._length}")
        if memo is not None:
            self._memo = memo

    def __len__(self) -> int:
        return self._length

    def __repr__(self) -> str:
        return f"<Streamed list of {self._length} items>"


class StreamedMapping(Mapping[str, V], Generic[V]):
    """A mapping of *length* items that *produce* yields as ``(key, value)`` pairs each time it
    is walked (a lookup walks it too: for small runs and tests; reports iterate)."""

    def __init__(self, length: int, produce: Callable[[], Iterable[tuple[str, V]]]) -> None:
        self._items = Streamed(length, produce)

    def __getitem__(self, key: str) -> V:
        for k, value in self._items:
            if k == key:
                return value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> Any:  # a view's interface, lazily
        return iter(self._items)

    def __repr__(self) -> str:
        return f"<Streamed mapping of {len(self)} items>"


def _same(item: Any) -> Any:
    return item


__all__ = ["Streamed", "StreamedMapping"]
