"""The one way the tests run the ``ragleaklab`` command: ``python -m ragleaklab_core`` (or, with
``script=True``, the installed ``ragleaklab`` console script) in a real subprocess, with one
environment clean-up and one timeout policy.

The environment is the test process's own, minus what would make the command behave unlike a
plain local run, plus what makes its outputs reproducible:

- removed: :data:`STRIPPED`: ``PYTHONWARNINGS`` (a developer's warning filters would turn the
  child's harmless warnings into errors), ``GITHUB_ACTIONS``, ``GITHUB_STEP_SUMMARY`` and
  ``GITHUB_OUTPUT`` (a run on GitHub's runners would print annotations and write a summary),
  ``COLUMNS`` and ``LINES`` (help text wrapped at one width everywhere);
- set: ``SOURCE_DATE_EPOCH`` (*epoch*, default :data:`EPOCH`: reports carry a fixed time),
  ``PYTHONHASHSEED`` (*hashseed*, default ``"0"``) and ``RAGLEAKLAB_PROGRESS_INTERVAL=0``
  (progress lines off: they come after a time, not an amount of work, so on a slow machine a
  run's stderr would hold lines a fast one does not print);
- *pythonpath* is put in front of ``PYTHONPATH``, and *env* is applied last: a value sets a
  variable, ``None`` removes it (so a test can put any of the above back, or take more away).

Every run has stdin closed (a command that waited on a terminal would hang, not pass) and a
timeout of :data:`TIMEOUT` seconds unless a test gives its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from pathlib import Path

#: Removed from every command's environment (see the module's docstring).
STRIPPED = (
    "PYTHONWARNINGS",
    "GITHUB_ACTIONS",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_OUTPUT",
    "COLUMNS",
    "LINES",
)
#: Seconds between plain progress lines on stderr; set to 0 (off) unless a test sets it.
PROGRESS_INTERVAL = "RAGLEAKLAB_PROGRESS_INTERVAL"
#: The default SOURCE_DATE_EPOCH (2023-11-14T22:13:20Z).
EPOCH = "1700000000"
#: Seconds a command may take unless the test says otherwise (a full built-in run on a loaded
#: 2-core machine takes about a minute).
TIMEOUT = 300.0


def console_script() -> str:
    """The ``ragleaklab`` script of the running interpreter's environment (fails if missing)."""
    scripts = Path(sysconfig.get_path("scripts"))
    found = shutil.which("ragleaklab", path=str(scripts)) or shutil.which(
        "ragleaklab", path=str(Path(sys.executable).parent)
    )
    assert found, f"no ragleaklab script in {scripts}: is the distribution installed?"
    return found


def cli_env(
    env: Mapping[str, str | None] | None = None,
    *,
    epoch: str = EPOCH,
    hashseed: str = "0",
    pythonpath: Iterable[str | Path] = (),
) -> dict[str, str]:
    """The environment :func:`rlk` runs the command in (see the module's docstring)."""
    environ = {k: v for k, v in os.environ.items() if k not in STRIPPED}
    environ["SOURCE_DATE_EPOCH"] = epoch
    environ["PYTHONHASHSEED"] = hashseed
    environ[PROGRESS_INTERVAL] = "0"
    paths = [str(p) for p in pythonpath]
    if paths:
        environ["PYTHONPATH"] = os.pathsep.join(filter(None, [*paths, environ.get("PYTHONPATH")]))
    for name, value in (env or {}).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return environ


def rlk(
    *args: str,
    cwd: str | Path,
    env: Mapping[str, str | None] | None = None,
    epoch: str = EPOCH,
    hashseed: str = "0",
    pythonpath: Iterable[str | Path] = (),
    timeout: float = TIMEOUT,
    ok: Iterable[int] | None = None,
    script: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``ragleaklab ARGS`` run in *cwd*, its output captured as text.

    With *ok*, the exit code must be one of those (the failure shows stdout and stderr). With
    *script*, the console script installed beside the running interpreter is run instead of
    ``python -m ragleaklab_core`` (what a wheel's entry point gives a user).
    """
    command = [console_script()] if script else [sys.executable, "-m", "ragleaklab_core"]
    done = subprocess.run(
        [*command, *args],
        cwd=cwd,
        env=cli_env(env, epoch=epoch, hashseed=hashseed, pythonpath=pythonpath),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if ok is not None:
        codes = tuple(ok)
        assert done.returncode in codes, (
            f"ragleaklab {' '.join(args)}: exit {done.returncode}, expected one of {codes}\n"
            f"{done.stdout}{done.stderr}"
        )
    return done
