"""Small, complete ``report.json`` documents for tests of the comparison and the gate: every
key a run writes is there (the outcome's codec refuses a report that lacks one), filled from
a pack's failing ids, the ids run and its verdicts, with one gated value ``v``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragleaklab_core.outcome import (
    Allowances,
    AppliedThreshold,
    CaseCounts,
    CaseOutcome,
    Outcome,
    PackOutcome,
    PluginRef,
    RunOutcome,
    System,
    Tool,
    Totals,
    ValueOutcome,
    Verdict,
)
from ragleaklab_core.outcome.codec import dumps, encode
from ragleaklab_core.stats.aggregation import Summary, rate_interval

RULE = "score >= threshold -> FAIL"


def _plugin(group: str, name: str, options: Mapping[str, Any] | None = None) -> PluginRef:
    return PluginRef(group=group, name=name, provider="tests", target="t:T", options=options or {})


def pack(
    name: str,
    failing: Sequence[str],
    ids: Sequence[str],
    *,
    version: str = "1",
    tags: Sequence[str] = (),
    verdict: str | None = None,
    verdict_without_thresholds: str = "pass",
    tested: bool = True,
    threshold: AppliedThreshold | None = None,
) -> dict[str, Any]:
    """A pack whose gated value ``v`` fails the cases *failing* of the cases *ids* (verdict
    ``fail`` when some fail, else ``pass``, unless *verdict* says)."""
    failing_set = set(failing)
    said = verdict or ("fail" if failing else "pass")
    value = ValueOutcome(
        metric="m",
        lower_is_worse=False,
        summary=Summary(n=len(ids), mean=None, stderr=None, min=None, max=None),
        threshold=threshold or AppliedThreshold(value=0.5, decision_rule=RULE, source="pack p 1"),
        failing_cases=len(failing),
        failing_ids=tuple(failing[:50]),
        failing_ids_truncated=len(failing) > 50,
        all_failing_ids=tuple(failing),
        unscored_ids=(),
        fail_rate=rate_interval(len(failing), len(ids)) if ids else None,
        unscorable_cases=0,
        passed=not failing,
        by_kind=None,
        by_family=None,
    )
    cases = tuple(
        CaseOutcome(
            test_id=i,
            kind=None,
            tags=tuple(tags),
            outcome=Outcome.FAIL if i in failing_set else Outcome.PASS,
            values={"v": 1.0 if i in failing_set else 0.0},
            failing=("v",) if i in failing_set else (),
            error=None,
            unscorable={},
            detail=None,
            evidence={},
        )
        for i in ids
    )
    outcome = PackOutcome(
        name=name,
        version=version,
        pack_type="t",
        primary_metric="v",
        plugin=_plugin("ragleaklab.packs", name),
        metrics=(_plugin("ragleaklab.metrics", "m"),),
        cases=CaseCounts(
            in_pack=len(ids),
            run=len(ids),
            errored=0,
            failing=len(failing),
            retried=0,
            detailed=0,
            not_detailed=0,
            epochs=1,
            reducer="mean",
            tags=tuple(tags),
            ids=tuple(ids),
        ),
        verdict=Verdict(said),
        verdict_without_thresholds=Verdict(verdict_without_thresholds),
        max_fail_rate=0.0,
        allowances=Allowances(),
        tested=tested,
        not_tested_reason=None if tested else "not tested",
        reasons=(),
        warnings=(),
        defaults_fitted_on=None,
        wiring=None,
        values={"v": value},
        errored={},
        unscorable={},
        description="",
        taxonomy=None,
        case_results=cases,
    )
    return _document(encode(_run([outcome], None, Verdict(said))))["packs"][0]


def report(
    packs: Sequence[Mapping[str, Any]],
    *,
    target: Mapping[str, Any] | None = {"name": "t", "options": {}},
    verdict: str | None = None,
) -> dict[str, Any]:
    """A run of *packs* (documents of :func:`pack`) against *target* (``{"name", "options"}``),
    its verdict the packs' unless *verdict* says."""
    statuses = [p["verdict"] for p in packs]
    said = verdict or (
        "fail" if "fail" in statuses else "error" if "error" in statuses or not packs else "pass"
    )
    ref = (
        None if target is None else _plugin("ragleaklab.targets", target["name"], target["options"])
    )
    document = _document(encode(_run([], ref, Verdict(said))))
    document["packs"] = [json.loads(json.dumps(p)) for p in packs]
    document["totals"]["packs"] = len(packs)
    return document


def _run(packs: Sequence[PackOutcome], target: PluginRef | None, verdict: Verdict) -> RunOutcome:
    return RunOutcome(
        tool=Tool(name="ragleaklab", version="0"),
        system=System(target=None, identity=None, where=None, config=None),
        generated_at="2023-11-14T22:13:20Z",
        verdict=verdict,
        settings={},
        target=target,
        inputs={"thresholds_file": None},
        totals=Totals(
            packs=len(packs),
            passed=0,
            failed=0,
            packs_errored=0,
            packs_not_tested=0,
            cases=0,
            errored=0,
        ),
        warnings=(),
        packs=tuple(packs),
    )


def _document(document: Mapping[str, Any]) -> Any:
    return json.loads(dumps(document))
