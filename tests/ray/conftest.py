"""The Ray executor against a real local Ray cluster, through the real CLI.

Ray is an optional extra (``ragleaklab[ray]``; ``tox -e ray``). When it is missing these tests
are skipped, except under ``RLK_RAY=1`` (set by the tox env), where a missing Ray is an error:
the env that exists to run them must never pass having run nothing.

One cluster serves the whole session: ``ray start --head`` in a subprocess, on loopback only
(``--node-ip-address 127.0.0.1``, and ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` so that Ray never
resolves the local address to another interface), two CPUs, no dashboard and no usage reports;
it is stopped at the end. This directory is on the workers' path, so the python targets the
tests use (``rlk_ray_targets.py``) import there as they do on the driver.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ray.support import HERE, ray_env

MISSING = importlib.util.find_spec("ray") is None
if MISSING and os.environ.get("RLK_RAY") == "1":
    raise ImportError(
        "RLK_RAY=1 but ray cannot be imported: install the 'ray' extra (tox -e ray does), or "
        "unset RLK_RAY to skip these tests"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not MISSING:
        return
    skip = pytest.mark.skip(reason="needs ray (pip install 'ragleaklab[ray]'; tox -e ray)")
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """The address of a local two-CPU Ray cluster, up for the whole session."""
    ray = shutil.which("ray", path=os.path.dirname(sys.executable)) or shutil.which("ray")
    assert ray is not None, "the ray command is not installed next to this Python"
    port = _free_port()
    # Ray's sockets live under --temp-dir, and a Unix socket path must stay short.
    temp = tempfile.mkdtemp(prefix="rlkray")
    log = Path(temp) / "start.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                ray,
                "start",
                "--head",
                "--block",
                f"--port={port}",
                "--num-cpus=2",
                "--node-ip-address=127.0.0.1",
                "--include-dashboard=false",
                "--disable-usage-stats",
                f"--temp-dir={temp}",
            ],
            env=ray_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 90
        while b"Ray runtime started" not in log.read_bytes():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start failed:\n{log.read_text(errors='replace')}")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGTERM)  # --block stops every process of the cluster
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(temp, ignore_errors=True)
