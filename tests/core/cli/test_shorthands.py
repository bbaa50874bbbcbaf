"""A reporter's shorthand can never break the command line (issue 39, class 5).

Before, ``shorthand = True`` on a reporter named ``acme-tap`` made every ``ragleaklab run``, even
``run --help``, die with a click traceback (exit 1, a failed gate to CI). Here careless reporters
declare every kind of shorthand: a name with a dash (which must work), an uppercase or spaced
name, a leading dash, a flag ``run`` already has, two reporters claiming one flag, a number, a
descriptor that raises. ``run --help`` and a run still work; each refused shorthand is said once,
on stderr and in ``ragleaklab plugins``; the reporter stays usable with ``--report``. A
hypothesis property drives any value at all through the real command.
"""

from __future__ import annotations

import importlib
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragleaklab_core.cli.shorthands import FLAG, plan_shorthands
from tests.support.cli import rlk as run_cli

REPORTERS = "ragleaklab.reporters"

SOURCE = """
from attrs import frozen


class _Base:
    description = "a line per pack"

    def render(self, report, /, **options):
        return "".join(f"{p.name} {p.verdict}\\n" for p in report.packs)


@frozen
class Tap(_Base):
    shorthand = True  # the issue's instance: a name with a dash


@frozen
class Named(_Base):
    shorthand = "acme-lines"  # a flag name of its own


@frozen
class Upper(_Base):
    shorthand = True


@frozen
class Spaced(_Base):
    shorthand = True


@frozen
class Dashed(_Base):
    shorthand = "--dashed"


@frozen
class Out(_Base):
    shorthand = "out"


@frozen
class Help(_Base):
    shorthand = "help"


@frozen
class One(_Base):
    shorthand = "twin"


@frozen
class Two(_Base):
    shorthand = "twin"


@frozen
class Number(_Base):
    shorthand = 1


class _Raises:
    def __get__(self, obj, owner=None):
        raise RuntimeError("boom")


@frozen
class Raising(_Base):
    shorthand = _Raises()
"""

ENTRY_POINTS = {
    "acme-tap": "rlk_short:Tap",
    "acme-named": "rlk_short:Named",
    "Acme-Upper": "rlk_short:Upper",
    "acme spaced": "rlk_short:Spaced",
    "acme-dashed": "rlk_short:Dashed",
    "acme-out": "rlk_short:Out",
    "acme-help": "rlk_short:Help",
    "acme-one": "rlk_short:One",
    "acme-two": "rlk_short:Two",
    "acme-number": "rlk_short:Number",
    "acme-raising": "rlk_short:Raising",
}
#: reporter -> the telling part of why it gets no shorthand.
REFUSED = {
    "Acme-Upper": "its name 'Acme-Upper' cannot be a flag",
    "acme spaced": "its name 'acme spaced' cannot be a flag",
    "acme-dashed": "its shorthand '--dashed' cannot be a flag",
    "acme-out": "--out is already an option of `ragleaklab run`",
    "acme-help": "--help is already an option of `ragleaklab run`",
    "acme-one": "--twin is claimed by 'acme-one' and 'acme-two'",
    "acme-two": "--twin is claimed by 'acme-one' and 'acme-two'",
    "acme-number": "shorthand must be True or a flag name, got 1 (int)",
    "acme-raising": "shorthand must be True or a flag name, got <reading it raised RuntimeError>",
}


@pytest.fixture
def site(rlk_fake_dist) -> Path:
    return rlk_fake_dist(
        "acme-shorthands",
        entry_points={REPORTERS: ENTRY_POINTS},
        modules={"rlk_short.py": SOURCE},
    )


def rlk(site: Path, *args: str, cwd: Path, ok=None):
    return run_cli(*args, cwd=cwd, pythonpath=[site], ok=ok)


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: reporter ")]


def test_run_help_works_and_says_each_refused_shorthand_once(site, tmp_path):
    done = rlk(site, "run", "--help", cwd=tmp_path, ok=(0,))
    assert "Traceback" not in done.stderr
    assert "--acme-tap FILE" in done.stdout and "--report acme-tap=FILE" in done.stdout
    assert "--acme-lines FILE" in done.stdout
    assert "--twin" not in done.stdout and "--dashed" not in done.stdout
    for reporter in REFUSED:  # no option says it writes a refused reporter
        assert f"--report {reporter}=FILE)" not in done.stdout
    warnings = _warnings(done.stderr)
    assert len(warnings) == len(REFUSED), done.stderr  # one line each, none twice
    for reporter, why in REFUSED.items():
        [line] = [w for w in warnings if w.startswith(f"warning: reporter {reporter!r} ")]
        assert why in line, line
        assert line.endswith(f"use --report {reporter!r}=FILE"), line
    # Every other command is untouched: the shorthands are read by run alone.
    other = rlk(site, "report", "--help", cwd=tmp_path, ok=(0,))
    assert other.stderr == ""


def test_a_shorthand_with_a_dash_writes_what_report_writes(site, tmp_path):
    done = rlk(
        site, "run", "-p", "relevance-hijack", "--smoke", "-o", "out",
        "--acme-tap", "short.txt", "--acme-lines", "lines.txt",
        "--report", "acme-out=long.txt", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    written = (tmp_path / "short.txt").read_text(encoding="utf-8")
    assert written.startswith("relevance-hijack ")
    assert (tmp_path / "lines.txt").read_text(encoding="utf-8") == written
    assert (tmp_path / "long.txt").read_text(encoding="utf-8") == written  # refused: still usable
    assert len(_warnings(done.stderr)) == len(REFUSED)


def test_a_refused_shorthand_is_no_flag_of_run(site, tmp_path):
    done = rlk(site, "run", "--smoke", "-o", "out", "--twin", "t.txt", cwd=tmp_path)
    assert done.returncode == 2
    assert "No such option '--twin'" in done.stderr
    assert not (tmp_path / "out").exists()


def test_the_listing_says_why_under_each_reporter_and_exits_0(site, tmp_path):
    done = rlk(site, "plugins", "--json", cwd=tmp_path, ok=(0,))
    rows = {r["name"]: r for r in json.loads(done.stdout) if r["group"] == REPORTERS}
    for reporter, why in REFUSED.items():
        assert rows[reporter]["status"] == "ok", rows[reporter]
        [note] = rows[reporter]["warnings"]
        assert why in note
    assert rows["acme-tap"]["warnings"] == [] and rows["junit"]["warnings"] == []
    table = rlk(site, "plugins", cwd=tmp_path, ok=(0,))
    assert (
        f"    warning: reporter 'acme-number' gets no `run` shorthand: {REFUSED['acme-number']}"
        in (table.stdout)
    )
    assert table.stderr == ""  # said in the listing, not again as a warning line


# -- any value, any name -------------------------------------------------------------------------


class _BadRepr:
    """A value no message can quote by its repr, compare or test for truth."""

    def __repr__(self):
        raise ValueError("no repr")

    def __eq__(self, other):
        raise ValueError("no eq")

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self):
        raise ValueError("no bool")


def test_a_value_that_cannot_even_be_shown_is_refused_by_its_type():
    plan = plan_shorthands([("acme-bad", _BadRepr(), _BadRepr())], {"--out"})
    assert plan.offered == ()
    [refusal] = plan.refused
    assert refusal.why == "shorthand must be True or a flag name, got <_BadRepr> (_BadRepr)"


class _RaisingDescriptor:
    def __get__(self, obj, owner=None):
        raise KeyError("shorthand")


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(),
    st.text(alphabet="abcdefgh-_ ABC0123", max_size=12),
    st.sampled_from(["out", "o", "help", "h", "report", "junit", "--x", "-x", "x--y", "a" * 41]),
    st.binary(),
    st.lists(st.text(max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.just(math.inf),
    st.just(_RaisingDescriptor()),
    st.just(object),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tap=VALUES, named=VALUES, description=VALUES)
def test_no_shorthand_value_breaks_run_help(site, tap, named, description):
    """Through the real command, in process: the installed reporters' classes given any
    shorthand (and description); ``run --help`` exits 0 and says each refusal once."""
    from ragleaklab_core.cli.commands import cli

    module = importlib.import_module("rlk_short")
    for cls, value in ((module.Tap, tap), (module.Named, named)):
        type.__setattr__(cls, "shorthand", value)
        type.__setattr__(cls, "description", description)
    result = CliRunner().invoke(cli, ["run", "--help"])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    refused = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(refused) == len(set(refused))  # each said once
    assert all("\n" not in line for line in refused)


NAMES = st.one_of(
    st.text(max_size=20), st.from_regex(FLAG, fullmatch=True).filter(lambda s: len(s) < 30)
)


@given(st.lists(st.tuples(NAMES, VALUES, VALUES), max_size=5, unique_by=lambda d: d[0]))
def test_the_plan_offers_only_flags_click_can_parse_and_says_why_for_the_rest(declared):
    import click

    taken = {"--out", "-o", "--help", "-h", "--report"}
    plan = plan_shorthands(declared, taken)
    flags = [s.flag for s in plan.offered]
    assert len(flags) == len(set(flags))
    assert not {f"--{f}" for f in flags} & taken
    assert all(FLAG.fullmatch(f) for f in flags)
    # Every reporter that asked for one is offered one or told why not, never both.
    offered = {s.reporter for s in plan.offered}
    refused = {r.reporter for r in plan.refused}
    assert not offered & refused
    # What is offered makes a command click can build and show.
    command = click.Command(
        "run",
        params=[
            click.Option(["--out", "-o"]),
            click.Option(["--report"]),
            *(click.Option([f"--{s.flag}", s.keyword], help=s.description) for s in plan.offered),
        ],
    )
    result = CliRunner().invoke(command, ["--help"])
    assert result.exit_code == 0, result.output
    for shorthand in plan.offered:
        assert f"--{shorthand.flag}" in result.output
    for refusal in plan.refused:
        assert "\n" not in refusal.message()
