"""``report.json`` as SARIF 2.1.0, for code-scanning dashboards.

One ``rule`` per pack and gated value (``PACK/VALUE``), tagged with the OWASP Top 10 for LLM
Applications and MITRE ATLAS ids and carrying the ``security-severity`` the pack declares in its
``[taxonomy]`` (the core knows no catalogue: a pack without one gets neither); one ``result`` per
failing case and value, at a logical location naming the target, the pack and the case (a finding
has no source file). Its ``partialFingerprints`` hash the pack, the case and the value, never the
answer, so a dashboard tracks one finding across runs whatever the system said. Errored cases
and packs that were not tested are tool execution notifications: they are not findings.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import attrs

from ragleaklab_core.outcome import (
    AppliedThreshold,
    CaseOutcome,
    Outcome,
    PackOutcome,
    RunOutcome,
    ValueOutcome,
    Verdict,
)
from ragleaklab_core.reporting.cases import OUTCOME_FIELDS, outcome_of
from ragleaklab_core.reporting.model import RunReport
from ragleaklab_core.values import PackTaxonomy

#: The official OASIS schema (errata 01), which the log names as its ``$schema``.
SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
#: The key of the one partial fingerprint (versioned: its recipe never changes under it).
FINGERPRINT = "ragleaklabFinding/v1"
#: ``security-severity`` (a CVSS-like score, as code scanning reads it) for each pack severity.
SECURITY_SEVERITY = {"low": "3.0", "medium": "5.5", "high": "8.0", "critical": "9.5"}
_LEVEL = {"low": "note", "medium": "warning", "high": "error", "critical": "error"}


def fingerprint(pack: str, test_id: str, value: str) -> str:
    """The stable identity of a finding: the pack, the case and the value it fails."""
    key = json.dumps([pack, test_id, value], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _rule_text(threshold: AppliedThreshold) -> str:
    return threshold.decision_rule.replace("threshold", repr(threshold.value))


def _rule(pack: PackOutcome, name: str, value: ValueOutcome) -> dict[str, Any]:
    taxonomy = pack.taxonomy or PackTaxonomy()
    threshold = value.threshold
    assert threshold is not None  # a rule is made for each gated value only
    ids = [*taxonomy.owasp_llm, *taxonomy.mitre_atlas]
    where = ", ".join(ids) or "no catalogue ids declared by the pack"
    help_text = (
        f"{pack.description or pack.name}\n\n"
        f"A case fails when its {name} (scored by the {value.metric} metric) satisfies "
        f"[{_rule_text(threshold)}]; the threshold comes from {threshold.source}. "
        f"Catalogue: {where}."
    )
    properties: dict[str, Any] = {"tags": ["security", *ids]}
    severity = taxonomy.severity
    if severity in SECURITY_SEVERITY:
        properties["security-severity"] = SECURITY_SEVERITY[severity]
    return {
        "id": f"{pack.name}/{name}",
        "name": f"{pack.name}/{name}",
        "shortDescription": {"text": f"{pack.name} {pack.version}: {name} fails its threshold"},
        "fullDescription": {"text": help_text.split("\n\n")[-1]},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": _LEVEL.get(str(severity), "error")},
        "properties": properties,
    }


def _result(
    report: RunOutcome,
    pack: PackOutcome,
    case: CaseOutcome,
    name: str,
    rule_index: int,
    still: frozenset[str] | None = None,
) -> dict[str, Any]:
    threshold = pack.values[name].threshold
    assert threshold is not None  # a case fails gated values only
    target = (report.target.name if report.target is not None else None) or "target"
    text = (
        f"{case.test_id}: {name} = {case.values[name]!r} fails "
        f"[{_rule_text(threshold)}] (threshold from {threshold.source}) on target {target}"
    )
    properties: dict[str, Any] = {"values": dict(case.values)}
    if case.evidence:
        properties["evidence"] = {metric: list(e) for metric, e in case.evidence.items()}
    found: dict[str, Any] = {}
    if still is not None:
        # SARIF's own baseline comparison, for dashboards that read it: failing in the
        # baseline run too, or not (newly failing, or not run or scored there).
        found["baselineState"] = "unchanged" if case.test_id in still else "new"
    return {
        **found,
        "ruleId": f"{pack.name}/{name}",
        "ruleIndex": rule_index,
        "message": {"text": text},
        "locations": [
            {
                "logicalLocations": [
                    {
                        "name": case.test_id,
                        "fullyQualifiedName": f"{target}/{pack.name}/{case.test_id}",
                        "kind": "test",
                    }
                ]
            }
        ],
        "partialFingerprints": {FINGERPRINT: fingerprint(pack.name, case.test_id, name)},
        "properties": properties,
    }


def _notifications(pack: PackOutcome) -> list[dict[str, Any]]:
    out = [
        {
            "level": "error",
            "message": {"text": f"{pack.name} {case.test_id} errored: {case.error}"},
            "descriptor": {"id": "case-error"},
        }
        for case in pack.case_results
        if case.outcome == Outcome.ERROR
    ]
    if pack.verdict is Verdict.ERROR or not pack.tested:
        why = pack.not_tested_reason or "; ".join(pack.reasons) or "the pack errored"
        out.append(
            {
                "level": "error",
                "message": {"text": f"{pack.name} was not (fully) tested: {why}"},
                "descriptor": {"id": "pack-not-tested"},
            }
        )
    return out


def _still_failing(report: RunOutcome) -> dict[tuple[str, str], frozenset[str]] | None:
    """(pack, value) -> the cases failing in the baseline run too, for a run compared with one
    (``run --baseline``); None otherwise. A value the diff did not compare has no entry: its
    failing cases were not in the baseline, so they are new."""
    if report.gate is None or report.gate.baseline is None:
        return None
    # The comparison as ``ragleaklab diff --json`` prints it (held as the comparison wrote it).
    values = report.gate.baseline.diff.get("values") or []
    return {(v["pack"], v["value"]): frozenset(v.get("still_failing") or []) for v in values}


def render(report: RunOutcome | RunReport | Mapping[str, Any]) -> str:
    """*report* (the outcome, or a parsed ``report.json``) as a SARIF 2.1.0 log (JSON text).

    Raises:
        InputError: *report* lacks the per-case results (``packs[].case_results``) or
            fields of them (an older ragleaklab wrote it), or does not parse.
    """
    outcome = outcome_of(report, OUTCOME_FIELDS)
    compared = _still_failing(outcome)
    rules: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for pack in outcome.packs:
        index = {}
        for name, value in pack.values.items():
            if value.gated:
                index[name] = len(rules)
                rules.append(_rule(pack, name, value))
        for case in pack.case_results:
            for name in case.failing:
                still = None if compared is None else compared.get((pack.name, name), frozenset())
                results.append(_result(outcome, pack, case, name, index[name], still))
        notifications += _notifications(pack)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": outcome.tool.name,
                "version": outcome.tool.version,
                "rules": rules,
            }
        },
        "invocations": [
            {
                "executionSuccessful": outcome.exit_code in (0, 1),
                "toolExecutionNotifications": notifications,
                "exitCode": outcome.exit_code,
            }
        ],
        "results": results,
        "properties": {
            "verdict": outcome.verdict.value,
            "generated_at": outcome.generated_at,
            "system": attrs.asdict(outcome.system),
        },
    }
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


__all__ = ["FINGERPRINT", "SECURITY_SEVERITY", "fingerprint", "render"]
