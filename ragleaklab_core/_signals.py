"""SIGTERM and SIGHUP end a run as Ctrl-C does, and removing planted documents outlasts a signal.

``docker stop``, a CI runner cancelling a job and a closed terminal send SIGTERM or SIGHUP, not
SIGINT. Python's default for both is to die on the spot, skipping every ``finally``: the pack's
documents would stay in the team's store. :func:`termination_as_interrupt` routes them to
whatever handles SIGINT at that moment (asyncio's handler cancels the running pack, whose reset
then removes what it planted; outside a loop, ``KeyboardInterrupt``), and remembers which signal
came, so the CLI exits with 128 + its number as a shell expects.

While planted documents are being removed, :func:`shielded` holds SIGINT, SIGTERM and SIGHUP: the
first one says the removal is still going on, the next stops it (what was not removed stays
listed in the run's ``planted.jsonl`` for ``ragleaklab cleanup``). Only the main thread can set
signal handlers; elsewhere (an embedding harness's worker thread) both are no-ops.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

#: The signals that end a run like Ctrl-C (SIGHUP does not exist on Windows).
TERMINATING: tuple[signal.Signals, ...] = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None
)

_received: list[int] = []


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def received() -> int | None:
    """The last SIGTERM or SIGHUP :func:`termination_as_interrupt` turned into an interrupt."""
    return _received[-1] if _received else None


def notice(text: str) -> None:
    """A line for the person who sent the signal: on stderr, whatever the log level."""
    print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def termination_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP act as SIGINT while the block runs (in the main thread)."""
    if not _main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        _received.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)  # asyncio's: cancel the pack (its reset still runs)
        else:
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, interrupt) for s in TERMINATING}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def shielded(doing: Callable[[], str], *, interrupted: bool = False) -> Iterator[None]:
    """Hold interrupts while the block removes planted documents.

    Args:
        doing: What is going on, for the notice (``"removing 533 planted documents from ..."``).
        interrupted: The run is already ending on an interrupt; otherwise one held here is
            delivered to SIGINT's own handler when the block ends, so the run still stops.
    """
    if not _main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        caught.append(signum)
        if len(caught) == 1:
            notice(
                f"still {doing()}: wait for it to finish, or interrupt again to stop it (what is "
                "left stays listed for `ragleaklab cleanup`)"
            )
            return
        raise KeyboardInterrupt

    handled = (signal.SIGINT, *TERMINATING)
    previous = {s: signal.signal(s, hold) for s in handled}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if caught and caught[0] != signal.SIGINT:
            _received.append(caught[0])
    if caught and not interrupted:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, None)
        else:
            raise KeyboardInterrupt


__all__ = ["TERMINATING", "notice", "received", "shielded", "termination_as_interrupt"]
