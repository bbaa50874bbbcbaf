"""How every CLI command turns ragleaklab's own errors into stderr text and an exit code."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ragleaklab_core._redact import redact_text
from ragleaklab_core.errors import ExecutorUnavailable, RagleaklabError

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int) -> None:
    # A message may quote an option or a server's reply: credentials in it never reach stderr.
    click.echo(f"error: {redact_text(message)}", err=True)
    sys.exit(code)


def describe(exc: RagleaklabError) -> str:
    """What stderr says about *exc* after ``error:``: its message, and where to look for a
    plugin that could not be used."""
    message = str(exc)
    # A store that cannot be cleaned (ragleaklab_core.run.cleanup) is no missing plugin.
    about_plugins = getattr(exc, "about_plugins", True)
    if exc.exit_code == 3 and about_plugins and not isinstance(exc, ExecutorUnavailable):
        message += "\nhint: `ragleaklab plugins` lists what is installed"
    return message


def handle_errors(func: F) -> F:
    """Turn ragleaklab's own errors into a message on stderr and the right exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except RagleaklabError as exc:
            fail(describe(exc), exc.exit_code)

    return wrapper  # type: ignore[return-value]
