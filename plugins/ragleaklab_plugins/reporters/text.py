"""The plain-text summary ``ragleaklab run`` prints, as a file."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from ragleaklab_core import RunReport, render_text


@frozen
class TextReporter:
    """The summary ``ragleaklab run`` prints: a block per pack, then the verdict. It has no
    options, and no ``--text`` shorthand on ``run``, which prints it anyway."""

    description: ClassVar[str] = "the plain-text summary run prints"
    suffix: ClassVar[str] = ".txt"

    def render(self, report: RunReport, /, **options: Any) -> str:
        return render_text(report)
