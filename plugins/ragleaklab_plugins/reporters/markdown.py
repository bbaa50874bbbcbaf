"""Markdown, for a pull-request comment or GitHub's step summary."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from ragleaklab_core import RunReport, render_markdown


@frozen
class MarkdownReporter:
    """GitHub-flavoured Markdown, kept under the 1 MiB a step summary may hold; under GitHub
    Actions ``ragleaklab run`` appends it to ``$GITHUB_STEP_SUMMARY``. It has no options."""

    description: ClassVar[str] = "Markdown (for a pull-request comment or a step summary)"
    suffix: ClassVar[str] = ".md"
    shorthand: ClassVar[bool] = True
    step_summary: ClassVar[bool] = True

    def render(self, report: RunReport, /, **options: Any) -> str:
        return render_markdown(report)
