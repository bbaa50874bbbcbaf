"""A small progress bar for terminals (the CLI uses it only when stderr is a TTY)."""

from __future__ import annotations

import sys
from typing import Any


class ProgressBar:
    """``start(pack, total)``, ``advance(record)`` per case and epoch, ``finish()``."""

    def __init__(self) -> None:
        self._label = ""
        self._total = 0
        self._done = 0

    def start(self, pack: Any, total: int) -> None:
        self.finish()
        self._label, self._total, self._done = pack.name, total, 0
        self._draw()

    def advance(self, _record: Any) -> None:
        self._done += 1
        if self._done == self._total or self._done % 10 == 0:
            self._draw()

    def finish(self) -> None:
        if self._total:
            self._draw()
            sys.stderr.write("\n")
            sys.stderr.flush()
        self._total = 0

    def _draw(self) -> None:
        width = 30
        filled = width * self._done // max(self._total, 1)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\r{self._label:<24} [{bar}] {self._done}/{self._total}")
        sys.stderr.flush()
