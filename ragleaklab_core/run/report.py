"""The finished run as its outcome (:func:`build_outcome`, a
:class:`~ragleaklab_core.outcome.RunOutcome` from the packs' evaluations), ``report.json`` (its
encoding, :mod:`ragleaklab_core.outcome.codec`) and ``runs.jsonl`` (the summary ``ragleaklab
run`` prints is report.json's text rendering, ``ragleaklab_core.reporting.console``).

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
from ragleaklab_core.gate import Verdict, run_verdict
from ragleaklab_core.outcome import (
    AppliedThreshold,
    CaseCounts,
    PackOutcome,
    PluginRef,
    RunOutcome,
    System,
    Tool,
    Totals,
    UnscorableCases,
    ValueOutcome,
    WiringCounts,
)
from ragleaklab_core.outcome.codec import ONE_LINE_ITEMS, chunks, dumps, encode
from ragleaklab_core.run.case_details import case_results, detail_counts
from ragleaklab_core.run.evaluation import LISTED, PackVerdict, ValueVerdict, run_warnings
from ragleaklab_core.run.spool import Spool
from ragleaklab_core.run.streamed import Streamed


def _plugin(provenance: Mapping[str, Any]) -> PluginRef:
    return PluginRef(
        group=provenance["group"],
        name=provenance["name"],
        provider=provenance["provider"],
        target=provenance["target"],
        options=provenance["options"],
    )


def _value_outcome(value: ValueVerdict) -> ValueOutcome:
    t = value.threshold
    return ValueOutcome(
        metric=value.metric,
        lower_is_worse=value.lower_is_worse,
        summary=value.summary,
        threshold=None
        if t is None
        else AppliedThreshold(
            value=t.value, decision_rule=t.decision_rule, source=t.source, forced=tuple(t.forced)
        ),
        failing_cases=value.n_failing,
        failing_ids=value.listed_failing,
        failing_ids_truncated=value.n_failing > LISTED,
        all_failing_ids=value.failing_ids,
        unscored_ids=value.unscored_ids,
        fail_rate=value.fail_rate,
        unscorable_cases=value.n_unscorable,
        passed=value.passed,
        corrected_rate=value.corrected_rate,
        by_kind=value.by_kind,
        by_family=value.by_family,
    )


def _pack_outcome(v: PackVerdict) -> PackOutcome:
    run = v.run
    info = run.info
    wiring = run.wiring
    return PackOutcome(
        name=info.name,
        version=info.version,
        pack_type=info.pack_type,
        primary_metric=info.primary_metric,
        plugin=_plugin(run.pack.provenance()),
        metrics=tuple(_plugin(m.provenance()) for m in run.metrics),
        cases=CaseCounts(
            in_pack=run.n_cases_in_pack,
            run=len(run.results),
            errored=len(v.errored_ids),
            failing=v.n_failing_cases,
            # Case epochs answered again because the worker answering them was lost (Ray).
            retried=run.retried,
            **detail_counts(v),
            epochs=run.settings.epochs,
            reducer=run.settings.reducer,
            tags=tuple(run.settings.tags),
            # Written only when some tag was excluded: reports of runs without read as before.
            exclude_tags=tuple(run.settings.exclude_tags),
            ids=run.ids,
        ),
        verdict=v.status,
        verdict_without_thresholds=v.status_without_thresholds,
        max_fail_rate=v.max_fail_rate,
        allowances=v.allowances,
        tested=v.tested,
        not_tested_reason=v.not_tested,
        reasons=tuple(v.reasons),
        warnings=tuple(v.warnings),
        defaults_fitted_on=v.defaults_fitted_on,
        wiring=None
        if wiring is None
        else WiringCounts(
            corpus_documents=wiring.corpus,
            answered=wiring.answered,
            answered_with_retrieval=wiring.with_retrieval,
            retrieved_ids=wiring.retrieved,
            unknown_ids=wiring.unknown,
            unknown_id_examples=tuple(wiring.unknown_examples),
            reached=wiring.reached,
        ),
        values={value.name: _value_outcome(value) for value in v.values},
        errored=dict(v.listed_errors),
        unscorable={
            metric: UnscorableCases(count=len(ids), ids=dict(v.listed_unscorable.get(metric, {})))
            for metric, ids in v.unscorable.items()
        },
        description=info.description,
        taxonomy=info.taxonomy,
        case_results=case_results(v),
    )


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


def build_outcome(
    verdicts: Sequence[PackVerdict],
    *,
    settings: Mapping[str, Any],
    inputs: Mapping[str, Any],
    config: str | None = None,
) -> RunOutcome:
    """The finished run, before its gate: the run's verdict by its packs' thresholds
    (:func:`ragleaklab_core.gate.run_verdict`), which :func:`ragleaklab_core.gate.decide`
    confirms or changes (*config*: the config file the run read, as given)."""
    target = verdicts[0].run.target.provenance() if verdicts else None
    return RunOutcome(
        tool=Tool(name="ragleaklab", version=__version__),
        system=System(**tested_system(target, config)),
        generated_at=_generated_at(),
        verdict=run_verdict(v.status for v in verdicts),
        settings=dict(settings),
        target=None if target is None else _plugin(target),
        inputs=dict(inputs),
        totals=Totals(
            packs=len(verdicts),
            passed=sum(v.status is Verdict.PASS for v in verdicts),
            failed=sum(v.status is Verdict.FAIL for v in verdicts),
            packs_errored=sum(v.status is Verdict.ERROR for v in verdicts),
            packs_not_tested=sum(not v.tested for v in verdicts),
            cases=sum(len(v.run.results) for v in verdicts),
            errored=sum(len(v.errored_ids) for v in verdicts),
        ),
        # Said once for the run (every pack it concerns named), not once per pack.
        warnings=tuple(run_warnings(verdicts)),
        packs=tuple(_pack_outcome(v) for v in verdicts),
    )


def build_report(
    verdicts: Sequence[PackVerdict],
    *,
    settings: Mapping[str, Any],
    inputs: Mapping[str, Any],
    config: str | None = None,
) -> dict[str, Any]:
    """The ``report.json`` document of :func:`build_outcome` (before the gate is recorded)."""
    return encode(build_outcome(verdicts, settings=settings, inputs=inputs, config=config))


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
    "ONE_LINE_ITEMS",
    "build_outcome",
    "build_report",
    "chunks",
    "dumps",
    "encode",
    "plain",
    "runs_jsonl",
    "runs_lines",
    "tested_system",
]
