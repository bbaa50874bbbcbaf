"""``report.json`` as JUnit XML, for CI test-report views (Jenkins xUnit, GitLab, GitHub).

One ``testsuite`` per pack, one ``testcase`` per case (``classname`` the pack, ``name`` the case
id), and one ``testcase`` per gated value of the pack (``aggregate: NAME``: the pack-level gate on
its failing rate). A failing case carries a ``failure`` with its values, the thresholds and
decision rules it fails and the metric's evidence; an errored case an ``error``; a case a metric
could not score a ``skipped``. A pack that was not (fully) tested gets an erroring ``testcase``
named ``pack verdict``, so that CI cannot read it as green. Everything comes from the outcome
decoded from report.json, so rendering a stored report gives the same bytes as the run that
wrote it.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

import attrs

from ragleaklab_core.outcome import (
    AppliedThreshold,
    CaseOutcome,
    Outcome,
    PackOutcome,
    RunOutcome,
    System,
    ValueOutcome,
    Verdict,
)
from ragleaklab_core.reporting.cases import OUTCOME_FIELDS, outcome_of
from ragleaklab_core.reporting.model import RunReport

# Characters XML 1.0 cannot hold even escaped (answers and evidence may contain them).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


#: The name of the testcase that stands for a pack that was not (fully) tested.
PACK_VERDICT = "pack verdict"


def _rule(threshold: AppliedThreshold) -> str:
    return threshold.decision_rule.replace("threshold", repr(threshold.value))


def _case(pack: PackOutcome, case: CaseOutcome) -> ET.Element:
    element = ET.Element("testcase", {"classname": pack.name, "name": case.test_id})
    if case.outcome == Outcome.ERROR:
        ET.SubElement(
            element, "error", {"type": "error", "message": case.error or ""}
        ).text = case.error
    elif case.outcome == Outcome.FAIL:
        lines = []
        for name in case.failing:
            threshold = pack.values[name].threshold
            assert threshold is not None  # a case fails gated values only
            lines.append(
                f"{name} = {case.values[name]!r} fails [{_rule(threshold)}]"
                f" (threshold from {threshold.source})"
            )
        others = {k: x for k, x in case.values.items() if k not in case.failing}
        if others:
            lines.append("other values: " + ", ".join(f"{k} = {x!r}" for k, x in others.items()))
        for metric, epochs in case.evidence.items():
            for n, evidence in enumerate(epochs):
                label = (
                    f"evidence ({metric}, epoch {n})" if len(epochs) > 1 else f"evidence ({metric})"
                )
                lines.append(f"{label}: {json.dumps(evidence, ensure_ascii=False)}")
        ET.SubElement(
            element,
            "failure",
            {"type": "threshold", "message": "; ".join(lines[: len(case.failing)])},
        ).text = "\n".join(lines)
    elif case.outcome == Outcome.UNSCORABLE:
        why = "; ".join(f"{m}: {reason}" for m, reason in case.unscorable.items())
        ET.SubElement(element, "skipped", {"type": "unscorable", "message": why})
    return element


def _aggregate(pack: PackOutcome, name: str, value: ValueOutcome) -> ET.Element:
    element = ET.Element("testcase", {"classname": pack.name, "name": f"aggregate: {name}"})
    if value.passed is False:
        assert value.threshold is not None  # only a gated value passes or fails
        rate = value.fail_rate
        text = [
            f"{value.failing_cases} of {value.summary.n} cases fail [{_rule(value.threshold)}]"
            f" (threshold from {value.threshold.source})",
        ]
        if rate is not None:
            text.append(
                f"failing rate {rate.rate} ({rate.confidence:.0%} exact interval "
                f"{rate.lower} to {rate.upper})"
            )
        if value.unscorable_cases:
            text.append(f"{value.unscorable_cases} cases could not be scored by {value.metric}")
        mine = [r for r in pack.reasons if r.startswith(f"{name}: ")]
        ET.SubElement(
            element, "failure", {"type": "gate", "message": "; ".join(mine) or text[0]}
        ).text = "\n".join(text)
    return element


def _suite(pack: PackOutcome, system: System) -> ET.Element:
    gated = pack.gated()
    cases = [_case(pack, c) for c in pack.case_results]
    cases += [_aggregate(pack, name, value) for name, value in gated.items()]
    if pack.verdict is Verdict.ERROR or not pack.tested:
        element = ET.Element("testcase", {"classname": pack.name, "name": PACK_VERDICT})
        why = pack.not_tested_reason or "; ".join(pack.reasons) or "the pack errored"
        ET.SubElement(element, "error", {"type": "not tested", "message": why}).text = "\n".join(
            pack.reasons
        )
        cases.append(element)
    failures, errors, skipped = (
        sum(1 for c in cases if c.find(kind) is not None)
        for kind in ("failure", "error", "skipped")
    )
    suite = ET.Element(
        "testsuite",
        {
            "name": pack.name,
            "tests": str(len(cases)),
            "failures": str(failures),
            "errors": str(errors),
            "skipped": str(skipped),
        },
    )
    properties = ET.SubElement(suite, "properties")
    shown = {
        "pack.version": pack.version,
        "pack.verdict": pack.verdict,
        "epochs": pack.cases.epochs,
        "reducer": pack.cases.reducer,
        "cases.in_pack": pack.cases.in_pack,
        "max_fail_rate": pack.max_fail_rate,
        # When set, the bar on corrected rates that decided instead (absent otherwise).
        "max_corrected_rate": pack.allowances and pack.allowances.max_corrected_rate,
        # Which system was tested (the same on every suite: the schema has no run-level place).
        **{f"system.{key}": value for key, value in attrs.asdict(system).items()},
        # A stored threshold calibrate stored over a refusal (--force): which, and why.
        **{
            f"threshold.{name}.forced": "; ".join(value.threshold.forced)
            for name, value in sorted(gated.items())
            if value.threshold is not None and value.threshold.forced
        },
    }
    for key, value in shown.items():
        if value is not None:
            ET.SubElement(properties, "property", {"name": key, "value": str(value)})
    suite.extend(cases)
    return suite


def render(report: RunOutcome | RunReport | Mapping[str, Any]) -> str:
    """*report* (the outcome, or a parsed ``report.json``) as a JUnit XML document.

    Raises:
        InputError: *report* lacks the per-case results (``packs[].case_results``) or
            fields of them (an older ragleaklab wrote it), or does not parse.
    """
    outcome = outcome_of(report, OUTCOME_FIELDS)
    suites = [_suite(pack, outcome.system) for pack in outcome.packs]
    root = ET.Element(
        "testsuites",
        {
            "name": "ragleaklab",
            # The suites' own counts, summed (each suite's attributes are set just above).
            **{
                count: str(sum(int(s.attrib[count]) for s in suites))
                for count in ("tests", "failures", "errors")
            },
        },
    )
    root.extend(suites)
    ET.indent(root)
    for element in root.iter():
        element.attrib = {k: _safe(x) for k, x in element.attrib.items()}
        if element.text is not None:
            element.text = _safe(element.text)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


__all__ = ["PACK_VERDICT", "render"]
