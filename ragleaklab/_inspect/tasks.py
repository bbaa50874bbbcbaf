"""The task ``ragleaklab/pack``: a pack's cases against a ragleaklab target, offline.

``inspect eval ragleaklab/pack -T pack=relevance-hijack --model none`` asks the embedded
reference RAG every case of the pack (no model call: ``--model none``) and scores the answers
with the pack's metric plugins, one ``ragleaklab/<metric>`` scorer each.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task

from ragleaklab._inspect.dataset import pack_dataset
from ragleaklab._inspect.reducers import gated
from ragleaklab._inspect.scorers import scorer_for
from ragleaklab._inspect.solver import ask_target, run_config
from ragleaklab._inspect.thresholds import read_calibration
from ragleaklab_core import PackInfo, load_pack, metric_values, pack_info


def _owner(info: PackInfo, declared: dict[str, tuple[str, ...]], value: str) -> str:
    """The metric plugin of *info* that produces *value*, by the metrics' declarations."""
    for name in info.metrics:
        if value in declared[name]:
            return name
    undeclared = [m for m in info.metrics if not declared[m]]
    if len(undeclared) == 1:
        return undeclared[0]
    known = sorted({v for m in info.metrics for v in declared[m]})
    raise ValueError(
        f"no metric of pack {info.name!r} ({', '.join(info.metrics)}) is known to produce "
        f"{value!r}; give value= one of {', '.join(known) or 'their values'} or run one metric "
        "per task"
    )


def _tags(smoke: bool, tags: list[str] | str | None) -> tuple[str, ...]:
    chosen = [tags] if isinstance(tags, str) else list(tags or [])
    if smoke:
        chosen.append("smoke")
    return tuple(sorted(set(chosen)))


@task
def pack(
    pack: str,
    target: str | None = None,
    target_options: dict[str, Any] | str | None = None,
    config: str | None = None,
    smoke: bool = False,
    tags: list[str] | str | None = None,
    threshold: float | None = None,
    decision_rule: str | None = None,
    calibration: str | None = None,
    value: str | None = None,
    reducer: str | None = None,
) -> Task:
    """Run a ragleaklab pack against a target; score with the pack's metrics.

    Args:
        pack: The pack (``ragleaklab.packs`` entry-point name), built-in or third-party.
        target: Target plugin name, or a TOML config path; default ``reference``.
        target_options: The target's options (``-T target_options='{"url": "..."}'``).
        config: A ragleaklab TOML config: its target, metric options and thresholds.
        smoke: Only the cases tagged ``smoke`` (the quick subset).
        tags: Only the cases with one of these tags.
        threshold: Threshold on the gated value (default: the pack's primary metric).
        decision_rule: With *threshold*; default by the value's direction.
        calibration: A ``calibration_report.json`` whose threshold gates its metric value.
        value: The metric value *threshold* applies to.
        reducer: A ragleaklab reducer (``mean``, ``max``, ``at_least_2``...): reduce raw values
            over epochs, then gate, as ``ragleaklab run --reducer`` does. Default: inspect's
            reducer (``--epochs-reducer``), which reduces ``attack_success`` per epoch.

    Epochs: ``--epochs N`` (inspect's option).
    """
    config_obj, config_path = run_config(target, target_options, config)
    info: PackInfo = pack_info(load_pack(pack).obj)
    declared = {name: metric_values(name) for name in info.metrics}
    report = None if calibration is None else read_calibration(calibration)
    gated_value = value or (report.metric_name if report else None) or info.primary_metric
    owner = _owner(info, declared, gated_value)
    configured = config_obj.thresholds.get(info.name, {})
    scorers = []
    for metric in info.metrics:
        args: dict[str, Any] = {"options": config_obj.metrics.get(metric), "pack": info.name}
        if metric == owner:
            args["value"] = gated_value
            if threshold is not None or calibration is not None:
                args.update(threshold=threshold, decision_rule=decision_rule)
                args.update(calibration=calibration)
                own = None
            else:
                own = gated_value
        else:
            own = next((v for v in sorted(configured) if v in declared[metric]), None)
        if own is not None and own in configured:  # the config's threshold for this value
            entry = configured[own]
            args.update(
                value=own,
                threshold=entry.threshold,
                decision_rule=entry.decision_rule,
                threshold_source=f"config {config_path}",
            )
        scorers.append(scorer_for(metric, **args))
    chosen = config_obj.target
    return Task(
        dataset=pack_dataset(info.name, _tags(smoke, tags)),
        solver=ask_target(target=chosen.name, target_options=dict(chosen.options)),
        scorer=scorers,
        epochs=None if reducer is None else Epochs(1, gated(reducer)),
        metadata={"pack": info.name, "pack_version": info.version, "pack_type": info.pack_type},
    )


__all__ = ["pack"]
