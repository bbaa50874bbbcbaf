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
    """The shorthands ``run`` offers, as ``run`` itself decides them (against its own options)."""
    from ragleaklab_core.cli.commands import run
    from ragleaklab_core.cli.reports import option_names
    from ragleaklab_core.cli.shorthands import installed_plan

    return installed_plan(option_names(run, click.Context(run)))


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def plugins_command(as_json: bool) -> None:
    """List every installed plugin, its distribution, target, and whether it loads.

    A reporter whose shorthand cannot be a flag of ``run`` says why under it. A plugin with an
    attribute that looks like a misspelt member (``reads_answers`` for
    ``reads_answer``) is listed as failed, with the member meant and the fix.
    """
    from ragleaklab_core._discovery import REPORTERS, discover_plugins

    plan = _shorthand_plan()
    infos = [
        attrs.evolve(i, warnings=(*i.warnings, *plan.warnings_for(i.name)))
        if i.group == REPORTERS
        else i
        for i in discover_plugins()
    ]
    if as_json:
        click.echo(json.dumps([_row(i) for i in infos], indent=2))
        return
    if not infos:
        click.echo("no plugins installed")
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
