"""``report.json`` and ``runs.jsonl`` (the summary ``ragleaklab run`` prints is report.json's
text rendering, ``ragleaklab_core.reporting.console``).

``report.json`` is deterministic: the same inputs give byte-identical files whatever the hash
seed (keys and ids are sorted, floats rounded, ``generated_at`` honours ``SOURCE_DATE_EPOCH``).
Timings live only in ``runs.jsonl`` (``elapsed_ms``), which is a log of what happened. It is
indented, but each case of a pack's ``case_results`` is one line: indented, the cases were most of
the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragleaklab_core._version import __version__
from ragleaklab_core.calibration.report import _generated_at
from ragleaklab_core.run.case_details import (
    case_results,
    detail_counts,
    rates_by_family,
    rates_by_kind,
)
from ragleaklab_core.run.verdict import LISTED, PackVerdict, run_status


def _pack_dict(v: PackVerdict) -> dict[str, Any]:
    run = v.run
    info = run.info
    cases = case_results(v)
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
            # Case epochs answered again because the worker answering them was lost (Ray).
            "retried": run.retried,
            **detail_counts(cases),
            "epochs": run.settings.epochs,
            "reducer": run.settings.reducer,
            "tags": list(run.settings.tags),
            "ids": sorted(r.test_id for r in run.results),
        },
        "verdict": v.status,
        "verdict_without_thresholds": v.status_without_thresholds,
        "max_fail_rate": v.max_fail_rate,
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
        "description": info.description,
        "taxonomy": None if info.taxonomy is None else info.taxonomy.to_dict(),
        "case_results": cases,
    }


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


#: The lists written one item a line: a pack's cases, thousands of them, each a handful of keys
#: (indented, they made up most of report.json).
ONE_LINE_ITEMS = frozenset({"case_results"})


def dumps(document: Mapping[str, Any]) -> str:
    """JSON as ragleaklab writes it: indented by two spaces as ``json.dumps`` indents, except
    that each item of a :data:`ONE_LINE_ITEMS` list is on one line; no NaN, newline at the end."""
    return _indented(document, 0) + "\n"


def _indented(value: Any, level: int, one_line_items: bool = False) -> str:
    if not value or not isinstance(value, Mapping | list | tuple):
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    pad = "  " * (level + 1)
    if isinstance(value, Mapping):
        items = [
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}: "
            + _indented(v, level + 1, str(k) in ONE_LINE_ITEMS)
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if one_line_items:
        items = [pad + json.dumps(v, ensure_ascii=False, allow_nan=False) for v in value]
    else:
        items = [pad + _indented(v, level + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + "  " * level + "]"


def runs_jsonl(verdicts: Sequence[PackVerdict]) -> str:
    """Every case and epoch of every pack, one JSON object per line."""
    lines = [
        json.dumps(r.to_dict(), ensure_ascii=False, allow_nan=False, sort_keys=False)
        for v in verdicts
        for r in v.run.records
    ]
    return "".join(line + "\n" for line in lines)


__all__ = ["build_report", "dumps", "runs_jsonl"]
