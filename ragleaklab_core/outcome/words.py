"""The words a pack, a run and a case end as, and the exit code each verdict has.

They sit here, at the bottom of the finished run (:mod:`ragleaklab_core.outcome`), so the
outcome can hold them without importing the gate that decides them; the gate
(:mod:`ragleaklab_core.gate`) re-exports them with the rules that choose one.
"""

from __future__ import annotations

import enum

from ragleaklab_core.errors import RagleaklabError, RunInterrupted

#: Exit codes besides a verdict's own (:attr:`Verdict.exit_code`): bad input or usage (every
#: :class:`~ragleaklab_core.errors.RagleaklabError` carries its own), and an interrupted run.
EXIT_BAD_INPUT = RagleaklabError.exit_code
EXIT_INTERRUPTED = RunInterrupted.exit_code


class Verdict(enum.StrEnum):
    """What a pack, a run or a comparison ends as (:mod:`ragleaklab_core.gate` decides which).

    A :class:`~enum.StrEnum`: a member equals, formats and serialises as the word
    ``report.json`` writes, so documents written before it read the same."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"

    @property
    def exit_code(self) -> int:
        return _EXIT[self]

    @property
    def word(self) -> str:
        """How a reader sees it: ``PASS``, ``FAIL``, ``ERROR``."""
        return self.value.upper()

    @classmethod
    def read(cls, value: object) -> Verdict:
        """The verdict a report wrote as *value*; anything else is ``ERROR`` (never a pass)."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.ERROR


_EXIT = {Verdict.PASS: 0, Verdict.FAIL: 1, Verdict.ERROR: 3}


class Outcome(enum.StrEnum):
    """What one case ends as in a pack's ``case_results``."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    UNSCORABLE = "unscorable"


__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "Outcome", "Verdict"]
