"""Checks of a pack's labels that never define them by the metric they calibrate."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
from attrs import frozen

from ragleaklab_core._discovery import (
    FITTERS,
    PACKS,
    LoadedPlugin,
    available_names,
    load_plugin,
    pack_info,
    plugin_class,
)
from ragleaklab_core.config import DEFAULT_FITTER, DEFAULT_TARGET
from ragleaklab_core.contracts.fitters import fitter_traits, negatives_needed_by
from ragleaklab_core.errors import RagleaklabError
from ragleaklab_core.packs.manifest import (
    LABEL_SOURCES,
    TARGETED_LABEL_SOURCES,
    LabelProvenance,
)

if TYPE_CHECKING:
    from ragleaklab_core.run.runner import PackRun

from ragleaklab_core.testing.contracts import _call, _fail, _plugin

T = TypeVar("T")

FakeDist = Callable[..., Path]


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


def negatives_for_fitter(
    fitter: Any,
    target_fpr: float,
    delta: float = 0.05,
    *,
    options: Mapping[str, Any] | None = None,
) -> int:
    """The fewest negative labels *fitter* needs at *target_fpr*, as the fitter declares it
    (its ``negatives_needed(target_fpr, confidence)``, asked at confidence ``1 - delta``).

    *fitter* is an installed fitter's name (built from *options*), a
    :class:`~ragleaklab_core.LoadedPlugin` or a fitter object. The built-ins declare:
    ``neyman-pearson``, the smallest n with ``(1 - target_fpr) ** n <= delta`` (299 at 1% and
    delta 0.05), below which no threshold carries its guarantee; ``exact`` and
    ``bootstrap-ci``, ``ceil(1 / target_fpr)`` (100 at 1%), below which one false positive is
    already above the target, so the false-positive rate cannot be resolved at all.

    Raises:
        ValueError: *target_fpr* or *delta* is not in (0, 1); no fitter of that name is
            installed; or the fitter declares no ``negatives_needed``, so the kit cannot tell.
        PluginRuntimeError: Its ``negatives_needed`` raised or gave no positive whole number.

    .. versionadded:: 0.2
    .. versionchanged:: 0.4
        Asked of the fitter, so any fitter that declares ``negatives_needed`` is known.
    """
    if not 0.0 < target_fpr < 1.0:
        raise ValueError(f"target_fpr must be in (0, 1), got {target_fpr!r}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    loaded = _fitter(fitter, options)
    needed = negatives_needed_by(
        loaded.obj,
        loaded.fitter_traits,
        name=loaded.name,
        target_fpr=target_fpr,
        confidence=1.0 - delta,
    )
    if needed is None:
        raise ValueError(
            f"fitter {loaded.name!r} declares no negatives_needed(target_fpr, confidence): the "
            "kit cannot tell how many negatives it needs (docs/plugins.md, optional members)"
        )
    return needed


def __getattr__(name: str) -> Any:
    if name == "SOUND_FITTERS":
        return _sound_fitters(stacklevel=2)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _sound_fitters(stacklevel: int) -> tuple[str, ...]:
    """The deprecated ``SOUND_FITTERS``: until 0.4 the built-in fitters whose needs the kit
    knew; a fitter's needs are now its own declaration, so the installed fitters that declare
    them. The warning points *stacklevel* frames above the caller (the line that named it)."""
    warnings.warn(
        "SOUND_FITTERS is deprecated: the kit asks each fitter how many negatives it needs "
        "(its negatives_needed); call negatives_for_fitter(name, target_fpr)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
    return tuple(n for n in available_names(FITTERS) if _declares_needs(n))


def _declares_needs(name: str) -> bool:
    try:
        return fitter_traits(plugin_class(FITTERS, name)).negatives_needed
    except RagleaklabError:
        return False  # a broken fitter is reported where it is used


def _fitter(fitter: Any, options: Mapping[str, Any] | None) -> LoadedPlugin:
    """*fitter* as the loader gives it: an installed name built from *options*, else as given."""
    if isinstance(fitter, LoadedPlugin):
        return fitter
    if not isinstance(fitter, str):
        return _plugin(FITTERS, fitter, options)
    known = available_names(FITTERS)
    if fitter not in known:
        raise ValueError(f"unknown fitter {fitter!r}; the installed fitters: {', '.join(known)}")
    return load_plugin(FITTERS, fitter, options)


def _default_labels(pack: LoadedPlugin) -> Any:
    """The pack's ``default_labels()``, or None when it has none."""
    if not pack.pack_traits.default_labels:
        return None
    return _call("default_labels()", pack.obj.default_labels)


def _provenance(
    pack: LoadedPlugin, lines: list[dict[str, Any]]
) -> tuple[LabelProvenance | None, str]:
    """The pack's declared provenance, else the one every label line carries; or why none."""
    declared = (
        _call("label_provenance()", pack.obj.label_provenance)
        if pack.pack_traits.label_provenance
        else None
    )
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
    fitter: Any = DEFAULT_FITTER,
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
    - both classes are present, and the negatives are enough for *fitter* (a name, or a fitter
      object) at *target_fpr*, as the fitter declares (:func:`negatives_for_fitter`: 100 for
      ``exact`` at 1%, 299 for ``neyman-pearson`` at 1% and *delta* 0.05); a fitter that
      declares no ``negatives_needed`` is refused (``ValueError``): the kit cannot tell;
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
    .. versionchanged:: 0.4
        The negatives needed are the fitter's own declaration; *fitter* may be an object.
    """
    from ragleaklab_core.inputs import jsonl_records
    from ragleaklab_core.run.runner import run_pack

    loaded_fitter = _fitter(fitter, None)
    fitter_name = loaded_fitter.name
    try:
        needed = negatives_for_fitter(loaded_fitter, target_fpr, delta)
    except RagleaklabError as exc:
        _fail(f"the {fitter_name} fitter cannot say how many negatives it needs:\n{exc}")
    loaded = _plugin(PACKS, pack)
    info = _call("info()", lambda: pack_info(loaded.obj))
    raw = _default_labels(loaded)
    if raw is None:
        _fail(f"pack {info.name} ships no default labels")
    traits = loaded.pack_traits
    source = _call("labels_source()", loaded.obj.labels_source) if traits.labels_source else None
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
            f"{fitter_name} fitter at least {needed} negatives at target_fpr {target_fpr:.4g}"
        )
    elif n_negative < needed:
        problems.append(
            f"{n_negative} negative labels: the {fitter_name} fitter needs at least {needed} at "
            f"target_fpr {target_fpr:.4g} (its negatives_needed, at confidence {1 - delta:g}); "
            f"{needed - n_negative} more negatives are missing"
        )
    provenance, why_not = _provenance(loaded, [r for _n, r in numbered])
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
    from ragleaklab_core.run.runner import run_pack

    loaded = _plugin(PACKS, pack)
    info = _call("info()", lambda: pack_info(loaded.obj))
    metric = value or info.primary_metric
    threshold = info.thresholds.get(metric)
    if threshold is None:
        _fail(f"pack {info.name} has no default threshold for {metric!r} to judge outcomes by")
    raw = _default_labels(loaded)
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
