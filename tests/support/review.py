"""A ``ragleaklab label review`` server in a real subprocess, for the review tests: started on a
free loopback port, its URL and token read from what it prints, killed (SIGKILL: no goodbye,
as a crash or a closed laptop would) when the test is done or wants it gone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import frozen

from tests.support.cli import cli_env

#: Seconds a server may take to print its URL (it loads the run and its packs first).
START_TIMEOUT = 60.0
_URL = re.compile(r"^open (http://127\.0\.0\.1:(\d+)/#token=(\S+))$")


@frozen
class Served:
    url: str
    port: int
    token: str
    process: subprocess.Popen[str]

    def call(
        self, path: str, body: Any = None, *, token: str | None = None, host: str | None = None
    ) -> tuple[int, Any]:
        """(status, JSON body) of an API call, with the server's token unless *token* is given."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data)
        request.add_header("X-Review-Token", self.token if token is None else token)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if host is not None:
            request.add_header("Host", host)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)


@contextmanager
def review_server(run_dir: Path, reviewer: str, *extra: str) -> Iterator[Served]:
    """``ragleaklab label review RUN_DIR --reviewer NAME`` until the block ends."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ragleaklab_core",
            "label",
            "review",
            str(run_dir),
            "--reviewer",
            reviewer,
            *extra,
        ],
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        printed = []
        for line in process.stdout:
            printed.append(line)
            found = _URL.match(line.strip())
            if found:
                yield Served(found.group(1), int(found.group(2)), found.group(3), process)
                break
        else:
            _, err = process.communicate(timeout=START_TIMEOUT)
            raise AssertionError(f"the server printed no URL: {''.join(printed)}{err}")
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
