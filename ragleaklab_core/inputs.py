"""Readers for the JSONL data files: labels (``test_id``, ``label``) and scores (``score``).

Every problem is an :class:`InputError` naming the file and the line. Blank lines are allowed;
keys beyond the documented ones are ignored (harnesses often carry extra fields), but the
documented keys are checked strictly: no coercion, no NaN, no duplicates.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from attrs import frozen

from ragleaklab_core._wellformed import LONE_SURROGATE, lone_surrogate_path
from ragleaklab_core.errors import InputError

LABELS = ("positive", "negative")


@frozen
class DataFile:
    """A data file's records keyed by test_id, with what provenance needs."""

    path: str
    sha256: str
    records: dict[str, Any]


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _read_bytes(path: Path) -> bytes:
    source = str(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", source=source) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a JSONL file", source=source) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=source) from None


def _records(path: Path) -> tuple[str, Iterator[tuple[int, dict[str, Any]]]]:
    return jsonl_records(_read_bytes(path), source=str(path))


def jsonl_records(raw: bytes, *, source: str) -> tuple[str, Iterator[tuple[int, dict[str, Any]]]]:
    """The sha256 of *raw* and an iterator of ``(line number, object)`` over its JSONL lines.

    Blank lines are skipped; anything else that is not one JSON object is an
    :class:`InputError` naming *source* and the line.
    """
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError("not UTF-8 text", source=source, line=line) from None
    if not text.strip():
        raise InputError("file is empty; expected one JSON object per line", source=source)

    def iterate() -> Iterator[tuple[int, dict[str, Any]]]:
        # JSONL lines end at "\n" only (a trailing "\r" is JSON whitespace): splitlines()
        # would also split at U+2028, U+2029 and U+0085, which JSON allows inside strings.
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                yield number, _json_object(line, source, number)

    return digest, iterate()


def _json_object(line: str, source: str, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line, parse_constant=_reject_constant)
    except ValueError as exc:
        raise InputError(f"malformed JSON: {exc}", source=source, line=number) from None
    if not isinstance(record, dict):
        raise InputError(
            f"expected a JSON object, got {type(record).__name__}", source=source, line=number
        )
    # A "\\ud800" escape decodes to a str no writer accepts: refused here, where the file
    # and line are known, not as a crash when a report quotes it.
    if "\\u" in line and (where := lone_surrogate_path(record)) is not None:
        raise InputError(f"{where} {LONE_SURROGATE}", source=source, line=number)
    return record


def stream_jsonl(lines: Iterable[bytes], *, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each JSONL line of *lines* (a binary file), read as it goes.

    What :func:`jsonl_records` checks, without holding the file: a file too large for memory
    (a pack of a million cases) is read one line at a time. An empty file is an
    :class:`InputError` when the iteration reaches its end.
    """
    seen = False
    for number, raw in enumerate(lines, start=1):
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text", source=source, line=number) from None
        if line.strip():
            seen = True
            yield number, _json_object(line, source, number)
    if not seen:
        raise InputError("file is empty; expected one JSON object per line", source=source)


def _test_id(record: dict[str, Any], source: str, number: int) -> str:
    if "test_id" not in record:
        raise InputError("missing field 'test_id'", source=source, line=number)
    test_id = record["test_id"]
    if not isinstance(test_id, str) or not test_id.strip():
        raise InputError(
            f"field 'test_id' must be a non-empty string, got {test_id!r}",
            source=source,
            line=number,
        )
    return test_id


def _keyed(path: Path, value_of: Any) -> DataFile:
    return _keyed_bytes(_read_bytes(path), str(path), value_of)


def _keyed_bytes(raw: bytes, source: str, value_of: Any) -> DataFile:
    digest, records = jsonl_records(raw, source=source)
    out: dict[str, Any] = {}
    first_line: dict[str, int] = {}
    for number, record in records:
        test_id = _test_id(record, source, number)
        if test_id in out:
            raise InputError(
                f"duplicate test_id {test_id!r} (first on line {first_line[test_id]})",
                source=source,
                line=number,
            )
        out[test_id] = value_of(record, source, number)
        first_line[test_id] = number
    return DataFile(source, digest, out)


def _label(record: dict[str, Any], source: str, number: int) -> bool:
    if "label" not in record:
        raise InputError("missing field 'label'", source=source, line=number)
    label = record["label"]
    if label not in LABELS or not isinstance(label, str):
        raise InputError(
            f'field \'label\' must be "positive" or "negative", got {label!r}',
            source=source,
            line=number,
        )
    notes = record.get("notes")
    if notes is not None and not isinstance(notes, str):
        raise InputError(
            f"field 'notes' must be a string, got {notes!r}", source=source, line=number
        )
    return label == "positive"


def _score(record: dict[str, Any], source: str, number: int) -> float:
    if "score" not in record:
        raise InputError("missing field 'score'", source=source, line=number)
    score = record["score"]
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise InputError(
            f"field 'score' must be a number, got {type(score).__name__} {score!r}",
            source=source,
            line=number,
        )
    value = float(score)  # ints beyond float range raise OverflowError
    if not math.isfinite(value):
        raise InputError(f"field 'score' must be finite, got {score!r}", source=source, line=number)
    return value


def read_labels(path: Path) -> DataFile:
    """Read a labels.jsonl file: ``{"test_id": str, "label": "positive"|"negative"}`` per line.

    ``records`` maps test_id to True for positive (the attack succeeded), False for negative.
    """
    return _keyed(path, _label)


def parse_labels(raw: bytes, *, source: str) -> DataFile:
    """Like :func:`read_labels`, for labels already in memory (a pack's shipped labels)."""
    return _keyed_bytes(raw, source, _label)


def read_scores(path: Path) -> DataFile:
    """Read a scores JSONL file: ``{"test_id": str, "score": number}`` per line."""

    def value_of(record: dict[str, Any], source: str, number: int) -> float:
        try:
            return _score(record, source, number)
        except OverflowError:
            raise InputError(
                "field 'score' is too large for a float", source=source, line=number
            ) from None

    return _keyed(path, value_of)


def read_report(path: Path, *, what: str = "report") -> dict[str, Any]:
    """A ``report.json`` (or calibration report) as a dict; an :class:`InputError` naming the
    file (and the line of a JSON error) otherwise. ``ragleaklab report`` and ``diff`` read with it.
    """
    source = path.as_posix()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", source=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the {what}: {exc}", source=source) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"$: not JSON: {exc.msg}", source=source, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(f"$: the {what} must be a JSON object", source=source)
    if "\\u" in text and (where := lone_surrogate_path(data)) is not None:
        raise InputError(f"{where} {LONE_SURROGATE}", source=source)
    return data
