"""Which stored thresholds entries carry a measured error: only what ``calibrate`` wrote.

A corrected failing rate (:mod:`ragleaklab_core.stats.corrected`) takes a metric's sensitivity
and specificity out of a run's count. Those must have been *measured*: counted by ``ragleaklab
calibrate --write-thresholds`` on a labels file that says which system's answers it judged.
Four counts typed into the thresholds file by hand are no measurement, and correct nothing.

So an entry feeds a corrected rate only when it carries the whole record ``calibrate`` writes
(:data:`REQUIRED`): the four counts, the fitter, the calibration date, the labels' digest and
source, the systems the labels judged (``labels.observed_on``), and a ``measured`` record that
says ``calibrate`` wrote it, with a **seal**: the sha256 of those fields (:func:`seal`). A field
missing, or a field changed after calibrate wrote it (an ``observed_on`` edited to name the
target being run, a count raised), and the entry is not measured: under
``--max-corrected-rate`` its pack is not tested.

The trust model, honestly: the seal is a checksum, not a signature. It ties the counts and the
systems to the labels' digest so that an edit is seen, but whoever can edit the file can also
recompute it on purpose. The thresholds file is input the team reviews like code; what this
module guarantees is that a file that is not what ``calibrate`` writes is refused, never read
as a measurement. The seal also covers the pack and value the entry was calibrated for: an
entry copied into another value's place measured another metric.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

#: What the ``measured`` record of an entry ``calibrate --write-thresholds`` wrote says.
WRITTEN_BY = "ragleaklab calibrate --write-thresholds"

#: The fields a measured entry must hold (as ``$.path`` suffixes), in the order they are named.
REQUIRED = (
    "n_positive",
    "n_negative",
    "true_positives",
    "false_positives",
    "fitter.name",
    "calibrated_at",
    "labels.sha256",
    "labels.source",
    "labels.observed_on",
    "measured",
)

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _get(entry: Mapping[str, Any], dotted: str) -> Any:
    value: Any = entry
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _sealed(entry: Mapping[str, Any], pack: str, value: str) -> dict[str, Any]:
    """The fields the seal covers: where the entry stands (its pack and value: an entry copied
    to another value's place measured another metric), what a corrected rate reads, and what
    says where it came from. Anything else (a note, the previous entry) may change freely."""
    labels = entry.get("labels") if isinstance(entry.get("labels"), Mapping) else {}
    assert isinstance(labels, Mapping)
    return {
        "pack": pack,
        "value": value,
        "threshold": entry.get("threshold"),
        "decision_rule": entry.get("decision_rule"),
        "n_positive": entry.get("n_positive"),
        "n_negative": entry.get("n_negative"),
        "true_positives": entry.get("true_positives"),
        "false_positives": entry.get("false_positives"),
        "fitter": _get(entry, "fitter.name"),
        "calibrated_at": entry.get("calibrated_at"),
        "labels": {
            key: labels.get(key)
            for key in ("sha256", "source", "observed_on", "label_sources", "unattributed")
        },
        "forced": entry.get("forced"),
    }


def seal(entry: Mapping[str, Any], pack: str, value: str) -> str:
    """The sha256 of the fields of *entry*, stored for *pack*'s *value*, that make it a
    measurement (see the module)."""
    canonical = json.dumps(
        _sealed(entry, pack, value), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def measured_record(entry: Mapping[str, Any], pack: str, value: str) -> dict[str, Any]:
    """The ``measured`` record ``calibrate --write-thresholds`` stores on *entry* for *pack*'s
    *value*."""
    return {"written_by": WRITTEN_BY, "seal": seal(entry, pack, value)}


def _missing(entry: Mapping[str, Any]) -> list[str]:
    missing = []
    for field in REQUIRED:
        value = _get(entry, field)
        if field in ("n_positive", "n_negative", "true_positives", "false_positives"):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif field == "labels.sha256":
            ok = isinstance(value, str) and bool(_SHA256.match(value))
        elif field == "labels.observed_on":
            ok = isinstance(value, list)
        elif field == "measured":
            ok = isinstance(value, Mapping) and value.get("written_by") == WRITTEN_BY
        else:
            ok = isinstance(value, str) and bool(value.strip()) and value.strip() != "?"
        if not ok:
            missing.append(field)
    return missing


def not_measured(entry: Mapping[str, Any], pack: str, value: str) -> str | None:
    """Why *entry* (of a thresholds file, stored for *pack*'s *value*) carries no measured
    error a corrected rate may take, or None when it does. The reason says what the entry
    lacks, not where it is: the caller names its ``$.path`` and the fix."""
    missing = _missing(entry)
    if missing:
        return "is not what calibrate --write-thresholds writes from labels: it lacks " + ", ".join(
            missing
        )
    record = entry["measured"]
    if record.get("seal") != seal(entry, pack, value):
        return (
            "was changed after calibrate wrote it: its measured.seal does not match its counts, "
            "threshold, fitter, date, labels digest and labelled systems, or the pack and value "
            "it was calibrated for"
        )
    labels = entry["labels"]
    observed_on, unattributed = labels.get("observed_on"), labels.get("unattributed")
    if not observed_on or (isinstance(unattributed, int) and unattributed > 0):
        some = f"{unattributed} of its labels name" if unattributed else "its labels name"
        return (
            f"was fitted on labels ({labels.get('source')}) that do not say which system's "
            f"answers they judged ({some} no target): a labels file must name the system it "
            "describes (`ragleaklab label import` writes `target` on every line)"
        )
    forced = entry.get("forced")
    if forced:
        shown = "; ".join(str(f) for f in forced) if isinstance(forced, list) else str(forced)
        return (
            f"was stored with --force over a refusal ({shown}): an error measured by labels "
            "that poor corrects nothing"
        )
    return None


__all__ = ["REQUIRED", "WRITTEN_BY", "measured_record", "not_measured", "seal"]
