"""The regression between two runs: :func:`compare` two ``report.json`` documents.

What the comparison means for a run's exit code is :mod:`ragleaklab_core.gate`'s to decide;
its console rendering is :mod:`ragleaklab_core.reporting.diff`.

For each pack and gated value present in both reports, the failing counts ``k1/n1`` (base) and
``k2/n2`` (new) give the change in failing rate with an exact interval for the difference and
the exact one-sided p-value that the new rate is higher (Barnard's test with the score statistic,
inverted for the interval: :mod:`ragleaklab_core.stats.difference` says why). The value regressed
when that p-value is at most ``level``; the interval is at confidence ``1 - 2 * level``, so its
lower end is above 0 exactly when the value regressed. Per case: the ids that fail now and passed
(were scored and did not fail) in the base, and the ones that failed and now pass.

Comparing two runs is only meaningful when they measured the same thing, so packs whose version,
metric plugins and options, case selection or target (``name@fingerprint`` of its options)
differ are refused with an :class:`InputError` unless ``force`` is given. Packs or values present
in only one report are listed, never dropped.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from ragleaklab_core.calibration.labelling import target_identity
from ragleaklab_core.errors import InputError
from ragleaklab_core.inputs import read_report
from ragleaklab_core.stats.aggregation import DECIMALS
from ragleaklab_core.stats.difference import difference_interval, tail_p_value


@frozen
class ValueDiff:
    """One gated value of one pack in both runs."""

    pack: str
    value: str
    base_failing: int
    base_scored: int
    new_failing: int
    new_scored: int
    difference: float  # new rate - base rate
    interval: tuple[float, float]
    confidence: float
    p_value: float  # one-sided: the new failing rate is higher
    regressed: bool
    newly_failing: tuple[str, ...]
    no_longer_failing: tuple[str, ...]
    threshold_changed: bool
    still_failing: tuple[str, ...] = ()  # failing in both runs

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "value": self.value,
            "base": {"failing": self.base_failing, "scored": self.base_scored},
            "new": {"failing": self.new_failing, "scored": self.new_scored},
            "difference": round(self.difference, DECIMALS),
            "interval": [round(x, DECIMALS) for x in self.interval],
            "confidence": round(self.confidence, DECIMALS),
            "p_value": round(self.p_value, DECIMALS),
            "regressed": self.regressed,
            "newly_failing": list(self.newly_failing),
            "no_longer_failing": list(self.no_longer_failing),
            "still_failing": list(self.still_failing),
            "threshold_changed": self.threshold_changed,
        }


@frozen
class RunDiff:
    """Everything :func:`compare` found; ``regressed`` is True when any value regressed."""

    level: float
    forced: bool
    values: tuple[ValueDiff, ...]
    only_in_base: tuple[str, ...]  # "pack" or "pack value"
    only_in_new: tuple[str, ...]
    not_compared: tuple[str, ...]  # "pack value: why"
    differences: tuple[str, ...]  # what --force let through

    @property
    def regressed(self) -> bool:
        return any(v.regressed for v in self.values)

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """What the base run measured and the new one did not (a pack or gated value it lacks,
        a value none of its cases could score): no regression can be ruled out there."""
        return (*self.only_in_base, *self.not_compared)

    @property
    def newly_failing(self) -> int:
        return sum(len(v.newly_failing) for v in self.values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "regressed": self.regressed,
            "level": self.level,
            "forced": self.forced,
            "differences": list(self.differences),
            "values": [v.to_dict() for v in self.values],
            "only_in_base": list(self.only_in_base),
            "only_in_new": list(self.only_in_new),
            "not_compared": list(self.not_compared),
        }


def check_level(level: object, *, name: str = "the level") -> float:
    """*level* as the one-sided level of the regression test: a finite number strictly between
    0 and 0.5, else an :class:`InputError` naming it (*name*: the flag, ``--baseline-level``).

    NaN compares false with every bound, so it is refused by name, not by comparison: a run
    given ``--baseline-level nan`` is refused before it asks anything."""
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 0.5:
        raise InputError(
            f"{name} must be a number strictly between 0 and 0.5 (such as 0.05), not {level!r}"
        )
    return float(level)


def compare(
    base: Mapping[str, Any], new: Mapping[str, Any], *, level: float = 0.05, force: bool = False
) -> RunDiff:
    """The regression from run *base* to run *new* (both parsed ``report.json`` documents).

    Raises:
        InputError: *level* is not in (0, 0.5), or the runs measured different things (pack
            versions, metric options, case selection or target) and *force* is False.
    """
    check_level(level)
    check_report(base, source="base report")
    check_report(new, source="new report")
    base_packs = {p["name"]: p for p in base["packs"]}
    new_packs = {p["name"]: p for p in new["packs"]}
    common = sorted(set(base_packs) & set(new_packs))
    differences = _differences(base, new, base_packs, new_packs, common)
    if differences and not force:
        raise not_comparable(differences)
    only_in_base = [n for n in sorted(base_packs) if n not in new_packs]
    only_in_new = [n for n in sorted(new_packs) if n not in base_packs]
    values: list[ValueDiff] = []
    not_compared: list[str] = []
    for name in common:
        b, n = base_packs[name], new_packs[name]
        b_values, n_values = _gated(b), _gated(n)
        only_in_base += [f"{name} {v}" for v in sorted(set(b_values) - set(n_values))]
        only_in_new += [f"{name} {v}" for v in sorted(set(n_values) - set(b_values))]
        for value in sorted(set(b_values) & set(n_values)):
            found = _value_diff(name, value, b, n, level)
            if isinstance(found, str):
                not_compared.append(f"{name} {value}: {found}")
            else:
                values.append(found)
    return RunDiff(
        level=level,
        forced=force,
        values=tuple(values),
        only_in_base=tuple(only_in_base),
        only_in_new=tuple(only_in_new),
        not_compared=tuple(not_compared),
        differences=tuple(differences),
    )


class _Array(abc.ABC):  # noqa: B024  (a type test, nothing to implement)
    """A JSON array as compare reads it: a list, or a run's own streamed list (any sequence
    but a string)."""

    @classmethod
    def __subclasshook__(cls, other: type) -> bool:
        return issubclass(other, Sequence) and not issubclass(other, str | bytes)


# What compare reads, by path (``*`` is every item or key): a report missing any is refused with
# its $.path rather than failing half-way with a KeyError.
_NEEDED: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("packs", list),
    ("packs.*", dict),
    ("packs.*.name", str),
    ("packs.*.version", str),
    ("packs.*.metrics", list),
    ("packs.*.metrics.*.name", str),
    ("packs.*.cases.tags", list),
    ("packs.*.cases.ids", _Array),
    ("packs.*.values", dict),
    ("packs.*.values.*.threshold", (dict, type(None))),
    ("packs.*.values.*.fail_rate", (dict, type(None))),
    ("packs.*.values.*.all_failing_ids", _Array),
    ("packs.*.values.*.unscored_ids", _Array),
)


def read_comparable(path: Path) -> dict[str, Any]:
    """The ``report.json`` at *path*, checked for what :func:`compare` reads: ``ragleaklab
    diff``'s two reports and ``run --baseline``'s are read by this one function.

    Raises:
        InputError: The file is missing, is no JSON object, or lacks what a comparison reads
            (the message names its ``$.path``).
    """
    report = read_report(path)
    check_report(report, source=str(path))
    return report


def check_report(report: object, *, source: str) -> None:
    """Raise :class:`InputError` naming the ``$.path`` of the first thing :func:`compare` needs
    that *report* lacks or holds with the wrong type."""
    if not isinstance(report, Mapping):
        raise InputError("$: a report is a JSON object", source=source)
    for path, kind in _NEEDED:
        for where, found in _walk(report, path.split("."), "$"):
            if found is _MISSING:
                hint = " (a report written before ragleaklab diff existed: run it again)"
                raise InputError(
                    f"{where}: missing{hint if path.endswith('ids') else ''}", source=source
                )
            if not isinstance(found, kind):
                raise InputError(
                    f"{where}: {type(found).__name__} where a report has {_names(kind)}",
                    source=source,
                )
    for i, pack in enumerate(report["packs"]):
        for name, value in pack["values"].items():
            rate = value["fail_rate"]
            if rate is not None and not _counts(rate):
                raise InputError(
                    f"$.packs[{i}].values.{name}.fail_rate: not a failing count out of at least "
                    "one scored case",
                    source=source,
                )


def _counts(rate: Mapping[str, Any]) -> bool:
    k, n = rate.get("successes"), rate.get("trials")
    ints = isinstance(k, int) and isinstance(n, int) and not isinstance(k, bool)
    return ints and 0 <= k <= n and n >= 1  # type: ignore[operator]


_MISSING = object()


def _walk(node: Any, steps: list[str], where: str):  # type: ignore[no-untyped-def]
    if not steps:
        yield where, node
        return
    step, rest = steps[0], steps[1:]
    if step == "*":
        items = enumerate(node) if isinstance(node, list) else node.items()
        for key, item in items:
            yield from _walk(
                item, rest, f"{where}[{key}]" if isinstance(node, list) else f"{where}.{key}"
            )
    elif not isinstance(node, Mapping) or step not in node:
        yield f"{where}.{step}", _MISSING
    else:
        yield from _walk(node[step], rest, f"{where}.{step}")


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {
        list: "an array",
        _Array: "an array",
        dict: "an object",
        str: "a string",
        type(None): "null",
    }
    return " or ".join(words[k] for k in kinds)


def _differences(
    base: Mapping[str, Any],
    new: Mapping[str, Any],
    base_packs: Mapping[str, Any],
    new_packs: Mapping[str, Any],
    common: Sequence[str],
) -> list[str]:
    """What makes the two runs measure different things, one phrase each."""
    found = []
    base_target = _target(base)
    new_target = _target(new)
    if base_target != new_target:
        b_opts = (base.get("target") or {}).get("options", {})
        n_opts = (new.get("target") or {}).get("options", {})
        changed = [
            f"{k} {json.dumps(b_opts.get(k))} -> {json.dumps(n_opts.get(k))}"
            for k in sorted(set(b_opts) | set(n_opts))
            if b_opts.get(k) != n_opts.get(k)
        ]
        how = f" (options: {', '.join(changed)})" if changed else ""
        found.append(
            f"the target is {base_target} in the base and {new_target} in the new run{how}"
        )
    for name in common:
        b, n = base_packs[name], new_packs[name]
        found.extend(_selection_differences(name, b, n["version"], n["cases"]["tags"]))
        if _metrics(b) != _metrics(n):
            found.append(f"pack {name} is scored by other metrics or metric options")
    return found


def _selection_differences(
    name: str, base: Mapping[str, Any], version: str, tags: Sequence[str]
) -> list[str]:
    found = []
    if base["version"] != version:
        found.append(f"pack {name} is version {base['version']} in the base, {version} now")
    if sorted(base["cases"]["tags"]) != sorted(tags):
        found.append(
            f"pack {name} ran the cases tagged {base['cases']['tags']} in the base, "
            f"{sorted(tags)} now"
        )
    return found


def not_comparable(differences: Sequence[str]) -> InputError:
    """The error refusing to compare runs that measured different things."""
    return InputError(
        "these runs did not measure the same thing, so a change in their failing rates would "
        "not be a regression of the system: " + "; ".join(differences) + ". Compare runs of "
        "the same pack versions, metric options, case selection and target, or force the "
        "comparison (ragleaklab diff --force, ragleaklab run --force-baseline, force=True)."
    )


def planned_differences(
    base: Mapping[str, Any], versions: Mapping[str, str], tags: Sequence[str]
) -> list[str]:
    """What a run of the packs *versions* (name -> version) selecting *tags* is known, before it
    starts, to measure differently from run *base* (a checked report): the pack versions and the
    case selection. The rest (metric options, target) is compared on the finished report."""
    base_packs = {p["name"]: p for p in base["packs"]}
    found = []
    for name in sorted(set(versions) & set(base_packs)):
        found.extend(_selection_differences(name, base_packs[name], versions[name], tags))
    return found


def _target(report: Mapping[str, Any]) -> str:
    target = report.get("target")
    return "no target" if target is None else target_identity(target)


def _metrics(pack: Mapping[str, Any]) -> list[tuple[str, str]]:
    return sorted((m["name"], repr(sorted(m.get("options", {}).items()))) for m in pack["metrics"])


def _gated(pack: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {k: v for k, v in pack["values"].items() if v["threshold"] is not None}


def _value_diff(
    pack: str, value: str, b_pack: Mapping[str, Any], n_pack: Mapping[str, Any], level: float
) -> ValueDiff | str:
    b, n = b_pack["values"][value], n_pack["values"][value]
    if b["fail_rate"] is None or n["fail_rate"] is None:
        return "no case could be scored in " + (
            "the base" if b["fail_rate"] is None else "the new run"
        )
    k1, n1 = b["fail_rate"]["successes"], b["fail_rate"]["trials"]
    k2, n2 = n["fail_rate"]["successes"], n["fail_rate"]["trials"]
    p_value = tail_p_value(k2, n2, k1, n1, delta=0.0, upper=True)
    interval = difference_interval(k2, n2, k1, n1, alpha=level)
    b_failing, n_failing = set(b["all_failing_ids"]), set(n["all_failing_ids"])
    # Passed in one run = run there, scored there, and not failing there.
    b_passed = set(b_pack["cases"]["ids"]) - set(b["unscored_ids"]) - b_failing
    n_passed = set(n_pack["cases"]["ids"]) - set(n["unscored_ids"]) - n_failing
    return ValueDiff(
        pack=pack,
        value=value,
        base_failing=k1,
        base_scored=n1,
        new_failing=k2,
        new_scored=n2,
        difference=k2 / n2 - k1 / n1,
        interval=interval,
        confidence=1 - 2 * level,
        p_value=p_value,
        regressed=p_value <= level,
        newly_failing=tuple(sorted(n_failing & b_passed)),
        no_longer_failing=tuple(sorted(b_failing & n_passed)),
        threshold_changed=b["threshold"] != n["threshold"],
        still_failing=tuple(sorted(b_failing & n_failing)),
    )


def p_text(p: float) -> str:
    """A p-value as the renderings print it."""
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


__all__ = [
    "RunDiff",
    "ValueDiff",
    "check_report",
    "compare",
    "not_comparable",
    "p_text",
    "planned_differences",
    "read_comparable",
]
