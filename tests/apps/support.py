"""Running ``ragleaklab`` on the apps of this directory, as CI would, and reading what it wrote."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def fastapi_service(**env: str) -> Iterator[str]:
    """The FastAPI service of ``rlk_app_fastapi.py`` on a loopback port, with *env* added to
    its environment (``RLK_APP_TOKEN``, ``RLK_APP_ACCESS``); yields its base URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "rlk_app_fastapi:app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"],
        env={**os.environ, "PYTHONPATH": str(APPS), **env},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/seen", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(proc.stderr.read().decode()) from None
                time.sleep(0.05)
        else:
            raise RuntimeError("the FastAPI service did not start")
        yield base
    finally:
        proc.terminate()
        proc.communicate(timeout=10)  # waits, and closes the pipe


def fastapi_seen(base: str) -> dict[str, Any]:
    """What the service's ``GET /seen`` reports."""
    with urllib.request.urlopen(f"{base}/seen", timeout=5) as reply:
        return json.loads(reply.read())
