"""``ragleaklab report`` and ``run``'s rendering options (the renderings themselves:
:mod:`ragleaklab_core.reporting.outputs`, through the installed reporters)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ragleaklab_core._atomic import same_file
from ragleaklab_core.cli._errors import handle_errors
from ragleaklab_core.cli._files import write_file
from ragleaklab_core.cli.shorthands import KEYWORD_PREFIX, ShorthandPlan, installed_plan
from ragleaklab_core.config import MARKDOWN_MAX_CHARS, markdown_cap_problem
from ragleaklab_core.errors import InputError
from ragleaklab_core.inputs import read_report
from ragleaklab_core.reporting.outputs import (
    accepting,
    github_annotations,
    render,
    renderer,
    step_summary,
    unknown_reporter,
    write_renderings,
)

F = Any  # a click-decorated function

#: The keyword ``run`` receives ``--report NAME=FILE`` under (through its ``**renderings``).
_REPORT_OPTION = "report_files"


def rendering_options(func: F) -> F:
    """``--report NAME=FILE`` (repeatable) on ``run`` for any installed reporter; the shorthand
    ``--NAME FILE`` of each reporter that declares one is added when ``run`` is used
    (:class:`RunCommand`)."""
    return click.option(
        "--report",
        _REPORT_OPTION,
        multiple=True,
        metavar="NAME=FILE",
        help="Also write the rendering of the installed reporter NAME to FILE; repeatable "
        "(`ragleaklab plugins` lists the reporters).",
    )(func)


#: Where a ``run`` invocation keeps its shorthand plan (``click.Context.meta``).
_PLAN = "ragleaklab.shorthands"


def option_names(command: click.Command, ctx: click.Context) -> set[str]:
    """Every flag *command* has of its own (``--out``, ``-o``, ``--help``)."""
    names: set[str] = set()
    for param in click.Command.get_params(command, ctx):
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


class RunCommand(click.Command):
    """``ragleaklab run``, with a ``--NAME FILE`` option for each reporter shorthand.

    The shorthands are read from the installed reporters when the command is used (its help
    included), not when the command line is built, so what a reporter declares can never break
    another command; one that cannot be a flag is left out with one warning line on stderr
    (:mod:`ragleaklab_core.cli.shorthands`)."""

    def shorthand_plan(self, ctx: click.Context) -> ShorthandPlan:
        """This invocation's plan, made (and its refusals said) once."""
        plan = ctx.meta.get(_PLAN)
        if plan is None:
            plan = installed_plan(option_names(self, ctx))
            ctx.meta[_PLAN] = plan
            for refusal in plan.refused:
                click.echo(f"warning: {refusal.message()}", err=True)
        return plan

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        shorthands = [
            click.Option(
                [f"--{s.flag}", s.keyword],
                type=click.Path(path_type=Path, dir_okay=False),
                metavar="FILE",
                help=f"Also write {s.description} to FILE (the same as --report "
                f"{s.reporter}=FILE).",
            )
            for s in self.shorthand_plan(ctx).offered
        ]
        # Before --help, which click lists last.
        if params and set(params[-1].opts) & set(ctx.help_option_names):
            return [*params[:-1], *shorthands, params[-1]]
        return [*params, *shorthands]


def requested_renderings(options: Mapping[str, Any]) -> dict[str, Path]:
    """``{reporter: path}`` from ``run``'s rendering options (``--report NAME=FILE`` and the
    shorthands), refusing an unknown reporter, one named twice, a FILE named twice and a
    directory, before anything runs."""
    context = click.get_current_context(silent=True)
    plan = context.meta.get(_PLAN) if context is not None else None
    given: list[tuple[str, str, Path]] = []  # (flag as typed, reporter, path)
    for key, path in sorted(options.items()):
        if key.startswith(KEYWORD_PREFIX) and path is not None:
            shorthand = plan.by_keyword(key) if isinstance(plan, ShorthandPlan) else None
            if shorthand is None:  # only the plan's keywords reach run; anything else is a bug
                raise click.UsageError(f"unknown rendering option {key!r}")
            given.append(
                (f"--{shorthand.flag} {Path(path).as_posix()}", shorthand.reporter, Path(path))
            )
    for item in options.get(_REPORT_OPTION) or ():
        name, sep, file = str(item).partition("=")
        if not sep or not name.strip() or not file.strip():
            raise click.UsageError(f"--report {item}: expected NAME=FILE")
        given.append((f"--report {item}", name.strip(), Path(file.strip())))
    requested: dict[str, Path] = {}
    by_file: dict[str, str] = {}
    for flag, name, path in given:
        problem = unknown_reporter(name)
        if problem is not None:
            raise click.UsageError(f"{flag}: {problem}")
        if path.is_dir():
            raise click.UsageError(f"{flag} is a directory, expected a file")
        if name in requested:
            raise click.UsageError(
                f"{flag}: the reporter {name!r} is already written to {requested[name].as_posix()}"
            )
        # One file, two renderings: the second would silently replace the first.
        same = by_file.get(_file_key(path))
        if same is not None:
            raise click.UsageError(f"{flag}: {path.as_posix()} is named twice (also by {same})")
        requested[name] = path
        by_file[_file_key(path)] = flag
    return requested


def _file_key(path: Path) -> str:
    """*path* as the file it names (``./a.xml`` and ``a.xml`` are one file)."""
    return os.path.normcase(os.path.abspath(path))


def _run_report_path(path: Path) -> Path:
    """RUN is a report.json, or the output directory of a run holding one."""
    return path / "report.json" if path.is_dir() else path


@click.command("report")
@click.argument("run_path", metavar="RUN", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    required=True,
    metavar="NAME",
    help="The installed reporter to render with (`ragleaklab plugins` lists them).",
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
    help="A calibration_report.json whose ROC curve and details the reporter shows (a reporter "
    "that accepts one, such as html).",
)
@click.option(
    "--markdown-max-chars",
    "max_chars",
    type=int,
    metavar="N",
    help="With a reporter that accepts a cap (markdown): the most characters it writes; case "
    f"lists are cut first, then pack tables, never the verdict; 0: no cap [default: "
    f"{MARKDOWN_MAX_CHARS}].",
)
@handle_errors
def report_command(
    run_path: Path,
    fmt: str,
    output: Path | None,
    calibration_path: Path | None,
    max_chars: int | None,
) -> None:
    """Render a finished run (its report.json, or the run's output directory) with the
    installed reporter NAME: what `run --report NAME=FILE` writes."""
    problem = unknown_reporter(fmt)
    if problem is not None:
        raise click.UsageError(f"--format {fmt}: {problem}")
    if calibration_path is not None:
        shown_by = accepting("calibration")
        if fmt not in shown_by:
            raise click.UsageError(
                f"--calibration is shown by {', '.join(shown_by) or 'no installed reporter'} "
                f"only, not by {fmt}"
            )
    if max_chars is not None:
        capped_by = accepting("max_chars")
        if fmt not in capped_by:
            raise click.UsageError(
                f"--markdown-max-chars caps {', '.join(capped_by) or 'no installed reporter'} "
                f"only, not {fmt}"
            )
        problem = markdown_cap_problem(max_chars)
        if problem is not None:
            raise click.UsageError(f"--markdown-max-chars {problem}")
    if output is not None and output.is_dir():
        raise click.UsageError(f"-o {output.as_posix()} is a directory, expected a file")
    report_path = _run_report_path(run_path)
    for read in (report_path, calibration_path):
        if output is not None and read is not None and same_file(output, read):
            raise click.UsageError(
                f"-o {output.as_posix()} is the file the report is read from; writing the "
                "rendering there would replace it (name another file)"
            )
    report = read_report(report_path)
    options: dict[str, Any] = {}
    if max_chars is not None:
        options["max_chars"] = max_chars
    if calibration_path is not None:
        options["calibration"] = read_report(calibration_path, what="calibration report")
    try:
        text = render(fmt, report, **options)
    except InputError as exc:  # a report this rendering cannot read: name the file
        raise InputError(exc.message, source=exc.source or report_path.as_posix()) from None
    if output is None:
        click.echo(text, nl=False)
        return
    write_file(output, text)


__all__ = [
    "github_annotations",
    "read_report",
    "renderer",
    "rendering_options",
    "report_command",
    "requested_renderings",
    "step_summary",
    "write_renderings",
]
