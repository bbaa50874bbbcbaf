"""The values a run produces per case: how it is run (:class:`RunSettings`), one case in one
epoch (:class:`CaseRecord`, a line of ``runs.jsonl``) and one case reduced over its epochs
(:class:`CaseResult`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
from attrs import field, frozen

from ragleaklab_core._redact import mask_secrets
from ragleaklab_core._wellformed import repair

#: The ``error.group`` of a case the runner did not ask (the pack stopped before it): here, where
#: the executor that writes it and the recording that reads it back both find it.
NOT_ASKED = "ragleaklab.run"


@frozen
class RunSettings:
    """How a pack is run.

    Attributes:
        epochs: How many times each case is asked (for non-deterministic targets).
        reducer: The reducer that turns a case's epoch values into one value.
        tags: Run only cases carrying at least one of these tags (empty: every case).
        exclude_tags: Leave out every case carrying one of these tags (it wins over *tags*).
        concurrency: How many cases are asked at once (targets with ``aanswer``, or a
            ``thread_safe`` target); 1 asks them one after the other.
        rate_limit: At most this many requests per second (None: no limit).
        max_consecutive_failures: After this many consecutive transport failures (the target
            could not be reached) the pack stops asking and counts as not tested; 0 never stops.
    """

    epochs: int = field(default=1, validator=attrs.validators.ge(1))
    reducer: str = "mean"
    tags: tuple[str, ...] = ()
    concurrency: int = field(default=1, validator=attrs.validators.ge(1))
    rate_limit: float | None = None
    max_consecutive_failures: int = field(default=5, validator=attrs.validators.ge(0))
    exclude_tags: tuple[str, ...] = ()

    @property
    def selecting(self) -> bool:
        """Whether tags select or leave out cases (else every case runs)."""
        return bool(self.tags or self.exclude_tags)

    def selects(self, case_tags: Iterable[str]) -> bool:
        """Whether a case carrying *case_tags* runs: none of :attr:`exclude_tags`, and one of
        :attr:`tags` when there are any."""
        return case_selected(case_tags, self.tags, self.exclude_tags)


def case_selected(
    case_tags: Iterable[str], tags: Iterable[str], exclude_tags: Iterable[str] = ()
) -> bool:
    """The one rule of case selection by tags: a case runs when it carries none of
    *exclude_tags* and, when *tags* are given, one of them."""
    carried = set(case_tags)
    if carried.intersection(exclude_tags):
        return False
    wanted = set(tags)
    return not wanted or bool(wanted & carried)


@frozen
class CaseRecord:
    """One case in one epoch: a line of ``runs.jsonl``."""

    pack: str
    test_id: str
    epoch: int
    query: str
    answer: str | None
    retrieved: tuple[Mapping[str, Any], ...] | None
    metrics: Mapping[str, Mapping[str, Any]]
    error: Mapping[str, str] | None
    elapsed_ms: float
    target_metadata: Mapping[str, Any] = field(factory=dict)
    resumed: bool = field(default=False, eq=False)  # taken from an interrupted run's journal
    principal: str | None = None  # who the case asked as (Case.principal)
    #: The fields in which a registered secret was replaced by ``***`` (see :func:`mask_record`).
    masked: tuple[str, ...] = ()
    #: The fields in which text that was not well-formed Unicode (a lone surrogate) was made so
    #: (U+FFFD) before scoring and writing (see :func:`repair_record`).
    repaired: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseRecord:
        """The record a ``runs.jsonl`` line holds (the inverse of :meth:`to_dict`)."""
        retrieved = data["retrieved"]
        return cls(
            pack=data["pack"],
            test_id=data["test_id"],
            epoch=data["epoch"],
            query=data["query"],
            answer=data["answer"],
            retrieved=None if retrieved is None else tuple(dict(r) for r in retrieved),
            metrics={k: dict(v) for k, v in data["metrics"].items()},
            error=None if data["error"] is None else dict(data["error"]),
            elapsed_ms=data["elapsed_ms"],
            target_metadata=dict(data.get("target_metadata", {})),
            principal=data.get("principal"),
            masked=tuple(data.get("masked", ())),
            repaired=tuple(data.get("repaired", ())),
        )

    def to_dict(self) -> dict[str, Any]:
        # "principal" only when there is one: the lines of anonymous cases stay as they were.
        who = {} if self.principal is None else {"principal": self.principal}
        return {
            "pack": self.pack,
            "test_id": self.test_id,
            "epoch": self.epoch,
            "query": self.query,
            **who,
            "answer": self.answer,
            "retrieved": None if self.retrieved is None else [dict(r) for r in self.retrieved],
            "metrics": {k: dict(v) for k, v in self.metrics.items()},
            "error": None if self.error is None else dict(self.error),
            "target_metadata": dict(self.target_metadata),
            "elapsed_ms": self.elapsed_ms,
            # Only when text was altered: the lines of every other case stay as they were.
            **({"masked": list(self.masked)} if self.masked else {}),
            **({"repaired": list(self.repaired)} if self.repaired else {}),
        }


def mask_record(record: CaseRecord) -> CaseRecord:
    """*record* as it may be written: every registered secret (a credential of this run's
    configuration, which a system may echo in its answers, retrieved texts or metadata, and a
    metric may quote in its evidence) replaced by ``***``, and the altered fields listed in
    ``masked`` (``query``, ``answer``, ``retrieved``, ``metrics.<metric>``, ``error``,
    ``target_metadata``) so a reader knows the text is not what the system said.

    The metrics scored the real text before this (masking is for what is written); masking a
    record twice changes nothing.
    """
    masked: set[str] = set()

    def hide(name: str, value: Any) -> Any:
        hidden, changed = mask_secrets(value)
        if changed:
            masked.add(name)
        return hidden

    changes = {
        "query": hide("query", record.query),
        "answer": hide("answer", record.answer),
        "retrieved": None
        if record.retrieved is None
        else tuple(hide("retrieved", list(record.retrieved))),
        "metrics": {name: hide(f"metrics.{name}", m) for name, m in record.metrics.items()},
        "error": hide("error", record.error),
        "target_metadata": hide("target_metadata", record.target_metadata),
    }
    if not masked:  # nothing (more) to hide: the record as it was, marks included
        return record
    return attrs.evolve(record, **changes, masked=tuple(sorted(masked | set(record.masked))))


def repair_record(record: CaseRecord, repaired: Iterable[str] = ()) -> CaseRecord:
    """*record* as it can be written: every string made well-formed Unicode (a lone surrogate
    as U+FFFD, :mod:`ragleaklab_core._wellformed`), the fields altered added to ``repaired``
    with *repaired* (the response's parts already repaired before scoring)."""
    altered = set(repaired)

    def fix(name: str, value: Any) -> Any:
        fixed, changed = repair(value)
        if changed:
            altered.add(name)
        return fixed

    changes = {
        "pack": fix("pack", record.pack),
        "test_id": fix("test_id", record.test_id),
        "query": fix("query", record.query),
        "answer": fix("answer", record.answer),
        "retrieved": fix("retrieved", record.retrieved),
        "metrics": {name: fix(f"metrics.{name}", m) for name, m in record.metrics.items()},
        "error": fix("error", record.error),
        "target_metadata": fix("target_metadata", record.target_metadata),
        "principal": fix("principal", record.principal),
    }
    if not altered - set(record.repaired):
        return record
    return attrs.evolve(record, **changes, repaired=tuple(sorted(altered | set(record.repaired))))


@frozen
class CaseResult:
    """One case's outcome, reduced over its epochs.

    Attributes:
        test_id: The case.
        values: Metric value name -> reduced value (only values every epoch produced).
        unscorable: Metric plugin name -> why it could not score the case.
        error: Why the case errored (a plugin raised), or None.
    """

    test_id: str
    values: Mapping[str, float]
    unscorable: Mapping[str, str]
    error: str | None
    tags: tuple[str, ...] = ()  # the case's tags (attack/benign, family, smoke...)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseResult:
        return cls(
            data["test_id"],
            dict(data["values"]),
            dict(data["unscorable"]),
            data["error"],
            tuple(data["tags"]),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "test_id": self.test_id,
            "values": dict(self.values),
            "unscorable": dict(self.unscorable),
            "error": self.error,
            "tags": list(self.tags),
        }


__all__ = [
    "NOT_ASKED",
    "CaseRecord",
    "CaseResult",
    "RunSettings",
    "case_selected",
    "mask_record",
    "repair_record",
]
