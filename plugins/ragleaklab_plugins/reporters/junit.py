"""JUnit XML, for CI test-result views."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from ragleaklab_core import RunReport, render_junit


@frozen
class JUnitReporter:
    """JUnit XML: one testsuite per pack, one testcase per case. It has no options."""

    description: ClassVar[str] = "JUnit XML (one testsuite per pack, one testcase per case)"
    suffix: ClassVar[str] = ".xml"
    shorthand: ClassVar[bool] = True

    def render(self, report: RunReport, /, **options: Any) -> str:
        return render_junit(report)
