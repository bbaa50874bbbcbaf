"""What a finished run writes besides ``report.json``: its renderings, GitHub Actions'
annotations and step summary.

Every rendering is a pure function of the finished run's ``report.json`` (``render(report)``
in ``ragleaklab_core.reporting.<module>``), so ``run --junit FILE`` and ``ragleaklab report
report.json --format junit`` give byte-identical files, and the summary ``run`` prints is
``ragleaklab report report.json --format text``. The run session
(:mod:`ragleaklab_core.session`) and the ``report`` command both render through here.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: Format name -> the module of ``ragleaklab_core.reporting`` that renders it.
RENDERINGS: dict[str, str] = {
    "html": "html",
    "junit": "junit",
    "markdown": "markdown",
    "sarif": "sarif",
    "text": "console",
}
#: Renderings ``run`` has no ``--FORMAT FILE`` option for: it prints the text one on stdout.
PRINTED = frozenset({"text"})


def renderer(fmt: str) -> Callable[..., str]:
    """The ``render`` function of *fmt*."""
    module = importlib.import_module(f"ragleaklab_core.reporting.{RENDERINGS[fmt]}")
    render: Callable[..., str] = module.render
    return render


def github_annotations(report: Mapping[str, Any]) -> list[str]:
    """GitHub Actions workflow commands: ``::error`` for a pack that failed, errored or was not
    tested, ``::warning`` for a passing pack's warnings (an uncalibrated threshold, say).

    Under a baseline rule (``--fail-on regression|new-failures``) what decides is the gate: its
    reasons are the errors, and a pack failing only its thresholds (as in the baseline) is a
    warning, so the annotations never contradict the job's outcome."""
    from ragleaklab_core.gate import annotation_level

    lines = []
    gate = report.get("gate") if isinstance(report.get("gate"), Mapping) else None
    baseline_rule = gate is not None and gate.get("fail_on", "verdict") != "verdict"
    for pack in report.get("packs", []):
        if not isinstance(pack, Mapping):
            continue
        name = _escape_property(f"ragleaklab {pack.get('name', '?')} {pack.get('version', '')}")
        level = annotation_level(pack, gate)
        if level is not None:
            said = [pack.get("not_tested_reason"), *pack.get("reasons", [])]
            text = "; ".join(str(r) for r in said if r) or str(pack.get("verdict"))
            lines.append(f"::{level} title={name.rstrip()}::{_escape_data(text)}")
        for warning in pack.get("warnings", []):
            lines.append(f"::warning title={name.rstrip()}::{_escape_data(str(warning))}")
    if gate is not None and baseline_rule:
        title = _escape_property(f"ragleaklab --fail-on {gate['fail_on']}")
        for reason in gate.get("reasons", []):
            lines.append(f"::error title={title}::{_escape_data(str(reason))}")
    return lines


def _escape_data(text: str) -> str:
    # GitHub's workflow-command escaping: % first, then the line breaks.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_renderings(
    report: Mapping[str, Any],
    requested: Mapping[str, Path],
    write: Callable[[Path, str], None],
) -> list[Path]:
    """Render each requested format and write it with *write* (atomic, the caller's)."""
    rendered = {fmt: renderer(fmt)(report) for fmt in requested}
    for fmt, path in requested.items():
        write(path, rendered[fmt])
    return list(requested.values())


def step_summary(report: Mapping[str, Any]) -> None:
    """Append the Markdown rendering to ``$GITHUB_STEP_SUMMARY`` when GitHub Actions sets it."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target or "markdown" not in RENDERINGS:
        return
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(renderer("markdown")(report))


__all__ = [
    "PRINTED",
    "RENDERINGS",
    "github_annotations",
    "renderer",
    "step_summary",
    "write_renderings",
]
