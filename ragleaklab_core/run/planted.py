"""The ids a run plants under and the tag naming the run (issue 27; the full module lands with
the run's record of what it planted)."""

from __future__ import annotations

import uuid

#: The metadata key naming the run (and pack) that planted a document.
RUN_TAG = "ragleaklab_run"

_NAMESPACE = uuid.UUID("6f1c2d4e-9a3b-5c7d-8e1f-2a4b6c8d0e1f")


def planted_id(run: str, doc_id: str) -> str:
    """The id a document of *run* is planted under: a UUID string."""
    return str(uuid.uuid5(_NAMESPACE, f"{run}\x1f{doc_id}"))


class ForeignPlanted(RuntimeError):
    """A retrieved document was planted by another run in the same store at the same time."""
