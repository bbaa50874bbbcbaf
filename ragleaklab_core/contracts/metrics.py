"""The contract of a metric (group ``ragleaklab.metrics``): its protocol, its optional members
and the traits they are read into."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from attrs import field, frozen

from ragleaklab_core.contracts.members import Member, callable_member, present_members
from ragleaklab_core.values import Case, MetricResult, Response

GROUP = "ragleaklab.metrics"


@runtime_checkable
class Metric(Protocol):
    """Scores one target response to one case.

    Group ``ragleaklab.metrics``. ``score`` must be pure: no network, no global state; the same
    inputs give the same result. A case the metric cannot score (say, the target did not report
    retrieved documents) yields ``MetricResult(unscorable=reason)``, never a 0.

    Optional members the core reads when present (``for_corpus``, ``lower_is_worse``,
    ``primary_for``, ``values``, ``subject_value``, ``reads_answer``, ``check_ground_truth``...)
    are declared, with their meaning, in :data:`METRIC_MEMBERS`, and read once at load into
    :class:`MetricTraits`.

    .. versionadded:: 0.1
    """

    def score(self, case: Case, response: Response) -> MetricResult:
        """Return this metric's named values and evidence for *response* to *case*."""
        ...


#: The optional members of a metric (group ``ragleaklab.metrics``).
METRIC_MEMBERS: tuple[Member, ...] = (
    Member(
        "for_corpus",
        "method",
        "for_corpus(documents) -> Metric: a metric bound to the pack's documents (say, an index "
        "of the private ones), built once per pack before any case runs",
        "0.1",
    ),
    Member(
        "lower_is_worse",
        "attribute",
        "frozenset of value names where a lower value is worse (a recall); every other value is "
        "higher-is-worse",
        "0.1",
    ),
    Member(
        "primary_for",
        "class attribute",
        "mapping from pack type to the value calibrated for packs of that type that name no "
        'primary_metric ("*": any type), read by primary_metric_for',
        "0.2",
    ),
    Member(
        "values",
        "attribute",
        "tuple of the name of every value score can return (a case may lack some), read by "
        "metric_values without building the metric; without it value names are known only from "
        "the results",
        "0.2",
    ),
    Member(
        "VALUES",
        "class attribute",
        "the same as values, read from the class when values is not defined",
        "0.2",
    ),
    Member(
        "subject_value",
        "attribute",
        "a value counting what the metric found to judge in an answer: a pack in which it is 0 "
        "for every scored case tested nothing and is an error, not a pass",
        "0.2",
    ),
    Member(
        "reads_answer",
        "attribute",
        "bool, default true: whether score judges the answer text; a pack whose every answer is "
        "empty is an error (not tested) when one of its metrics reads the answer",
        "0.2",
    ),
    Member(
        "check_ground_truth",
        "classmethod",
        "check_ground_truth(ground_truths, texts) yields (case index, key, item index or None, "
        "problem) for each of the metric's own ground-truth keys that is malformed or refers to "
        "nothing; used by `ragleaklab pack validate`",
        "0.2",
    ),
)

#: Members that stand for each other: a metric's ``VALUES`` serves as ``values``.
ALTERNATIVES: Mapping[str, str] = {"values": "VALUES", "VALUES": "values"}


@frozen
class MetricTraits:
    """What a metric declares beyond ``score`` (:data:`METRIC_MEMBERS`), read once at load.

    Attributes:
        values: Its declared value names, in its order (``values``, else ``VALUES``); ().
        lower_is_worse: Value names where a lower value is worse.
        primary_for: Pack type -> the value calibrated for it (non-empty names only).
        subject_value: The value counting what it found to judge, or None.
        reads_answer: Whether it judges the answer text.
        for_corpus: Whether it binds to a pack's documents (``for_corpus``).
        check_ground_truth: Whether it checks its own ground-truth keys.
        present: The optional members it defines.
        problems: Declarations of the wrong shape (what a contract test reports).
    """

    values: tuple[str, ...] = ()
    lower_is_worse: frozenset[str] = frozenset()
    primary_for: Mapping[str, str] = field(factory=dict)
    subject_value: str | None = None
    reads_answer: bool = True
    for_corpus: bool = False
    check_ground_truth: bool = False
    present: frozenset[str] = frozenset()
    problems: tuple[str, ...] = ()


def metric_traits(metric: Any) -> MetricTraits:
    """Read a metric's optional members (:data:`METRIC_MEMBERS`); *metric* is an instance or,
    for what a class declares without being built, the class."""
    cls = metric if isinstance(metric, type) else type(metric)
    problems = []
    names: Any = getattr(metric, "values", None) or getattr(cls, "VALUES", None) or ()
    if isinstance(names, Mapping):
        names = tuple(names)
    if isinstance(names, frozenset | set):
        names = sorted(n for n in names if isinstance(n, str))
    if not isinstance(names, tuple | list):
        names = ()
    lower: Any = getattr(metric, "lower_is_worse", frozenset())
    if isinstance(lower, Collection) and all(isinstance(n, str) for n in lower):
        lower_names = frozenset(lower)
    else:
        problems.append(f"lower_is_worse must be a collection of value names, got {lower!r}")
        # The runner has always added whatever the collection held; keep that for iterables.
        lower_names = frozenset(lower) if isinstance(lower, Iterable) else frozenset()
    table = getattr(cls, "primary_for", None)
    primary = (
        {k: v for k, v in table.items() if isinstance(v, str) and v}
        if isinstance(table, Mapping)
        else {}
    )
    subject = getattr(metric, "subject_value", None)
    return MetricTraits(
        values=tuple(dict.fromkeys(n for n in names if isinstance(n, str))),
        lower_is_worse=lower_names,
        primary_for=primary,
        subject_value=subject if isinstance(subject, str) else None,
        reads_answer=bool(getattr(metric, "reads_answer", True)),
        for_corpus=callable_member(metric, "for_corpus"),
        check_ground_truth=callable_member(cls, "check_ground_truth"),
        present=present_members(metric, METRIC_MEMBERS),
        problems=tuple(problems),
    )


__all__ = ["ALTERNATIVES", "GROUP", "METRIC_MEMBERS", "Metric", "MetricTraits", "metric_traits"]
