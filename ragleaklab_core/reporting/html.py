"""report.json as one self-contained HTML page: the verdict, a table per pack, the ROC curve and
calibration details when a calibration report is given, and every failing case listed in the
report, filterable in the page.

Self-contained means no request ever leaves the page: CSS, the ROC plot (SVG) and the filter
script are inline, and a Content-Security-Policy forbids every fetch and every script but the
page's own (by its hash), so even text that escaped escaping could not run or call out. All
text goes through :func:`html.escape`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from html import escape as _escape
from typing import Any

from ragleaklab_core.outcome import (
    AppliedThreshold,
    CaseDetail,
    PackOutcome,
    RunOutcome,
    Verdict,
)
from ragleaklab_core.reporting import wording as w
from ragleaklab_core.reporting.cases import DETAIL_FIELDS, outcome_of
from ragleaklab_core.reporting.model import RunReport

#: Code points HTML forbids in a document (controls but tab, newline, form feed and carriage
#: return; noncharacters): a case's text may hold any, and each is shown as U+FFFD.
INVALID = re.compile(
    "[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]"
    "|[\U0001fffe\U0001ffff\U0002fffe\U0002ffff\U0003fffe\U0003ffff\U0004fffe\U0004ffff"
    "\U0005fffe\U0005ffff\U0006fffe\U0006ffff\U0007fffe\U0007ffff\U0008fffe\U0008ffff"
    "\U0009fffe\U0009ffff\U000afffe\U000affff\U000bfffe\U000bffff\U000cfffe\U000cffff"
    "\U000dfffe\U000dffff\U000efffe\U000effff\U000ffffe\U000fffff\U0010fffe\U0010ffff]"
)

#: Characters of an answer shown per case (report.json already holds only an excerpt).
ANSWER_CHARS = 400

_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;
background:#f6f8fa}
main{max-width:1200px;margin:0 auto;padding:16px 24px 48px}
h1{margin:0;font-size:28px}h2{margin:28px 0 8px;font-size:20px}h3{margin:20px 0 6px;font-size:16px}
.verdict{padding:18px 24px;color:#fff}.verdict p{margin:4px 0 0}
.pass{background:#1a7f37}.fail{background:#cf222e}.error{background:#9a6700}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;
font-weight:600;vertical-align:middle}
section.pack,section.calibration{background:#fff;border:1px solid #d0d7de;border-radius:6px;
padding:4px 16px 12px;margin:16px 0}
table{border-collapse:collapse;width:100%;margin:8px 0}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.kind td{color:#57606a}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:12px;max-height:16em;
overflow:auto}
.muted{color:#57606a}.filters{display:flex;flex-wrap:wrap;gap:12px;align-items:center;
margin:8px 0}
.filters input[type=search]{padding:4px 8px;min-width:280px}
.roc{display:flex;gap:24px;flex-wrap:wrap;align-items:flex-start}
.roc svg{background:#fff;border:1px solid #d0d7de}.roc table{flex:1;min-width:420px;margin:0}
#cases td{font-size:13px}
"""

# Filters the failing cases by free text and by pack and kind checkboxes; no network, no eval.
_SCRIPT = """
(function () {
  var box = document.getElementById("filter-text");
  if (!box) { return; }
  var checks = Array.prototype.slice.call(document.querySelectorAll("input[data-filter]"));
  var rows = Array.prototype.slice.call(document.querySelectorAll("#cases tbody tr"));
  var count = document.getElementById("shown-count");
  function apply() {
    var needle = box.value.toLowerCase();
    var off = {};
    checks.forEach(function (c) { if (!c.checked) { off[c.dataset.filter + ":" + c.value] = 1; } });
    var shown = 0;
    rows.forEach(function (row) {
      var hide = off["pack:" + row.dataset.pack] || off["kind:" + row.dataset.kind] ||
        (needle && row.textContent.toLowerCase().indexOf(needle) < 0);
      row.hidden = !!hide;
      if (!hide) { shown += 1; }
    });
    count.textContent = String(shown);
  }
  box.addEventListener("input", apply);
  checks.forEach(function (c) { c.addEventListener("change", apply); });
  apply();
  document.documentElement.dataset.filters = "ready";  // the policy let the script run
})();
"""


def escape(value: Any) -> str:
    """*value* as HTML text (or an attribute value): escaped, with forbidden code points shown
    as U+FFFD."""
    return _escape(INVALID.sub("\ufffd", str(value)))


def render(
    report: RunOutcome | RunReport | Mapping[str, Any],
    calibration: Mapping[str, Any] | None = None,
) -> str:
    """The HTML page of *report* (the outcome, or a parsed ``report.json``), with the ROC curve
    and calibration details of *calibration* (a parsed ``calibration_report.json``) when given.

    Raises:
        InputError: *report* lacks the per-case results or their detail (an older ragleaklab
            wrote it), or does not parse.
    """
    outcome = outcome_of(report, DETAIL_FIELDS)
    status = outcome.verdict
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>ragleaklab report: {escape(status.word)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f'<header class="verdict {status.value}">',
        f"<h1>ragleaklab: {escape(status.word)}</h1>",
        *[
            f'<p class="system">{escape(line)}</p>'
            for line in [w.system_line(outcome.system)]
            if line
        ],
        f"<p>{escape(w.run_line(outcome))}</p>",
        f"<p>{escape(_tool_line(outcome))}</p>",
        *[f'<p class="gate">{escape(line)}</p>' for line in w.gate_lines(outcome)],
        *[f'<p class="warning">warning: {escape(x)}</p>' for x in outcome.warnings],
        "</header>",
        "<main>",
        '<h2 id="packs">Packs</h2>',
    ]
    for pack in outcome.packs:
        parts += _pack(pack)
    if calibration is not None:
        parts += _calibration(calibration)
    parts += _cases(outcome)
    parts += ["</main>", f"<script>{_SCRIPT}</script>", "</body>", "</html>", ""]
    return "\n".join(parts)


def _tool_line(report: RunOutcome) -> str:
    return f"{report.tool.name} {report.tool.version}, {report.generated_at}"


def _badge(verdict: Verdict) -> str:
    # The CSS classes are the verdicts' values (pass, fail, error).
    return f'<span class="badge {verdict.value}">{escape(verdict.word)}</span>'


def _pack(pack: PackOutcome) -> list[str]:
    name = f"{pack.name} {pack.version}"
    out = [
        f'<section class="pack" data-pack="{escape(pack.name)}">',
        f"<h3>{_badge(pack.verdict)} {escape(name)}</h3>",
        f'<p class="muted">{escape(w.pack_line(pack))}</p>',
    ]
    if not pack.tested:
        reason = escape(str(pack.not_tested_reason))
        out.append(f"<p><strong>Not tested:</strong> {reason}</p>")
    out += [
        "<table><thead><tr><th>value</th><th>mean</th><th>threshold</th><th>threshold source</th>"
        "<th>cases</th><th>failing</th><th>95% interval</th></tr></thead><tbody>"
    ]
    for name_, value in w.gated(pack):
        threshold = value.threshold
        rate = value.fail_rate
        out.append(
            f"<tr><td>{escape(name_)}</td><td class=num>{escape(w.number(value.summary.mean))}</td>"
            f"<td>{escape(w.rule_text(threshold))}</td>"
            f"<td>{escape(threshold.source if threshold is not None else '')}</td><td>all</td>"
            f"<td class=num>{escape(w.count_text(rate))}</td>"
            f"<td>{escape(w.interval_text(rate))}</td></tr>"
        )
        for kind, kind_rate in (value.by_kind or {}).items():
            if kind_rate.trials:
                out.append(
                    f'<tr class="kind"><td colspan=4></td><td>{escape(kind)}</td>'
                    f"<td class=num>{escape(w.count_text(kind_rate))}</td>"
                    f"<td>{escape(w.interval_text(kind_rate))}</td></tr>"
                )
        if value.corrected_rate is not None:  # the true rate, the metric's measured error out
            label, estimate, interval = w.corrected_cells(value.corrected_rate)
            out.append(
                f'<tr class="kind"><td colspan=4></td><td>{escape(label)}</td>'
                f"<td class=num>{escape(estimate)}</td><td>{escape(interval)}</td></tr>"
            )
    out.append("</tbody></table>")
    notes = [escape(r) for r in pack.reasons]
    notes += [f"warning: {escape(x)}" for x in pack.warnings]
    notes += [f"errored {escape(k)}: {escape(v)}" for k, v in w.errored_cases(pack)]
    notes += [
        f"{escape(str(u.count))} cases could not be scored by {escape(m)}"
        for m, u in pack.unscorable.items()
    ]
    if notes:
        out += ["<ul>", *(f"<li>{n}</li>" for n in notes), "</ul>"]
    out.append("</section>")
    return out


def _calibration(cal: Mapping[str, Any]) -> list[str]:
    result = cal.get("result") or {}
    bound = cal.get("fpr_upper_bound") or {}
    tpr = cal.get("tpr_interval") or {}
    auc = cal.get("auc") or {}
    fitter = cal.get("fitter") or {}
    rows = [
        ("pack", cal.get("pack_name")),
        ("metric", cal.get("metric_name")),
        ("target false-positive rate", w.number(cal.get("target_fpr"))),
        (
            "threshold",
            w.rule_text(
                AppliedThreshold(value=result.get("threshold"), decision_rule=rule, source="")
            )
            if (rule := result.get("decision_rule"))
            else "n/a",
        ),
        ("fitter", f"{fitter.get('name')} ({fitter.get('provider')})"),
        ("guarantee", cal.get("guarantee")),
        (
            "false-positive rate",
            f"{w.number(result.get('achieved_fpr'))} ({result.get('false_positives')}/"
            f"{result.get('n_negative')}), one-sided {w.number(bound.get('confidence'))} upper "
            f"bound {w.number(bound.get('value'))}",
        ),
        (
            "true-positive rate",
            f"{w.number(result.get('achieved_tpr'))} ({result.get('true_positives')}/"
            f"{result.get('n_positive')}), {w.number(tpr.get('confidence'))} interval "
            f"{w.number(tpr.get('lower'))}-{w.number(tpr.get('upper'))}",
        ),
        (
            "AUC",
            f"{w.number(auc.get('auc'))}, {w.number(auc.get('confidence'))} interval "
            f"{w.number(auc.get('lower'))}-{w.number(auc.get('upper'))} ({auc.get('method')})",
        ),
        ("generated", cal.get("generated_at")),
    ]
    out = [
        '<section class="calibration" id="calibration">',
        "<h2>Calibration</h2>",
        '<div class="roc">',
        _roc_svg(cal.get("roc_table") or [], result),
        "<table><tbody>",
        *(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in rows),
        "</tbody></table>",
        "</div>",
    ]
    warnings = cal.get("warnings") or []
    if warnings:
        out += ["<ul>", *(f"<li>warning: {escape(str(x))}</li>" for x in warnings), "</ul>"]
    out.append("</section>")
    return out


def _roc_svg(table: Sequence[Mapping[str, Any]], result: Mapping[str, Any]) -> str:
    """The ROC curve as an inline SVG polyline (FPR right, TPR up), with the chance diagonal and
    the chosen threshold marked."""
    size, pad = 300, 40
    points = sorted(
        (float(r["fpr"]), float(r["tpr"]))
        for r in table
        if isinstance(r.get("fpr"), int | float) and isinstance(r.get("tpr"), int | float)
    )
    points = [(0.0, 0.0), *points, (1.0, 1.0)]

    def xy(fpr: float, tpr: float) -> str:
        return f"{pad + fpr * size:.2f},{pad + (1 - tpr) * size:.2f}"

    total = size + 2 * pad
    out = [
        f'<svg width="{total}" height="{total}" '
        f'viewBox="0 0 {total} {total}" role="img" aria-label="ROC curve">',
        f'<rect x="{pad}" y="{pad}" width="{size}" height="{size}" fill="none" stroke="#8c959f"/>',
        f'<line x1="{pad}" y1="{pad + size}" x2="{pad + size}" y2="{pad}" stroke="#d0d7de" '
        'stroke-dasharray="4 4"/>',
        '<polyline fill="none" stroke="#0969da" stroke-width="2" points="'
        + " ".join(xy(f, t) for f, t in points)
        + '"/>',
        f'<text x="{pad + size / 2}" y="{total - 8}" text-anchor="middle" font-size="12">'
        "false-positive rate</text>",
        f'<text x="12" y="{pad + size / 2}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 12 {pad + size / 2})">true-positive rate</text>',
        f'<text x="{pad}" y="{pad + size + 14}" font-size="10" text-anchor="middle">0</text>',
        f'<text x="{pad + size}" y="{pad + size + 14}" font-size="10" '
        'text-anchor="middle">1</text>',
        f'<text x="{pad - 6}" y="{pad + 4}" font-size="10" text-anchor="end">1</text>',
    ]
    fpr, tpr = result.get("achieved_fpr"), result.get("achieved_tpr")
    if isinstance(fpr, int | float) and isinstance(tpr, int | float):
        x, y = xy(float(fpr), float(tpr)).split(",")
        out.append(
            f'<circle cx="{x}" cy="{y}" r="5" fill="#cf222e"><title>chosen threshold '
            f"{escape(w.number(result.get('threshold')))}</title></circle>"
        )
    out.append("</svg>")
    return "\n".join(out)


def _cases(report: RunOutcome) -> list[str]:
    cases = w.failing_cases(report)
    packs = list(dict.fromkeys(p.name for p, _ in cases))
    kinds = sorted({c.kind or "unknown" for _, c in cases})
    unlisted = sum(w.unlisted_failing(p) for p in report.packs)
    out = [
        '<h2 id="failing">Failing cases</h2>',
        f'<p class="muted"><span id="shown-count">{len(cases)}</span> of {len(cases)} listed '
        "failing cases shown"
        + (f"; {unlisted} more are counted but not detailed in report.json" if unlisted else "")
        + ".</p>",
    ]
    if not cases:
        return out
    out.append('<div class="filters">')
    out.append(
        '<input type="search" id="filter-text" placeholder="filter: case, query, answer, evidence">'
    )
    for name in packs:
        out.append(
            f'<label><input type="checkbox" data-filter="pack" value="{escape(name)}" checked> '
            f"{escape(name)}</label>"
        )
    for kind in kinds:
        out.append(
            f'<label><input type="checkbox" data-filter="kind" value="{escape(kind)}" checked> '
            f"{escape(kind)}</label>"
        )
    out.append("</div>")
    out.append(
        '<table id="cases"><thead><tr><th>pack</th><th>case</th><th>kind</th><th>fails</th>'
        "<th>query</th><th>answer (excerpt)</th><th>retrieved</th><th>evidence</th></tr></thead>"
        "<tbody>"
    )
    for pack, case in cases:
        fails = ", ".join(f"{n} {w.number(v)}" for n, v in w.failed_values(case).items())
        detail = case.detail or _NO_DETAIL
        answer = detail.answer
        shown = "" if answer is None else answer[:ANSWER_CHARS]
        if detail.answer_truncated or (answer is not None and len(answer) > ANSWER_CHARS):
            shown += "\u2026"
        shown += w.masked_note(detail)
        retrieved = detail.retrieved_ids
        evidence = json.dumps(w.shown_evidence(case.evidence), indent=1, ensure_ascii=False)
        out.append(
            f'<tr data-pack="{escape(pack.name)}" '
            f'data-kind="{escape(case.kind or "unknown")}">'
            f"<td>{escape(pack.name)}</td><td>{escape(case.test_id)}</td>"
            f"<td>{escape(case.kind or '')}</td><td>{escape(fails)}</td>"
            f"<td>{escape(detail.query or '')}</td><td>{escape(shown)}</td>"
            f"<td>{escape(', '.join(map(str, retrieved)) if retrieved is not None else 'n/a')}</td>"
            f"<td><pre>{escape(evidence)}</pre></td></tr>"
        )
    out.append("</tbody></table>")
    return out


#: What a case without its detail shows (the renderings list detailed cases only).
_NO_DETAIL = CaseDetail(query=None, answer=None, answer_truncated=False, retrieved_ids=None)


__all__ = ["render"]
