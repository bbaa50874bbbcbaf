"""``ragleaklab diff BASE_REPORT NEW_REPORT``: did the new run regress from the base run?

Registered on the main command group by :mod:`ragleaklab_core.cli.commands`. Exit codes
(:func:`ragleaklab_core.gate.diff_verdict`): 0 every compared value measured in both runs and
none regressed, 1 some value regressed, 3 not tested (the new run did not measure or test what
the base did, the base did not test a pack, or nothing was compared), 2 bad input (a missing,
malformed or self-contradicting report, named with the ``$.path`` of the problem, or runs that
measured differently without ``--force``). A changed target is named and compared.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ragleaklab_core.cli._errors import handle_errors


def read_report(path: Path) -> Any:
    """The parsed ``report.json`` at *path*, checked for what a diff reads."""
    from ragleaklab_core.gate.comparison import read_comparable

    return read_comparable(path)


@click.command("diff")
@click.argument("base_report", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("new_report", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--level",
    type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="One-sided significance level of the regression test; the interval is at 1 - 2*LEVEL.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Compare runs of different pack versions, metric options, thresholds, epochs, reducers "
    "or case selections (a changed target needs no --force: it is named and compared).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def diff_command(
    base_report: Path, new_report: Path, level: float, force: bool, as_json: bool
) -> None:
    """Compare NEW_REPORT with BASE_REPORT (two report.json files), per pack and gated value.

    Shows the failing rate in both runs, its change with an exact confidence interval, the exact
    one-sided p-value that the new rate is higher (Barnard's test), and the cases that newly fail
    or stopped failing. A value regressed when that p-value is at most LEVEL. A changed target is
    named and compared. Exit code: 0 nothing regressed, 1 something regressed, 3 not tested (the
    new run lacks or did not test a pack or value the base measured, the base did not test a
    pack, or nothing was compared), 2 a report is missing, malformed or contradicts itself, or
    the runs measured differently (without --force).
    """
    from ragleaklab_core.gate import Verdict, diff_verdict
    from ragleaklab_core.gate.comparison import compare
    from ragleaklab_core.reporting.diff import render

    result = compare(read_report(base_report), read_report(new_report), level=level, force=force)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, allow_nan=False))
    else:
        click.echo(render(result), nl=False)
    verdict = diff_verdict(result)
    if verdict is Verdict.ERROR:
        # What either run did not test cannot be said not to have regressed.
        click.echo(
            "error: not tested: " + "; ".join(result.untested) + ", so no regression can be "
            "ruled out there",
            err=True,
        )
    sys.exit(verdict.exit_code)


__all__ = ["diff_command", "read_report"]
