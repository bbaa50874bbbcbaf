"""Packs as inspect datasets: one sample per case, the case id as the sample id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from ragleaklab._inspect._common import jsonable
from ragleaklab_core import Case, ConfigError, load_pack, pack_cases, pack_info, pack_labels


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
    pack = load_pack(pack_name)
    info = pack_info(pack.obj)
    try:
        cases = pack_cases(pack, tags)
    except ConfigError as exc:  # named after this function's argument, not a config key
        raise ConfigError("tags", exc.problems) from None
    labels = pack_labels(pack)
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
        if case.principal is not None:  # asked as that principal by the solver, never without
            metadata["principal"] = case.principal
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
        principal=metadata.get("principal"),
    )


__all__ = ["case_of", "pack_dataset"]
