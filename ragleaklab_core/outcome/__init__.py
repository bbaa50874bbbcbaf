"""The outcome: a finished run, from the end of evaluation to its renderings, as frozen values
(:class:`RunOutcome`, its :class:`PackOutcome` s, their :class:`ValueOutcome` s and
:class:`CaseOutcome` s), and ``report.json``, its one serialization (:mod:`.codec`).

The outcome holds facts and the verdicts the gate decided on them; it decides nothing itself
(:mod:`ragleaklab_core.gate` does) and imports no runner: it sits below ``gate/`` and ``run/``.
"""

from __future__ import annotations

from ragleaklab_core.outcome.pack import (
    Allowances,
    AppliedThreshold,
    CaseCounts,
    CaseDetail,
    CaseOutcome,
    CorrectedFailRate,
    PackOutcome,
    PluginRef,
    Sensitivity,
    Specificity,
    UnscorableCases,
    ValueOutcome,
    WiringCounts,
)
from ragleaklab_core.outcome.run import (
    BaselineRecord,
    GateRecord,
    RunOutcome,
    System,
    Tool,
    Totals,
)
from ragleaklab_core.outcome.words import EXIT_BAD_INPUT, EXIT_INTERRUPTED, Outcome, Verdict

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "Allowances",
    "AppliedThreshold",
    "BaselineRecord",
    "CaseCounts",
    "CaseDetail",
    "CaseOutcome",
    "CorrectedFailRate",
    "GateRecord",
    "Outcome",
    "PackOutcome",
    "PluginRef",
    "RunOutcome",
    "Sensitivity",
    "Specificity",
    "System",
    "Tool",
    "Totals",
    "UnscorableCases",
    "ValueOutcome",
    "Verdict",
    "WiringCounts",
]
