"""A self-contained HTML page, with a calibration report's ROC curve when given one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from attrs import frozen

from ragleaklab_core import RunReport, render_html


@frozen
class HtmlReporter:
    """A self-contained HTML report (no external resource, a strict content security policy).
    Given ``calibration`` (``ragleaklab report --calibration FILE``), it also shows that
    calibration's ROC curve and details. It has no options."""

    description: ClassVar[str] = "a self-contained HTML report"
    suffix: ClassVar[str] = ".html"
    shorthand: ClassVar[bool] = True
    accepts: ClassVar[frozenset[str]] = frozenset({"calibration"})

    def render(
        self, report: RunReport, /, *, calibration: Mapping[str, Any] | None = None, **options: Any
    ) -> str:
        return render_html(report, calibration)
