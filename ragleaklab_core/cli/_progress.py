"""Progress on stderr while packs run, so a long run shows it is alive.

On a terminal, a progress bar (tqdm). Anywhere else (a CI log), a plain line every
``RAGLEAKLAB_PROGRESS_INTERVAL`` seconds (default 10; 0 turns it off) with the pack, the answers
done of its total, the rate, the errored answers and the time since the run began::

    progress: sentinel-takeover-safe 350/700 answers, 35.2/s, 2 errored, 20s elapsed

The first line comes one interval after the run began, so a run shorter than the interval
prints none. Lines come from each answer and from a timer thread, so they keep coming when the
target stops answering. Both reporters take the runner's callbacks: ``start(pack, total)``
before each pack, ``advance(record)`` per case and epoch, ``finish()`` once at the end.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TextIO

from ragleaklab_core.errors import ConfigError

#: The environment variable that sets the interval between plain progress lines, in seconds.
INTERVAL_ENV = "RAGLEAKLAB_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 10.0


class Progress(Protocol):
    """The callbacks ``run`` and ``calibrate --pack`` give the runner."""

    def start(self, pack: Any, total: int) -> None: ...

    def advance(self, record: Any) -> None: ...

    def finish(self) -> None: ...


def progress_for(stream: TextIO, environ: Mapping[str, str]) -> Progress | None:
    """A bar when *stream* is a terminal; else plain lines at the configured interval, or None
    when it is 0. A malformed interval is a :class:`ConfigError` (exit 2)."""
    if stream.isatty():
        return TerminalBar(stream)
    interval = interval_from(environ)
    return None if interval == 0 else ProgressLines(interval, stream=stream)


def interval_from(environ: Mapping[str, str]) -> float:
    """The interval :data:`INTERVAL_ENV` sets, in seconds (default :data:`DEFAULT_INTERVAL`)."""
    raw = environ.get(INTERVAL_ENV, "").strip()
    if not raw:
        return DEFAULT_INTERVAL
    try:
        interval = float(raw)
    except ValueError:
        interval = -1.0
    if not 0 <= interval < float("inf"):
        raise ConfigError(
            f"the environment variable {INTERVAL_ENV}",
            [f"expected a number of seconds >= 0 (0 turns progress lines off), got {raw!r}"],
        )
    return interval


class TerminalBar:
    """One tqdm bar per pack, with the errored answers so far."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._bar: Any = None
        self._errors = 0

    def start(self, pack: Any, total: int) -> None:
        from tqdm import tqdm

        self.finish()
        self._errors = 0
        self._bar = tqdm(
            total=total, desc=str(pack.name), unit="answer", file=self._stream, dynamic_ncols=True
        )

    def advance(self, record: Any) -> None:
        if self._bar is None:
            return
        if getattr(record, "error", None) is not None:
            self._errors += 1
            self._bar.set_postfix_str(f"{self._errors} errored", refresh=False)
        self._bar.update(1)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class ProgressLines:
    """A plain line on *stream* every *interval* seconds of *clock* (monotonic), counted from
    the first :meth:`start`; missed beats are skipped, never printed late in a burst.

    *ticker* starts a thread that prints on time while no answer arrives; without it (tests,
    with a fake *clock*) lines come only from :meth:`advance` and :meth:`tick`.
    """

    def __init__(
        self,
        interval: float,
        *,
        stream: TextIO = sys.stderr,
        clock: Callable[[], float] = time.monotonic,
        ticker: bool = True,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0, got {interval!r}")
        self.interval = interval
        self._stream = stream
        self._clock = clock
        self._ticker = ticker
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._began: float | None = None
        self._due = 0.0
        self._pack: str | None = None
        self._pack_began = 0.0
        self._total = self._done = self._asked = self._errors = 0

    def start(self, pack: Any, total: int) -> None:
        with self._lock:
            now = self._clock()
            if self._began is None:
                self._began, self._due = now, now + self.interval
            self._pack, self._pack_began = str(pack.name), now
            self._total, self._done, self._asked, self._errors = total, 0, 0, 0
        if self._ticker and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._beat, name="progress", daemon=True)
            self._thread.start()

    def advance(self, record: Any) -> None:
        with self._lock:
            self._done += 1
            # Answers taken from an interrupted run's journal were not asked now: not in the rate.
            self._asked += not getattr(record, "resumed", False)
            self._errors += getattr(record, "error", None) is not None
        self.tick()

    def tick(self) -> None:
        """Print a line if one is due."""
        with self._lock:
            now = self._clock()
            if self._pack is None or self._began is None or now < self._due:
                return
            # The next beat after now, on the grid the first start() set.
            self._due += self.interval * (int((now - self._due) / self.interval) + 1)
            line = self._line(now)
            self._stream.write(line + "\n")
            self._stream.flush()

    def finish(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            self._pack = None

    def _beat(self) -> None:
        while True:
            with self._lock:
                wait = max(self._due - self._clock(), 0.0)
            if self._stop.wait(wait + 0.001):
                return
            self.tick()

    def _line(self, now: float) -> str:
        spent = now - self._pack_began
        rate = self._asked / spent if spent > 0 else 0.0
        elapsed = duration(now - (self._began or now))
        return (
            f"progress: {self._pack} {self._done}/{self._total} answers, {rate:.1f}/s, "
            f"{self._errors} errored, {elapsed} elapsed"
        )


def duration(seconds: float) -> str:
    """``42s``, ``3m07s``, ``1h02m``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
