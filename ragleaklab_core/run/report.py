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
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragleaklab_core._version import __version__
from ragleaklab_core.calibration.labelling import target_identity
from ragleaklab_core.calibration.report import _generated_at
from ragleaklab_core.gate import Verdict
from ragleaklab_core.run.case_details import case_results, detail_counts
from ragleaklab_core.run.spool import Spool
from ragleaklab_core.run.streamed import Streamed
from ragleaklab_core.run.verdict import PackVerdict, run_status, run_warnings


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
            "failing": v.n_failing_cases,
            # Case epochs answered again because the worker answering them was lost (Ray).
            "retried": run.retried,
            **detail_counts(v),
            "epochs": run.settings.epochs,
            "reducer": run.settings.reducer,
            "tags": list(run.settings.tags),
            # Absent when none: reports of runs without exclusions read as before.
            **(
                {"exclude_tags": list(run.settings.exclude_tags)}
                if run.settings.exclude_tags
                else {}
            ),
            "ids": run.ids,
        },
        "verdict": v.status,
        "verdict_without_thresholds": v.status_without_thresholds,
        "max_fail_rate": v.max_fail_rate,
        "allowances": v.allowances.to_dict(),
        "tested": v.tested,
        "not_tested_reason": v.not_tested,
        "reasons": list(v.reasons),
        "warnings": list(v.warnings),
        "defaults_fitted_on": v.defaults_fitted_on,
        "wiring": None if run.wiring is None else run.wiring.to_dict(),
        "values": {
            value.name: {**value.to_dict(), "by_kind": value.by_kind, "by_family": value.by_family}
            for value in v.values
        },
        "errored": dict(v.listed_errors),
        "unscorable": {
            metric: {"count": len(ids), "ids": dict(v.listed_unscorable.get(metric, {}))}
            for metric, ids in v.unscorable.items()
        },
        "description": info.description,
        "taxonomy": None if info.taxonomy is None else info.taxonomy.to_dict(),
        "case_results": case_results(v),
    }


#: The option that says which system a target plugin talks to, in the order looked for: what
#: the first line of every summary names beside the plugin (never a secret: options are redacted).
_SYSTEM_OPTIONS = ("callable", "url", "base_url", "endpoint", "model")


def tested_system(target: Mapping[str, Any] | None, config: str | None) -> dict[str, Any]:
    """Which system a run tested, as the first lines of every rendering name it: the target
    plugin, its identity (``name@digest`` of its redacted options, what labels are tied to),
    the option that says where the system is, and the config file read (None: no file)."""
    if target is None:
        return {"target": None, "identity": None, "where": None, "config": config}
    options = target.get("options") or {}
    where = next(
        (f"{key} {options[key]}" for key in _SYSTEM_OPTIONS if isinstance(options.get(key), str)),
        None,
    )
    return {
        "target": target.get("name"),
        "identity": target_identity(target),
        "where": where,
        "config": config,
    }


def build_report(
    verdicts: Sequence[PackVerdict],
    *,
    settings: Mapping[str, Any],
    inputs: Mapping[str, Any],
    config: str | None = None,
) -> dict[str, Any]:
    """The ``report.json`` document (*config*: the config file the run read, as given)."""
    status, exit_code = run_status(verdicts)
    target = verdicts[0].run.target.provenance() if verdicts else None
    return {
        "tool": {"name": "ragleaklab", "version": __version__},
        "system": tested_system(target, config),
        "generated_at": _generated_at(),
        "verdict": status,
        "exit_code": exit_code,
        "settings": dict(settings),
        "target": target,
        "inputs": dict(inputs),
        "totals": {
            "packs": len(verdicts),
            "passed": sum(v.status is Verdict.PASS for v in verdicts),
            "failed": sum(v.status is Verdict.FAIL for v in verdicts),
            "packs_errored": sum(v.status is Verdict.ERROR for v in verdicts),
            "packs_not_tested": sum(not v.tested for v in verdicts),
            "cases": sum(len(v.run.results) for v in verdicts),
            "errored": sum(len(v.errored_ids) for v in verdicts),
        },
        # Said once for the run (every pack it concerns named), not once per pack.
        "warnings": run_warnings(verdicts),
        "packs": [_pack_dict(v) for v in verdicts],
    }


#: The lists written one item a line: a pack's cases, thousands of them, each a handful of keys
#: (indented, they made up most of report.json).
ONE_LINE_ITEMS = frozenset({"case_results"})


def dumps(document: Mapping[str, Any]) -> str:
    """JSON as ragleaklab writes it: indented by two spaces as ``json.dumps`` indents, except
    that each item of a :data:`ONE_LINE_ITEMS` list is on one line; no NaN, newline at the end."""
    return "".join(chunks(document))


def chunks(document: Mapping[str, Any]) -> Iterator[str]:
    """:func:`dumps`, as pieces of text produced as they are written: a report's streamed lists
    (:class:`~ragleaklab_core.run.streamed.Streamed`) are walked once, never held."""
    yield from _indented(document, 0)
    yield "\n"


def _indented(value: Any, level: int, one_line_items: bool = False) -> Iterator[str]:
    is_list = isinstance(value, Sequence) and not isinstance(value, str | bytes)
    if not isinstance(value, Mapping) and not is_list:
        yield json.dumps(value, ensure_ascii=False, allow_nan=False)
        return
    if not value:
        yield "{}" if isinstance(value, Mapping) else "[]"
        return
    pad = "  " * (level + 1)
    end = "\n" + "  " * level
    if isinstance(value, Mapping):
        yield "{"
        for n, (k, v) in enumerate(value.items()):
            yield f"{',' if n else ''}\n{pad}{json.dumps(str(k), ensure_ascii=False)}: "
            yield from _indented(v, level + 1, str(k) in ONE_LINE_ITEMS)
        yield end + "}"
        return
    yield "["
    for n, item in enumerate(value):
        if one_line_items or isinstance(item, str):  # a case, or an id: one line each
            text = json.dumps(item, ensure_ascii=False, allow_nan=False)
            yield f"{',' if n else ''}\n{pad}{text}"
        else:
            yield f"{',' if n else ''}\n{pad}"
            yield from _indented(item, level + 1)
    yield end + "]"


def plain(document: Any) -> Any:
    """*document* as ``json.loads(dumps(document))`` gives it back (dicts with string keys,
    lists), except that streamed lists stay streamed: what the gate, the summary and every
    rendering read is what report.json holds, without holding every case in memory."""
    if isinstance(document, Streamed):
        return document
    if isinstance(document, Mapping):
        return {str(k): plain(v) for k, v in document.items()}
    if isinstance(document, list | tuple):
        return [plain(v) for v in document]
    return document


def runs_jsonl(verdicts: Sequence[PackVerdict]) -> str:
    """Every case and epoch of every pack, one JSON object per line (:func:`runs_lines`, as
    one string: for small runs)."""
    return "".join(runs_lines(verdicts))


def runs_lines(verdicts: Sequence[PackVerdict]) -> Iterator[str]:
    """The lines of ``runs.jsonl``, produced as they are written (read from the records on
    disk): what the CLI streams to the file."""
    for v in verdicts:
        records = v.run.records
        if isinstance(records, Spool):  # already one JSON line each
            for line in records.lines():
                yield line + "\n"
            continue
        for r in records:
            yield json.dumps(r.to_dict(), ensure_ascii=False, allow_nan=False) + "\n"


__all__ = [
    "build_report",
    "chunks",
    "dumps",
    "plain",
    "runs_jsonl",
    "runs_lines",
    "tested_system",
]
