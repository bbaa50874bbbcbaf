"""``ragleaklab plugins``: every installed plugin, whether it loads, and why not.

Registered on the main command group by :mod:`ragleaklab_core.cli.commands`. Exit code 0: a
plugin that fails to load is listed as failed, not an error of the listing.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import click

from ragleaklab_core.cli._errors import handle_errors


def _row(info: Any) -> dict[str, Any]:
    row: dict[str, Any] = attrs.asdict(info)
    # Each misspelling also as the sentence the table prints, so a script need not rebuild it.
    row["notes"] = info.notes()
    return row


def _shorthand_plan() -> Any:
    """The shorthands ``run`` offers, as ``run`` itself decides them (against its own options,
    read from the command group this command is part of)."""
    from ragleaklab_core.cli.reports import option_names
    from ragleaklab_core.cli.shorthands import installed_plan

    root = click.get_current_context().find_root()
    group = root.command
    run = group.get_command(root, "run") if isinstance(group, click.Group) else None
    taken = option_names(run, click.Context(run)) if run is not None else {"--help", "-h"}
    return installed_plan(taken)


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def plugins_command(as_json: bool) -> None:
    """List every installed plugin, its distribution, target, and whether it loads.

    An entry point under a ``ragleaklab...`` group that ragleaklab does not read
    (``ragleaklab.reporter``) is named at the end, with the group it was probably meant for.
    A reporter whose shorthand cannot be a flag of ``run`` says why under it. A plugin with an
    attribute that looks like a misspelt member (``reads_answers`` for
    ``reads_answer``) is listed as failed, with the member meant and the fix.
    """
    from ragleaklab_core._discovery import REPORTERS, discover_plugins, stray_entry_points

    plan = _shorthand_plan()
    infos = [
        attrs.evolve(i, warnings=(*i.warnings, *plan.warnings_for(i.name)))
        if i.group == REPORTERS
        else i
        for i in discover_plugins()
    ]
    stray = stray_entry_points()
    if as_json:
        rows = [_row(i) for i in infos] + [_stray_row(s) for s in stray]
        click.echo(json.dumps(rows, indent=2))
        return
    if not infos and not stray:
        click.echo("no plugins installed")
        return
    _table(infos)
    if stray:
        click.echo("")
        click.echo("warning: entry points under groups ragleaklab does not read (used by nothing):")
        for entry in stray:
            click.echo(f"    {entry.message()} ({entry.target})")


def _stray_row(entry: Any) -> dict[str, Any]:
    """An entry point under a group that is no group, as a row of ``--json`` (status
    ``ignored``: nothing reads it)."""
    return {
        "group": entry.group,
        "name": entry.name,
        "target": entry.target,
        "distribution": entry.distribution,
        "version": entry.version,
        "status": "ignored",
        "error": entry.message(),
        "misspelt": [],
        "warnings": [],
        "notes": [],
        "meant_group": entry.meant,
    }


def _table(infos: list[Any]) -> None:
    if not infos:
        return
    headers = ("GROUP", "NAME", "STATUS", "PROVIDER", "TARGET")
    rows = [(i.group, i.name, i.status, f"{i.distribution} {i.version}", i.target) for i in infos]
    widths = [max(len(r[c]) for r in [headers, *rows]) for c in range(len(headers))]
    for row, info in zip([headers, *rows], [None, *infos], strict=True):
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if info is None:
            continue
        for line in (info.error or "").splitlines():
            click.echo(f"    {line}")
        for note in info.notes():
            click.echo(f"    warning: {note}")
