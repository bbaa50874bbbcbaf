"""``ragleaklab report`` and ``run``'s rendering options (the renderings themselves:
:mod:`ragleaklab_core.reporting.outputs`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ragleaklab_core.cli._errors import handle_errors
from ragleaklab_core.cli._files import write_file
from ragleaklab_core.errors import InputError
from ragleaklab_core.inputs import read_report
from ragleaklab_core.reporting.outputs import (
    PRINTED,
    RENDERINGS,
    github_annotations,
    renderer,
    step_summary,
    write_renderings,
)

#: What each format's ``run`` option says it writes.
_WHAT = {
    "junit": "JUnit XML (one testsuite per pack, one testcase per case)",
    "sarif": "SARIF 2.1.0 (one result per failing case, for code-scanning dashboards)",
    "markdown": "Markdown (for a pull-request comment or a step summary)",
    "html": "a self-contained HTML report",
}

#: The renderings that can also show a calibration report.
_WITH_CALIBRATION = frozenset({"html"})

F = Any  # a click-decorated function


def rendering_options(func: F) -> F:
    """``--<format> FILE`` on ``run`` for every registered rendering but the printed one."""
    for fmt in sorted(set(RENDERINGS) - PRINTED, reverse=True):
        func = click.option(
            f"--{fmt}",
            f"render_{fmt}",
            type=click.Path(path_type=Path, dir_okay=False),
            metavar="FILE",
            help=f"Also write {_WHAT.get(fmt, fmt)} to FILE.",
        )(func)
    return func


def requested_renderings(options: Mapping[str, Any]) -> dict[str, Path]:
    """``{format: path}`` from ``run``'s ``render_<format>`` arguments, refusing a directory."""
    requested = {
        key.removeprefix("render_"): path
        for key, path in sorted(options.items())
        if key.startswith("render_") and path is not None
    }
    for fmt, path in requested.items():
        if path.is_dir():
            raise click.UsageError(f"--{fmt} {path.as_posix()} is a directory, expected a file")
    return requested


@click.command("report")
@click.argument("report_path", metavar="REPORT_JSON", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(sorted(RENDERINGS)),
    help="The rendering to write.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write to FILE (atomically) instead of stdout.",
)
@click.option(
    "--calibration",
    "calibration_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A calibration_report.json whose ROC curve and details the HTML report shows.",
)
@handle_errors
def report_command(
    report_path: Path, fmt: str, output: Path | None, calibration_path: Path | None
) -> None:
    """Render a finished run's report.json as FORMAT (what `run --FORMAT FILE` writes)."""
    if calibration_path is not None and fmt not in _WITH_CALIBRATION:
        raise click.UsageError(
            f"--calibration is shown by {', '.join(sorted(_WITH_CALIBRATION))} only, not by {fmt}"
        )
    report = read_report(report_path)
    options = {}
    if calibration_path is not None:
        options["calibration"] = read_report(calibration_path, what="calibration report")
    try:
        text = renderer(fmt)(report, **options)
    except InputError as exc:  # a report this rendering cannot read: name the file
        raise InputError(exc.message, source=exc.source or report_path.as_posix()) from None
    if output is None:
        click.echo(text, nl=False)
        return
    write_file(output, text)


__all__ = [
    "PRINTED",
    "RENDERINGS",
    "github_annotations",
    "read_report",
    "renderer",
    "rendering_options",
    "report_command",
    "requested_renderings",
    "step_summary",
    "write_renderings",
]
