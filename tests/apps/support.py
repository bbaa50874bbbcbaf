"""Running ``ragleaklab`` on the apps of this directory, as CI would, and reading what it wrote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.cli import rlk as run_cli

APPS = Path(__file__).resolve().parent


def write_config(path: Path, **options: Any) -> Path:
    """A config file with a ``python`` target and *options* (strings, numbers, booleans)."""
    lines = ["[target]", 'name = "python"', "", "[target.options]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in options.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def rlk(*args: str, cwd: Path, pythonpath: bool = True) -> subprocess.CompletedProcess[str]:
    """``ragleaklab ARGS`` in a subprocess, as CI runs it; the app modules importable."""
    return run_cli(*args, cwd=cwd, env={"PYTHONPATH": str(APPS) if pythonpath else None})


def report(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "report.json").read_text())


def runs(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "runs.jsonl").read_text().splitlines()]


def retrieved_ids(record: dict[str, Any]) -> list[str]:
    return [r["doc_id"] for r in record["retrieved"]]


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
