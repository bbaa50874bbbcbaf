"""Packs as inspect datasets: one sample per case, the case id as the sample id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from ragleaklab._inspect._common import jsonable
from ragleaklab_core import Case, pack_info


def _labels(pack_obj: Any, pack_name: str) -> Mapping[str, bool]:
    """The pack's shipped labels (test_id -> positive), or {} when it ships none."""
    default_labels = getattr(pack_obj, "default_labels", None)
    raw = default_labels() if callable(default_labels) else None
    if raw is None:
        return {}
    from ragleaklab_core.inputs import parse_labels

    return parse_labels(raw, source=f"labels of pack {pack_name}").records


def pack_dataset(pack_name: str, tags: Sequence[str] = ()) -> MemoryDataset:
    """The cases of an installed pack (built-in or third-party) as an inspect dataset.

    Each sample has the case's ``test_id`` as its id, the query as its input, an empty target,
    and in its metadata: ``pack``, ``pack_version``, ``pack_type``, ``test_id``, ``tags``,
    ``ground_truth`` (what the ragleaklab scorers score against) and ``label``
    (``"positive"``/``"negative"``, when the pack ships labels). The ragleaklab scorers rebuild
    the case from this metadata, so a harness can run these samples through its own solver.

    Args:
        pack_name: The pack's name in the ``ragleaklab.packs`` entry-point group.
        tags: Keep only cases with at least one of these tags (``["smoke"]``); empty: all.

    Raises:
        PluginError: The pack is not installed or cannot be loaded.
        ConfigError: No case carries any of *tags*.
    """
    from ragleaklab_core.errors import ConfigError
    from ragleaklab_core.run.runner import load_pack

    pack = load_pack(pack_name)
    info = pack_info(pack.obj)
    wanted = set(tags)
    cases = [c for c in pack.obj.cases() if not wanted or wanted & set(c.tags)]
    if not cases:
        raise ConfigError(
            "tags", [f"pack {info.name!r} has no case tagged {', '.join(sorted(wanted))}"]
        )
    labels = _labels(pack.obj, info.name)
    samples = []
    for case in cases:
        metadata: dict[str, Any] = {
            "pack": info.name,
            "pack_version": info.version,
            "pack_type": info.pack_type,
            "test_id": case.test_id,
            "tags": list(case.tags),
            "ground_truth": jsonable(case.ground_truth),
        }
        if case.test_id in labels:
            metadata["label"] = "positive" if labels[case.test_id] else "negative"
        samples.append(Sample(id=case.test_id, input=case.query, target="", metadata=metadata))
    return MemoryDataset(samples, name=info.name)


def case_of(metadata: Mapping[str, Any], sample_id: object, query: str) -> Case:
    """The case a sample stands for, from the metadata :func:`pack_dataset` gives it."""
    ground_truth = metadata.get("ground_truth") or {}
    return Case(
        test_id=str(metadata.get("test_id", sample_id)),
        query=query,
        ground_truth=dict(ground_truth),
        tags=tuple(metadata.get("tags") or ()),
    )


__all__ = ["case_of", "pack_dataset"]
