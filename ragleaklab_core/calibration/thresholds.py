"""The thresholds file: calibrated thresholds that ``ragleaklab run`` gates on.

``ragleaklab calibrate --write-thresholds`` stores a fitted threshold here (never in installed
package files), with where it came from and the value it replaced. It refuses to overwrite a
threshold fitted by a different fitter or on a different labels file unless forced, so a CI job
cannot silently swap a guarantee for a weaker one. The file is JSON, written atomically, with a
stable layout so it diffs well in code review.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from ragleaklab_core._atomic import write_atomic
from ragleaklab_core.calibration.measured import not_measured
from ragleaklab_core.config import DEFAULT_THRESHOLDS_FILE
from ragleaklab_core.errors import InputError, RagleaklabError
from ragleaklab_core.values import DECISION_RULES, MeasuredError, Threshold

FORMAT = "ragleaklab-thresholds"
VERSION = 1
#: The thresholds file `run` reads and `calibrate --write-thresholds` writes by default.
DEFAULT_FILE = DEFAULT_THRESHOLDS_FILE


class ThresholdsConflictError(RagleaklabError):
    """Overwriting a stored threshold would change its fitter or labels; needs ``--force``."""


@frozen
class ThresholdsFile:
    """The parsed thresholds file: pack name -> value name -> entry (a JSON object)."""

    path: str
    packs: Mapping[str, Mapping[str, Mapping[str, Any]]]

    def thresholds_for(self, pack: str) -> dict[str, Threshold]:
        """The thresholds stored for *pack*, as :class:`Threshold` objects.

        An entry's counts become its :attr:`Threshold.measured` error only when it is what
        ``calibrate --write-thresholds`` wrote from labels of a named system
        (:func:`~ragleaklab_core.calibration.measured.not_measured`); otherwise the threshold
        says why not (:attr:`Threshold.not_measured`), with the entry's ``$.path`` and the fix.
        """
        found = {}
        for name, entry in sorted(self.packs.get(pack, {}).items()):
            measured, why = measured_error(entry), None
            problem = not_measured(entry, pack, name) if _claims_measurement(entry) else None
            if problem is not None:
                measured, why = (
                    None,
                    (
                        f"the entry $.packs.{pack}.{name} of {self.path} {problem}; re-run "
                        f"`ragleaklab calibrate --pack {pack} --write-thresholds` on labels of "
                        "this system's answers (docs/labelling.md)"
                    ),
                )
            found[name] = Threshold(
                entry["threshold"],
                entry["decision_rule"],
                source=origin(self.path, pack, entry),
                measured=measured,
                not_measured=why,
                forced=_forced(entry),
            )
        return found

    def to_json(self) -> str:
        body = {
            "format": FORMAT,
            "version": VERSION,
            "packs": {
                p: {n: dict(e) for n, e in sorted(values.items())}
                for p, values in sorted(self.packs.items())
            },
        }
        return json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _claims_measurement(entry: Mapping[str, Any]) -> bool:
    """Whether *entry* holds anything a reader could take for a measured error (counts, rates,
    a labels or measured record): such an entry is checked, and said to be no measurement
    when it is not what calibrate wrote. A bare threshold and rule claims none."""
    claims = ("n_positive", "n_negative", "true_positives", "false_positives")
    return any(k in entry for k in (*claims, "achieved_tpr", "achieved_fpr", "labels", "measured"))


def _forced(entry: Mapping[str, Any]) -> tuple[str, ...]:
    forced = entry.get("forced")
    return tuple(forced) if isinstance(forced, list) else ()


def origin(path: str, pack: str, entry: Mapping[str, Any]) -> str:
    """Where a stored threshold came from, for the run summary.

    ``"ragleaklab.thresholds.json (calibrated by exact on 2026-11-24, labels my_labels.jsonl)"``
    from what ``calibrate --write-thresholds`` recorded (the fitter, the calibration date, which
    ``SOURCE_DATE_EPOCH`` pins, and the labels: a file, or ``"pack NAME"`` for a pack's own).
    Entries without that record (older files, hand-written ones) give ``"PATH (PACK)"``.
    """
    fitter = entry.get("fitter")
    name = _text(fitter.get("name")) if isinstance(fitter, Mapping) else None
    when = _text(entry.get("calibrated_at"))
    labels = entry.get("labels")
    source = None
    if isinstance(labels, Mapping):
        source = _text(labels.get("source")) or _text(labels.get("path"))
    forced = _forced(entry)  # a refusal overridden is said wherever the threshold is
    if name is None and when is None and source is None and not forced:
        return f"{path} ({pack})"
    parts = []
    if name is not None or when is not None:
        by = f"calibrated by {name or 'an unrecorded fitter'}"
        parts.append(by if when is None else f"{by} on {when[:10]}")
    if source is not None:
        parts.append(f"labels of {source}" if source.startswith("pack ") else f"labels {source}")
    if forced:
        parts.append(f"FORCED over: {'; '.join(forced)}")
    return f"{path} ({', '.join(parts)})"


def _stored_count(entry: Mapping[str, Any], count: str, rate: str, of: int) -> int | None:
    """A stored count, or the count the stored rate of *of* cases is (entries written before
    the counts were stored hold the rates alone: a rate is k / n, so k comes back exactly)."""
    value = entry.get(count)
    if value is None:
        r = entry.get(rate)
        if isinstance(r, bool) or not isinstance(r, int | float):
            return None
        value = round(r * of)
        if abs(value - r * of) > 1e-6:
            raise ValueError(f"{rate} {r!r} is no share of {of} cases")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= of:
        raise ValueError(f"{count} must be a count from 0 to {of}, got {value!r}")
    return value


def measured_error(entry: Mapping[str, Any]) -> MeasuredError | None:
    """How often the stored threshold's rule erred on the labelled cases it was fitted on
    (:class:`~ragleaklab_core.values.MeasuredError`), or None when the entry does not say (a
    hand-written entry).

    Raises:
        ValueError: The entry's counts contradict each other.
    """
    positives, negatives = entry.get("n_positive"), entry.get("n_negative")
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (positives, negatives)):
        return None
    assert isinstance(positives, int) and isinstance(negatives, int)
    tp = _stored_count(entry, "true_positives", "achieved_tpr", positives)
    fp = _stored_count(entry, "false_positives", "achieved_fpr", negatives)
    if tp is None or fp is None:
        return None
    labels = entry.get("labels")
    labels = labels if isinstance(labels, Mapping) else {}
    source = _text(labels.get("source")) or _text(labels.get("path")) or ""
    return MeasuredError(
        tp,
        positives,
        fp,
        negatives,
        labels=source,
        observed_on=_texts(labels.get("observed_on"), "observed_on"),
        label_sources=_texts(labels.get("label_sources"), "label_sources"),
    )


def _texts(value: Any, key: str) -> tuple[str, ...]:
    """A list of strings the labels record holds (absent: none). Anything else is refused, not
    read as "none": an unreadable ``observed_on`` would let another system's error correct
    this one's rates."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"labels.{key} must be a list of strings, got {value!r}")
    return tuple(value)


def _problem(path: Path, where: str, message: str) -> InputError:
    return InputError(f"{message} @ {where}", source=str(path))


def read_thresholds(path: Path, *, missing_ok: bool = False) -> ThresholdsFile:
    """Read and validate a thresholds file; problems name the file and the ``$.path``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if missing_ok:
            return ThresholdsFile(str(path), {})
        raise InputError("file not found", source=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"not a JSON thresholds file: {exc}", source=str(path)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _problem(path, "$.format", f"expected format {FORMAT!r}")
    if data.get("version") != VERSION:
        raise _problem(path, "$.version", f"unsupported version {data.get('version')!r}")
    packs = data.get("packs")
    if not isinstance(packs, dict):
        raise _problem(path, "$.packs", "expected an object of packs")
    for pack, values in packs.items():
        if not isinstance(values, dict):
            raise _problem(path, f"$.packs.{pack}", "expected an object of metric values")
        for name, entry in values.items():
            where = f"$.packs.{pack}.{name}"
            if not isinstance(entry, dict):
                raise _problem(path, where, "expected an object")
            t = entry.get("threshold")
            if t is not None and (isinstance(t, bool) or not isinstance(t, int | float)):
                raise _problem(path, f"{where}.threshold", f"expected a number or null, got {t!r}")
            if entry.get("decision_rule") not in DECISION_RULES:
                raise _problem(
                    path,
                    f"{where}.decision_rule",
                    f"expected one of {', '.join(DECISION_RULES)}",
                )
            try:
                measured_error(entry)
            except ValueError as exc:
                raise _problem(path, where, str(exc)) from None
            forced = entry.get("forced")
            if forced is not None and not (
                isinstance(forced, list) and all(isinstance(f, str) for f in forced)
            ):
                raise _problem(
                    path, f"{where}.forced", f"expected a list of strings, got {forced!r}"
                )
    return ThresholdsFile(str(path), packs)


def _identity(entry: Mapping[str, Any]) -> tuple[Any, Any]:
    return (entry.get("fitter", {}).get("name"), entry.get("labels", {}).get("sha256"))


def update_threshold(
    current: ThresholdsFile,
    pack: str,
    value_name: str,
    entry: Mapping[str, Any],
    *,
    force: bool = False,
) -> tuple[ThresholdsFile, str]:
    """Return the file with *entry* stored for *pack* / *value_name*, and a one-line change.

    The previous entry (if any) is kept under ``previous``. Raises
    :class:`ThresholdsConflictError` when the previous entry came from another fitter or
    labels file and *force* is false.
    """
    old = current.packs.get(pack, {}).get(value_name)
    if old is not None and _identity(old) != _identity(entry) and not force:
        old_fitter, old_labels = _identity(old)
        new_fitter, new_labels = _identity(entry)
        raise ThresholdsConflictError(
            f"{current.path}: the stored {pack} {value_name} threshold came from fitter "
            f"{old_fitter!r} on labels sha256 {str(old_labels)[:12]}...; this one is from "
            f"{new_fitter!r} on {str(new_labels)[:12]}...; pass --force to replace it"
        )
    stored = dict(entry)
    if old is not None:
        stored["previous"] = {k: v for k, v in old.items() if k != "previous"}
    packs = {p: dict(v) for p, v in current.packs.items()}
    packs.setdefault(pack, {})[value_name] = stored
    before = "none" if old is None else f"{old.get('threshold')!r} ({old.get('decision_rule')})"
    change = f"{pack} {value_name}: {before} -> {entry['threshold']!r} ({entry['decision_rule']})"
    return ThresholdsFile(current.path, packs), change


def write_thresholds(file: ThresholdsFile) -> None:
    """Write the file atomically (all or nothing)."""
    path = Path(file.path)
    try:
        if path.parent != Path():
            path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, file.to_json().encode("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", source=file.path) from None


__all__ = [
    "DEFAULT_FILE",
    "ThresholdsConflictError",
    "ThresholdsFile",
    "measured_error",
    "origin",
    "read_thresholds",
    "update_threshold",
    "write_thresholds",
]
