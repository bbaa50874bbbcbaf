"""Whole ``report.json`` documents from the few fields a rendering test is about.

A rendering reads the finished run through the outcome's codec, which refuses a document that
lacks a field; a test that is about one value's rates or one case's evidence states those and
:func:`completed` fills every other field with what an empty run writes (nothing failing, no
target, no allowances), so what it renders is what the test states and nothing more.
"""

from __future__ import annotations

import copy
from typing import Any

from ragleaklab_core.outcome import Verdict

_RUN: dict[str, Any] = {
    "tool": {"name": "ragleaklab", "version": "0"},
    "system": {"target": None, "identity": None, "where": None, "config": None},
    "generated_at": "1970-01-01T00:00:00Z",
    "verdict": "pass",
    "settings": {},
    "target": None,
    "inputs": {},
    "totals": {"packs": 0, "passed": 0, "failed": 0, "packs_errored": 0, "packs_not_tested": 0,
               "cases": 0, "errored": 0},
    "warnings": [],
}  # fmt: skip
_PACK: dict[str, Any] = {
    "name": "p", "version": "1", "pack_type": "test", "primary_metric": "m",
    "plugin": {"group": "ragleaklab.packs", "name": None, "provider": None, "target": "test",
               "options": {}},
    "metrics": [],
    "cases": {"in_pack": 0, "run": 0, "errored": 0, "retried": 0, "detailed": 0,
              "not_detailed": 0, "epochs": 1, "reducer": "max", "tags": [], "ids": []},
    "verdict": "pass", "verdict_without_thresholds": "pass", "max_fail_rate": 0.0,
    "tested": True, "not_tested_reason": None, "reasons": [], "warnings": [],
    "defaults_fitted_on": None, "wiring": None, "values": {}, "errored": {}, "unscorable": {},
    "description": "", "taxonomy": None,
}  # fmt: skip
_VALUE: dict[str, Any] = {
    "metric": "m", "lower_is_worse": False,
    "summary": {"n": 0, "mean": None, "stderr": None, "min": None, "max": None},
    "threshold": None, "failing_cases": 0, "failing_ids": [], "failing_ids_truncated": False,
    "all_failing_ids": [], "unscored_ids": [], "fail_rate": None, "unscorable_cases": 0,
    "passed": None, "corrected_rate": None, "by_kind": None, "by_family": None,
}  # fmt: skip
_CASE: dict[str, Any] = {
    "test_id": "c", "kind": None, "tags": [], "outcome": "pass", "values": {}, "failing": [],
    "error": None, "unscorable": {}, "detail": None, "evidence": {},
}  # fmt: skip
_DETAIL: dict[str, Any] = {"query": None, "answer": None, "answer_truncated": False,
                           "retrieved_ids": None}  # fmt: skip
_RATE: dict[str, Any] = {"confidence": 0.95}


def _merged(template: dict[str, Any], stated: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(template)
    for key, value in stated.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _rate(rate: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if rate is None else _merged(_RATE, rate)


def _value(stated: dict[str, Any]) -> dict[str, Any]:
    value = _merged(_VALUE, stated)
    value["fail_rate"] = _rate(value["fail_rate"])
    for group in ("by_kind", "by_family"):
        if value[group] is not None:
            value[group] = {k: _rate(r) for k, r in value[group].items()}
    return value


def _case(stated: dict[str, Any]) -> dict[str, Any]:
    case = _merged(_CASE, stated)
    if case["detail"] is not None:
        case["detail"] = _merged(_DETAIL, case["detail"])
    return case


def _pack(stated: dict[str, Any]) -> dict[str, Any]:
    pack = _merged(_PACK, {k: v for k, v in stated.items() if k not in ("values", "case_results")})
    pack["values"] = {name: _value(v) for name, v in (stated.get("values") or {}).items()}
    pack["case_results"] = [_case(c) for c in stated.get("case_results") or []]
    if "detailed" not in (stated.get("cases") or {}):
        pack["cases"]["detailed"] = sum(1 for c in pack["case_results"] if c["detail"])
    return pack


def completed(stated: dict[str, Any]) -> dict[str, Any]:
    """The report.json document *stated* describes, every field it leaves out filled as an
    empty run writes it (its packs', values', rates' and cases' too); ``exit_code`` is its
    verdict's."""
    report = _merged(_RUN, {k: v for k, v in stated.items() if k != "packs"})
    report["packs"] = [_pack(p) for p in stated.get("packs") or []]
    report["exit_code"] = Verdict(report["verdict"]).exit_code
    return report


__all__ = ["completed"]
