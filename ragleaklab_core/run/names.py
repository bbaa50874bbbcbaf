"""Every name a configuration uses names something installed.

A table or key that names nothing is not harmless: ``[thresholds.relevance-hijak.poison_rank]``
or ``[metrics.verbatim] min_wordz = 3`` would be read by nobody, and the defaults would gate
instead, without a word. So a run (and ``calibrate --pack``) refuses, before anything is asked
or written (exit 2), with a "did you mean" for each:

- ``[metrics.NAME]``: NAME must be an installed metric and every key one of its options, even
  when no pack of this run uses that metric (the file is shared by every run of the project);
- ``[thresholds.PACK.VALUE]``: PACK must be an installed pack and VALUE a value one of its
  metrics declares (a metric that declares no values is not checked: its value names are known
  only from what it returns, and a value nothing returned still fails the pack, "no case could
  be scored");
- ``[run.max_fail_rates]`` (``--max-fail-rate PACK=RATE``): PACK must be an installed pack;
- the thresholds file: each pack and value, as for ``[thresholds]``.

Unknown keys inside a known table (``[run] epoch = 3``) are refused by the strict converter
when the configuration is read (:mod:`ragleaklab_core.config`), with the same "did you mean".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from ragleaklab_core._discovery import METRICS, PACKS, available_names, metric_values, plugin_class
from ragleaklab_core.calibration.thresholds import ThresholdsFile
from ragleaklab_core.config import Config
from ragleaklab_core.errors import ConfigError, did_you_mean
from ragleaklab_core.run.runner import load_pack
from ragleaklab_core.values import PackInfo


def check_config_names(config: Config, *, source: str) -> None:
    """Refuse a configuration naming a metric, option, pack or value nothing installed has.

    Raises:
        ConfigError: Every unknown name at once, each with its ``$.path`` and a did-you-mean.
    """
    problems = [*_metric_problems(config.metrics)]
    packs = available_names(PACKS)
    for pack in sorted(config.run.max_fail_rates):
        if pack not in packs:
            where = f"$.run.max_fail_rates.{_key(pack)} (or --max-fail-rate PACK=RATE)"
            problems.append(_unknown("pack", pack, packs, where))
    problems += _value_problems(
        {p: list(values) for p, values in config.thresholds.items()}, "$.thresholds"
    )
    if problems:
        raise ConfigError(source, problems)


def check_stored_names(stored: ThresholdsFile) -> None:
    """Refuse a thresholds file with an entry for a pack or value nothing installed has: the
    entry would gate nothing, and the pack's defaults would gate instead."""
    problems = _value_problems({p: list(v) for p, v in stored.packs.items()}, "$.packs")
    if problems:
        raise ConfigError(stored.path, problems)


def _metric_problems(tables: Mapping[str, Mapping[str, Any]]) -> list[str]:
    # A metric built by a factory has no declared fields: its own load checks its options.
    return _nested_problems(
        tables,
        kind="metric",
        group=METRICS,
        root="$.metrics",
        inner="option",
        known_inside=lambda name: _option_names(plugin_class(METRICS, name)),
    )


def _value_problems(tables: Mapping[str, Iterable[str]], root: str) -> list[str]:
    return _nested_problems(
        tables,
        kind="pack",
        group=PACKS,
        root=root,
        inner="metric value",
        known_inside=lambda name: declared_values(load_pack(name).obj.info()),
    )


def _nested_problems(
    tables: Mapping[str, Iterable[str]],
    *,
    kind: str,
    group: str,
    root: str,
    inner: str,
    known_inside: Callable[[str], list[str] | None],
) -> list[str]:
    """Tables keyed by a plugin's name, each holding names of something the plugin has: an
    unknown plugin, then an unknown name inside a known one (None: the plugin cannot say)."""
    installed = available_names(group)
    problems = []
    for name, keys in sorted(tables.items()):
        where = f"{root}.{_key(name)}"
        if name not in installed:
            problems.append(_unknown(kind, name, installed, where))
            continue
        known = known_inside(name)
        if known is None:
            continue
        for key in sorted(set(keys) - set(known)):
            problems.append(
                f"{kind} {name!r} has no {inner} {key!r}{did_you_mean(key, known)} "
                f"(its {inner}s: {', '.join(sorted(known)) or 'none'}) @ {where}.{_key(key)}"
            )
    return problems


def declared_values(info: PackInfo) -> list[str] | None:
    """The value names a pack's metrics declare (and its default thresholds name), or None
    when one of its metrics declares none (its names are known only from what it returns)."""
    names: list[str] = []
    for metric in info.metrics:
        declared = metric_values(metric)
        if not declared:
            return None
        names += declared
    return sorted(set(names) | set(info.thresholds))


def _option_names(cls: Any) -> list[str] | None:
    if attrs.has(cls):
        return [a.alias or a.name for a in attrs.fields(cls) if a.init]
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init]
    return None


def _unknown(kind: str, name: str, known: list[str], where: str) -> str:
    installed = ", ".join(known) or "none"
    hint = did_you_mean(name, known)
    return f"no installed {kind} is named {name!r}{hint} (installed: {installed}) @ {where}"


def _key(name: str) -> str:
    """A key as a ``$.path`` step: bare when it is a plain word, else quoted."""
    return name if name.replace("_", "").replace("-", "").isalnum() else repr(name)
