"""Configuration: the attrs model of a config file and the private, strict cattrs converter.

One converter reads config files, CLI overrides and every plugin's options. It rejects unknown
keys and never coerces types ("false" is not a bool, 1.9 is not an int); every problem is reported
at once, each with its ``$.path``. Floats accept integers; nothing else is converted.
"""

from __future__ import annotations

import math
import tomllib
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
import cattrs
from attrs import field, frozen
from attrs import validators as v
from cattrs.errors import (
    AttributeValidationNote,
    CattrsError,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.v import format_exception, transform_error

from ragleaklab_core.errors import ConfigError, did_you_mean
from ragleaklab_core.stats.aggregation import reducer as parse_reducer
from ragleaklab_core.values import DECISION_RULES, FLAG_HIGH

# The defaults, in one place: the core names no built-in plugin anywhere else.
#: The target `run` and `calibrate --pack` use when the config names none.
DEFAULT_TARGET = "reference"
#: The fitter `calibrate` uses when none is named.
DEFAULT_FITTER = "exact"
#: Where `calibrate --write-thresholds` stores thresholds and `run` reads them.
DEFAULT_THRESHOLDS_FILE = "ragleaklab.thresholds.json"
#: The config file ``ragleaklab run`` and ``calibrate`` read from the working directory when
#: ``--config`` is not given (as the thresholds file is read from there).
DEFAULT_CONFIG_FILE = "ragleaklab.toml"

T = TypeVar("T")


def _exact(type_: type, *, also: tuple[type, ...] = ()) -> Callable[[object, type], object]:
    def hook(value: object, _: type) -> object:
        if type(value) is type_ or type(value) in also:
            return type_(value)
        raise TypeError(f"expected {type_.__name__}, got {type(value).__name__} {value!r}")

    return hook


def _finite_float(value: object, _: type) -> float:
    if type(value) not in (float, int):
        raise TypeError(f"expected float, got {type(value).__name__} {value!r}")
    result = float(value)  # type: ignore[arg-type]
    if not math.isfinite(result):
        raise ValueError(f"expected a finite number, got {value!r}")
    return result


def _is_homogeneous_sequence(type_: Any) -> bool:
    origin = typing.get_origin(type_)
    if origin is list:
        return True
    args = typing.get_args(type_)
    return origin is tuple and len(args) == 2 and args[1] is Ellipsis


def _sequence_hook(converter: cattrs.Converter, type_: Any) -> Callable[[Any, Any], Any]:
    # cattrs' own list/tuple hooks accept any iterable, so "private" would become
    # ('p', 'r', ...); a TOML string where a list belongs is a mistake to report.
    origin = typing.get_origin(type_)
    args = typing.get_args(type_)
    item_type = args[0] if args else Any

    def hook(value: Any, _: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise TypeError(f"expected a list, got {type(value).__name__} {value!r}")
        items, errors = [], []
        for index, item in enumerate(value):
            try:
                items.append(converter.structure(item, item_type))
            except Exception as exc:
                exc.__notes__ = [
                    *getattr(exc, "__notes__", []),
                    IterableValidationNote(
                        f"Structuring {type_} @ index {index}", index, item_type
                    ),
                ]
                errors.append(exc)
        if errors:
            raise IterableValidationError(f"While structuring {type_!r}", errors, type_)
        return tuple(items) if origin is tuple else items

    return hook


class _FieldValueError(ValueError):
    """An attrs validator's complaint, re-raised at the field it is about."""


def _validator_errors(
    converter: cattrs.Converter, cls: type, data: Mapping[str, Any]
) -> list[Exception]:
    """Run every field validator of *cls* on the structured *data*; one error per bad field.

    attrs stops at the first failing validator and cattrs reports it at the class's path; this
    finds them all and notes each at its own field, so ``$.path`` points at the value.
    """
    fields = attrs.fields(cls)
    values: dict[str, Any] = {}
    for a in fields:
        if not a.init:
            continue
        key = a.alias or a.name
        if key in data:
            value = converter.structure(data[key], a.type)
            values[a.name] = a.converter(value) if callable(a.converter) else value
        elif isinstance(a.default, attrs.Factory) and not a.default.takes_self:  # type: ignore[arg-type]
            values[a.name] = a.default.factory()
        elif a.default is not attrs.NOTHING and not isinstance(a.default, attrs.Factory):  # type: ignore[arg-type]
            values[a.name] = a.default
    stand_in = types.SimpleNamespace(**values)
    errors: list[Exception] = []
    for a in fields:
        if a.validator is None or a.name not in values:
            continue
        try:
            a.validator(stand_in, a, values[a.name])
        except (TypeError, ValueError) as exc:
            said = str(exc.args[0]) if exc.args else str(exc)
            error = _FieldValueError(said + _closest_choice(exc))
            error.__notes__ = [
                AttributeValidationNote(
                    f"Structuring class {cls.__qualname__} @ attribute {a.name}", a.name, a.type
                )
            ]
            errors.append(error)
    return errors


def _closest_choice(exc: Exception) -> str:
    """``" (did you mean 'retriever'?)"`` for a mistyped choice refused by attrs' ``in_``
    validator (``kind = "retreiver"``), which names the choices but not the one meant; ``""``
    for any other complaint. attrs raises it as ``ValueError(message, attribute, options,
    value)``."""
    if not isinstance(exc, ValueError) or len(exc.args) != 4:
        return ""
    _, attribute, options, value = exc.args
    if not isinstance(attribute, attrs.Attribute) or not isinstance(value, str):
        return ""
    try:
        choices = [c for c in options if isinstance(c, str)]
    except TypeError:
        return ""
    return did_you_mean(value, choices)


def _attrs_hook_factory(converter: cattrs.Converter, cls: type) -> Callable[[Any, type], Any]:
    base: Callable[[Any, type], Any] = converter.gen_structure_attrs_fromdict(cls)

    def hook(data: Any, _: type) -> Any:
        if not isinstance(data, Mapping):
            raise TypeError(f"expected a table, got {type(data).__name__} {data!r}")
        try:
            return base(data, cls)
        except ClassValidationError as exc:
            with_notes, without = exc.group_exceptions()
            # Problems with notes are field-level, already at their paths; a problem without
            # one was raised by __init__, usually by a validator.
            if with_notes or not without:
                raise
            try:
                errors = _validator_errors(converter, cls, data)
            except Exception:
                raise exc from None
            if not errors:
                raise
            raise ClassValidationError(f"While structuring {cls.__name__}", errors, cls) from None

    return hook


def strict_converter() -> cattrs.Converter:
    """A converter that structures as the config's does: unknown keys refused (with "did you
    mean"), no type coerced, every problem reported at its ``$.path`` (:func:`problems_of`).
    Configs and plugin options use one; ``report.json`` is read back with another
    (:mod:`ragleaklab_core.outcome.codec`), which registers its own hooks on it."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook_factory(
        _is_homogeneous_sequence, lambda type_: _sequence_hook(converter, type_)
    )
    converter.register_structure_hook(bool, _exact(bool))
    converter.register_structure_hook(int, _exact(int))
    converter.register_structure_hook(str, _exact(str))
    converter.register_structure_hook(float, _finite_float)
    converter.register_structure_hook_factory(
        attrs.has, lambda cls: _attrs_hook_factory(converter, cls)
    )
    return converter


_converter = strict_converter()


def _format(exc: BaseException, type_: type | None) -> str:
    if isinstance(exc, _FieldValueError):
        return str(exc)
    if isinstance(exc, ForbiddenExtraKeysError):
        return _unknown_keys(exc)
    # cattrs reports attrs validator errors at the class path as a bare "invalid value";
    # keep the validator's own message, which names the field, the rule and the value.
    if isinstance(exc, TypeError | ValueError) and type_ is None and exc.args:
        return str(exc.args[0])
    if isinstance(exc, TypeError | ValueError) and exc.args and "expected" in str(exc.args[0]):
        return f"invalid value: {exc.args[0]}"
    return format_exception(exc, type_)


def _unknown_keys(exc: ForbiddenExtraKeysError) -> str:
    """``unknown key 'decision_rul' (did you mean 'decision_rule'?)``: a misspelt key must not
    leave its setting at the default without a word, and the fix is usually one edit away."""
    known = [a.alias or a.name for a in attrs.fields(exc.cl) if a.init] if attrs.has(exc.cl) else []
    named = [f"{k!r}{did_you_mean(k, known)}" for k in sorted(exc.extra_fields)]
    noun = "key" if len(named) == 1 else "keys"
    allowed = f"; known keys: {', '.join(sorted(known))}" if known else ""
    return f"unknown {noun} {', '.join(named)}{allowed}"


def _problems(exc: Exception, path: str) -> list[str]:
    if isinstance(exc, ClassValidationError | IterableValidationError):
        return transform_error(exc, path=path, format_exception=_format)
    return [f"{_format(exc, None)} @ {path}"]


def structure(data: Any, cls: type[T], *, source: str, path: str = "$") -> T:
    """Structure *data* into *cls* with the strict converter, or raise :class:`ConfigError`."""
    try:
        return _converter.structure(data, cls)
    except STRUCTURE_ERRORS as exc:
        raise ConfigError(source, problems_of(exc, path)) from exc


#: What structuring with a :func:`strict_converter` raises, bad data or not.
STRUCTURE_ERRORS = (ClassValidationError, IterableValidationError, TypeError, ValueError)


def problems_of(exc: Exception, path: str = "$") -> list[str]:
    """What is wrong with the data that *exc* (one of :data:`STRUCTURE_ERRORS`) was raised
    for, one ``"why @ $.path"`` each. cattrs wraps everything ``__init__`` raises; an error that
    is not about the data (a plugin's own bug) is raised again as itself, not as bad data."""
    bug = next((e for e in _leaves(exc) if not isinstance(e, _DATA_ERRORS)), None)
    if bug is not None:
        raise bug from None
    return _problems(exc, path)


# What structuring raises for bad data (KeyError: a required field is missing; AttributeError: a
# scalar where a table belongs; ForbiddenExtraKeysError: an unknown key).
_DATA_ERRORS = (TypeError, ValueError, KeyError, AttributeError, CattrsError)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def unstructure(obj: Any) -> Any:
    """The JSON-compatible form of *obj* (a plugin's resolved options, a config section)."""
    return _converter.unstructure(obj)


def plugin_options(obj: Any) -> dict[str, Any]:
    """A plugin instance's options (its public init fields) as JSON-compatible values."""
    if attrs.has(type(obj)):
        return {
            a.name: _converter.unstructure(getattr(obj, a.name))
            for a in attrs.fields(type(obj))
            if a.init and not a.name.startswith("_")
        }
    return dict(_converter.unstructure(obj)) if isinstance(obj, Mapping) else {}


_NAME = r"[a-z0-9][a-z0-9._-]*"


@frozen
class PluginRef:
    """A plugin named in a config file: its entry-point name and its options table."""

    name: str = field(validator=v.matches_re(_NAME))
    options: dict[str, Any] = field(factory=dict)


def _rate(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"'{attribute.name}' must be in [0, 1] (got {value!r})")


def _rates(
    instance: object, attribute: attrs.Attribute[dict[str, float]], value: dict[str, float]
) -> None:
    for key, rate in value.items():
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"'{attribute.name}.{key}' must be in [0, 1] (got {rate!r})")


def allowance_problem(rate: float) -> str | None:
    """Why a maximum failing rate switches the gate off, or None (the gate re-exports it:
    :mod:`ragleaklab_core.gate` lists every guard; the config checks it while structuring).

    A pack may have ``floor(rate * scored)`` failing cases per gated value; at a rate of 1 (or
    more) that is every scored case, so no run could fail however vulnerable the system. A rate
    below 1 always leaves at least one case that must not fail (``floor(r * n) < n``)."""
    if rate >= 1:
        return (
            f"a maximum failing rate of {rate!r} allows every scored case to fail, so the gate "
            "could never fail (every attack would pass); give a share below 1, such as 0.05, "
            "or leave it unset (0: no failing case allowed)"
        )
    return None


def _allowance(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    """A maximum failing rate: a share in [0, 1), refused at 1, which switches the gate off
    (:func:`ragleaklab_core.gate.allowance_problem` decides, for every way a rate is given)."""
    _rate(instance, attribute, value)
    problem = allowance_problem(value)
    if problem is not None:
        raise ValueError(
            f"'{attribute.name}': {problem}; it is set by [run] {attribute.name} or "
            "--max-fail-rate RATE"
        )


def _allowances(
    instance: object, attribute: attrs.Attribute[dict[str, float]], value: dict[str, float]
) -> None:
    _rates(instance, attribute, value)
    for key, rate in value.items():
        problem = allowance_problem(rate)
        if problem is not None:
            raise ValueError(
                f"'{attribute.name}.{key}' ($.run.{attribute.name}.{key}): {problem}; it is "
                f"set by [run.{attribute.name}] {key} or --max-fail-rate {key}=RATE"
            )


def _corrected_allowance(
    instance: RunConfig, attribute: attrs.Attribute[float | None], value: float | None
) -> None:
    """The most a corrected failing rate's upper limit may be: a share in [0, 1), and the one
    way a gated value is allowed to fail when given, so a maximum failing rate beside it is
    refused rather than silently ignored."""
    if value is None:
        return
    _rate(instance, attribute, value)  # type: ignore[arg-type]  # not None here
    if value >= 1:
        raise ValueError(
            f"'{attribute.name}': a maximum corrected rate of {value!r} passes every run (no "
            "interval's upper limit is above 1); give a share below 1, such as 0.05"
        )
    if instance.max_fail_rate or instance.max_fail_rates:
        raise ValueError(
            f"'{attribute.name}': a run is gated either on its failing rates "
            "(max_fail_rate, --max-fail-rate) or on its corrected rates (max_corrected_rate, "
            "--max-corrected-rate), not both: give one"
        )


@frozen
class CalibrateConfig:
    """The ``[calibrate]`` table: how thresholds are fitted."""

    target_fpr: float = field(default=0.01, validator=_rate)
    lower_is_worse: bool = False
    fitter: PluginRef = field(factory=lambda: PluginRef(DEFAULT_FITTER))
    roc_table_max_rows: int = field(default=1001, validator=v.ge(3))
    metric: str | None = None


@frozen
class ThresholdConfig:
    """A threshold set in the config: ``[thresholds.<pack>.<value>]``."""

    threshold: float
    decision_rule: str = field(default=FLAG_HIGH, validator=v.in_(DECISION_RULES))


def _reducer_fits_epochs(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    """A known reducer, and one that can decide a case with the configured number of epochs.

    ``at_least_K`` and ``pass_at_K`` count successful epochs; with K above the epochs a case
    runs, ``at_least_K`` can never be reached (no case could ever fail: a gate that passes every
    attack) and ``pass@K`` is undefined. Both are refused while the config is checked, before
    anything runs or is written.
    """
    if not isinstance(value, str):
        raise ValueError(f"expected a reducer name, got {type(value).__name__} {value!r}")
    try:
        chosen = parse_reducer(value)
    except ConfigError as exc:
        raise ValueError("; ".join(exc.problems)) from None
    epochs = getattr(instance, "epochs", None)
    k = chosen.k
    if k is None or not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
        return
    if k > epochs:
        runs = f"{epochs} epoch" if epochs == 1 else f"{epochs} epochs"
        if chosen.kind == "at_least":
            why = (
                f"it needs {k} successful epochs but each case runs only {runs}, so no case "
                "can ever fail (the gate would pass every attack)"
            )
        else:
            why = (
                f"pass@{k} draws {k} of a case's epochs but each case runs only {runs}, so it "
                "is undefined and no case can ever be scored, pass or fail"
            )
        raise ValueError(
            f"reducer {chosen.name!r} with {runs}: K={k} > epochs, {why}; "
            f"use K <= {epochs} or run at least {k} epochs"
        )


#: The executors ``[run] executor`` names (``--executor``).
EXECUTORS = ("local", "ray")


def _positive_or_none(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not value > 0:
        raise ValueError(f"'{attribute.name}' must be > 0 (got {value!r})")


@frozen
class RayConfig:
    """The ``[run.ray]`` table: where and how ``executor = "ray"`` runs (docs/scaling.md).

    Attributes:
        address: An existing cluster (``host:port`` of its head, ``ray://host:port``, or
            ``auto``); None starts a local one for the run.
        workers: Ray actors answering at once; None: the cluster's CPUs divided by
            ``cpus_per_worker`` (at least 1).
        cpus_per_worker: CPUs Ray reserves for each worker.
        gpus_per_worker: GPUs Ray reserves for each worker (a model target per GPU).
        batch_size: Cases sent to a worker at a time.
        runtime_env: Ray's runtime environment for the workers (``pip``, ``working_dir``,
            ``env_vars``...): how third-party packs and targets reach them.
    """

    address: str | None = field(default=None, validator=v.optional(v.min_len(1)))
    workers: int | None = field(default=None, validator=v.optional(v.ge(1)))
    cpus_per_worker: float = field(default=1.0, validator=_positive_or_none)
    gpus_per_worker: float = field(default=0.0, validator=v.ge(0.0))
    batch_size: int = field(default=16, validator=v.ge(1))
    runtime_env: dict[str, Any] | None = None


#: The default cap on the Markdown rendering, in characters: the most a GitHub pull-request
#: comment holds (65536), which is also well under what a job summary holds (1 MiB a step).
MARKDOWN_MAX_CHARS = 65536
#: The smallest cap accepted (0 aside, no cap): room for the verdict, the totals and a note.
MARKDOWN_MIN_CHARS = 2000


def markdown_cap_problem(value: int) -> str | None:
    """Why *value* cannot cap the Markdown rendering, or None: 0 (no cap) or at least
    :data:`MARKDOWN_MIN_CHARS`, so the verdict and the note saying what was cut always fit."""
    if value == 0 or value >= MARKDOWN_MIN_CHARS:
        return None
    return (
        f"must be 0 (no cap) or at least {MARKDOWN_MIN_CHARS} (room for the verdict, the totals "
        f"and the note saying what was cut), got {value}"
    )


def _chars_cap(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    problem = markdown_cap_problem(value)
    if problem is not None:
        raise ValueError(f"'{attribute.name}' {problem}")


@frozen
class RunConfig:
    """The ``[run]`` table: which packs, how often, where results go, how strict the gate is."""

    packs: list[str] = field(factory=list)  # empty: every installed pack
    # Packs left out of the run (of `packs`, or of every installed pack).
    exclude: list[str] = field(factory=list)
    epochs: int = field(default=1, validator=v.ge(1))
    reducer: str = field(default="mean", validator=_reducer_fits_epochs)
    tags: list[str] = field(factory=list)
    # Cases carrying one of these tags are left out (whatever `tags` selects).
    exclude_tags: list[str] = field(factory=list)
    tolerate_errors: bool = False
    # A share below 1 (1 would allow every case: refused, see _allowance).
    max_fail_rate: float = field(default=0.0, validator=_allowance)
    # Per pack name, overriding max_fail_rate for that pack.
    max_fail_rates: dict[str, float] = field(factory=dict, validator=_allowances)
    # When set, each gated value passes only if the upper limit of its failing rate corrected
    # for the metric's measured error is at most this (docs/labelling.md); None: not used.
    max_corrected_rate: float | None = field(default=None, validator=_corrected_allowance)
    concurrency: int = field(default=8, validator=v.ge(1))
    rate_limit: float | None = field(default=None, validator=v.optional(v.gt(0.0)))
    out: str = "ragleaklab_out"
    thresholds_file: str = DEFAULT_THRESHOLDS_FILE
    # Stop a pack after this many consecutive transport failures (0: never stop early).
    max_consecutive_failures: int = field(default=5, validator=v.ge(0))
    # Let several ingesting packs share a target that cannot remove what it ingested.
    allow_shared_state: bool = False
    # Who answers the cases: this process, or Ray actors ([run.ray]); never in report.json.
    executor: str = field(default="local", validator=v.in_(EXECUTORS))
    ray: RayConfig = field(factory=RayConfig)
    # The most characters the Markdown rendering (--markdown, the step summary) may hold; 0: no
    # cap. Never in report.json: it changes a rendering, not what was measured.
    markdown_max_chars: int = field(default=MARKDOWN_MAX_CHARS, validator=_chars_cap)

    def fail_rate_for(self, pack: str) -> float:
        """The share of a value's scored cases that may fail in pack *pack* (its own
        ``max_fail_rates`` entry, else ``max_fail_rate``)."""
        return self.max_fail_rates.get(pack, self.max_fail_rate)


@frozen
class Config:
    """A ragleaklab configuration file (TOML)."""

    calibrate: CalibrateConfig = field(factory=CalibrateConfig)
    run: RunConfig = field(factory=RunConfig)
    target: PluginRef = field(factory=lambda: PluginRef(DEFAULT_TARGET))
    metrics: dict[str, dict[str, Any]] = field(factory=dict)
    thresholds: dict[str, dict[str, ThresholdConfig]] = field(factory=dict)


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse a TOML config file into a raw dict; errors name the file and the line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(str(path), ["file not found"]) from None
    except IsADirectoryError:
        raise ConfigError(str(path), ["is a directory, not a config file"]) from None
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read: {exc.strerror}"]) from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), [f"not UTF-8 text (byte {exc.start})"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), [f"not valid TOML: {exc}"]) from None


def load_config(raw: Mapping[str, Any], *, source: str) -> Config:
    """Structure a raw mapping (a parsed file with CLI overrides applied) into :class:`Config`."""
    return structure(dict(raw), Config, source=source)


@frozen
class Overrides:
    """What command-line flags (or a harness) set over a config file, merged by
    :func:`apply_overrides` alone, so ``run``, ``calibrate``, :func:`read_config_with_overrides`
    (and the embedding API's ``read_config`` through it) and the run
    session (:mod:`ragleaklab_core.session`) cannot merge differently.

    Attributes:
        target: A target plugin name: replaces the file's whole ``[target]`` table.
        target_options: Merged over the ``[target]`` table's options (a new table names the
            default target).
        run: Keys of ``[run]``; a table value (``max_fail_rates``, ``ray``) is merged key by key
            over the file's table, any other value replaces the file's.
        calibrate: Keys of ``[calibrate]``, set as given.
        fitter: A fitter name: replaces ``[calibrate.fitter]`` (with *fitter_options*).
        fitter_options: Merged over the ``[calibrate.fitter]`` options (a new table names the
            default fitter).
    """

    target: str | None = None
    target_options: Mapping[str, Any] = field(factory=dict)
    run: Mapping[str, Any] = field(factory=dict)
    calibrate: Mapping[str, Any] = field(factory=dict)
    fitter: str | None = None
    fitter_options: Mapping[str, Any] = field(factory=dict)

    def __bool__(self) -> bool:
        return self != Overrides()


def apply_overrides(raw: dict[str, Any], overrides: Overrides) -> dict[str, Any]:
    """*raw* (a parsed config file, changed in place and returned) with *overrides* written
    into it, so that one structuring step checks file and overrides alike and reports a bad
    value at its ``$.path``. A table of the wrong type in the file is left for that step to
    report."""
    if overrides.target is not None:
        raw["target"] = {"name": overrides.target}
    if overrides.target_options:
        table = raw.setdefault("target", {"name": DEFAULT_TARGET})
        if isinstance(table, dict):
            table["options"] = {**table.get("options", {}), **overrides.target_options}
    if overrides.run:
        section = raw.setdefault("run", {})
        if isinstance(section, dict):
            for key, value in overrides.run.items():
                if not isinstance(value, Mapping):
                    section[key] = value
                elif value:
                    table = section.setdefault(key, {})
                    if isinstance(table, dict):
                        table.update(value)
    if overrides.calibrate or overrides.fitter is not None or overrides.fitter_options:
        section = raw.setdefault("calibrate", {})
        if not isinstance(section, dict):
            return raw
        section.update(overrides.calibrate)
        options = dict(overrides.fitter_options)
        if overrides.fitter is not None:
            section["fitter"] = {"name": overrides.fitter, "options": options}
        elif options:
            table = section.setdefault("fitter", {"name": DEFAULT_FITTER})
            if isinstance(table, dict) and isinstance(table.get("options", {}), dict):
                table["options"] = {**table.get("options", {}), **options}
    return raw


#: Where an allowance left at its default comes from.
DEFAULT_SOURCE = "default"


@frozen
class AllowanceSources:
    """Where each allowance of a run (``max_fail_rate``, its per-pack ``max_fail_rates``,
    ``tolerate_errors``) was set: a flag (``--max-fail-rate``), a config file's key
    (``ci.toml [run] max_fail_rate``), an API argument, or :data:`DEFAULT_SOURCE`. Printed with
    every verdict and written in report.json, so no allowance is in force unseen."""

    max_fail_rate: str = DEFAULT_SOURCE
    max_fail_rates: Mapping[str, str] = field(factory=dict)
    tolerate_errors: str = DEFAULT_SOURCE
    max_corrected_rate: str = DEFAULT_SOURCE

    def fail_rate(self, pack: str) -> str:
        """Where pack *pack*'s maximum failing rate was set."""
        return self.max_fail_rates.get(pack, self.max_fail_rate)

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_fail_rate": self.max_fail_rate,
            "max_fail_rates": dict(sorted(self.max_fail_rates.items())),
            "tolerate_errors": self.tolerate_errors,
            "max_corrected_rate": self.max_corrected_rate,
        }

    @classmethod
    def of(
        cls,
        file_run: Any,
        file: str | None,
        overrides: Overrides = Overrides(),
        *,
        given: str = "--max-fail-rate",
        tolerate: str = "--tolerate-errors",
        corrected: str = "--max-corrected-rate",
    ) -> AllowanceSources:
        """The sources of a configuration made of a file's ``[run]`` table *file_run* (as
        read, before overrides) at *file*, and *overrides* (flags: *given*, *tolerate*)."""
        table = file_run if isinstance(file_run, Mapping) else {}
        on_line = overrides.run
        where = file or "the configuration"

        def source(key: str, flag: str) -> str:
            if key in on_line:
                return flag
            return f"{where} [run] {key}" if key in table else DEFAULT_SOURCE

        per_pack = table.get("max_fail_rates")
        rates = {
            str(k): f"{where} [run.max_fail_rates] {k}"
            for k in (per_pack if isinstance(per_pack, Mapping) else {})
        }
        for k in on_line.get("max_fail_rates") or {}:
            rates[str(k)] = f"{given} {k}=RATE" if given.startswith("--") else given
        return cls(
            source("max_fail_rate", given),
            rates,
            source("tolerate_errors", tolerate),
            source("max_corrected_rate", corrected),
        )


def command_line_source(path: Path | None) -> str:
    """How errors name a configuration made of the file at *path* and command-line options."""
    return f"{path} (with command-line options)" if path else "command-line options"


def find_config(given: Path | None) -> Path | None:
    """The config file a command reads: *given* (``--config``), else :data:`DEFAULT_CONFIG_FILE`
    in the working directory when there is one (an app's folder holds its config, and a run
    there that ignored it would test another system), else None (the defaults)."""
    if given is not None:
        return given
    found = Path(DEFAULT_CONFIG_FILE)
    return found if found.is_file() else None


def read_config_with_overrides(
    path: Path | None, overrides: Overrides = Overrides(), *, source: str | None = None
) -> Config:
    """The configuration in the file at *path* (None: the defaults) with *overrides* applied:
    what the commands read (the embedding API's public
    :func:`~ragleaklab_core.read_config` is this, with a target's name and options only).

    Args:
        source: How errors name where the configuration came from; default:
            :func:`command_line_source`.

    Raises:
        ConfigError: The file is missing or invalid (every problem is listed).
    """
    raw = read_config_file(path) if path is not None else {}
    source = command_line_source(path) if source is None else source
    return load_config(apply_overrides(raw, overrides), source=source)


def parse_option_value(text: str) -> Any:
    """Parse a ``--fitter-option key=value`` value as a TOML value, so types match the file.

    Bare words that are not TOML values are taken as strings: ``mode=fast`` means ``"fast"``.
    """
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
