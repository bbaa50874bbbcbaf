"""Data-only packs: a ``pack.toml`` manifest plus JSONL files, read from a package or a directory.

A pack author ships the files inside a Python package (so they install with pip and are read
through :mod:`importlib.resources` from any working directory) and registers a five-line
subclass of :class:`ManifestPack` under ``ragleaklab.packs``. Nothing in a pack's data is ever
executed: TOML and JSON only, and every file path must stay inside the pack's directory.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import re
import tomllib
from array import array
from collections.abc import Iterator, Mapping
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

import attrs
from attrs import field, frozen
from attrs import validators as v

from ragleaklab_core._discovery import primary_metric_for
from ragleaklab_core._walked import Walked
from ragleaklab_core.config import structure
from ragleaklab_core.contracts.packs import pack_traits
from ragleaklab_core.errors import ConfigError, InputError
from ragleaklab_core.inputs import jsonl_records, stream_jsonl
from ragleaklab_core.values import (
    DECISION_RULES,
    FLAG_HIGH,
    SEVERITIES,
    Case,
    Document,
    PackInfo,
    PackTaxonomy,
    Threshold,
)

MANIFEST = "pack.toml"
_NAME = r"[a-z0-9][a-z0-9._-]*"

#: Who or what judged a pack's labels (the manifest's ``label_source``). A label is an
#: independent judgement of harm, never the pack's own metric: ``human`` (a person read the
#: answers), ``judge`` (an LLM judge), ``instrumentation`` (a probe inside the application saw
#: it happen), ``outcome`` (the harm was observed on a named target).
LABEL_SOURCES = ("human", "judge", "instrumentation", "outcome")
#: The label sources that describe one target: they must name it in ``label_target``.
TARGETED_LABEL_SOURCES = ("instrumentation", "outcome")


def _relative_path(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    paths = value if isinstance(value, list) else [value]
    for p in paths:
        if p is None:
            continue
        pure = PurePosixPath(p)
        if not p or pure.is_absolute() or "\\" in p or ".." in pure.parts or ":" in p:
            raise ValueError(
                f"'{attribute.name}' must be a relative path inside the pack, got {p!r}"
            )


def _label_target(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not value.strip():
        raise ValueError("'label_target' must name a target, got an empty string")
    source = getattr(instance, "label_source", None)
    if value is None and source in TARGETED_LABEL_SOURCES:
        raise ValueError(
            f"'label_target' is required when label_source is {source!r}: name the target the "
            'labels were observed on (label_target = "reference")'
        )


@frozen
class LabelProvenance:
    """Where a pack's labels come from: who judged them, and on which target.

    Attributes:
        label_source: One of :data:`LABEL_SOURCES`.
        label_target: The target the labels were observed on (required for ``outcome`` and
            ``instrumentation``), e.g. ``"reference"``.

    .. versionadded:: 0.2
    """

    label_source: str = field(validator=v.in_(LABEL_SOURCES))
    label_target: str | None = field(default=None, validator=_label_target)


@frozen
class _ThresholdEntry:
    threshold: float
    decision_rule: str = field(default=FLAG_HIGH, validator=v.in_(DECISION_RULES))


@frozen
class _TaxonomyEntry:
    # The manifest's [taxonomy] table (PackTaxonomy): which OWASP LLM and MITRE ATLAS ids the
    # pack's findings carry in reports, and their severity.
    owasp_llm: list[str] = field(factory=list)
    mitre_atlas: list[str] = field(factory=list)
    severity: str | None = field(default=None, validator=v.optional(v.in_(SEVERITIES)))


@frozen
class _Manifest:
    name: str = field(validator=v.matches_re(_NAME))
    version: str = field(validator=v.min_len(1))
    pack_type: str = field(validator=v.min_len(1))
    metrics: list[str] = field(validator=v.min_len(1))
    documents: list[str] = field(validator=[v.min_len(1), _relative_path])
    cases: str = field(validator=_relative_path)
    labels: str | None = field(default=None, validator=_relative_path)
    label_source: str | None = field(default=None, validator=v.optional(v.in_(LABEL_SOURCES)))
    label_target: str | None = field(default=None, validator=_label_target)
    primary_metric: str | None = None
    description: str = ""
    metric_options: dict[str, dict[str, Any]] = field(factory=dict)
    thresholds: dict[str, _ThresholdEntry] = field(factory=dict)
    taxonomy: _TaxonomyEntry | None = None


@frozen
class _DocumentRecord:
    doc_id: str = field(validator=v.min_len(1))
    text: str
    kind: str = "legit"
    metadata: dict[str, Any] = field(factory=dict)


def _principal(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"'principal' must be a non-empty string (a user or tenant id): {value!r}")


@frozen
class _CaseRecord:
    test_id: str = field(validator=v.min_len(1))
    query: str = field(validator=v.min_len(1))
    ground_truth: dict[str, Any] = field(factory=dict)
    tags: list[str] = field(factory=list)
    principal: str | None = field(default=None, validator=v.optional(_principal))


@frozen
class LoadedManifest:
    """A pack's manifest and data, validated.

    Attributes:
        info: The pack's :class:`PackInfo`.
        documents: Every document, in file order.
        cases: Every case, in file order.
        cases: Every case, in file order (a :class:`CaseFile`, read as it is walked).
        labels_source: Where the labels file is, for error messages and provenance.
        label_provenance: Who judged the labels and on which target (the manifest's
            ``label_source`` and ``label_target``), or None when the manifest does not say.
    """

    info: PackInfo
    documents: tuple[Document, ...]
    cases: CaseFile
    labels: bytes | None
    labels_source: str | None
    label_provenance: LabelProvenance | None = None


def _node(root: Traversable, rel: str, where: str) -> Traversable:
    node = root
    for part in PurePosixPath(rel).parts:
        node = node.joinpath(part)
    # A symlink inside the pack may point anywhere: refuse what resolves outside it.
    inside = not isinstance(node, Path) or node.resolve().is_relative_to(Path(str(root)).resolve())
    if not inside:
        raise InputError("resolves outside the pack's directory", source=f"{where}/{rel}")
    return node


def _failed(exc: OSError, source: str) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError("file not found", source=source)
    return InputError(f"cannot read: {exc.strerror or exc}", source=source)


def _read(root: Traversable, rel: str, where: str) -> bytes:
    try:
        return _node(root, rel, where).read_bytes()
    except OSError as exc:
        raise _failed(exc, f"{where}/{rel}") from None


def _records(root: Traversable, rel: str, where: str, cls: type[Any]) -> list[Any]:
    source = f"{where}/{rel}"
    _digest, lines = jsonl_records(_read(root, rel, where), source=source)
    return [_structured(record, cls, source, number) for number, record in lines]


def _structured(record: dict[str, Any], cls: type[Any], source: str, number: int) -> Any:
    try:
        return structure(record, cls, source=source, path="$")
    except ConfigError as exc:
        raise InputError("; ".join(exc.problems), source=source, line=number) from None


class CaseFile(Walked[Case]):
    """A pack's ``cases.jsonl``, read from its file each time it is iterated.

    A pack of a million cases is a million records: held as a tuple, they would be most of a
    run's memory. The file is checked whole once, when the pack is loaded (every line a valid
    case, test ids unique), then read line by line wherever the cases are walked.

    Args:
        node: The file.
        source: Its name in error messages (``package/cases.jsonl``).
    """

    def __init__(self, node: Traversable, source: str) -> None:
        self._node = node
        self._source = source
        self._length = self._check()

    def _lines(self) -> Iterator[tuple[int, dict[str, Any]]]:
        try:
            with self._node.open("rb") as handle:
                yield from stream_jsonl(handle, source=self._source)
        except OSError as exc:
            raise _failed(exc, self._source) from None

    def _numbered(self) -> Iterator[tuple[int, Case]]:
        for number, record in self._lines():
            case = _plain_case(record)
            if case is None:  # anything unusual goes through the checks that name the problem
                rec = _structured(record, _CaseRecord, self._source, number)
                case = Case(
                    rec.test_id, rec.query, rec.ground_truth, tuple(rec.tags), rec.principal
                )
            yield number, case

    def _check(self) -> int:
        """Validate every line; return how many cases there are.

        Test ids are checked for duplicates by an 8-byte hash each (a million ids in 8 MB, not
        a set of strings ten times that size); a hash seen twice is confirmed, and named with
        both lines, by a second pass that keeps only the ids under the repeated hashes.
        """
        import numpy as np  # imported when used: the core's import stays light

        hashes = array("Q")
        for _number, case in self._numbered():
            hashes.append(_id_hash(case.test_id))
        if not hashes:
            raise InputError("the pack has no cases", source=self._source)
        ordered = np.frombuffer(hashes, dtype=np.uint64)
        ordered.sort()  # in place, in the array's own buffer: no second copy
        repeated = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
        if repeated:
            first: dict[str, int] = {}
            for number, case in self._numbered():
                if _id_hash(case.test_id) not in repeated:
                    continue
                if case.test_id in first:
                    raise InputError(
                        f"duplicate test_id {case.test_id!r} (first on line {first[case.test_id]})",
                        source=self._source,
                        line=number,
                    )
                first[case.test_id] = number
        return len(hashes)

    def __iter__(self) -> Iterator[Case]:
        for _number, case in self._numbered():
            yield case

    def __len__(self) -> int:
        return self._length

    def __repr__(self) -> str:
        return f"<CaseFile {self._source}: {self._length} cases>"


_CASE_KEYS = frozenset({"test_id", "query", "ground_truth", "tags", "principal"})


def _plain_case(record: dict[str, Any]) -> Case | None:
    """The case of a line that is plainly valid (what :class:`_CaseRecord` accepts, checked in
    a few comparisons rather than by cattrs: a million cases are read several times), else
    None."""
    test_id, query = record.get("test_id"), record.get("query")
    truth, tags = record.get("ground_truth", {}), record.get("tags", [])
    principal = record.get("principal")
    if (
        type(test_id) is str
        and test_id
        and type(query) is str
        and query
        and type(truth) is dict
        and type(tags) is list
        and all(type(t) is str for t in tags)
        and record.keys() <= _CASE_KEYS
        and (principal is None or (type(principal) is str and principal.strip()))
    ):
        return Case(test_id, query, truth, tuple(tags), principal)
    return None


def _id_hash(test_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(test_id.encode("utf-8"), digest_size=8).digest())


def load_manifest(root: Traversable | Path, *, where: str | None = None) -> LoadedManifest:
    """Read and validate the pack in *root* (a directory or an importlib.resources package).

    Raises:
        ConfigError: The manifest is invalid (every problem, each with its ``$.path``).
        InputError: A data file is malformed, a doc/test id is duplicated (file and line).
    """
    where = where or str(root)
    raw = _read(root, MANIFEST, where)
    source = f"{where}/{MANIFEST}"
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(source, [f"not UTF-8 text (byte {exc.start})"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, [f"not valid TOML: {exc}"]) from None
    m = structure(data, _Manifest, source=source)

    documents: list[Document] = []
    seen_docs: dict[str, str] = {}
    for rel in m.documents:
        for rec in _records(root, rel, where, _DocumentRecord):
            if rec.doc_id in seen_docs:
                raise InputError(
                    f"duplicate doc_id {rec.doc_id!r} (also in {seen_docs[rec.doc_id]})",
                    source=f"{where}/{rel}",
                )
            seen_docs[rec.doc_id] = rel
            documents.append(Document(rec.doc_id, rec.text, rec.kind, rec.metadata))

    cases = CaseFile(_node(root, m.cases, where), f"{where}/{m.cases}")

    info = PackInfo(
        name=m.name,
        version=m.version,
        pack_type=m.pack_type,
        metrics=tuple(m.metrics),
        primary_metric=m.primary_metric or primary_metric_for(m.pack_type, tuple(m.metrics)),
        thresholds={
            key: Threshold(t.threshold, t.decision_rule, source=f"pack {m.name} {m.version}")
            for key, t in sorted(m.thresholds.items())
        },
        metric_options={k: dict(o) for k, o in sorted(m.metric_options.items())},
        description=m.description,
        taxonomy=None
        if m.taxonomy is None
        else PackTaxonomy(m.taxonomy.owasp_llm, m.taxonomy.mitre_atlas, m.taxonomy.severity),
    )
    labels = _read(root, m.labels, where) if m.labels else None
    labels_source = f"{where}/{m.labels}" if m.labels else None
    provenance = (
        LabelProvenance(m.label_source, m.label_target) if m.label_source is not None else None
    )
    return LoadedManifest(info, tuple(documents), cases, labels, labels_source, provenance)


@functools.cache
def _load_package(package: str) -> LoadedManifest:
    # Packs are immutable package data: read and validate them once per process.
    return load_manifest(importlib.resources.files(package), where=package.replace(".", "/"))


@frozen
class ManifestPack:
    """A pack whose data is a ``pack.toml`` manifest and JSONL files inside a Python package.

    Subclass it, set ``data_package`` to the import name of the package holding ``pack.toml``
    (usually the subclass's own module, ``__name__``, when it is a package's ``__init__``), and
    register the subclass under ``ragleaklab.packs``::

        @frozen
        class AcmePack(ManifestPack):
            data_package: ClassVar[str] = __name__

    .. versionadded:: 0.1
    """

    data_package: ClassVar[str]

    def _loaded(self) -> LoadedManifest:
        package = pack_traits(self).data_package
        if package is None or not re.fullmatch(r"[\w.]+", package):
            raise TypeError(f"{type(self).__qualname__} must set data_package to a package name")
        return _load_package(package)

    def info(self) -> PackInfo:
        """The manifest's name, version, type, metrics, options and thresholds."""
        return self._loaded().info

    def documents(self) -> tuple[Document, ...]:
        """The documents listed in the manifest's ``documents`` files."""
        return self._loaded().documents

    def cases(self) -> CaseFile:
        """The cases of the manifest's ``cases`` file, in file order, read as they are walked."""
        return self._loaded().cases

    def default_labels(self) -> bytes | None:
        """The raw ``labels.jsonl`` named by the manifest, or None."""
        return self._loaded().labels

    def labels_source(self) -> str | None:
        """Where :meth:`default_labels` comes from (``package/labels.jsonl``)."""
        return self._loaded().labels_source

    def label_provenance(self) -> LabelProvenance | None:
        """Who judged the labels, on which target (``label_source``/``label_target``), or None."""
        return self._loaded().label_provenance


def manifest_fields() -> Mapping[str, str]:
    """The manifest keys and their types, for documentation and ``pack validate``."""
    return {a.name: str(a.type) for a in attrs.fields(_Manifest)}


__all__ = [
    "LABEL_SOURCES",
    "MANIFEST",
    "TARGETED_LABEL_SOURCES",
    "CaseFile",
    "LabelProvenance",
    "LoadedManifest",
    "ManifestPack",
    "load_manifest",
    "manifest_fields",
]
