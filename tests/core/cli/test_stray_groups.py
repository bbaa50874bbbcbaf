"""A distribution registering under a ``ragleaklab...`` group that does not exist is named
(issue 39, class 5).

Before, a reporter registered under ``ragleaklab.reporter`` (singular) vanished without a word:
``run --report acme-tap=FILE`` said only that no reporter had that name. A careless author's
distribution registers one plugin under each misspelling of each group (singular, case,
underscores, a group that was never one) beside the groups ragleaklab does read
(``ragleaklab.matchers``) and another tool's (``inspect_ai``): ``ragleaklab plugins`` names
each stray entry point with the group meant, and each "no plugin named" error says where the
name is registered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragleaklab_core._discovery import READ_GROUPS, stray_entry_points
from tests.support.cli import rlk as run_cli

SOURCE = """
from attrs import frozen


@frozen
class Anything:
    def render(self, report, /, **options):
        return ""
"""

#: group -> (entry-point name, the group it meant, or None).
STRAY = {
    "ragleaklab.reporter": ("acme-tap", "ragleaklab.reporters"),
    "ragleaklab.judge": ("acme-judge", "ragleaklab.judges"),
    "ragleaklab.metric": ("acme-metric", "ragleaklab.metrics"),
    "ragleaklab.pack": ("acme-pack", "ragleaklab.packs"),
    "ragleaklab.target": ("acme-target", "ragleaklab.targets"),
    "ragleaklab.fitter": ("acme-fitter", "ragleaklab.fitters"),
    "ragleaklab.matcher": ("acme-matcher", "ragleaklab.matchers"),
    "Ragleaklab.Reporters": ("acme-upper", "ragleaklab.reporters"),
    "ragleaklab_reporters": ("acme-underscore", "ragleaklab.reporters"),
    "ragleaklab.judgez": ("acme-z", "ragleaklab.judges"),
    "ragleaklab.xyzzy": ("acme-xyzzy", None),
}


@pytest.fixture
def site(rlk_fake_dist) -> Path:
    return rlk_fake_dist(
        "acme-x",
        entry_points={
            **{group: {name: "rlk_stray:Anything"} for group, (name, _) in STRAY.items()},
            # Groups that are real: never reported.
            "ragleaklab.matchers": {"acme-real-matcher": "rlk_stray:Anything"},
            "inspect_ai": {"acme": "rlk_stray:Anything"},
        },
        modules={"rlk_stray.py": SOURCE},
        any_group=True,
    )


def rlk(site: Path, *args: str, cwd: Path):
    return run_cli(*args, cwd=cwd, pythonpath=[site])


def _message(group: str) -> str:
    name, meant = STRAY[group]
    hint = f"did you mean {meant!r}?" if meant else f"the groups are {', '.join(READ_GROUPS)}"
    return f"{name!r} is registered by acme-x 1.0 under {group!r}, which is not a group: {hint}"


def test_the_stray_entry_points_are_found_and_the_real_groups_are_not(site):
    found = {(s.group, s.name): s.meant for s in stray_entry_points()}
    assert found == {(g, name): meant for g, (name, meant) in STRAY.items()}


def test_the_listing_names_each_with_the_group_meant_and_exits_0(site, tmp_path):
    table = rlk(site, "plugins", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    section = table.stdout.split("warning: entry points under groups ragleaklab does not read", 1)
    assert len(section) == 2, table.stdout
    for group in STRAY:
        assert f"    {_message(group)} (rlk_stray:Anything)" in section[1]
    assert "acme-real-matcher" not in table.stdout and "inspect_ai" not in table.stdout
    rows = json.loads(rlk(site, "plugins", "--json", cwd=tmp_path).stdout)
    ignored = {r["group"]: r for r in rows if r["status"] == "ignored"}
    assert set(ignored) == set(STRAY)
    for group, (name, meant) in STRAY.items():
        assert (ignored[group]["name"], ignored[group]["meant_group"]) == (name, meant)
        assert ignored[group]["error"] == _message(group)


@pytest.mark.parametrize(
    ("args", "group", "code"),
    [
        (("run", "--smoke", "-o", "out", "--report", "acme-tap=t.txt"), "ragleaklab.reporter", 2),
        (
            ("run", "--smoke", "-o", "out", "--report", "acme-upper=t.txt"),
            "Ragleaklab.Reporters",
            2,
        ),
        (("run", "-p", "acme-pack", "-o", "out"), "ragleaklab.pack", 3),
        (("run", "--smoke", "--target", "acme-target", "-o", "out"), "ragleaklab.target", 3),
        (("label", "judge", "out", "--judge", "acme-judge"), "ragleaklab.judge", 3),
    ],
)
def test_the_no_plugin_named_error_says_where_the_name_is_registered(
    site, tmp_path, args, group, code
):
    done = rlk(site, *args, cwd=tmp_path)
    assert done.returncode == code, done.stdout + done.stderr
    assert _message(group) in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "t.txt").exists()


def test_a_misspelt_fitter_group_is_named_by_calibrate(site, tmp_path):
    examples = Path(__file__).resolve().parents[3] / "data" / "examples"
    done = rlk(
        site, "calibrate", "--scores", str(examples / "scores.jsonl"),
        "--labels", str(examples / "labels.jsonl"), "--fitter", "acme-fitter",
        "--target-fpr", "0.05", "--out", "cal", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert "no plugin named 'acme-fitter' in ragleaklab.fitters" in done.stderr
    assert _message("ragleaklab.fitter") in done.stderr
    assert not (tmp_path / "cal").exists()


def test_every_group_ragleaklab_reads_is_in_the_one_list():
    """The built-in metrics' matcher group is read outside the core: it must be in READ_GROUPS,
    or a matcher registered right would be reported as stray."""
    from ragleaklab_plugins.metrics._matching import MATCHERS

    assert MATCHERS in READ_GROUPS
