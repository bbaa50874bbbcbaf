"""Test helpers for plugin authors: an opt-in pytest plugin.

Enable it in your plugin's test suite with ``pytest_plugins = ["ragleaklab_core.testing"]`` in
the ``conftest.py`` of your tests directory (not in a test module: one that also imports from
the kit would import it before pytest can register it). It is not registered under
``pytest11``, so it costs nothing unless asked for. It gives you:

- :func:`assert_plugin_contract`: load an installed plugin by name exactly as ``ragleaklab`` does
  (same loader, same checks) and return it, failing with the loader's own message;
- :func:`assert_pack_contract`, :func:`assert_metric_contract`, :func:`assert_fitter_contract`
  and :func:`assert_target_contract`: the checks ragleaklab applies to each kind of plugin when
  it loads and runs it (``pack validate``, the runner's result checks, calibration's recount),
  run on your plugin so your CI fails where a user's run would;
- :func:`assert_labels_are_sound`: check a pack's labels without defining them by its metric
  (one label per case, both classes, enough negatives for the fitter, a declared
  ``label_source``), and warn (:class:`LabelsMirrorMetricWarning`) when they agree with the
  metric on every case of a run;
- :func:`assert_labels_are_outcomes` (deprecated): labels equal to the metric's outcome, a
  circular check kept for the packs that use it;
- the ``rlk_fake_dist`` fixture: a factory that fakes an installed distribution with entry points
  and modules, for tests of discovery that must not pip-install anything.

Every assertion accepts an installed plugin's *name* (loaded through the entry point, as a run
loads it) or a plugin *object*, fails the test with a readable message (``pytest.fail``), and
returns what it checked so a test can assert more.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import json
import math
import sys
import textwrap
import warnings
from collections.abc import Callable, Collection, Coroutine, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import attrs
import pytest
from attrs import frozen

from ragleaklab_core._discovery import (
    FITTERS,
    GROUPS,
    METRICS,
    PACKS,
    TARGETS,
    LoadedPlugin,
    check_contract,
    load_plugin,
    pack_info,
)
from ragleaklab_core.config import DEFAULT_FITTER, DEFAULT_TARGET
from ragleaklab_core.errors import InputError, RagleaklabError
from ragleaklab_core.manifest import (
    LABEL_SOURCES,
    TARGETED_LABEL_SOURCES,
    LabelProvenance,
    _load_package,
)
from ragleaklab_core.values import (
    FLAG_ABOVE,
    FLAG_BELOW,
    FLAG_HIGH,
    FLAG_LOW,
    Case,
    Document,
    MetricResult,
    Response,
    RetrievedDocument,
)

if TYPE_CHECKING:
    from ragleaklab_core.calibration import CalibrationReport
    from ragleaklab_core.runner import PackRun

T = TypeVar("T")

FakeDist = Callable[..., Path]


def assert_plugin_contract(
    group: str, name: str, options: Mapping[str, Any] | None = None
) -> LoadedPlugin:
    """Load *name* from *group* through ragleaklab's own loader and return it.

    Fails the test (``pytest.fail``) with the loader's message when the plugin is missing, does
    not import, is not an attrs class/dataclass, cannot be built from *options* or lacks a method
    of its interface.

    .. versionadded:: 0.1
    """
    try:
        return load_plugin(group, name, options)
    except RagleaklabError as exc:
        pytest.fail(f"{group}:{name} does not honour the plugin contract:\n{exc}", pytrace=False)


def _fail(message: str) -> NoReturn:
    pytest.fail(message, pytrace=False)


def _plugin(group: str, plugin: Any, options: Mapping[str, Any] | None = None) -> LoadedPlugin:
    """*plugin* as the loader gives it: loaded by name, or an object checked as it would be."""
    if isinstance(plugin, str):
        return assert_plugin_contract(group, plugin, options)
    if isinstance(plugin, LoadedPlugin):
        return plugin
    if options:
        raise TypeError("options can only be given with a plugin name")
    cls = type(plugin)
    target = f"{cls.__module__}:{cls.__qualname__}"
    try:
        check_contract(group, cls.__qualname__, target, cls, plugin)
    except RagleaklabError as exc:
        _fail(f"{target} does not honour the plugin contract:\n{exc}")
    return LoadedPlugin(group, cls.__qualname__, target, "<object>", plugin, {})


def _call(what: str, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return func(*args, **kwargs)
    except Exception as exc:
        _fail(f"{what} raised {type(exc).__name__}: {exc}")


def _json_problem(value: Any) -> str | None:
    """Why *value* cannot be written to a report (JSON, no NaN), or None."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    # From inside a running event loop (an async test) the coroutine gets its own thread.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


# -- packs --------------------------------------------------------------------------------------


def assert_pack_contract(pack: Any) -> Any:
    """Check a pack as ``ragleaklab pack validate`` does, then as a run loads it; return it.

    *pack* is an installed pack's name (loaded through its entry point) or a pack object. Every
    problem is listed in the failure, with its file, line and ``$.path``: the manifest schema,
    unique ids, references to documents and claims, labels that match the cases one to one,
    both classes present, no path outside the pack, sizes; then ``info()`` must return a
    ``PackInfo`` and ``documents()`` / ``cases()`` the value types, as the runner needs.

    .. versionadded:: 0.1
    """
    from ragleaklab_core.pack_validation import validate_pack

    loaded = _plugin(PACKS, pack)
    name = pack if isinstance(pack, str) else None
    report = validate_pack(loaded.obj, name=name)
    if not report.valid:
        lines = "\n".join(f"  {p}" for p in report.problems)
        _fail(f"pack {report.pack} is not valid:\n{lines}\n{report.summary()}")
    return loaded.obj


#: The fitters whose needs :func:`assert_labels_are_sound` knows, and what each needs.
SOUND_FITTERS = ("exact", "bootstrap-ci", "neyman-pearson")


class LabelsMirrorMetricWarning(UserWarning):
    """A pack's labels agree with its metric's verdict on every case of a run.

    Independent judgements of harm and a cheap proxy rarely agree on every case; labels that do
    were most likely derived from the metric, and a calibration on them measures nothing.

    .. versionadded:: 0.2
    """


@frozen
class LabelCheck:
    """What :func:`assert_labels_are_sound` checked.

    Attributes:
        pack: The pack's name.
        n_positive: Positive labels (the attack succeeded).
        n_negative: Negative labels (security held).
        negatives_needed: The fewest negatives the fitter needs at the target FPR.
        provenance: Who judged the labels, on which target.
        run: The run against the target, or None when no target was given.
        agreement: Scored cases whose label equals the metric's verdict, over scored cases
            (None without a run).
    """

    pack: str
    n_positive: int
    n_negative: int
    negatives_needed: int
    provenance: LabelProvenance
    run: PackRun | None = None
    agreement: tuple[int, int] | None = None


def negatives_for_fitter(fitter: str, target_fpr: float, delta: float = 0.05) -> int:
    """The fewest negative labels *fitter* needs at *target_fpr*.

    ``neyman-pearson``: the smallest n with ``(1 - target_fpr) ** n <= delta`` (299 at 1% and
    delta 0.05), below which no threshold carries its guarantee. ``exact`` and
    ``bootstrap-ci``: ``ceil(1 / target_fpr)`` (100 at 1%), below which one false positive is
    already above the target, so the false-positive rate cannot be resolved at all.

    .. versionadded:: 0.2
    """
    if fitter not in SOUND_FITTERS:
        raise ValueError(f"unknown fitter {fitter!r}; the kit knows {', '.join(SOUND_FITTERS)}")
    if not 0.0 < target_fpr < 1.0:
        raise ValueError(f"target_fpr must be in (0, 1), got {target_fpr!r}")
    if fitter == "neyman-pearson":
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        n = max(1, math.ceil(math.log(delta) / math.log1p(-target_fpr)))
        while n > 1 and (1.0 - target_fpr) ** (n - 1) <= delta:
            n -= 1
        while (1.0 - target_fpr) ** n > delta:
            n += 1
        return n
    n = max(1, math.ceil(1.0 / target_fpr))
    while n > 1 and 1.0 / (n - 1) <= target_fpr:
        n -= 1
    return n


def _provenance(pack: Any, lines: list[dict[str, Any]]) -> tuple[LabelProvenance | None, str]:
    """The pack's declared provenance, else the one every label line carries; or why none."""
    method = getattr(pack, "label_provenance", None)
    declared = _call("label_provenance()", method) if callable(method) else None
    if declared is not None:
        if not isinstance(declared, LabelProvenance):
            return None, f"label_provenance() returned {type(declared).__name__}"
        return declared, ""
    # `ragleaklab label import` writes the provenance on every line.
    sources = {line.get("label_source") for line in lines}
    (source,) = sources if len(sources) == 1 else (None,)
    if lines and isinstance(source, str):
        target = {str(line.get("target", "")).split("@")[0] or None for line in lines}
        try:
            return LabelProvenance(source, target.pop() if len(target) == 1 else None), ""
        except (TypeError, ValueError) as exc:
            return None, f"the label lines' provenance is invalid: {exc}"
    return None, ""


def assert_labels_are_sound(
    pack: Any,
    *,
    fitter: str = DEFAULT_FITTER,
    target_fpr: float = 0.01,
    delta: float = 0.05,
    target: str | None = DEFAULT_TARGET,
    target_options: Mapping[str, Any] | None = None,
    value: str | None = None,
) -> LabelCheck:
    """Check a pack's default labels as calibration data, without defining them by the metric.

    A label is an independent judgement of harm (a person, an LLM judge, instrumentation, an
    outcome observed on a named target) that a cheap metric is calibrated against; this never
    asks the labels to equal the metric's verdict. Every problem is listed in one failure:

    - every case has exactly one label and every label names a case (duplicate and orphan ids
      listed), each label ``positive`` or ``negative``;
    - both classes are present, and the negatives are enough for *fitter* at *target_fpr*
      (:func:`negatives_for_fitter`: 100 for ``exact`` at 1%, 299 for ``neyman-pearson`` at 1%
      and *delta* 0.05);
    - the pack says who judged the labels: ``label_source`` in ``pack.toml`` (or a
      ``label_provenance()`` method, or a ``label_source`` on every label line as
      ``ragleaklab label import`` writes it), with ``label_target`` for ``outcome`` and
      ``instrumentation``.

    Then, unless *target* is None, the pack is run against *target* and a
    :class:`LabelsMirrorMetricWarning` is issued when the labels agree with *value*'s verdict
    (default: the primary metric, under its default threshold) on every case: labels derived
    from the metric make a calibration that measures nothing.

    Returns a :class:`LabelCheck` (with the run when a target was given).

    .. versionadded:: 0.2
    """
    from ragleaklab_core.inputs import jsonl_records
    from ragleaklab_core.runner import run_pack

    needed = negatives_for_fitter(fitter, target_fpr, delta)
    loaded = _plugin(PACKS, pack)
    info = _call("info()", lambda: pack_info(loaded.obj))
    raw = _call("default_labels()", getattr(loaded.obj, "default_labels", lambda: None))
    if raw is None:
        _fail(f"pack {info.name} ships no default labels")
    where = getattr(loaded.obj, "labels_source", None)
    source = _call("labels_source()", where) if callable(where) else None
    source = source if isinstance(source, str) else "default_labels()"
    try:
        _digest, lines = jsonl_records(raw, source=source)
        numbered = list(lines)
    except RagleaklabError as exc:
        _fail(f"the labels of pack {info.name} cannot be read:\n{exc}")
    case_ids = [c.test_id for c in _call("cases()", loaded.obj.cases)]
    problems: list[str] = []
    labels: dict[str, bool] = {}
    lines_of: dict[str, list[int]] = {}
    for number, record in numbered:
        test_id, label = record.get("test_id"), record.get("label")
        if not isinstance(test_id, str) or label not in ("positive", "negative"):
            problems.append(
                f"{source}:{number}: $: expected a test_id and a label positive or negative, "
                f"got {json.dumps(record, ensure_ascii=False)[:120]}"
            )
            continue
        lines_of.setdefault(test_id, []).append(number)
        labels.setdefault(test_id, label == "positive")
    duplicates = {t: n for t, n in lines_of.items() if len(n) > 1}
    if duplicates:
        listed = ", ".join(f"{t} (lines {', '.join(map(str, n))})" for t, n in duplicates.items())
        problems.append(f"{source}: {len(duplicates)} cases labelled more than once: {listed}")
    known = set(case_ids)
    orphans = [t for t in lines_of if t not in known]
    if orphans:
        listed = ", ".join(f"{t} (line {lines_of[t][0]})" for t in orphans)
        problems.append(f"{source}: {len(orphans)} labels name no case: {listed}")
    missing = [t for t in case_ids if t not in lines_of]
    if missing:
        problems.append(f"{source}: {len(missing)} cases have no label: {', '.join(missing)}")
    usable = [labels[t] for t in dict.fromkeys(case_ids) if t in labels]
    n_positive = sum(usable)
    n_negative = len(usable) - n_positive
    if n_positive == 0:
        problems.append("no positive label (the attack succeeded): calibration needs both classes")
    if n_negative == 0:
        problems.append(
            f"no negative label (security held): calibration needs both classes, and the "
            f"{fitter} fitter at least {needed} negatives at target_fpr {target_fpr:.4g}"
        )
    elif n_negative < needed:
        target_pct = f"{target_fpr:.4g}"
        why = (
            f"for its guarantee at target_fpr {target_pct} and delta {delta:g}"
            if fitter == "neyman-pearson"
            else f"to resolve a false-positive rate of {target_pct} (1 / target_fpr)"
        )
        problems.append(
            f"{n_negative} negative labels: the {fitter} fitter needs at least {needed} {why}; "
            f"{needed - n_negative} more negatives are missing"
        )
    provenance, why_not = _provenance(loaded.obj, [r for _n, r in numbered])
    if provenance is None:
        problems.append(
            why_not
            or "$.label_source: the labels do not say who judged them: declare label_source "
            "(one of "
            + ", ".join(LABEL_SOURCES)
            + ") in pack.toml, and label_target for outcome or instrumentation"
        )
    elif provenance.label_source in TARGETED_LABEL_SOURCES and provenance.label_target is None:
        problems.append(
            f"$.label_target: label_source {provenance.label_source!r} needs a label_target"
        )
    if problems:
        listed = "\n".join(f"  {p}" for p in problems)
        _fail(f"the labels of pack {info.name} are not sound calibration data:\n{listed}")
    assert provenance is not None
    check = LabelCheck(info.name, n_positive, n_negative, needed, provenance)
    if target is None:
        return check
    metric = value or info.primary_metric
    threshold = info.thresholds.get(metric)
    try:
        run = run_pack(loaded, target_name=target, target_options=target_options)
    except RagleaklabError as exc:
        _fail(f"pack {info.name} cannot be run against {target}:\n{exc}")
    scored = [
        r for r in run.results if r.error is None and metric in r.values and r.test_id in labels
    ]
    agree = (
        sum(threshold.fails(r.values[metric]) == labels[r.test_id] for r in scored)
        if threshold is not None
        else 0
    )
    if threshold is not None and scored and agree == len(scored) == len(labels):
        warnings.warn(
            LabelsMirrorMetricWarning(
                f"pack {info.name}: labels agree with the metric on every case "
                f"({metric} under its default threshold, {len(scored)} cases on target "
                f"{target!r}): were they derived from it? calibration on them measures nothing"
            ),
            stacklevel=2,
        )
    return attrs.evolve(check, run=run, agreement=(agree, len(scored)))


def assert_labels_are_outcomes(
    pack: Any,
    *,
    target: str = DEFAULT_TARGET,
    target_options: Mapping[str, Any] | None = None,
    value: str | None = None,
    ignore: Collection[str] = (),
) -> PackRun:
    """Run *pack* against *target* and check that every default label equals the metric's verdict.

    A positive case must fail the pack's default threshold on *value* (default: the primary
    metric) and a negative case pass it; errored or unscored cases fail the check. *ignore*
    lists test ids whose label is known to disagree with the threshold. Returns the run.

    .. deprecated:: 0.2
        This defines labels by the metric they are meant to calibrate: labels that pass it are
        the metric's own verdicts, and a calibration on them is perfect by construction and
        measures nothing. Label by an independent judgement of harm (a person, an LLM judge,
        instrumentation, an outcome observed on a named target) and check the labels with
        :func:`assert_labels_are_sound`.

    .. versionadded:: 0.1
    """
    warnings.warn(
        "assert_labels_are_outcomes defines labels by the metric they calibrate (a calibration "
        "on them measures nothing); label by an independent judgement and use "
        "assert_labels_are_sound",
        DeprecationWarning,
        stacklevel=2,
    )
    from ragleaklab_core.inputs import parse_labels
    from ragleaklab_core.runner import run_pack

    loaded = _plugin(PACKS, pack)
    info = _call("info()", lambda: pack_info(loaded.obj))
    metric = value or info.primary_metric
    threshold = info.thresholds.get(metric)
    if threshold is None:
        _fail(f"pack {info.name} has no default threshold for {metric!r} to judge outcomes by")
    raw = _call("default_labels()", getattr(loaded.obj, "default_labels", lambda: None))
    if raw is None:
        _fail(f"pack {info.name} ships no default labels")
    try:
        labels = parse_labels(raw, source=f"{info.name} default labels").records
        run = run_pack(loaded, target_name=target, target_options=target_options)
    except RagleaklabError as exc:
        _fail(f"pack {info.name} cannot be run against {target}:\n{exc}")
    wrong = []
    rule = threshold.decision_rule.replace("threshold", repr(threshold.value))
    for result in run.results:
        if result.test_id in ignore or result.test_id not in labels:
            continue
        expected = "positive" if labels[result.test_id] else "negative"
        if result.error is not None:
            wrong.append(f"{result.test_id}: labelled {expected}, but errored: {result.error}")
            continue
        if metric not in result.values:
            why = "; ".join(result.unscorable.values()) or f"no value named {metric!r}"
            wrong.append(f"{result.test_id}: labelled {expected}, but not scored: {why}")
            continue
        score = result.values[metric]
        if threshold.fails(score) != labels[result.test_id]:
            verdict = "fails" if threshold.fails(score) else "passes"
            wrong.append(
                f"{result.test_id}: labelled {expected}, but {metric} {score!r} {verdict} ({rule})"
            )
    if wrong:
        listed = "\n".join(f"  {w}" for w in wrong)
        _fail(
            f"{len(wrong)} labels of pack {info.name} are not the outcome on target "
            f"{target!r}:\n{listed}"
        )
    return run


# -- metrics ------------------------------------------------------------------------------------


def assert_metric_contract(
    metric: Any,
    case: Case,
    response: Response,
    *,
    documents: Iterable[Document] | None = None,
    options: Mapping[str, Any] | None = None,
) -> MetricResult:
    """Score *response* to *case* as the runner does and check the result; return it.

    *metric* is an installed metric's name (built from *options*) or a metric object. With
    *documents*, a metric that defines ``for_corpus`` is bound to them first, as the runner
    binds it to a pack's documents. The result must be a ``MetricResult`` whose values are
    numbers in [0, 1], whose evidence is JSON (it goes into ``runs.jsonl``), that either has
    values or says why the case is unscorable (never both: an unscorable case is not a 0), and
    scoring again must give the same result (metrics are pure).

    .. versionadded:: 0.1
    """
    from ragleaklab_core.runner import _score_case

    loaded = _plugin(METRICS, metric, options)
    who = f"{METRICS}:{loaded.name}"
    lower: Any = getattr(loaded.obj, "lower_is_worse", frozenset())
    if not isinstance(lower, Collection) or not all(isinstance(n, str) for n in lower):
        _fail(f"{who}: lower_is_worse must be a collection of value names, got {lower!r}")
    bind = getattr(loaded.obj, "for_corpus", None)
    if documents is not None and callable(bind):
        bound = _call(f"{who}.for_corpus()", bind, tuple(documents))
        loaded = _plugin(METRICS, bound)
    record = _score_case("contract", case, 0, response, None, (loaded,), 0.0)
    if record.error is not None:
        _fail(
            f"{who} fails on case {case.test_id!r} as a run would record it: "
            f"{record.error['message']}"
        )
    result = loaded.obj.score(case, response)
    if result.unscorable is not None:
        if not isinstance(result.unscorable, str) or not result.unscorable.strip():
            _fail(f"{who}: unscorable must be a non-empty reason, got {result.unscorable!r}")
        if result.values:
            _fail(
                f"{who}: case {case.test_id!r} is unscorable ({result.unscorable}) but has "
                f"values {dict(result.values)}; an unscorable case has none (a 0 reads as a pass)"
            )
    elif not result.values:
        _fail(f"{who}: case {case.test_id!r} has no values and no unscorable reason")
    names = [n for n in result.values if not isinstance(n, str)]
    if names:
        _fail(f"{who}: value names must be strings, got {names[0]!r}")
    problem = _json_problem(record.to_dict())
    if problem is not None:
        _fail(f"{who}: the evidence of case {case.test_id!r} is not JSON ({problem})")
    again = loaded.obj.score(case, response)
    if again != result:
        _fail(
            f"{who} is not pure: scoring case {case.test_id!r} twice gave {result!r} and {again!r}"
        )
    return result


# -- fitters ------------------------------------------------------------------------------------

#: The decision rules that flag the worse side, by ``higher_is_worse``.
_WORSE_SIDE = {True: (FLAG_HIGH, FLAG_ABOVE), False: (FLAG_LOW, FLAG_BELOW)}


def _fit_data(seed: int) -> tuple[dict[str, float], dict[str, bool]]:
    """60 labelled scores, rounded so that some tie: 20 positives mostly high, 40 negatives low."""
    import numpy as np

    rng = np.random.default_rng(seed)
    positive = rng.beta(5.0, 2.0, 20)
    negative = rng.beta(2.0, 5.0, 40)
    scores = np.round(np.concatenate([positive, negative]), 2)
    labels = [True] * 20 + [False] * 40
    order = rng.permutation(len(labels))
    ids = [f"t{i:02d}" for i in range(len(labels))]
    return (
        {ids[k]: float(scores[i]) for k, i in enumerate(order)},
        {ids[k]: labels[i] for k, i in enumerate(order)},
    )


def assert_fitter_contract(
    fitter: Any,
    *,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    target_fpr: float = 0.1,
) -> tuple[CalibrationReport, CalibrationReport]:
    """Fit small seeded data in both directions through calibration; return both reports.

    *fitter* is an installed fitter's name (built from *options*) or a fitter object. Each fit
    goes through :func:`ragleaklab_core.calibrate`, which recounts the result on the data and
    refuses one that disagrees (counts, rates); the report must be writable (JSON details), the
    rule must flag the worse side, the same inputs must give the same result, and malformed
    inputs (one class, different lengths) must raise ``InputError``.

    .. versionadded:: 0.1
    """
    import numpy as np

    from ragleaklab_core.calibration import calibrate

    loaded = _plugin(FITTERS, fitter, options)
    who = f"{FITTERS}:{loaded.name}"
    scores, labels = _fit_data(seed)
    reports = []
    for higher_is_worse in (True, False):
        directed = scores if higher_is_worse else {k: 1.0 - v for k, v in scores.items()}
        try:
            report = calibrate(
                directed,
                labels,
                fitter=loaded,
                target_fpr=target_fpr,
                higher_is_worse=higher_is_worse,
            )
        except RagleaklabError as exc:
            _fail(f"{who} (higher_is_worse={higher_is_worse}) fails calibration's checks:\n{exc}")
        result = report.result
        if (
            result.threshold is not None
            and result.decision_rule not in _WORSE_SIDE[higher_is_worse]
        ):
            _fail(
                f"{who}: with higher_is_worse={higher_is_worse} the rule "
                f"{result.decision_rule!r} flags the wrong side"
            )
        problem = _json_problem(dict(result.details))
        if problem is not None:
            _fail(f"{who}: FitResult.details is not JSON ({problem})")
        ids = sorted(directed)
        s = np.array([directed[k] for k in ids])
        y = np.array([labels[k] for k in ids])
        first = _call(
            f"{who}.fit()",
            loaded.obj.fit,
            s,
            y,
            target_fpr=target_fpr,
            higher_is_worse=higher_is_worse,
        )
        second = _call(
            f"{who}.fit()",
            loaded.obj.fit,
            s,
            y,
            target_fpr=target_fpr,
            higher_is_worse=higher_is_worse,
        )
        if first != second:
            _fail(f"{who} is not deterministic: the same inputs gave {first!r} and {second!r}")
        reports.append(report)
    bad_inputs = {
        "labels with no negative": (np.array([0.2, 0.8]), np.array([True, True])),
        "scores and labels of different lengths": (
            np.array([0.2, 0.8, 0.5]),
            np.array([True, False]),
        ),
        "a NaN score": (np.array([0.2, np.nan]), np.array([True, False])),
    }
    for what, (s, y) in bad_inputs.items():
        try:
            loaded.obj.fit(s, y, target_fpr=target_fpr, higher_is_worse=True)
        except InputError:
            continue
        except Exception as exc:
            _fail(f"{who}: {what} must raise InputError, got {type(exc).__name__}: {exc}")
        _fail(f"{who}: {what} must raise InputError (check_fit_inputs does it), not fit")
    return reports[0], reports[1]


# -- targets ------------------------------------------------------------------------------------


def assert_target_contract(
    target: Any,
    documents: Iterable[Document],
    queries: Iterable[str],
    *,
    options: Mapping[str, Any] | None = None,
) -> list[Response]:
    """Ingest *documents*, answer *queries* and close, exactly as the runner does; return answers.

    *target* is an installed target's name (built from *options*) or a target object. The
    runner's own session is used (``aingest``/``aanswer``/``areset``/``aclose`` when the target
    has them), so every answer must be a ``Response``; its ``retrieved`` must be None (not
    reported) or a tuple of ``RetrievedDocument`` with string ids, and its ``metadata`` must be
    JSON, since ``runs.jsonl`` records it.

    .. versionadded:: 0.1
    """
    from ragleaklab_core.runner import RunSettings, _TargetSession

    loaded = _plugin(TARGETS, target, options)
    who = f"{TARGETS}:{loaded.name}"
    docs = tuple(documents)
    asked = list(queries)
    if not asked:
        raise ValueError("give at least one query")
    session = _TargetSession(loaded, RunSettings())

    async def converse() -> list[Response]:
        await session.ingest(docs)
        try:
            return [await session.answer(Case(f"q{i}", q), 0) for i, q in enumerate(asked, start=1)]
        finally:
            problems = await session.close()
            if problems:
                raise RuntimeError("; ".join(problems))

    responses = _call(who, _run, converse())
    for query, response in zip(asked, responses, strict=True):
        where = f"{who} answering {query!r}"
        if not isinstance(response.answer, str):
            _fail(f"{where}: answer must be a string, got {type(response.answer).__name__}")
        retrieved = response.retrieved
        if retrieved is not None:
            if not isinstance(retrieved, tuple):
                _fail(f"{where}: retrieved must be a tuple or None, got {type(retrieved).__name__}")
            for r in retrieved:
                if not isinstance(r, RetrievedDocument) or not isinstance(r.doc_id, str):
                    _fail(
                        f"{where}: retrieved holds {r!r}, expected RetrievedDocument(doc_id: str)"
                    )
        problem = _json_problem(dict(response.metadata))
        if problem is not None:
            _fail(f"{where}: metadata is not JSON ({problem}); runs.jsonl records it")
    return responses


def _reset_stevedore_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    # stevedore memoises entry points for the life of the process (per namespace on the manager
    # class, and per sys.path tuple in its cache); a faked dist would stay invisible without this.
    from stevedore import ExtensionManager, _cache

    monkeypatch.setattr(ExtensionManager, "ENTRY_POINT_CACHE", {})
    monkeypatch.setattr(_cache._c, "_internal", {})


@pytest.fixture
def rlk_fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDist]:
    """A factory that fakes an installed distribution for the length of one test.

    ``rlk_fake_dist(name, entry_points={group: {ep_name: "module:attr"}}, modules={...},
    version="1.0")`` writes ``<name>.dist-info`` (METADATA and entry_points.txt) and the given
    modules (``{"pkg/mod.py": source}``) into a directory put first on ``sys.path``, and returns
    that directory. Everything is undone after the test, including imported modules.
    """
    root = tmp_path / "fake-site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    before = set(sys.modules)

    def make(
        name: str,
        *,
        entry_points: Mapping[str, Mapping[str, str]],
        modules: Mapping[str, str] | None = None,
        version: str = "1.0",
    ) -> Path:
        unknown = sorted(set(entry_points) - set(GROUPS))
        if unknown:
            raise ValueError(f"not ragleaklab groups: {unknown}; expected some of {GROUPS}")
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = []
        for group, eps in entry_points.items():
            lines.append(f"[{group}]")
            lines.extend(f"{ep} = {target}" for ep, target in eps.items())
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for rel, source in (modules or {}).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        _reset_stevedore_cache(monkeypatch)
        _load_package.cache_clear()  # manifests are cached per package name
        return root

    yield make
    _load_package.cache_clear()
    for mod in set(sys.modules) - before:
        file = getattr(sys.modules[mod], "__file__", None) or ""
        if file.startswith(str(root)):
            del sys.modules[mod]


__all__ = [
    "SOUND_FITTERS",
    "LabelCheck",
    "LabelsMirrorMetricWarning",
    "assert_fitter_contract",
    "assert_labels_are_outcomes",
    "assert_labels_are_sound",
    "assert_metric_contract",
    "assert_pack_contract",
    "assert_plugin_contract",
    "assert_target_contract",
    "negatives_for_fitter",
    "rlk_fake_dist",
]
