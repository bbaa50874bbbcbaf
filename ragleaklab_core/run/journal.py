"""The run journal: records streamed to disk as they complete, so a run can be resumed.

While ``ragleaklab run`` works, every case record is appended (and flushed) to
``<out>/runs.jsonl.partial``, next to ``<out>/runs.journal.json`` which holds the run's
fingerprint (target, options, packs and versions, epochs, tags). ``--resume`` reads the journal
of an interrupted run with the same fingerprint and does not ask its completed cases again
(errored ones are asked again). When the run ends, the final ``runs.jsonl`` and ``report.json``
are written atomically and the journal is removed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ragleaklab_core.errors import InputError
from ragleaklab_core.run.runner import CaseRecord

PARTIAL = "runs.jsonl.partial"
META = "runs.journal.json"


def fingerprint(description: Mapping[str, Any]) -> str:
    """A stable digest of what makes two runs comparable."""
    text = json.dumps(description, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Journal:
    """Append-only record log of one run in *directory*."""

    def __init__(self, directory: Path, print_: str) -> None:
        self.directory = directory
        self.fingerprint = print_
        self._file: IO[str] | None = None
        self._checked = False
        self.completed: dict[str, dict[tuple[str, int], CaseRecord]] = {}

    @property
    def partial(self) -> Path:
        return self.directory / PARTIAL

    @property
    def meta(self) -> Path:
        return self.directory / META

    def check(self, *, resume: bool, restart: bool = False) -> None:
        """Decide, touching nothing, whether the run may start here.

        With *resume*, load the completed records of the interrupted run (which must have the
        same fingerprint). Without it, an interrupted run in the directory is never discarded
        silently: *restart* says to discard it.
        """
        self._checked = True
        if resume:
            self._load()
        elif self.meta.exists() and not restart:
            raise InputError(
                f"holds an interrupted run ({META}): continue it with --resume, or discard it "
                "and start again with --restart",
                source=str(self.directory),
            )

    def open(self, *, resume: bool) -> None:
        """Start the journal (after :meth:`check`, which loads what *resume* continues)."""
        if not self._checked:
            self.check(resume=resume, restart=True)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create: {exc.strerror or exc}", source=str(self.directory)
            ) from None
        if not resume:
            self.partial.unlink(missing_ok=True)
        self.meta.write_text(json.dumps({"fingerprint": self.fingerprint}) + "\n", encoding="utf-8")
        self._file = self.partial.open("a", encoding="utf-8")

    def _load(self) -> None:
        if not self.meta.exists() or not self.partial.exists():
            raise InputError(
                "nothing to resume: no interrupted run here (run without --resume)",
                source=str(self.directory),
            )
        try:
            stored = json.loads(self.meta.read_text(encoding="utf-8")).get("fingerprint")
        except (OSError, ValueError, AttributeError):
            stored = None
        if stored != self.fingerprint:
            raise InputError(
                "the interrupted run used other settings (target, options, packs, epochs or "
                "tags); run without --resume to start again",
                source=str(self.meta),
            )
        lines = self.partial.read_text(encoding="utf-8").split("\n")
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                record = CaseRecord.from_dict(json.loads(raw))
            except (ValueError, KeyError, TypeError):
                if number >= len(lines) - 1:
                    break  # the line being written when the run was interrupted
                raise InputError(
                    "malformed journal line", source=str(self.partial), line=number
                ) from None
            self.completed.setdefault(record.pack, {})[(record.test_id, record.epoch)] = record

    def write(self, record: CaseRecord) -> None:
        if not record.resumed:
            self.write_line(json.dumps(record.to_dict(), ensure_ascii=False, allow_nan=False))

    def write_line(self, line: str) -> None:
        """Append one new record, already serialised (one line of JSON, no newline)."""
        if self._file is None:
            return
        self._file.write(line + "\n")
        self._file.flush()  # per record: a process killed outright keeps every answer it had

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def finish(self) -> None:
        """The run is complete and its final files are written: remove the journal."""
        self.close()
        self.partial.unlink(missing_ok=True)
        self.meta.unlink(missing_ok=True)


__all__ = ["Journal", "fingerprint"]
