"""The pack author's commands: ``ragleaklab new-pack`` and ``ragleaklab pack validate``.

They are registered on the main command group by :mod:`ragleaklab_core.cli`. This module does
not import that one (which imports this one), so it renders ragleaklab's errors itself, exactly
as the main group does: the message on stderr after ``error:``, the error's exit code (2 bad
input, 3 a plugin could not be used).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ragleaklab_core.cli._errors import handle_errors

F = TypeVar("F", bound=Callable[..., Any])


@click.command("new-pack")
@click.argument("name")
@click.option(
    "-d",
    "--dir",
    "directory",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    show_default=True,
    help="Where to write the ragleaklab-NAME directory (created if missing).",
)
@handle_errors
def new_pack_command(name: str, directory: Path) -> None:
    """Write ragleaklab-NAME, a complete pip-installable distribution of a new pack NAME.

    NAME is lowercase letters, digits and hyphens, starting with a letter. The distribution
    holds a working starter pack (documents, cases and labels that hold on the reference
    target), its entry point, a README and tests that use ragleaklab's testing kit. An
    existing directory is never overwritten (exit 2).
    """
    from ragleaklab_core._discovery import PACKS, available_names
    from ragleaklab_core.packs.scaffold import PackNames, new_pack

    names = PackNames.of(name)
    target, files = new_pack(name, directory)
    shown = target.as_posix()
    click.echo(f"wrote {shown}/ ({len(files)} files):")
    for rel in files:
        click.echo(f"  {shown}/{rel}")
    click.echo("next:")
    click.echo(f"  pip install ./{shown}" if not target.is_absolute() else f"  pip install {shown}")
    click.echo(f"  ragleaklab pack validate {name}")
    click.echo(f"  ragleaklab run --pack {name}")
    click.echo(f"  pytest {shown}/tests")
    if name in available_names(PACKS):
        click.echo(
            f"warning: a pack named {name!r} is already installed; installing "
            f"{names.distribution} as well makes the name ambiguous until one is uninstalled",
            err=True,
        )


@click.group("pack")
def pack_group() -> None:
    """Work with packs: check one before you publish or run it."""


@pack_group.command("validate")
@click.argument("pack")
@handle_errors
def validate_command(pack: str) -> None:
    """Check PACK without running it and list every problem.

    PACK is a directory holding pack.toml (or the pack.toml itself), or the name of an installed
    pack. Checked: the manifest schema, unique ids, that every referenced document and claim
    exists, that labels match the cases one to one with both classes present, that no path
    leaves the pack's directory (symlinks included), sizes within limits and one JSON object
    per line. Each problem is printed as FILE:LINE: $.path: message, then a summary. Nothing in
    the pack's data is executed. Exit code: 0 valid, 2 invalid, 3 the named pack cannot be
    loaded.
    """
    from ragleaklab_core.packs.manifest import MANIFEST
    from ragleaklab_core.packs.validation import validate_directory, validate_installed

    path = Path(pack)
    if path.is_dir():
        report = validate_directory(path)
    elif path.name == MANIFEST and path.is_file():
        report = validate_directory(path.parent)
    elif "/" in pack or "\\" in pack or pack.startswith(".") or path.exists():
        raise click.UsageError(f"{pack} is not a directory holding {MANIFEST}")
    else:
        report = validate_installed(pack)
    for problem in report.problems:
        click.echo(str(problem))
    click.echo(report.summary())
    if not report.valid:
        sys.exit(2)


__all__ = ["new_pack_command", "pack_group", "validate_command"]
