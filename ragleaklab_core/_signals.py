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
    """SIGTERM and SIGHUP act as SIGINT while the block runs (in the main thread).

    A signal the parent set to be ignored stays ignored: under ``nohup`` a hangup does not end
    the run (that is what nohup is for). SIGINT ignored (a background job of a script inherits
    that) is given Python's own handler for the block, so that SIGTERM still ends the run the
    way Ctrl-C does, through the handler asyncio installs over it: the pack is cancelled, what
    it planted removed and said so; a bare ``KeyboardInterrupt`` raised from wherever the
    signal landed would skip that report.
    """
    if not _main_thread():
        yield
        return
    _received.clear()  # what an earlier run in this process received is not this one's

    def interrupt(signum: int, frame: Any) -> None:
        _received.append(signum)
        _as_sigint(frame)

    handled = tuple(s for s in TERMINATING if signal.getsignal(s) != signal.SIG_IGN)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        with _handling((signal.SIGINT,), signal.default_int_handler), _handling(handled, interrupt):
            yield
    else:
        with _handling(handled, interrupt):
            yield


def _as_sigint(frame: Any) -> None:
    """Do what SIGINT's handler does now (asyncio's cancels the pack, whose reset still runs)."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


@contextlib.contextmanager
def _handling(signals: tuple[signal.Signals, ...], handler: Any) -> Iterator[None]:
    """*handler* for *signals* while the block runs; the previous handlers after it."""
    previous = {s: signal.signal(s, handler) for s in signals}
    try:
        yield
    finally:
        for s, before in previous.items():
            signal.signal(s, before)


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

    try:
        with _handling((signal.SIGINT, *TERMINATING), hold):
            yield
    finally:
        if caught and caught[0] != signal.SIGINT:
            _received.append(caught[0])
    if caught and not interrupted:
        _as_sigint(None)


__all__ = ["TERMINATING", "notice", "received", "shielded", "termination_as_interrupt"]
