"""``report.json`` and ``runs.jsonl`` (the summary ``ragleaklab run`` prints is report.json's
text rendering, ``ragleaklab_core.reporting.console``).

``report.json`` is deterministic: the same inputs give byte-identical files whatever the hash
seed (keys and ids are sorted, floats rounded, ``generated_at`` honours ``SOURCE_DATE_EPOCH``).
Timings live only in ``runs.jsonl`` (``elapsed_ms``), which is a log of what happened.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragleaklab_core._version import __version__
from ragleaklab_core.calibration.report import _generated_at
from ragleaklab_core.run.case_details import failing_details, rates_by_family, rates_by_kind
from ragleaklab_core.run.verdict import LISTED, PackVerdict, run_status


def _pack_dict(v: PackVerdict) -> dict[str, Any]:
    run = v.run
    info = run.info
    return {
        "name": info.name,
        "version": info.version,
        "pack_type": info.pack_type,
        "primary_metric": info.primary_metric,
        "plugin": run.pack.provenance(),
        "metrics": [m.provenance() for m in run.metrics],
        "cases": {
            "in_pack": run.n_cases_in_pack,
            "run": len(run.results),
            "errored": len(v.errored_ids),
            "epochs": run.settings.epochs,
            "reducer": run.settings.reducer,
            "tags": list(run.settings.tags),
            "ids": sorted(r.test_id for r in run.results),
        },
        "verdict": v.status,
        "tested": v.tested,
        "not_tested_reason": v.not_tested,
        "reasons": list(v.reasons),
        "warnings": list(v.warnings),
        "wiring": None if run.wiring is None else run.wiring.to_dict(),
        "values": {
            value.name: {
                **value.to_dict(),
                "by_kind": rates_by_kind(v, value.name),
                "by_family": rates_by_family(v, value.name),
            }
            for value in v.values
        },
        "errored": {k: v.errors[k] for k in list(v.errors)[:LISTED]},
        "unscorable": {
            metric: {"count": len(ids), "ids": dict(list(ids.items())[:LISTED])}
            for metric, ids in v.unscorable.items()
        },
        "failing_details": failing_details(v),
        "description": info.description,
        "taxonomy": None if info.taxonomy is None else info.taxonomy.to_dict(),
        "case_results": _case_results(v),
    }


def _sorted_keys(data: Any) -> Any:
    # Evidence is the metric plugin's own dict: sort its keys so the report does not depend on
    # the order a plugin happened to build it in.
    if isinstance(data, Mapping):
        return {str(k): _sorted_keys(data[k]) for k in sorted(data, key=str)}
    if isinstance(data, list | tuple):
        return [_sorted_keys(x) for x in data]
    return data


def _case_results(v: PackVerdict) -> list[dict[str, Any]]:
    """Every case run, in the pack's order: its outcome, epoch-reduced values, the gated values
    it fails, why it errored or could not be scored, and (failing cases only, to keep the report
    small) each epoch's evidence by metric. What per-case renderings (JUnit, SARIF) read."""
    failing: dict[str, list[str]] = {}
    for value in v.values:
        for tid in value.failing_ids:
            failing.setdefault(tid, []).append(value.name)
    epochs: dict[str, list[Any]] = {}
    for record in sorted(v.run.records, key=lambda r: r.epoch):
        epochs.setdefault(record.test_id, []).append(record)
    out = []
    for r in v.run.results:
        fails = sorted(failing.get(r.test_id, []))
        if r.error is not None:
            outcome = "error"
        elif fails:
            outcome = "fail"
        elif r.unscorable:
            outcome = "unscorable"
        else:
            outcome = "pass"
        evidence: dict[str, list[Any]] = {}
        if fails:
            for record in epochs.get(r.test_id, []):
                for metric, scored in sorted(record.metrics.items()):
                    evidence.setdefault(metric, []).append(
                        _sorted_keys(scored.get("evidence") or {})
                    )
        out.append(
            {
                "test_id": r.test_id,
                "outcome": outcome,
                # Unrounded: a value rounded below its threshold would seem to pass it.
                "values": {k: float(x) for k, x in sorted(r.values.items())},
                "failing": fails,
                "error": r.error,
                "unscorable": dict(sorted(r.unscorable.items())),
                "evidence": evidence,
            }
        )
    return out


def build_report(
    verdicts: Sequence[PackVerdict],
    *,
    settings: Mapping[str, Any],
    inputs: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``report.json`` document."""
    status, exit_code = run_status(verdicts)
    target = verdicts[0].run.target.provenance() if verdicts else None
    return {
        "tool": {"name": "ragleaklab", "version": __version__},
        "generated_at": _generated_at(),
        "verdict": status,
        "exit_code": exit_code,
        "settings": dict(settings),
        "target": target,
        "inputs": dict(inputs),
        "totals": {
            "packs": len(verdicts),
            "passed": sum(v.status == "pass" for v in verdicts),
            "failed": sum(v.status == "fail" for v in verdicts),
            "packs_errored": sum(v.status == "error" for v in verdicts),
            "packs_not_tested": sum(not v.tested for v in verdicts),
            "cases": sum(len(v.run.results) for v in verdicts),
            "errored": sum(len(v.errored_ids) for v in verdicts),
        },
        "packs": [_pack_dict(v) for v in verdicts],
    }


def dumps(document: Mapping[str, Any]) -> str:
    """JSON as ragleaklab writes it: indented, no NaN, newline at the end."""
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def runs_jsonl(verdicts: Sequence[PackVerdict]) -> str:
    """Every case and epoch of every pack, one JSON object per line."""
    lines = [
        json.dumps(r.to_dict(), ensure_ascii=False, allow_nan=False, sort_keys=False)
        for v in verdicts
        for r in v.run.records
    ]
    return "".join(line + "\n" for line in lines)


__all__ = ["build_report", "dumps", "runs_jsonl"]
