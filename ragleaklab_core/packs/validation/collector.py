"""Collecting a pack's problems file by file, and reading its JSONL files line by line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import attrs

from ragleaklab_core._wellformed import LONE_SURROGATE, lone_surrogate_path
from ragleaklab_core.config import structure
from ragleaklab_core.errors import ConfigError
from ragleaklab_core.packs.validation.report import Problem
from ragleaklab_core.packs.validation.toml_lines import _split_problem

# -- the collector -------------------------------------------------------------------------------


@attrs.define
class _Record:
    file: str
    line: int
    data: dict[str, Any]


@attrs.define
class _Collector:
    """Collects the problems of one pack, file by file, and reads its JSONL files."""

    pack: str
    problems: list[Problem] = attrs.field(factory=list)
    warnings: list[Problem] = attrs.field(factory=list)
    files: dict[str, int] = attrs.field(factory=dict)  # file -> reading order, for the report
    broken: set[str] = attrs.field(factory=set)  # files with a line that is not a JSON object

    def add(self, file: str, line: int, path: str, message: str) -> None:
        self.problems.append(Problem(file, line, path, message))

    def warn(self, file: str, line: int, path: str, message: str) -> None:
        self.warnings.append(Problem(file, line, path, message))

    def opened(self, file: str) -> None:
        """Note that *file* is read now: problems are listed file by file in this order."""
        self.files.setdefault(file, len(self.files))

    # -- JSONL ----------------------------------------------------------------------------------

    def jsonl(self, raw: bytes, file: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """Each JSON object of a JSONL file (the loader's rules); every bad line is a problem."""
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.add(file, raw[: exc.start].count(b"\n") + 1, "$", "not UTF-8 text")
            self.broken.add(file)
            return
        if not text.strip():
            self.add(file, 1, "$", "file is empty; expected one JSON object per line")
            self.broken.add(file)
            return
        # Lines end at "\n" only, as the loader reads them (JSON allows U+2028 in strings).
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line, parse_constant=_reject_constant)
            except ValueError as exc:
                self.add(file, number, "$", f"malformed JSON: {exc}")
                self.broken.add(file)
                continue
            if not isinstance(record, dict):
                self.add(file, number, "$", f"expected a JSON object, got {type(record).__name__}")
                self.broken.add(file)
                continue
            if "\\u" in line and (where := lone_surrogate_path(record)) is not None:
                self.add(file, number, where, LONE_SURROGATE)
                self.broken.add(file)
                continue
            yield number, record

    def structured(self, record: _Record, cls: type[Any]) -> bool:
        """Check *record* with the loader's record class; True when it is valid."""
        try:
            structure(record.data, cls, source=record.file, path="$")
        except ConfigError as exc:
            for problem in exc.problems:
                path, message = _split_problem(problem)
                self.add(record.file, record.line, path, message)
            return False
        return True


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _one_line(exc: BaseException) -> str:
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
