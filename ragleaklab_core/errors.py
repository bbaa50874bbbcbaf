"""The one exception hierarchy: every error ragleaklab raises on purpose."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs


def suggestions(name: str, known: Iterable[str]) -> list[str]:
    """The names a mistyped *name* most likely meant, the closest first: the one "did you mean"
    of every unknown name ragleaklab refuses (a plugin, a reporter, a config table or key)."""
    return difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for *name*, or ``""`` when nothing known is close."""
    close = suggestions(name, known)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


class RagleaklabError(Exception):
    """Base class of every error ragleaklab raises on purpose.

    The library raises and never prints; the CLI renders ``str(error)`` and picks the exit code
    from :attr:`exit_code` (0 ok, 1 gate failed, 2 bad input or usage, 3 plugin unusable).
    """

    exit_code: int = 2


class InputError(RagleaklabError, ValueError):
    """A data file or in-memory input is malformed.

    Attributes:
        source: The file (or ``"<memory>"``) the problem was found in.
        line: The 1-based line number, when the problem sits on one line.
        message: What is wrong, in one sentence.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.source = source
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.source or ""
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        return f"{where}: {self.message}" if where else self.message


class ConfigError(RagleaklabError, ValueError):
    """A configuration (file, flags or plugin options) is invalid; lists every problem at once.

    Attributes:
        source: The file, or the ``$.path`` of the plugin options, that was being read.
        problems: One line per problem, each ending in ``@ $.path``.
    """

    def __init__(self, source: str, problems: Sequence[str]):
        self.source = source
        self.problems = tuple(problems)
        super().__init__(str(self))

    def __str__(self) -> str:
        lines = "\n".join(f"  {p}" for p in self.problems)
        return f"invalid configuration in {self.source}:\n{lines}"


@attrs.frozen
class PluginLoadFailure:
    """One entry point that could not be used, with everything needed to find the culprit."""

    group: str
    name: str
    target: str
    provider: str
    error: str

    def __str__(self) -> str:
        return (
            f"{self.group}:{self.name} ({self.target}, from {self.provider}) "
            f"could not be used: {self.error}"
        )


class PluginError(RagleaklabError):
    """One or more plugins could not be loaded, built or found.

    Attributes:
        group: The entry-point group, e.g. ``ragleaklab.fitters``.
        failures: Plugins that exist but failed (import error, bad object, ambiguous name).
        missing: Unknown names mapped to did-you-mean suggestions.
    """

    exit_code = 3

    def __init__(
        self,
        group: str,
        *,
        failures: Sequence[PluginLoadFailure] = (),
        missing: Mapping[str, Sequence[str]] | None = None,
        available: Sequence[str] = (),
        notes: Sequence[str] = (),
    ):
        self.group = group
        self.failures = tuple(failures)
        self.missing = dict(missing or {})
        self.available = tuple(available)
        #: What else explains a missing name (registered under a group that is no group).
        self.notes = tuple(notes)
        super().__init__(str(self))

    def __str__(self) -> str:
        lines = []
        for name, suggestions in sorted(self.missing.items()):
            if suggestions:
                hint = " (did you mean " + ", ".join(repr(s) for s in suggestions) + "?)"
            elif self.available:
                hint = " (installed: " + ", ".join(self.available) + ")"
            else:
                hint = f" (no plugins are installed in {self.group})"
            lines.append(f"no plugin named {name!r} in {self.group}{hint}")
        lines.extend(str(f) for f in self.failures)
        lines.extend(self.notes)
        return "\n".join(lines) or f"plugin error in {self.group}"


class CalibrationRefused(InputError):
    """``calibrate --write-thresholds`` refused to store a fitted threshold that would switch
    the gate off or misses its target (exit 2, nothing written). The calibration report's
    warnings say why; they travel with the error, and the CLI prints them before it.

    Attributes:
        warnings: The report's warnings, as ``calibration_report.json`` would have listed them.
    """

    def __init__(
        self, message: str, *, source: str | None = None, warnings: Sequence[str] = ()
    ) -> None:
        self.warnings = tuple(warnings)
        super().__init__(message, source=source)


class UsageError(RagleaklabError):
    """A request whose parts contradict each other (``--record`` with ``--replay``, say), or an
    output path that cannot be one; nothing was run or written (exit 2). The CLI shows it as
    click shows a usage error."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunInterrupted(RagleaklabError):
    """A run was interrupted (Ctrl-C): the cases answered so far are kept in ``partial`` and
    the same run with ``--resume`` continues from them (exit 130, as a shell reports SIGINT)."""

    exit_code = 130

    def __init__(self, partial: Path) -> None:
        self.partial = partial
        super().__init__(
            f"interrupted: finished cases are kept in {partial.as_posix()}; run the same "
            "command with --resume to continue"
        )


class ExecutorUnavailable(RagleaklabError):
    """The executor cannot run anything: its extra is not installed, its cluster cannot be
    reached, or its workers cannot be started or keep dying. Nothing was tested, as with a
    plugin that cannot be used (exit 3)."""

    exit_code = 3


class PluginContractError(PluginError):
    """A plugin loaded but does not honour its interface (wrong object, missing method)."""


class PluginRuntimeError(PluginError):
    """A plugin raised while doing its job; ``__cause__`` holds the original exception."""

    def __init__(self, group: str, name: str, message: str, *, case_id: str | None = None):
        self.name = name
        self.case_id = case_id
        self.message = message
        super().__init__(group)

    def __str__(self) -> str:
        where = f" on case {self.case_id!r}" if self.case_id is not None else ""
        return f"{self.group}:{self.name} failed{where}: {self.message}"
