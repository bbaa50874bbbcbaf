"""Every plugin group by its entry-point name: its protocol, its table of optional members, the
members that stand for each other, and the reader of its traits."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragleaklab_core.contracts import fitters, judges, metrics, packs, reporters, targets
from ragleaklab_core.contracts.fitters import FitterTraits
from ragleaklab_core.contracts.judges import JudgeTraits
from ragleaklab_core.contracts.members import Member
from ragleaklab_core.contracts.metrics import MetricTraits
from ragleaklab_core.contracts.packs import PackTraits
from ragleaklab_core.contracts.reporters import ReporterTraits
from ragleaklab_core.contracts.targets import TargetTraits

#: Each entry-point group's required protocol.
PROTOCOLS: Mapping[str, type] = {
    packs.GROUP: packs.Pack,
    metrics.GROUP: metrics.Metric,
    fitters.GROUP: fitters.ThresholdFitter,
    targets.GROUP: targets.Target,
    reporters.GROUP: reporters.Reporter,
    judges.GROUP: judges.Judge,
}
#: Each entry-point group's optional members.
OPTIONAL_MEMBERS: Mapping[str, tuple[Member, ...]] = {
    packs.GROUP: packs.PACK_MEMBERS,
    metrics.GROUP: metrics.METRIC_MEMBERS,
    fitters.GROUP: fitters.FITTER_MEMBERS,
    targets.GROUP: targets.TARGET_MEMBERS,
    reporters.GROUP: reporters.REPORTER_MEMBERS,
    judges.GROUP: judges.JUDGE_MEMBERS,
}
#: Members that stand for each other: a plugin with either of a pair lacks neither (an async-only
#: target's ``aanswer`` is not a misspelt ``answer``, a metric's ``VALUES`` serves as ``values``).
ALTERNATIVES: Mapping[str, Mapping[str, str]] = {
    metrics.GROUP: metrics.ALTERNATIVES,
    targets.GROUP: targets.ALTERNATIVES,
}

Traits = MetricTraits | TargetTraits | PackTraits | FitterTraits | ReporterTraits | JudgeTraits

_READERS: Mapping[str, Callable[[Any], Traits]] = {
    metrics.GROUP: metrics.metric_traits,
    targets.GROUP: targets.target_traits,
    packs.GROUP: packs.pack_traits,
    fitters.GROUP: fitters.fitter_traits,
    reporters.GROUP: reporters.reporter_traits,
    judges.GROUP: judges.judge_traits,
}


def read_traits(group: str, obj: Any) -> Traits | None:
    """The traits record of *obj*, a plugin of *group*; None for a group whose plugins declare
    no traits."""
    reader = _READERS.get(group)
    return None if reader is None else reader(obj)


def required_members(group: str) -> tuple[str, ...]:
    """The methods every plugin of *group* must have: its protocol's public members."""
    protocol = PROTOCOLS[group]
    return tuple(n for n in vars(protocol) if not n.startswith("_"))  # 3.11-safe listing


def group_kind(group: str) -> str:
    """What one plugin of *group* is called in messages: ``ragleaklab.metrics`` -> ``metric``."""
    return group.rsplit(".", 1)[-1].removesuffix("s")


__all__ = [
    "ALTERNATIVES",
    "OPTIONAL_MEMBERS",
    "PROTOCOLS",
    "Traits",
    "group_kind",
    "read_traits",
    "required_members",
]
