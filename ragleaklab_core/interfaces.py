"""The plugin contract: small protocols that packs, metrics, fitters, targets, reporters and
judges implement.

Plugins need not inherit from these classes; the loader checks that the object it built has the
methods below (:func:`ragleaklab_core.check_contract`). Plugin classes are attrs classes (or
dataclasses) constructible with no arguments: their fields are their options, structured from the
configuration by ragleaklab's strict converter.

Beyond the methods every plugin must have, the core reads optional members when a plugin defines
them. Each is declared once, in a table per group (:data:`METRIC_MEMBERS`, :data:`TARGET_MEMBERS`,
:data:`PACK_MEMBERS`, :data:`FITTER_MEMBERS`, :data:`REPORTER_MEMBERS`, :data:`JUDGE_MEMBERS`),
and read once, when the plugin is loaded, into a frozen record (:class:`MetricTraits`,
:class:`TargetTraits`, :class:`PackTraits`, :class:`FitterTraits`, :class:`ReporterTraits`,
:class:`JudgeTraits`) that the core uses instead of looking the members up itself. A public
attribute one edit away from a member the plugin lacks, and not declared itself, is refused when
the plugin is loaded (:func:`misspelt_members`): ``reads_answers`` is not silently ignored.

Each group's protocol, table and traits live side by side in a module of
:mod:`ragleaklab_core.contracts` (``contracts/metrics.py``, ``contracts/targets.py``...); this
module gathers them under the path plugin authors have imported since 0.1.
"""

from ragleaklab_core.contracts.fitters import FITTER_MEMBERS, FitterTraits, ThresholdFitter
from ragleaklab_core.contracts.groups import (
    ALTERNATIVES,
    OPTIONAL_MEMBERS,
    PROTOCOLS,
    Traits,
    group_kind,
    read_traits,
    required_members,
)
from ragleaklab_core.contracts.judges import JUDGE_MEMBERS, Judge, JudgeTraits, judge_traits
from ragleaklab_core.contracts.members import Member
from ragleaklab_core.contracts.metrics import METRIC_MEMBERS, Metric, MetricTraits, metric_traits
from ragleaklab_core.contracts.packs import PACK_MEMBERS, Pack, PackTraits, pack_traits
from ragleaklab_core.contracts.reporters import (
    REPORTER_MEMBERS,
    Reporter,
    ReporterTraits,
    reporter_traits,
)
from ragleaklab_core.contracts.spelling import (
    CLOSE_MATCH,
    Misspelling,
    missing_hint,
    misspelt_members,
)
from ragleaklab_core.contracts.targets import (
    INGEST_SCOPES,
    ISOLATIONS,
    TARGET_MEMBERS,
    Target,
    TargetTraits,
    target_traits,
)

__all__ = [
    "ALTERNATIVES",
    "CLOSE_MATCH",
    "FITTER_MEMBERS",
    "INGEST_SCOPES",
    "ISOLATIONS",
    "JUDGE_MEMBERS",
    "METRIC_MEMBERS",
    "OPTIONAL_MEMBERS",
    "PACK_MEMBERS",
    "PROTOCOLS",
    "REPORTER_MEMBERS",
    "TARGET_MEMBERS",
    "FitterTraits",
    "Judge",
    "JudgeTraits",
    "Member",
    "Metric",
    "MetricTraits",
    "Misspelling",
    "Pack",
    "PackTraits",
    "Reporter",
    "ReporterTraits",
    "Target",
    "TargetTraits",
    "ThresholdFitter",
    "Traits",
    "group_kind",
    "judge_traits",
    "metric_traits",
    "missing_hint",
    "misspelt_members",
    "pack_traits",
    "read_traits",
    "reporter_traits",
    "required_members",
    "target_traits",
]
