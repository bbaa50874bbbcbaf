"""``report.json``, the serialization of a finished run (:class:`RunOutcome`): one codec that
writes it and reads it back.

:func:`encode` turns the outcome into the document ``report.json`` holds, key for key in the
order ragleaklab has always written them, and :func:`dumps` / :func:`chunks` into its text
(indented by two spaces, each case of ``case_results`` on one line). ``exit_code`` is written
beside the verdict for readers; it is the verdict's, never stored apart from it.

:func:`decode` reads a parsed ``report.json`` back with the strict converter the config uses
(:func:`ragleaklab_core.config.strict_converter`): a key missing, a value of the wrong type, a
verdict that is no verdict word, an ``exit_code`` that is not its verdict's, or a key this
ragleaklab does not know is refused with an :class:`~ragleaklab_core.errors.InputError` naming
every ``$.path`` (exit 2). Unknown keys are refused rather than skipped, as the published schema
(``docs/schemas/report.schema.json``) refuses them: a report written by a newer ragleaklab may
say something this one would silently misread, and a baseline misread is a false pass. Keys a
report written before them lacks (``allowances``, ``exclude_tags``...) read as their defaults.

The per-case list of a decoded pack is checked whole when it is decoded, and decoded again
case by case each time it is walked (the document's list is not copied into typed cases), so
what a reader holds does not grow twice with the cases.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from attrs import frozen
from cattrs.gen import make_dict_unstructure_fn, override

from ragleaklab_core._walked import Walked
from ragleaklab_core.config import STRUCTURE_ERRORS, problems_of, strict_converter
from ragleaklab_core.errors import InputError
from ragleaklab_core.outcome.pack import (
    Allowances,
    AppliedThreshold,
    CaseCounts,
    CaseDetail,
    CaseOutcome,
    PackOutcome,
)
from ragleaklab_core.outcome.run import BaselineRecord, RunOutcome
from ragleaklab_core.outcome.words import Outcome, Verdict
from ragleaklab_core.stats.aggregation import RateInterval, Summary
from ragleaklab_core.values import PackTaxonomy

_converter = strict_converter()


# ---- encoding ----------------------------------------------------------------------------


def _omitting_empty(cls: type, *fields: str) -> None:
    """Write *fields* of *cls* only when they are not empty (as report.json always has)."""
    overrides: dict[str, Any] = {name: override(omit_if_default=True) for name in fields}
    _converter.register_unstructure_hook(
        cls, make_dict_unstructure_fn(cls, _converter, **overrides)
    )


for _written_by_itself in (RateInterval, Summary, PackTaxonomy, Allowances):
    _converter.register_unstructure_hook(_written_by_itself, lambda value: value.to_dict())


class _Mapped(Walked[Any]):
    """*items* with *convert* applied to each as it is walked: a streamed list stays streamed."""

    def __init__(self, items: Sequence[Any], convert: Callable[[Any], Any]) -> None:
        self._items = items
        self._convert = convert

    def __iter__(self) -> Iterator[Any]:
        return (self._convert(item) for item in self._items)

    def __len__(self) -> int:
        return len(self._items)


def _ids_out(ids: Sequence[str]) -> Sequence[str]:
    # A run's streamed ids are written as they are walked, not copied into a list first.
    return ids if isinstance(ids, Walked) else list(ids)


def _is(type_: Any) -> Callable[[Any], bool]:
    return lambda other: other == type_


_converter.register_unstructure_hook_func(_is(Sequence[str]), _ids_out)
_converter.register_unstructure_hook_func(
    _is(Sequence[CaseOutcome]),
    lambda cases: _Mapped(cases, lambda case: _converter.unstructure(case, CaseOutcome)),
)
_converter.register_unstructure_hook_func(
    _is(Sequence[PackOutcome]),
    lambda packs: [_converter.unstructure(p, PackOutcome) for p in packs],
)


# Last: a generated function binds the hooks of its fields' types as they are when generated.
_omitting_empty(AppliedThreshold, "forced")
_omitting_empty(CaseCounts, "exclude_tags")
_omitting_empty(CaseDetail, "masked", "repaired")
_omitting_empty(RunOutcome, "gate")
_omitting_empty(BaselineRecord, "path", "sha256")


def encode(outcome: RunOutcome) -> dict[str, Any]:
    """The ``report.json`` document of *outcome*, keys in the order ragleaklab writes them,
    ``exit_code`` (the verdict's) after the verdict. Its per-case lists are produced as they
    are walked when the outcome's are."""
    document: dict[str, Any] = {}
    for key, value in _converter.unstructure(outcome, RunOutcome).items():
        document[key] = value
        if key == "verdict":
            document["exit_code"] = outcome.verdict.exit_code
    return document


#: The lists written one item a line: a pack's cases, thousands of them, each a handful of keys
#: (indented, they made up most of report.json).
ONE_LINE_ITEMS = frozenset({"case_results"})


def dumps(document: Mapping[str, Any]) -> str:
    """JSON as ragleaklab writes it: indented by two spaces as ``json.dumps`` indents, except
    that each item of a :data:`ONE_LINE_ITEMS` list is on one line; no NaN, newline at the end."""
    return "".join(chunks(document))


def chunks(document: Mapping[str, Any]) -> Iterator[str]:
    """:func:`dumps`, as pieces of text produced as they are written: a report's streamed lists
    are walked once, never held."""
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


# ---- decoding ----------------------------------------------------------------------------


def _word(cls: type[Verdict] | type[Outcome]) -> Callable[[Any, Any], Any]:
    # Registered by name: the config's hook for str would otherwise take these str subclasses.
    def hook(value: Any, _: Any) -> Any:
        if isinstance(value, cls):  # a document this process built, not read back yet
            return value
        if type(value) is not str:
            raise TypeError(f"expected a string, got {type(value).__name__} {value!r}")
        try:
            return cls(value)
        except ValueError:
            words = ", ".join(w.value for w in cls)
            raise ValueError(f"expected one of {words}, got {json.dumps(value)}") from None

    return hook


_converter.register_structure_hook(Verdict, _word(Verdict))
_converter.register_structure_hook(Outcome, _word(Outcome))


def _ids_in(value: Any, _: Any) -> Sequence[str]:
    if isinstance(value, Walked):  # this process's own run, streamed: kept streamed
        return value
    return tuple(_converter.structure(value, tuple[str, ...]))


_converter.register_structure_hook_func(_is(Sequence[str]), _ids_in)


# The wire shape of a pack's allowances (report.json nests each as a value and its source).
@frozen(kw_only=True)
class _RateSetting:
    value: float
    source: str


@frozen(kw_only=True)
class _FlagSetting:
    value: bool
    source: str


@frozen(kw_only=True)
class _CorrectedSetting:
    value: float | None
    source: str


@frozen(kw_only=True)
class _AllowancesDocument:
    max_fail_rate: _RateSetting
    tolerate_errors: _FlagSetting
    #: Absent in reports written before corrected rates.
    max_corrected_rate: _CorrectedSetting | None = None


def _allowances_in(value: Any, _: Any) -> Allowances:
    doc = _converter.structure(value, _AllowancesDocument)
    corrected = doc.max_corrected_rate or _CorrectedSetting(value=None, source="default")
    return Allowances(
        max_fail_rate=doc.max_fail_rate.value,
        max_fail_rate_source=doc.max_fail_rate.source,
        tolerate_errors=doc.tolerate_errors.value,
        tolerate_errors_source=doc.tolerate_errors.source,
        max_corrected_rate=corrected.value,
        max_corrected_rate_source=corrected.source,
    )


class _Cases(Walked[CaseOutcome]):
    """A pack's ``case_results`` read back: each case decoded as it is walked (the whole list
    was checked once, by :func:`decode`)."""

    def __init__(self, items: Sequence[Any], *, streamed: bool = False) -> None:
        self._items = items
        #: Whether these are this process's own run's cases, streamed from disk as walked:
        #: built with the pack's counts, which a reader may then trust to stop early.
        self.streamed = streamed

    def __iter__(self) -> Iterator[CaseOutcome]:
        return (_converter.structure(case, CaseOutcome) for case in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def check(self) -> None:
        """Decode every case once, keeping none: the first one that does not parse is raised
        with its index (``case_results[j]``)."""
        from cattrs.errors import IterableValidationError, IterableValidationNote

        for index, case in enumerate(self._items):
            try:
                _converter.structure(case, CaseOutcome)
            except STRUCTURE_ERRORS as exc:
                exc.__notes__ = [
                    *getattr(exc, "__notes__", []),
                    IterableValidationNote(f"Structuring case @ index {index}", index, CaseOutcome),
                ]
                raise IterableValidationError(
                    "While structuring case_results", [exc], Sequence[CaseOutcome]
                ) from None


def _cases_in(value: Any, _: Any) -> _Cases:
    if isinstance(value, Walked):
        # This process's own run, streamed from disk and encoded from typed cases: walking
        # it to check would read every case once more, for nothing.
        return _Cases(value, streamed=True)
    if not isinstance(value, list | tuple):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    cases = _Cases(value)
    cases.check()
    return cases


_converter.register_structure_hook_func(_is(Sequence[CaseOutcome]), _cases_in)
_converter.register_structure_hook_func(
    _is(Sequence[PackOutcome]),
    lambda value, _: _converter.structure(value, tuple[PackOutcome, ...]),
)


#: How many problems a refusal names (a file that is no report at all has hundreds).
_NAMED = 30


def decode(document: object, *, source: str) -> RunOutcome:
    """The finished run a parsed ``report.json`` (*document*) records.

    Raises:
        InputError: Something does not parse: every problem at its ``$.path``, the file named
            as *source* (exit 2).
    """
    if not isinstance(document, Mapping):
        raise InputError("$: a report is a JSON object", source=source)
    body = {k: v for k, v in document.items() if k != "exit_code"}
    problems: list[str] = []
    outcome: RunOutcome | None = None
    try:
        outcome = _converter.structure(body, RunOutcome)
    except STRUCTURE_ERRORS as exc:
        problems = problems_of(exc)
    if "exit_code" not in document:
        problems.append("required field missing @ $.exit_code")
    elif outcome is not None and document["exit_code"] != outcome.verdict.exit_code:
        problems.append(
            f"{json.dumps(document['exit_code'])} is not the exit code of the verdict "
            f"{outcome.verdict.value!r} ({outcome.verdict.exit_code}) @ $.exit_code"
        )
    if problems:
        raise InputError(
            "not a report.json this ragleaklab can read: "
            + "; ".join(problems[:_NAMED])
            + (f" (+{len(problems) - _NAMED} more)" if len(problems) > _NAMED else ""),
            source=source,
        )
    assert outcome is not None
    return outcome


_converter.register_structure_hook(Allowances, _allowances_in)


__all__ = ["ONE_LINE_ITEMS", "chunks", "decode", "dumps", "encode"]
