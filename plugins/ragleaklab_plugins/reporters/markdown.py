"""Markdown, for a pull-request comment or GitHub's step summary."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from ragleaklab_core import RunReport, render_markdown


@frozen
class MarkdownReporter:
    """GitHub-flavoured Markdown, at most ``max_chars`` characters (default 65536, what a
    pull-request comment holds; 0: no cap), case lists cut first, then pack tables, never the
    verdict; under GitHub Actions ``ragleaklab run`` appends it to ``$GITHUB_STEP_SUMMARY``."""

    description: ClassVar[str] = "Markdown (for a pull-request comment or a step summary)"
    suffix: ClassVar[str] = ".md"
    shorthand: ClassVar[bool] = True
    step_summary: ClassVar[bool] = True
    accepts: ClassVar[frozenset[str]] = frozenset({"max_chars"})

    def render(self, report: RunReport, /, *, max_chars: int | None = None, **options: Any) -> str:
        if max_chars is None:
            return render_markdown(report)
        return render_markdown(report, max_chars=max_chars)
