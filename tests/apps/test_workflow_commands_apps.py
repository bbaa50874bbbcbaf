"""A LangChain app whose answers and ingest error carry GitHub Actions workflow commands (issue:
no silent PASS, output integrity): on a GitHub runner, no line ragleaklab prints from them can
start one, so a planted ``::set-output`` or ``::add-mask::`` never reaches the runner."""

from __future__ import annotations

import pytest

from tests.apps.support import APPS, write_config
from tests.support.cli import rlk as run_cli

pytestmark = pytest.mark.filterwarnings(
    "ignore:`langchain-community` is being sunset:DeprecationWarning"
)

APP = "rlk_app_langchain"
SENTINEL = "sentinel-takeover-safe"
OWN = ("::error ", "::warning ", "::notice ", "::group::", "::endgroup::")


def on_a_runner(tmp_path, config, *more):  # type: ignore[no-untyped-def]
    return run_cli(
        "-v", "run", "-c", str(config), "-p", SENTINEL, "--smoke", "-o", "o", *more,
        cwd=tmp_path,
        env={"PYTHONPATH": str(APPS), "GITHUB_ACTIONS": "true"},
    )  # fmt: skip


def forged_lines(text: str) -> list[str]:
    """Lines a runner would read as a workflow command that ragleaklab did not write itself."""
    lines = [line.lstrip() for line in text.splitlines()]
    return [line for line in lines if line.startswith(("::", "##[")) and not line.startswith(OWN)]


@pytest.mark.parametrize(
    ("options", "exit_code"),
    [
        ({"callable": f"{APP}:build_hostile_chain", "factory": True, "input_key": "$"}, (0, 1)),
        (
            {
                "callable": f"{APP}:build_bm25",
                "factory": True,
                "ingest_callable": f"{APP}:hostile_receive",
            },
            (3,),
        ),
    ],
    ids=["answers", "ingest-error"],
)
def test_no_printed_line_starts_a_workflow_command_the_app_wrote(tmp_path, options, exit_code):
    config = write_config(tmp_path / "c.toml", **options)
    out = on_a_runner(tmp_path, config)
    assert out.returncode in exit_code, out.stdout + out.stderr
    assert forged_lines(out.stdout) == [] and forged_lines(out.stderr) == []
    if out.returncode == 3:  # the ingest error is printed as the reason: shown, defused
        assert "set-output name=verdict::pass" in out.stdout + out.stderr
    # ragleaklab's own annotations are still there, one line each.
    own = [line for line in out.stdout.splitlines() if line.startswith(OWN)]
    assert own or out.returncode == 0
    assert all("::set-output" not in line.split("::", 2)[-1].split("%0A")[0] for line in own)
