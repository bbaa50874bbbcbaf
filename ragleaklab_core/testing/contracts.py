"""The checks ragleaklab applies to each kind of plugin, run on a plugin author's plugin."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import pytest

from ragleaklab_core._discovery import (
    FITTERS,
    METRICS,
    PACKS,
    TARGETS,
    LoadedPlugin,
    check_contract,
    load_plugin,
)
from ragleaklab_core.errors import InputError, RagleaklabError
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
    from ragleaklab_core.calibration.report import CalibrationReport

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
    from ragleaklab_core.packs.validation import validate_pack

    loaded = _plugin(PACKS, pack)
    name = pack if isinstance(pack, str) else None
    report = validate_pack(loaded.obj, name=name)
    if not report.valid:
        lines = "\n".join(f"  {p}" for p in report.problems)
        _fail(f"pack {report.pack} is not valid:\n{lines}\n{report.summary()}")
    return loaded.obj


#: The fitters whose needs :func:`assert_labels_are_sound` knows, and what each needs.
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
    loaded, who = _bound_metric(metric, documents, options)
    result = _scored(loaded, who, case, response)
    again = loaded.obj.score(case, response)
    if again != result:
        _fail(
            f"{who} is not pure: scoring case {case.test_id!r} twice gave {result!r} and {again!r}"
        )
    return result


def assert_metric_reads_any_text(
    metric: Any,
    case: Case,
    *,
    documents: Iterable[Document] | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[MetricResult, ...]:
    """Score *case* with answers and retrieved texts of hostile shapes and check each result as
    :func:`assert_metric_contract` does; return the results.

    A system may say anything, and a metric that raises on some text errors that case instead
    of scoring it. Each text of
    :data:`~ragleaklab_core.testing.hostile_text.HOSTILE_TEXTS` (list items opening with one
    word, numbers in every format and size, dates that are not real, open markdown links, urls,
    e-mail addresses, emoji, right-to-left and zero-width marks, combining characters, very long
    words), alone and spliced into the case's query, is given as the answer and as the text of
    a retrieved document; a text the metric cannot read must be unscorable with a reason, never
    an exception. With *documents*, the metric is bound to them first (``for_corpus``), as a run
    binds it. It is a fixed list: property tests over arbitrary Unicode (hypothesis) go further.

    .. versionadded:: 0.3
    """
    from ragleaklab_core.testing.hostile_text import hostile_texts

    loaded, who = _bound_metric(metric, documents, options)
    results = []
    for text in hostile_texts(case):
        for response in (
            Response(text),
            Response(text, retrieved=(RetrievedDocument("hostile", text),)),
        ):
            results.append(_scored(loaded, who, case, response, text=text, again=False))
    return tuple(results)


def _bound_metric(
    metric: Any, documents: Iterable[Document] | None, options: Mapping[str, Any] | None
) -> tuple[LoadedPlugin, str]:
    """*metric* loaded and checked as the runner loads it, bound to *documents* when given and
    it binds; and how failures name it."""
    loaded = _plugin(METRICS, metric, options)
    who = f"{METRICS}:{loaded.name}"
    for wrong in loaded.metric_traits.problems:  # a declaration of the wrong shape
        _fail(f"{who}: {wrong}")
    if documents is not None and loaded.metric_traits.for_corpus:
        bound = _call(f"{who}.for_corpus()", loaded.obj.for_corpus, tuple(documents))
        loaded = _plugin(METRICS, bound)
    return loaded, who


def _scored(
    loaded: LoadedPlugin,
    who: str,
    case: Case,
    response: Response,
    *,
    text: str | None = None,
    again: bool = True,
) -> MetricResult:
    """*response* to *case* scored as a run scores it, the result checked; *text*, when given,
    is the hostile text the response holds (named in a failure). The result is the metric's
    own from a second scoring (*again*), else as the run recorded it."""
    from ragleaklab_core.run.executor import score_case

    given = "" if text is None else f" given the text {text[:200]!r}"
    record = score_case("contract", case, 0, response, None, (loaded,), 0.0)
    if record.error is not None:
        _fail(
            f"{who} fails on case {case.test_id!r}{given} as a run would record it: "
            f"{record.error['message']}"
        )
    if again:
        result = loaded.obj.score(case, response)
    else:
        result = MetricResult(**record.metrics[loaded.name])
    if result.unscorable is not None:
        if not isinstance(result.unscorable, str) or not result.unscorable.strip():
            _fail(f"{who}: unscorable must be a non-empty reason, got {result.unscorable!r}")
        if result.values:
            _fail(
                f"{who}: case {case.test_id!r} is unscorable ({result.unscorable}) but has "
                f"values {dict(result.values)}; an unscorable case has none (a 0 reads as a pass)"
            )
    elif not result.values:
        _fail(f"{who}: case {case.test_id!r}{given} has no values and no unscorable reason")
    names = [n for n in result.values if not isinstance(n, str)]
    if names:
        _fail(f"{who}: value names must be strings, got {names[0]!r}")
    problem = _json_problem(record.to_dict())
    if problem is not None:
        _fail(f"{who}: the evidence of case {case.test_id!r}{given} is not JSON ({problem})")
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

    from ragleaklab_core.calibration.report import calibrate

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
    from ragleaklab_core.run.executor import TargetSession
    from ragleaklab_core.run.runner import RunSettings

    loaded = _plugin(TARGETS, target, options)
    who = f"{TARGETS}:{loaded.name}"
    docs = tuple(documents)
    asked = list(queries)
    if not asked:
        raise ValueError("give at least one query")
    session = TargetSession(loaded, RunSettings())

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
