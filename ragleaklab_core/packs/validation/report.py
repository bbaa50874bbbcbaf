"""What validating a pack finds: its problems, its report, and the limits a pack must keep."""

from __future__ import annotations

from pathlib import PurePosixPath

from attrs import frozen

from ragleaklab_core.packs.manifest import (
    LABEL_SOURCES,
)

_LABELS = ("positive", "negative")
#: The warning for a pack with labels that does not say who judged them.
LABEL_SOURCE_MISSING = (
    "the labels do not say who judged them: add label_source = one of "
    + ", ".join(f'"{s}"' for s in LABEL_SOURCES)
    + ' (and label_target = "TARGET" for outcome or instrumentation); labels must be an '
    "independent judgement of harm, never the pack's own metric"
)


@frozen
class Problem:
    """One thing wrong with a pack.

    Attributes:
        file: The file the problem is in, as the validator names it (``pack/cases.jsonl``), or
            the pack method it came from (``documents()``) for a pack that is not a manifest.
        line: The 1-based line (the item's position for a method); problems about a whole file
            are reported at line 1.
        path: Where in the line's JSON object or in the manifest, as ``$.ground_truth...``.
        message: What is wrong, in one sentence.
    """

    file: str
    line: int
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.path}: {self.message}"


@frozen
class ValidationReport:
    """Every problem of one pack, and what was read.

    Attributes:
        pack: What was validated: a directory or an installed pack's name.
        problems: Every problem, file by file in reading order (manifest, documents, cases,
            labels), then by line.
        n_documents: Documents read.
        n_cases: Cases read.
        n_positive: Valid labels saying the attack succeeded.
        n_negative: Valid labels saying security held.
        warnings: What the pack should say and does not, such as where its labels come from
            (``$.label_source``); they never make a pack invalid.
    """

    pack: str
    problems: tuple[Problem, ...]
    n_documents: int
    n_cases: int
    n_positive: int
    n_negative: int
    warnings: tuple[Problem, ...] = ()

    @property
    def valid(self) -> bool:
        """True when there is no problem (warnings do not count)."""
        return not self.problems

    def summary(self) -> str:
        """``valid: ...`` with the counts, or ``invalid: N problems in PACK``.

        Each warning comes first, on its own line (``warning: FILE:LINE: $.path: message``),
        so that ``pack validate`` prints them after the problems and before the verdict.
        """
        lines = [f"warning: {w}" for w in self.warnings]
        if self.valid:
            lines.append(
                f"valid: {self.n_documents} documents, {self.n_cases} cases, "
                f"{self.n_positive} positive / {self.n_negative} negative labels"
            )
        else:
            n = len(self.problems)
            lines.append(f"invalid: {n} problem{'s' if n != 1 else ''} in {self.pack}")
        return "\n".join(lines)


def unsafe_path(rel: str) -> str | None:
    """Why *rel* cannot name a file inside a pack's directory, or None when it can.

    Only the text is checked (absolute paths, ``..``, backslashes, drive letters); symlinks
    are checked where the file is read.
    """
    if not rel:
        return "path must not be empty"
    if "\x00" in rel:
        return f"path {rel!r} contains a NUL character"
    if "\\" in rel:
        return f"path {rel!r} contains a backslash; use '/' between directories"
    if ":" in rel:
        return f"path {rel!r} contains ':'; drive letters and URLs are refused"
    pure = PurePosixPath(rel)
    if pure.is_absolute():
        return f"path {rel!r} is absolute; it must be relative to the pack's directory"
    if ".." in pure.parts:
        return f"path {rel!r} escapes the pack's directory ('..')"
    return None
