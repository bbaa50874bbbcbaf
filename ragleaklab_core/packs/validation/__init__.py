"""``ragleaklab pack validate``: check a pack without running it, and list every problem.

A pack is checked from its directory (``pack.toml`` and the JSONL files it names) or, once
installed, by name: a :class:`~ragleaklab_core.ManifestPack` through its package directory, any
other pack through ``info()``, ``documents()``, ``cases()`` and ``default_labels()``. Nothing in
a pack's data is executed (TOML and JSON only), nothing is run against a target, and the checks
never stop at the first problem: each one is a :class:`Problem` with its file, line and
``$.path``. The record-level checks are the loader's own (the same strict converter and record
classes), so a pack that validates also loads.
"""

from __future__ import annotations

from ragleaklab_core.packs.validation.limits import (
    MAX_CASES,
    MAX_DOCUMENT_BYTES,
    MAX_DOCUMENTS,
    MAX_FILE_BYTES,
)
from ragleaklab_core.packs.validation.manifests import validate_directory, validate_root
from ragleaklab_core.packs.validation.objects import validate_installed, validate_pack
from ragleaklab_core.packs.validation.report import (
    LABEL_SOURCE_MISSING,
    Problem,
    ValidationReport,
    unsafe_path,
)

__all__ = [
    "LABEL_SOURCE_MISSING",
    "MAX_CASES",
    "MAX_DOCUMENTS",
    "MAX_DOCUMENT_BYTES",
    "MAX_FILE_BYTES",
    "Problem",
    "ValidationReport",
    "unsafe_path",
    "validate_directory",
    "validate_installed",
    "validate_pack",
    "validate_root",
]
