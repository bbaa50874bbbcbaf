"""What the Ray tests share: the environment of every subprocess they start."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import cli_env

HERE = Path(__file__).resolve().parent

#: What every Ray process of the tests runs with: loopback only, no token set-up, no usage
#: reports.
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
}


#: SOURCE_DATE_EPOCH of every run here (2026-01-01T00:00:00Z).
EPOCH = "1767225600"


def ray_env(**extra: str) -> dict[str, str]:
    """The environment of a ragleaklab or ray subprocess in these tests: the CLI's
    (:func:`tests.support.cli.cli_env`) with Ray's settings, and this directory importable."""
    return cli_env({**RAY_ENV, **extra}, epoch=EPOCH, pythonpath=[HERE])
