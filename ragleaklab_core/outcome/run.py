"""A finished run, as frozen values: what it tested, with which settings, each pack's outcome,
and what its gate decided (``report.json``, encoded and decoded by
:mod:`ragleaklab_core.outcome.codec`).

The run's exit code is not stored: it is its verdict's
(:attr:`~ragleaklab_core.outcome.words.Verdict.exit_code`), written beside it in
``report.json`` for readers, and a report whose two disagree is refused when read back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from ragleaklab_core.outcome.pack import PackOutcome, PluginRef
from ragleaklab_core.outcome.words import Verdict


@frozen(kw_only=True)
class Tool:
    name: str
    version: str


@frozen(kw_only=True)
class System:
    """Which system a run tested, as the first line of every rendering names it: the target
    plugin, its identity (``name@digest`` of its redacted options), the option that says where
    the system is, and the config file read (None: no file)."""

    target: str | None
    identity: str | None
    where: str | None
    config: str | None


@frozen(kw_only=True)
class Totals:
    """Counts over the run's packs and cases."""

    packs: int
    passed: int
    failed: int
    packs_errored: int
    packs_not_tested: int
    cases: int
    errored: int


@frozen(kw_only=True)
class BaselineRecord:
    """The baseline a run was compared with: the file (path, sha256), the test's level, whether
    the comparison was forced, and the comparison itself (what ``ragleaklab diff --json``
    prints, as the comparison writes it)."""

    #: The file (None, and not written, when the Python API compared a run given in memory).
    path: str | None = None
    sha256: str | None = None
    level: float
    forced: bool
    diff: Mapping[str, Any]


@frozen(kw_only=True)
class GateRecord:
    """What decided the run's verdict: the rule (``--fail-on``), the verdict its thresholds
    alone give, why a baseline rule failed it, and the baseline compared with."""

    fail_on: str
    thresholds_verdict: Verdict
    reasons: tuple[str, ...]
    baseline: BaselineRecord | None

    @property
    def on_baseline(self) -> bool:
        """Whether a baseline rule decided, not the thresholds."""
        return self.fail_on != "verdict"


@frozen(kw_only=True)
class RunOutcome:
    """A finished run (``report.json``).

    Attributes:
        verdict: The run's verdict, after its gate.
        settings: The run's settings: the config's ``[run]`` table as the config's converter
            writes it (its types are the config's), with the tags selected, the replay folder
            and where each allowance was set.
        target: The target's provenance (None: a run of no pack).
        inputs: The files the run read, each as ``{"path", "sha256"}`` (or None).
        warnings: What a reader should know about the whole run, each said once.
        gate: What decided the verdict (a finished run's; written last in report.json).
    """

    tool: Tool
    system: System
    generated_at: str
    verdict: Verdict
    settings: Mapping[str, Any]
    target: PluginRef | None
    inputs: Mapping[str, Any]
    totals: Totals
    warnings: tuple[str, ...]
    packs: Sequence[PackOutcome]
    #: None until the gate has decided (a report written before the gate was recorded).
    gate: GateRecord | None = None

    @property
    def exit_code(self) -> int:
        """What ``ragleaklab run`` exits with: its verdict's."""
        return self.verdict.exit_code

    def pack(self, name: str) -> PackOutcome | None:
        return next((p for p in self.packs if p.name == name), None)


__all__ = ["BaselineRecord", "GateRecord", "RunOutcome", "System", "Tool", "Totals"]
