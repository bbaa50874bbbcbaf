"""What the Ray tests share: the environment of every subprocess they start."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: What every Ray process of the tests runs with: loopback only, no token set-up, no usage
#: reports.
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
}


def ray_env(**extra: str) -> dict[str, str]:
    """The environment of a ragleaklab or ray subprocess in these tests."""
    env = {**os.environ, **RAY_ENV, "SOURCE_DATE_EPOCH": "1767225600", **extra}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    env.pop("RAGLEAKLAB_PROGRESS_INTERVAL", None)
    return env
