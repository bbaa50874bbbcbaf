"""SARIF 2.1.0, for code-scanning dashboards."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from ragleaklab_core import RunReport, render_sarif


@frozen
class SarifReporter:
    """SARIF 2.1.0: one result per failing case. It has no options."""

    description: ClassVar[str] = (
        "SARIF 2.1.0 (one result per failing case, for code-scanning dashboards)"
    )
    suffix: ClassVar[str] = ".sarif"
    shorthand: ClassVar[bool] = True

    def render(self, report: RunReport, /, **options: Any) -> str:
        return render_sarif(report)
