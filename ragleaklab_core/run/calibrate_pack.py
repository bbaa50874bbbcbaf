"""``calibrate --pack``: run a pack, take each case's primary metric, fit; prepare the threshold."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from ragleaklab_core._discovery import TARGETS, load_plugin, pack_info
from ragleaklab_core.calibration.labelling import LabelOrigins, label_origins
from ragleaklab_core.calibration.measured import measured_record
from ragleaklab_core.calibration.report import CalibrationReport, calibrate
from ragleaklab_core.calibration.thresholds import (
    ThresholdsFile,
    read_thresholds,
    update_threshold,
)
from ragleaklab_core.config import Config
from ragleaklab_core.errors import InputError, did_you_mean
from ragleaklab_core.inputs import DataFile, parse_labels, read_labels
from ragleaklab_core.interfaces import pack_traits
from ragleaklab_core.run.cleanup import before_planting
from ragleaklab_core.run.names import declared_values
from ragleaklab_core.run.planted import PlantLedger, new_run_id
from ragleaklab_core.run.runner import count_asks, load_pack, run_pack
from ragleaklab_core.run.suite import settings_of


def _labels_and_origins(pack: Any, name: str, path: Path | None) -> tuple[DataFile, LabelOrigins]:
    if path is not None:
        data = read_labels(path)
        return data, label_origins(path.read_bytes(), source=str(path))
    traits = pack_traits(pack)
    raw = pack.default_labels() if traits.default_labels else None
    if raw is None:
        raise InputError(f"pack {name!r} ships no default labels; pass --labels FILE")
    source = (pack.labels_source() if traits.labels_source else None) or f"{name} default labels"
    origins = label_origins(raw, source=source)
    # What the pack's manifest declares for all of its labels counts like a line's own keys.
    declared = pack.label_provenance() if traits.label_provenance else None
    if declared is not None:
        origins = origins.with_declared(
            getattr(declared, "label_source", None), getattr(declared, "label_target", None)
        )
    return parse_labels(raw, source=source), origins


def _labels(pack: Any, name: str, path: Path | None) -> DataFile:
    return _labels_and_origins(pack, name, path)[0]


def pack_labels(name: str) -> DataFile:
    """The default labels that pack *name* ships."""
    return _labels(load_pack(name).obj, name, None)


def calibrate_pack(
    name: str,
    config: Config,
    *,
    labels: Path | None = None,
    tags: Sequence[str] = (),
    progress: Any = None,
    out: Path | None = None,
) -> CalibrationReport:
    """Run pack *name* on the config's target and calibrate its primary metric.

    The metric is ``config.calibrate.metric`` or the pack's primary metric; the labels are the
    file given or the pack's default labels. Cases that errored or could not be scored are not
    silently dropped: they are listed in the report's warnings (and as labelled-but-unscored).
    With *out*, what the target plants in a store that outlives the run is recorded in
    ``<out>/planted.jsonl`` before it is planted, as ``ragleaklab run`` does (and what an
    earlier run there left is removed first).
    """
    pack = load_pack(name)
    info = pack_info(pack.obj)
    metric = config.calibrate.metric or info.primary_metric
    declared = declared_values(info)
    if declared is not None and metric not in declared:
        # Known before a case is asked: a misspelt --metric must not cost a whole run first.
        raise InputError(
            f"pack {name!r} has no metric value {metric!r}{did_you_mean(metric, declared)}; "
            f"its metrics produce: {', '.join(declared)} (--metric, [calibrate] metric)"
        )
    settings = settings_of(config, tags)
    if progress is not None:
        progress.start(pack, count_asks(pack, settings))
    target = load_plugin(
        TARGETS, config.target.name, config.target.options, path="$.target.options"
    )
    ledger = None
    if out is not None:
        before_planting(out, target)
        ledger = PlantLedger(out, new_run_id(), config={"target": config.target.name})
    try:
        run = run_pack(
            pack,
            target_name=config.target.name,
            target_options=config.target.options,
            metric_options=config.metrics,
            settings=settings,
            on_record=None if progress is None else progress.advance,
            fresh_target=target,
            ledger=ledger,
        )
    finally:
        if ledger is not None:
            ledger.finish()
        if progress is not None:
            progress.finish()  # also when the run raised: no progress after the error
    scores = {r.test_id: r.values[metric] for r in run.results if metric in r.values}
    if not scores and not any(r.error for r in run.results):
        known = sorted(run.value_metric)
        raise InputError(
            f"no case of pack {name!r} has a value named {metric!r}; "
            f"its metrics produce: {', '.join(known) or 'nothing'}"
        )
    label_file, provenance = _labels_and_origins(pack.obj, name, labels)
    label_records = label_file.records
    if tags:  # a subset run calibrates on the subset's labels only
        ran = {r.test_id for r in run.results}
        label_records = {k: v for k, v in label_records.items() if k in ran}
    warnings = []
    mismatch = provenance.mismatch(run.target.provenance())
    if mismatch is not None:
        warnings.append(mismatch)
    errored = sorted(r.test_id for r in run.results if r.error is not None)
    if errored:
        warnings.append(
            f"{len(errored)} cases errored and have no score (first: {', '.join(errored[:5])}); "
            "see `ragleaklab run` for details"
        )
    unscorable = sorted(r.test_id for r in run.results if r.unscorable and metric not in r.values)
    if unscorable:
        warnings.append(
            f"{len(unscorable)} cases could not be scored on {metric} "
            f"(first: {', '.join(unscorable[:5])})"
        )
    report = calibrate(
        scores,
        label_records,
        fitter=config.calibrate.fitter.name,
        fitter_options=config.calibrate.fitter.options,
        target_fpr=config.calibrate.target_fpr,
        higher_is_worse=not (config.calibrate.lower_is_worse or metric in run.lower_is_worse),
        pack_name=info.name,
        metric_name=metric,
        inputs={
            "labels": {
                "path": label_file.path,
                "sha256": label_file.sha256,
                **_declared(provenance, mismatch is not None),
            },
            "pack": {**run.pack.provenance(), "version": info.version},
            "target": run.target.provenance(),
            "metrics": [m.provenance() for m in run.metrics],
            "run": {
                "epochs": settings.epochs,
                "reducer": settings.reducer,
                "tags": list(settings.tags),
            },
        },
        roc_table_max_rows=config.calibrate.roc_table_max_rows,
    )
    if warnings:
        report = attrs.evolve(report, warnings=(*warnings, *report.warnings))
    return report


def _declared(provenance: LabelOrigins, mismatch: bool | None) -> dict[str, Any]:
    """What the labels file declares about itself, for the report and the thresholds entry:
    who labelled, the systems whose answers were judged (``observed_on``, empty when the file
    does not say) and how many labels name none (``unattributed``). Silence is recorded as
    silence: a corrected rate refuses labels that do not say which system they describe."""
    declared: dict[str, Any] = {
        "label_sources": list(provenance.sources),
        "observed_on": list(provenance.targets),
        "unattributed": provenance.unattributed,
    }
    if provenance.targets and mismatch is not None:
        declared["target_mismatch"] = mismatch
    return declared


def labels_record(name: str | None, path: Path | None) -> dict[str, Any]:
    """The labels' record for ``calibrate --scores`` (no target is run, so none is compared):
    the file's path and digest and what it declares about itself (:func:`_declared`); the
    labels of pack *name* when *path* is None."""
    if path is not None:
        data = read_labels(path)
        origins = label_origins(path.read_bytes(), source=str(path))
    else:
        assert name is not None
        data, origins = _labels_and_origins(load_pack(name).obj, name, None)
    return {"path": data.path, "sha256": data.sha256, **_declared(origins, None)}


def refuse_flag_nothing(report: CalibrationReport) -> None:
    """Raise when the report's threshold would switch the gate off (it flags no positive case)
    or flags more negatives than the target allows on the labelled data."""
    r = report.result
    if report.misses_target:
        raise InputError(
            f"--write-thresholds refused: the fitted threshold {r.threshold!r} flags "
            f"{r.false_positives} of {r.n_negative} negatives, more than the target "
            f"false-positive rate {report.target_fpr:g} allows on the labelled data. Nothing "
            "was written; pass --force to store it anyway"
        )
    if not r.flags_nothing:
        return
    if r.threshold is None:
        what = "the fitter found no threshold that meets the target (it would flag nothing)"
    else:
        rule = r.decision_rule.replace("threshold", repr(r.threshold))
        caught = "no case at all" if r.flags_no_case else f"none of the {r.n_positive} positives"
        what = f"the fitted rule '{rule}' flags {caught} on the labelled data"
    raise InputError(
        f"--write-thresholds refused: {what}; storing it would disable the gate (`run` would "
        "pass every attack). Nothing was written; pass --force to store it anyway"
    )


def prepare_threshold(
    report: CalibrationReport,
    path: Path,
    *,
    force: bool = False,
    labels_source: str | None = None,
    forced: Sequence[str] = (),
) -> tuple[ThresholdsFile, str]:
    """The thresholds file with the report's threshold stored, and the change in one line.

    Nothing is written: every refusal (a threshold that flags nothing, a conflicting origin, an
    unreadable file) is raised before the caller writes any output. *labels_source* is the
    labels file given, or ``"pack NAME"`` for a pack's own labels; it is recorded with the
    fitter and the calibration date so ``run`` can say where the threshold came from. *forced*
    are the refusals ``--force`` overrode (a judge below the floor...): stored on the entry,
    shown wherever its threshold is, and a corrected rate refuses the entry. The entry is
    sealed (:mod:`ragleaklab_core.calibration.measured`): only such an entry feeds a
    corrected rate.
    """
    r = report.result
    if report.pack_name is None or report.metric_name is None:
        raise InputError("only a pack's calibration can be stored as a threshold")
    if not force:
        refuse_flag_nothing(report)
    labels = dict(report.inputs.get("labels", {}))
    if labels_source is not None:
        labels["source"] = labels_source
    entry = {
        "threshold": r.threshold,
        "decision_rule": r.decision_rule,
        "target_fpr": report.target_fpr,
        "achieved_fpr": r.achieved_fpr,
        "achieved_tpr": r.achieved_tpr,
        "n_positive": r.n_positive,
        "n_negative": r.n_negative,
        # The counts behind the two rates: what a run's corrected failing rate takes the
        # metric's error from (docs/labelling.md).
        "true_positives": r.true_positives,
        "false_positives": r.false_positives,
        "flags_nothing": r.flags_nothing,
        "fitter": {
            "name": report.fitter.get("name") or report.fitter.get("target"),
            "provider": report.fitter.get("provider"),
            "options": report.fitter.get("options"),
        },
        "guarantee": report.guarantee,
        "labels": labels,
        "pack_version": report.inputs.get("pack", {}).get("version"),
        "report_sha256": hashlib.sha256(report.to_json().encode("utf-8")).hexdigest(),
        "calibrated_at": report.generated_at,
    }
    if forced:
        entry["forced"] = list(forced)
    entry["measured"] = measured_record(entry, report.pack_name, report.metric_name)
    current = read_thresholds(path, missing_ok=True)
    return update_threshold(current, report.pack_name, report.metric_name, entry, force=force)


__all__ = [
    "calibrate_pack",
    "labels_record",
    "pack_labels",
    "prepare_threshold",
    "refuse_flag_nothing",
]
