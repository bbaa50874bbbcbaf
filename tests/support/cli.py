"""The one way the tests run the ``ragleaklab`` command, with one environment clean-up: in this
process by default, or in a real subprocess (``python -m ragleaklab_core``, or with
``script=True`` the installed ``ragleaklab`` console script) where the process boundary is what
a test checks.

In this process, :func:`rlk` gives the command what a subprocess would have, and gives it back
after: the environment below (``os.environ`` replaced whole), *cwd* as the working directory and
in front of ``sys.path`` with *pythonpath* (as ``python -m`` puts it there), stdin empty, stdout
and stderr captured as bytes and decoded as ``text=True`` does, Python's default warning filters
(not pytest's ``error``), and ``SystemExit`` turned into the exit code. It imports its own
copy of the modules under *cwd* and *pythonpath* (this process's copies are set aside and given
back, and what it imported from there is forgotten: a test's fake distribution is written anew
in each test, under the same module names). A command run here pays only for what it does,
where each subprocess also paid an interpreter's and the plugins' imports (compiled again each
time under ``PYTHONDONTWRITEBYTECODE``), hundreds of times in the suite. Its hash seed is this
process's, whatever ``PYTHONHASHSEED`` its environment holds.

A test must keep a subprocess (``own_process=True``) where what it checks is the process
itself: signals, the exit of a killed or interrupted run (``os._exit`` in a command run here
raises :class:`ExitsTheProcess`, naming ``own_process=True``), the console script or ``-m`` entry
point, import side effects of a fresh interpreter, ``PYTHONHASHSEED`` (any *hashseed* given
runs a subprocess), an environment variable the interpreter reads at start-up (``PYTHON*``,
except ``PYTHONPATH`` which is put on ``sys.path``), ``PYTHONPATH`` removed (modules this
process imported would still be found), or a command run from another thread or left running
in the background. ``RLK_TESTS_CLI=subprocess`` runs every command in a subprocess (the way to
check that a test does not depend on where it runs).

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

Every run has stdin closed (a command that waited on a terminal would hang, not pass); a
subprocess has a timeout of :data:`TIMEOUT` seconds unless a test gives its own.
"""

from __future__ import annotations

import importlib
import io
import logging
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import traceback
import types
import warnings
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import NoReturn

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
#: Set to ``subprocess`` to run every command in a subprocess.
WHERE = "RLK_TESTS_CLI"


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
    hashseed: str | None = None,
    pythonpath: Iterable[str | Path] = (),
    timeout: float = TIMEOUT,
    ok: Iterable[int] | None = None,
    script: bool = False,
    own_process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``ragleaklab ARGS`` run in *cwd*, its output captured as text.

    With *ok*, the exit code must be one of those (the failure shows stdout and stderr). With
    *script*, the console script installed beside the running interpreter is run instead of
    ``python -m ragleaklab_core`` (what a wheel's entry point gives a user). The command runs
    in this process unless the module's docstring says it cannot, or *own_process* asks for a
    subprocess; a subprocess gets ``PYTHONHASHSEED`` *hashseed* (``"0"`` when not given).
    """
    paths = [str(p) for p in pythonpath]
    if own_process or script or hashseed is not None or not _can_run_here(env):
        done = _in_subprocess(
            args,
            cwd=cwd,
            environ=cli_env(env, epoch=epoch, hashseed=hashseed or "0", pythonpath=paths),
            timeout=timeout,
            script=script,
        )
    else:
        # PYTHONPATH given as a value goes on sys.path (and stays in the environment, for the
        # subprocesses the command may start itself).
        extra = (env or {}).get("PYTHONPATH")
        here_paths = [*paths, *(extra.split(os.pathsep) if extra else [])]
        done = _in_this_process(
            args,
            cwd=Path(cwd),
            environ=cli_env(env, epoch=epoch, pythonpath=paths),
            paths=here_paths,
        )
    if ok is not None:
        codes = tuple(ok)
        assert done.returncode in codes, (
            f"ragleaklab {' '.join(args)}: exit {done.returncode}, expected one of {codes}\n"
            f"{done.stdout}{done.stderr}"
        )
    return done


def _can_run_here(env: Mapping[str, str | None] | None) -> bool:
    if os.environ.get(WHERE) == "subprocess":
        return False
    if threading.current_thread() is not threading.main_thread():
        return False  # sys.stdout, os.environ and the cwd are the whole process's
    for name, value in (env or {}).items():
        if name.startswith("PYTHON") and (name != "PYTHONPATH" or value is None):
            return False
    return True


def _in_subprocess(
    args: tuple[str, ...], *, cwd: str | Path, environ: dict[str, str], timeout: float, script: bool
) -> subprocess.CompletedProcess[str]:
    command = [console_script()] if script else [sys.executable, "-m", "ragleaklab_core"]
    return subprocess.run(
        [*command, *args],
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _in_this_process(
    args: tuple[str, ...], *, cwd: Path, environ: dict[str, str], paths: list[str]
) -> subprocess.CompletedProcess[str]:
    from ragleaklab_core.cli import main
    from ragleaklab_core.packs.manifest import _load_package

    # What a fresh interpreter's streams would be under a pipe: the same encoding, stdout's
    # error handler from the locale, stderr's always backslashreplace.
    encoding = getattr(sys.__stdout__, "encoding", None) or "utf-8"
    out_errors = getattr(sys.__stdout__, "errors", None) or "strict"
    stdout, stderr = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(), encoding=encoding),
        io.TextIOWrapper(stdout, encoding=encoding, errors=out_errors, write_through=True),
        io.TextIOWrapper(stderr, encoding=encoding, errors="backslashreplace", write_through=True),
    )
    # `python -m` puts the working directory in front of sys.path.
    roots = [str(cwd.resolve()), *(str(Path(p).resolve()) for p in paths if p)]
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_originals = sys.__stdout__, sys.__stderr__
    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), sys.path[:]
    saved_exit = os._exit
    # The CLI owns logging in its process (configure_cli_logging replaces the root logger's
    # handlers and the library's structlog processors): both are given back after, so a later
    # test in this process (caplog, the library's own log lines) sees what it would have.
    from ragleaklab_core import _log

    root = logging.getLogger()
    saved_logging = root.handlers[:], root.level, _log._PROCESSORS[:]
    # The command imports its own copy of what lives under *cwd* and *pythonpath*, as a fresh
    # interpreter would: this process's copies are set aside, and given back after.
    stashed = _take_modules_under(roots)
    before = set(sys.modules)
    code = 0
    try:
        os._exit = _exits_the_process
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(cwd)
        sys.path[:0] = roots
        importlib.invalidate_caches()  # files a test wrote since the last import
        sys.stdin, sys.stdout, sys.stderr = streams
        # The terminal's width is read from sys.__stdout__: a pipe has none, so help text is
        # wrapped at 80 columns as in a subprocess, whatever terminal runs the tests.
        sys.__stdout__, sys.__stderr__ = streams[1:]  # type: ignore[misc]
        with warnings.catch_warnings():
            _python_default_warnings()
            try:
                main(list(args))
            except SystemExit as exc:
                code = _exit_code(exc.code)
            except KeyboardInterrupt:
                traceback.print_exc()
                code = -signal.SIGINT
    finally:
        os._exit = saved_exit
        root.handlers[:], _, _log._PROCESSORS[:] = saved_logging
        root.setLevel(saved_logging[1])
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.__stdout__, sys.__stderr__ = saved_originals  # type: ignore[misc]
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        if _take_modules_under(roots, since=before) or stashed:
            _load_package.cache_clear()  # a pack of the forgotten modules, cached by name
        sys.modules.update(stashed)
    return subprocess.CompletedProcess(
        ["ragleaklab", *args], code, _as_text(stdout.getvalue()), _as_text(stderr.getvalue())
    )


class ExitsTheProcess(BaseException):
    """``os._exit`` was called by a command run in this process: that test needs
    ``own_process=True``. A ``BaseException``, so no ``except Exception`` of the command
    mistakes it for an error it handles."""


def _exits_the_process(status: int) -> NoReturn:
    raise ExitsTheProcess(
        f"os._exit({status}) in a command run in the test process: "
        "run it with rlk(..., own_process=True)"
    )


def _python_default_warnings() -> None:
    """The warning filters and printing of a fresh interpreter, in place of pytest's."""
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category, append=True)

    def show(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    warnings.showwarning = show


def _exit_code(code: object) -> int:
    """The exit status the interpreter gives ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _as_text(data: bytes) -> str:
    """What ``subprocess.run(text=True)`` makes of a stream's bytes (universal newlines)."""
    encoding = getattr(sys.__stdout__, "encoding", None) or "utf-8"
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


def _take_modules_under(
    roots: list[str], since: AbstractSet[str] = frozenset()
) -> dict[str, types.ModuleType]:
    """Remove from ``sys.modules`` the modules imported from under *roots* (those not in
    *since*, when given), and return them."""
    prefixes = tuple(os.path.join(root, "") for root in roots if not _holds_installed_code(root))

    def under(module: object) -> bool:
        places = [
            getattr(module, "__file__", None) or "",
            *(getattr(module, "__path__", None) or ()),
        ]
        return any(str(place).startswith(prefixes) for place in places)

    taken: dict[str, types.ModuleType] = {
        name: module
        for name, module in list(sys.modules.items())
        if name not in since and under(module)
    }
    for name in taken:
        del sys.modules[name]
    return taken


def _holds_installed_code(root: str) -> bool:
    """Whether *root* holds ragleaklab itself or the environment's packages (a command run from
    the checkout reuses those: only a test's own modules are imported anew)."""
    import ragleaklab_core

    checkout = Path(ragleaklab_core.__file__).resolve().parents[1]
    installed = (checkout, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve())
    here = Path(root)
    return any(here == place or place.is_relative_to(here) for place in installed) or any(
        here.is_relative_to(place) for place in installed[1:]
    )
