"""The tests' one CLI runner (tests/support/cli.py): the environment it gives the command and
what it checks."""

from __future__ import annotations

import os
import sys

import pytest

from tests.support.cli import (
    EPOCH,
    PROGRESS_INTERVAL,
    STRIPPED,
    ExitsTheProcess,
    cli_env,
    console_script,
    rlk,
)


def test_the_environment_is_cleaned_and_pinned(monkeypatch):
    for name in (*STRIPPED, PROGRESS_INTERVAL):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "42")
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    monkeypatch.setenv("RLK_KEPT", "yes")
    env = cli_env()
    assert not set(STRIPPED) & set(env)
    assert {"GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "PYTHONWARNINGS", "COLUMNS"} <= set(STRIPPED)
    assert (env["SOURCE_DATE_EPOCH"], env["PYTHONHASHSEED"]) == (EPOCH, "0")
    assert env[PROGRESS_INTERVAL] == "0"  # no progress lines, however slow the machine
    assert env["RLK_KEPT"] == "yes"  # everything else is inherited
    assert cli_env(epoch="0", hashseed="7")["SOURCE_DATE_EPOCH"] == "0"


def test_paths_go_first_and_env_sets_or_removes_last(monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", "inherited")
    env = cli_env(pythonpath=[tmp_path, "b"])
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path), "b", "inherited"]
    env = cli_env({"GITHUB_ACTIONS": "true", "PYTHONPATH": None, "SOURCE_DATE_EPOCH": "1"})
    assert env["GITHUB_ACTIONS"] == "true" and env["SOURCE_DATE_EPOCH"] == "1"
    assert "PYTHONPATH" not in env


def test_an_unexpected_exit_code_fails_with_what_the_command_printed(tmp_path):
    done = rlk("label", "export", str(tmp_path), "-o", "x.jsonl", cwd=tmp_path, ok=(2,))
    assert "report.json: file not found" in done.stderr
    with pytest.raises(AssertionError, match=r"exit 2, expected one of \(0,\)\n(.|\n)*not found"):
        rlk("label", "export", str(tmp_path), "-o", "x.jsonl", cwd=tmp_path, ok=(0,))


def test_the_console_script_is_the_same_command(tmp_path):
    assert os.access(console_script(), os.X_OK)
    by_module = rlk("plugins", "--json", cwd=tmp_path, ok=(0,))
    by_script = rlk("plugins", "--json", cwd=tmp_path, ok=(0,), script=True)
    assert by_script.stdout == by_module.stdout and '"name": "reference"' in by_module.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("plugins", "--json"),  # stdout
        ("label", "export", "nowhere", "-o", "x.jsonl"),  # an input error: stderr, exit 2
        ("run", "--no-such-flag"),  # click's usage error
        ("report", "--help"),
    ],
)
def test_a_command_run_here_gives_what_a_subprocess_gives(tmp_path, args):
    here = rlk(*args, cwd=tmp_path)
    there = rlk(*args, cwd=tmp_path, own_process=True)
    assert (here.returncode, here.stdout, here.stderr) == (
        there.returncode,
        there.stdout,
        there.stderr,
    )
    assert here.stdout or here.stderr


def test_a_command_run_here_sees_the_cleaned_environment_and_gives_this_one_back(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "42")
    site = tmp_path / "site"
    site.mkdir()
    (site / "rlk_env_probe.py").write_text(
        "import os, sys\n"
        "def answer(query):\n"
        "    print(os.getcwd(), os.environ.get('GITHUB_ACTIONS'),"
        " os.environ['SOURCE_DATE_EPOCH'], file=sys.stderr)\n"
        "    return 'no'\n",
        "utf-8",
    )
    cwd, saved = os.getcwd(), sys.path[:]
    done = rlk(
        "run", "-p", "relevance-hijack", "--smoke", "--target", "python",
        "--target-option", "callable=rlk_env_probe:answer", "-o", "out",
        cwd=tmp_path, pythonpath=[site],
    )  # fmt: skip
    assert f"{tmp_path} None {EPOCH}" in done.stderr, done.stderr
    assert (tmp_path / "out" / "report.json").exists()
    # given back: this process's environment, working directory, path and modules
    assert (os.environ["GITHUB_ACTIONS"], os.environ["SOURCE_DATE_EPOCH"]) == ("true", "42")
    assert (os.getcwd(), sys.path) == (cwd, saved)
    assert "rlk_env_probe" not in sys.modules


def test_a_command_that_ends_the_process_is_refused_here_not_run(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "rlk_dies.py").write_text("import os\ndef answer(query):\n    os._exit(9)\n", "utf-8")
    args = ("run", "-p", "relevance-hijack", "--smoke", "--target", "python",
            "--target-option", "callable=rlk_dies:answer")  # fmt: skip
    with pytest.raises(ExitsTheProcess, match="own_process=True"):
        rlk(*args, "-o", "here", cwd=tmp_path, pythonpath=[site])
    killed = rlk(*args, "-o", "there", cwd=tmp_path, pythonpath=[site], own_process=True)
    assert killed.returncode == 9, killed.stderr
