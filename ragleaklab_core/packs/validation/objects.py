"""Validating any other pack through its methods: ``info()``, ``documents()``, ``cases()``."""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ragleaklab_core.contracts.packs import pack_traits
from ragleaklab_core.packs.manifest import (
    LabelProvenance,
    ManifestPack,
)
from ragleaklab_core.packs.validation.collector import _one_line, _Record
from ragleaklab_core.packs.validation.contents import _Checker
from ragleaklab_core.packs.validation.manifests import (
    _check_metrics,
    _unsourced,
    validate_root,
)
from ragleaklab_core.packs.validation.report import LABEL_SOURCE_MISSING, ValidationReport
from ragleaklab_core.values import Case, Document, PackInfo


def _object_records(
    checker: _Checker, produce: Callable[[], Iterable[Any]], file: str, cls: type[Any]
) -> Iterator[_Record] | None:
    try:
        items = list(produce())
    except Exception as exc:  # a plugin's own bug: report it, never crash the validator
        checker.add(file, 1, "$", f"raised {type(exc).__name__}: {_one_line(exc)}")
        return None

    def iterate() -> Iterator[_Record]:
        for number, item in enumerate(items, start=1):
            if not isinstance(item, cls):
                checker.add(
                    file, number, "$", f"expected {cls.__name__}, got {type(item).__name__}"
                )
                continue
            yield _Record(file, number, _as_record(item))

    return iterate()


def _as_record(item: Document | Case) -> dict[str, Any]:
    if isinstance(item, Document):
        return {
            "doc_id": item.doc_id,
            "text": item.text,
            "kind": item.kind,
            "metadata": dict(item.metadata),
        }
    return {
        "test_id": item.test_id,
        "query": item.query,
        "ground_truth": dict(item.ground_truth),
        "tags": list(item.tags),
    }


def _check_object(checker: _Checker, pack: Any, expected_name: str | None) -> None:
    """Validate a pack through its methods, as the runner and calibration call them."""
    for method in ("info()", "documents()", "cases()", "default_labels()"):
        checker.opened(method)
    try:
        info = pack.info()
    except Exception as exc:
        checker.add("info()", 1, "$", f"raised {type(exc).__name__}: {_one_line(exc)}")
        info = None
    if info is not None and not isinstance(info, PackInfo):
        checker.add("info()", 1, "$", f"returned {type(info).__name__}, expected PackInfo")
    elif isinstance(info, PackInfo):
        if expected_name is not None and info.name != expected_name:
            checker.add(
                "info()",
                1,
                "$.name",
                f"{info.name!r} differs from the entry-point name {expected_name!r}; "
                "use the same name in both places",
            )
        checker.metric_names = list(info.metrics)
        _check_metrics(
            lambda path, message: checker.add("info()", 1, path, message),
            list(info.metrics),
            {k: dict(v) for k, v in info.metric_options.items()},
        )

    checker.document_files.append("documents()")
    documents = _object_records(checker, pack.documents, "documents()", Document)
    if documents is None:
        checker.documents_complete = False
    else:
        for record in documents:
            checker.document(record)
        if any(p.file == "documents()" for p in checker.problems if p.path == "$"):
            checker.documents_complete = False  # an item that is not a Document

    checker.cases_file = "cases()"
    cases = _object_records(checker, pack.cases, "cases()", Case)
    if cases is None:
        checker.cases_complete = False
    else:
        for record in cases:
            checker.case(record)
        if any(p.file == "cases()" for p in checker.problems if p.path == "$"):
            checker.cases_complete = False  # an item that is not a Case

    raw: Any = None
    if pack_traits(pack).default_labels:
        try:
            raw = pack.default_labels()
        except Exception as exc:
            checker.add(
                "default_labels()", 1, "$", f"raised {type(exc).__name__}: {_one_line(exc)}"
            )
            raw = False
    if raw is None:
        checker.add(
            "default_labels()",
            1,
            "$",
            "no default labels: return the bytes of a labels.jsonl (one positive or negative "
            "label per case) so that `ragleaklab calibrate --pack` works",
        )
    elif isinstance(raw, bytes):
        checker.labels_file = "default_labels()"
        for number, line in checker.jsonl(raw, "default_labels()"):
            checker.label(_Record("default_labels()", number, line))
    elif raw is not False:
        checker.add("default_labels()", 1, "$", f"returned {type(raw).__name__}, expected bytes")
    if isinstance(raw, bytes):
        _check_provenance(checker, pack)
    checker.cross_checks()


def _check_provenance(checker: _Checker, pack: Any) -> None:
    """A pack object's ``label_provenance()``: valid when given, a warning when absent."""
    provenance: Any = None
    if pack_traits(pack).label_provenance:
        try:
            provenance = pack.label_provenance()
        except Exception as exc:
            checker.add(
                "label_provenance()", 1, "$", f"raised {type(exc).__name__}: {_one_line(exc)}"
            )
            return
    if provenance is None:
        if _unsourced(checker):
            checker.warn("label_provenance()", 1, "$.label_source", LABEL_SOURCE_MISSING)
    elif not isinstance(provenance, LabelProvenance):
        checker.add(
            "label_provenance()",
            1,
            "$",
            f"returned {type(provenance).__name__}, expected LabelProvenance or None",
        )


def validate_pack(pack: Any, *, name: str | None = None) -> ValidationReport:
    """Validate a pack object; *name* is its entry-point name when it is installed.

    A :class:`~ragleaklab_core.ManifestPack` is validated from its package directory (files,
    lines and ``$.path``), then loaded through its methods exactly as a run loads it; any other
    pack through ``info()``, ``documents()``, ``cases()`` and ``default_labels()``.

    .. versionadded:: 0.1
    """
    label = name or type(pack).__qualname__
    if isinstance(pack, ManifestPack):
        package = pack_traits(pack).data_package
        if package is None:
            checker = _Checker(label)
            checker.add("info()", 1, "$", f"{type(pack).__qualname__} must set data_package")
            return checker.report()
        where = package.replace(".", "/")
        try:
            root = importlib.resources.files(package)
        except (ModuleNotFoundError, TypeError) as exc:
            checker = _Checker(label)
            checker.add(where, 1, "$", f"cannot open the data package: {_one_line(exc)}")
            return checker.report()
        report = validate_root(root, where=where, pack=label, expected_name=name)
        if not report.valid:
            return report
        # The files are valid; the loader must agree (and the object must honour the contract).
        checker = _Checker(label)
        _check_object(checker, pack, name)
        return checker.report() if checker.problems else report
    checker = _Checker(label)
    _check_object(checker, pack, name)
    return checker.report()


def validate_installed(name: str) -> ValidationReport:
    """Load the installed pack *name* (its code, never its data) and validate it.

    Raises:
        PluginError: No pack of that name, or its entry point cannot be imported or built.

    .. versionadded:: 0.1
    """
    from ragleaklab_core._discovery import PACKS, load_plugin

    return validate_pack(load_plugin(PACKS, name).obj, name=name)
