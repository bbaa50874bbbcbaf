"""The pack author's commands: ``ragleaklab new-pack`` and ``ragleaklab pack validate``.

They are registered on the main command group by :mod:`ragleaklab_core.cli`. This module does
not import that one (which imports this one), so it renders ragleaklab's errors itself, exactly
as the main group does: the message on stderr after ``error:``, the error's exit code (2 bad
input, 3 a plugin could not be used).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ragleaklab_core.cli._errors import describe, handle_errors
from ragleaklab_core.errors import RagleaklabError
from ragleaklab_core.packs.manifest import MANIFEST

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
    for line in next_steps(name, target):
        click.echo(f"  {line}")
    click.echo(NEXT_NOTE)
    if name in available_names(PACKS):
        click.echo(
            f"warning: a pack named {name!r} is already installed; installing "
            f"{names.distribution} as well makes the name ambiguous until one is uninstalled",
            err=True,
        )


def next_steps(name: str, target: Path) -> list[str]:
    """The commands new-pack suggests, each one to paste as printed, in this order.

    They use the default target (the reference target with no option), which the starter's
    labels describe: so ``calibrate`` fits a threshold with no option, as created. The install
    is editable, with the pack's ``test`` extra: the author edits the pack's files in place,
    and the last line has its pytest.
    """
    shown = target.as_posix()
    where = shown if target.is_absolute() else f"./{shown}"
    return [
        f"pip install -e {shlex.quote(where + '[test]')}",
        f"ragleaklab pack validate {name}",
        f"ragleaklab run --pack {name} -o out/run",
        f"ragleaklab calibrate --pack {name} -o out/calibration",
        f"pytest {shlex.quote(shown + '/tests')}",
    ]


#: Said after the commands: the run's exit 1 is the starter working, not failing.
NEXT_NOTE = (
    "note: run exits 1 (FAIL): the reference target obeys the starter's planted instructions; "
    "calibrate fits the threshold on the labels, which record what it did"
)


@click.group("pack")
def pack_group() -> None:
    """Work with packs: check one before you publish or run it."""


@pack_group.command("validate")
@click.argument("packs", nargs=-1, required=True, metavar="PACK...")
@click.option(
    "--files",
    "as_files",
    is_flag=True,
    help="Each PACK is a file (what a pre-commit hook is given): check, once, the pack of each, "
    "the nearest directory above it holding pack.toml. A file in no pack's directory is "
    "named and passed over.",
)
@handle_errors
def validate_command(packs: tuple[str, ...], as_files: bool) -> None:
    """Check each PACK without running it and list every problem.

    PACK is a directory holding pack.toml (or the pack.toml itself), or the name of an installed
    pack; several are checked one after the other, each once. Checked: the manifest schema,
    unique ids, that every referenced document and claim exists, that labels match the cases
    one to one with both classes present, that no path leaves the pack's directory (symlinks
    included), sizes within limits and one JSON object per line. Each problem is printed as
    FILE:LINE: $.path: message, then a summary. Nothing in the pack's data is executed. Exit
    code: 0 valid, 2 invalid, 3 the named pack cannot be loaded (2 wins over 3 when several
    packs end differently).
    """
    if as_files:
        subjects, outside = _packs_of_files(packs)
        for file in outside:
            click.echo(f"not in a pack: {file} (no {MANIFEST} in its directory or above)")
        if not subjects:
            click.echo("no pack to check: no file given is in a pack")
            return
    else:
        subjects = _dedupe([_pack_of_argument(pack) for pack in packs])
    if len(subjects) == 1 and not as_files:
        code = _validate(subjects[0], named=False)  # raises as every command does
    else:
        code = _validate_each(subjects)
    if code:
        sys.exit(code)


#: What ``pack validate`` checks: a pack directory, or the name of an installed pack.
_Subject = Path | str


def _pack_of_argument(pack: str) -> _Subject:
    path = Path(pack)
    if path.is_dir():
        return path
    if path.name == MANIFEST and path.is_file():
        return path.parent
    if "/" in pack or "\\" in pack or pack.startswith(".") or path.exists():
        raise click.UsageError(f"{pack} is not a directory holding {MANIFEST}")
    return pack


def _packs_of_files(files: tuple[str, ...]) -> tuple[list[_Subject], list[str]]:
    """The pack directories holding *files* (each once, in order), and the files in none."""
    found: list[_Subject] = []
    outside = []
    for file in files:
        directory = next((d for d in Path(file).parents if (d / MANIFEST).is_file()), None)
        if directory is None:
            outside.append(file)
        else:
            found.append(directory)
    return _dedupe(found), outside


def _dedupe(subjects: list[_Subject]) -> list[_Subject]:
    """Each pack once: two paths to one directory are one pack."""
    seen: set[object] = set()
    kept = []
    for subject in subjects:
        key = subject.resolve() if isinstance(subject, Path) else subject
        if key not in seen:
            seen.add(key)
            kept.append(subject)
    return kept


def _validate(subject: _Subject, *, named: bool) -> int:
    """Print *subject*'s problems and summary (the verdict line prefixed with the pack when
    *named*); its exit code."""
    from ragleaklab_core.packs.validation import validate_directory, validate_installed

    if isinstance(subject, Path):
        report = validate_directory(subject)
    else:
        report = validate_installed(subject)
    for problem in report.problems:
        click.echo(str(problem))
    *warnings, verdict = report.summary().split("\n")
    for line in warnings:
        click.echo(line)
    click.echo(f"{report.pack}: {verdict}" if named else verdict)
    return 0 if report.valid else 2


def _validate_each(subjects: list[_Subject]) -> int:
    """Check every pack, whatever the ones before it gave, then say how they ended."""
    codes = []
    for subject in subjects:
        try:
            codes.append(_validate(subject, named=True))
        except RagleaklabError as exc:
            click.echo(f"error: {describe(exc)}", err=True)
            codes.append(exc.exit_code)
    counts = [f"{codes.count(0)} valid", f"{codes.count(2)} invalid"]
    if 3 in codes:
        counts.append(f"{codes.count(3)} could not be loaded")
    if len(subjects) > 1:
        click.echo(f"{len(subjects)} packs: {', '.join(counts)}")
    return 2 if 2 in codes else max(codes)


__all__ = ["new_pack_command", "next_steps", "pack_group", "validate_command"]
