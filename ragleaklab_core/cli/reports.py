"""``ragleaklab report`` and the renderings ``run`` writes beside ``report.json``.

Every rendering is a pure function of the finished run's ``report.json`` (``render(report)``
in ``ragleaklab_core.reporting.<module>``), so ``run --junit FILE`` and ``ragleaklab report
report.json --format junit`` give byte-identical files, and the summary ``run`` prints is
``ragleaklab report report.json --format text``.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from ragleaklab_core.cli._errors import handle_errors
from ragleaklab_core.cli._files import write_file
from ragleaklab_core.errors import InputError

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


def read_report(path: Path, *, what: str = "report") -> dict[str, Any]:
    """A ``report.json`` (or calibration report) as a dict; an :class:`InputError` naming the
    file (and the line of a JSON error) otherwise. ``ragleaklab report`` and ``diff`` read with it.
    """
    source = path.as_posix()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", source=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the {what}: {exc}", source=source) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"$: not JSON: {exc.msg}", source=source, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(f"$: the {what} must be a JSON object", source=source)
    return data


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
