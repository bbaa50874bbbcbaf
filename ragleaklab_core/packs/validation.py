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

import importlib.resources
import json
import re
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any

import attrs
from attrs import frozen

from ragleaklab_core.config import structure
from ragleaklab_core.errors import ConfigError, RagleaklabError
from ragleaklab_core.packs.manifest import (
    LABEL_SOURCES,
    MANIFEST,
    LabelProvenance,
    ManifestPack,
    _CaseRecord,
    _DocumentRecord,
    _Manifest,
)
from ragleaklab_core.values import Case, Document, PackInfo

#: The largest data file (or ``pack.toml``) a pack may ship: 64 MiB.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The largest document text, UTF-8 encoded: 1 MiB.
MAX_DOCUMENT_BYTES = 1024 * 1024
#: The most cases a pack may have.
MAX_CASES = 1_000_000
#: The most documents a pack may have.
MAX_DOCUMENTS = 1_000_000

_LABELS = ("positive", "negative")
#: The warning for a pack with labels that does not say who judged them.
LABEL_SOURCE_MISSING = (
    "the labels do not say who judged them: add label_source = one of "
    + ", ".join(f'"{s}"' for s in LABEL_SOURCES)
    + ' (and label_target = "TARGET" for outcome or instrumentation); labels must be an '
    "independent judgement of harm, never the pack's own metric"
)
_PATH_TOKEN = re.compile(r"\.([A-Za-z_][\w-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]")
_TOML_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_TOML_KEY = re.compile(rf"^\s*({_TOML_KEY_PART}(?:\s*\.\s*{_TOML_KEY_PART})*)\s*=")
_TOML_HEADER = re.compile(rf"^\s*\[\[?\s*({_TOML_KEY_PART}(?:\s*\.\s*{_TOML_KEY_PART})*)\s*\]")
_TOML_PART = re.compile(r"""([A-Za-z0-9_-]+)|"((?:[^"\\]|\\.)*)"|'([^']*)'""")


@frozen
class Problem:
    """One thing wrong with a pack.

    Attributes:
        file: The file the problem is in, as the validator names it (``pack/cases.jsonl``), or
            the pack method it came from (``documents()``) for a pack that is not a manifest.
        line: The 1-based line (the item's position for a method); problems about a whole file
            are reported at line 1.
        path: Where in the line's JSON object or in the manifest, as ``$.ground_truth...``.
        message: What is wrong, in one sentence.
    """

    file: str
    line: int
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.path}: {self.message}"


@frozen
class ValidationReport:
    """Every problem of one pack, and what was read.

    Attributes:
        pack: What was validated: a directory or an installed pack's name.
        problems: Every problem, file by file in reading order (manifest, documents, cases,
            labels), then by line.
        n_documents: Documents read.
        n_cases: Cases read.
        n_positive: Valid labels saying the attack succeeded.
        n_negative: Valid labels saying security held.
        warnings: What the pack should say and does not, such as where its labels come from
            (``$.label_source``); they never make a pack invalid.
    """

    pack: str
    problems: tuple[Problem, ...]
    n_documents: int
    n_cases: int
    n_positive: int
    n_negative: int
    warnings: tuple[Problem, ...] = ()

    @property
    def valid(self) -> bool:
        """True when there is no problem (warnings do not count)."""
        return not self.problems

    def summary(self) -> str:
        """``valid: ...`` with the counts, or ``invalid: N problems in PACK``.

        Each warning comes first, on its own line (``warning: FILE:LINE: $.path: message``),
        so that ``pack validate`` prints them after the problems and before the verdict.
        """
        lines = [f"warning: {w}" for w in self.warnings]
        if self.valid:
            lines.append(
                f"valid: {self.n_documents} documents, {self.n_cases} cases, "
                f"{self.n_positive} positive / {self.n_negative} negative labels"
            )
        else:
            n = len(self.problems)
            lines.append(f"invalid: {n} problem{'s' if n != 1 else ''} in {self.pack}")
        return "\n".join(lines)


def unsafe_path(rel: str) -> str | None:
    """Why *rel* cannot name a file inside a pack's directory, or None when it can.

    Only the text is checked (absolute paths, ``..``, backslashes, drive letters); symlinks
    are checked where the file is read.
    """
    if not rel:
        return "path must not be empty"
    if "\x00" in rel:
        return f"path {rel!r} contains a NUL character"
    if "\\" in rel:
        return f"path {rel!r} contains a backslash; use '/' between directories"
    if ":" in rel:
        return f"path {rel!r} contains ':'; drive letters and URLs are refused"
    pure = PurePosixPath(rel)
    if pure.is_absolute():
        return f"path {rel!r} is absolute; it must be relative to the pack's directory"
    if ".." in pure.parts:
        return f"path {rel!r} escapes the pack's directory ('..')"
    return None


# -- locating a $.path in pack.toml --------------------------------------------------------------


def _path_keys(path: str) -> list[str]:
    """The table keys of a ``$.a['b'][0].c`` path (indices dropped): ``['a', 'b', 'c']``."""
    return [m.group(1) or m.group(2) for m in _PATH_TOKEN.finditer(path) if m.group(3) is None]


def _toml_parts(key: str) -> tuple[str, ...]:
    return tuple(a or b or c for a, b, c in _TOML_PART.findall(key))


def _toml_key_lines(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """``(line, full key path)`` of every table header and ``key =`` line of a TOML text."""
    table: tuple[str, ...] = ()
    out: list[tuple[int, tuple[str, ...]]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        header = _TOML_HEADER.match(line)
        if header:
            table = _toml_parts(header.group(1))
            out.append((number, table))
            continue
        key = _TOML_KEY.match(line)
        if key:
            out.append((number, table + _toml_parts(key.group(1))))
    return out


def _toml_line(index: Sequence[tuple[int, tuple[str, ...]]], keys: Sequence[str]) -> int:
    """The line that best locates *keys*: the longest matching prefix; 1 when none does."""
    best, best_len = 1, 0
    for number, path in index:
        n = len(path)
        if best_len < n <= len(keys) and tuple(keys[:n]) == path:
            best, best_len = number, n
    return best


def _split_problem(problem: str) -> tuple[str, str]:
    """``"message @ $.path"`` (the converter's format) as ``(path, message)``."""
    message, sep, path = problem.rpartition(" @ ")
    return (path, message) if sep else ("$", problem)


def _extra_keys(message: str) -> list[str]:
    m = re.match(r"extra fields found \((.*)\)", message)
    return m.group(1).split(", ") if m else []


def _key_path(key: str) -> str:
    """A mapping key in a ``$.path``, as the converter writes it: ``['leak_rate']``."""
    return f"[{key!r}]"


# -- the collector -------------------------------------------------------------------------------


@attrs.define
class _Record:
    file: str
    line: int
    data: dict[str, Any]


@attrs.define
class _Checker:
    """Collects problems and what it has read while a pack is checked."""

    pack: str
    problems: list[Problem] = attrs.field(factory=list)
    warnings: list[Problem] = attrs.field(factory=list)
    files: dict[str, int] = attrs.field(factory=dict)  # file -> reading order, for the report
    documents: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # doc_id -> (file, line)
    document_texts: list[str] = attrs.field(factory=list)
    #: The metric plugins the pack lists: each checks its own ground-truth keys.
    metric_names: list[str] = attrs.field(factory=list)
    document_files: list[str] = attrs.field(factory=list)
    documents_complete: bool = True
    cases: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # test_id -> (file, line)
    case_records: list[_Record] = attrs.field(factory=list)
    cases_file: str | None = None
    cases_complete: bool = True
    labels: dict[str, tuple[str, int, bool]] = attrs.field(factory=dict)
    labels_file: str | None = None
    labels_complete: bool = True
    labelled: set[str] = attrs.field(factory=set)  # every test_id a label line names
    unsourced_labels: int = 0  # label lines with no label_source of their own
    broken: set[str] = attrs.field(factory=set)  # files with a line that is not a JSON object
    n_documents: int = 0
    n_cases: int = 0

    def add(self, file: str, line: int, path: str, message: str) -> None:
        self.problems.append(Problem(file, line, path, message))

    def warn(self, file: str, line: int, path: str, message: str) -> None:
        self.warnings.append(Problem(file, line, path, message))

    def opened(self, file: str) -> None:
        """Note that *file* is read now: problems are listed file by file in this order."""
        self.files.setdefault(file, len(self.files))

    def report(self) -> ValidationReport:
        positive = sum(1 for _f, _n, p in self.labels.values() if p)
        last = len(self.files)
        # Sorted by file (in reading order) and line; found order within a line (stable sort).
        ordered = sorted(self.problems, key=lambda p: (self.files.get(p.file, last), p.line))
        return ValidationReport(
            pack=self.pack,
            problems=tuple(ordered),
            n_documents=self.n_documents,
            n_cases=self.n_cases,
            n_positive=positive,
            n_negative=len(self.labels) - positive,
            warnings=tuple(self.warnings),
        )

    # -- JSONL ----------------------------------------------------------------------------------

    def jsonl(self, raw: bytes, file: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """Each JSON object of a JSONL file (the loader's rules); every bad line is a problem."""
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.add(file, raw[: exc.start].count(b"\n") + 1, "$", "not UTF-8 text")
            self.broken.add(file)
            return
        if not text.strip():
            self.add(file, 1, "$", "file is empty; expected one JSON object per line")
            self.broken.add(file)
            return
        # Lines end at "\n" only, as the loader reads them (JSON allows U+2028 in strings).
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line, parse_constant=_reject_constant)
            except ValueError as exc:
                self.add(file, number, "$", f"malformed JSON: {exc}")
                self.broken.add(file)
                continue
            if not isinstance(record, dict):
                self.add(file, number, "$", f"expected a JSON object, got {type(record).__name__}")
                self.broken.add(file)
                continue
            yield number, record

    def structured(self, record: _Record, cls: type[Any]) -> bool:
        """Check *record* with the loader's record class; True when it is valid."""
        try:
            structure(record.data, cls, source=record.file, path="$")
        except ConfigError as exc:
            for problem in exc.problems:
                path, message = _split_problem(problem)
                self.add(record.file, record.line, path, message)
            return False
        return True

    # -- documents, cases, labels --------------------------------------------------------------

    def document(self, record: _Record) -> None:
        self.n_documents += 1
        if self.n_documents == MAX_DOCUMENTS + 1:
            self.add(record.file, record.line, "$", f"more than {MAX_DOCUMENTS} documents")
        self.structured(record, _DocumentRecord)
        text = record.data.get("text")
        if isinstance(text, str):
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_DOCUMENT_BYTES:
                self.add(
                    record.file,
                    record.line,
                    "$.text",
                    f"document text is {size} bytes, over the limit of {MAX_DOCUMENT_BYTES}",
                )
            self.document_texts.append(text)
        doc_id = record.data.get("doc_id")
        if isinstance(doc_id, str) and doc_id:
            first = self.documents.get(doc_id)
            if first is not None:
                self.add(
                    record.file,
                    record.line,
                    "$.doc_id",
                    f"duplicate doc_id {doc_id!r} (first in {first[0]}:{first[1]})",
                )
            else:
                self.documents[doc_id] = (record.file, record.line)

    def case(self, record: _Record) -> None:
        self.n_cases += 1
        if self.n_cases == MAX_CASES + 1:
            self.add(record.file, record.line, "$", f"more than {MAX_CASES} cases")
        self.structured(record, _CaseRecord)
        test_id = record.data.get("test_id")
        if isinstance(test_id, str) and test_id:
            first = self.cases.get(test_id)
            if first is not None:
                self.add(
                    record.file,
                    record.line,
                    "$.test_id",
                    f"duplicate test_id {test_id!r} (first on line {first[1]})",
                )
            else:
                self.cases[test_id] = (record.file, record.line)
        self.case_records.append(record)

    def label(self, record: _Record) -> None:
        data, file, line = record.data, record.file, record.line
        test_id = data.get("test_id")
        label = data.get("label")
        ok = True
        if "test_id" not in data:
            self.add(file, line, "$", "missing field 'test_id'")
            ok = False
        elif not isinstance(test_id, str) or not test_id.strip():
            self.add(file, line, "$.test_id", f"must be a non-empty string, got {test_id!r}")
            ok = False
        if "label" not in data:
            self.add(file, line, "$", "missing field 'label'")
            ok = False
        elif not isinstance(label, str) or label not in _LABELS:
            self.add(file, line, "$.label", f'must be "positive" or "negative", got {label!r}')
            ok = False
        if isinstance(test_id, str):
            self.labelled.add(test_id)
        notes = data.get("notes")
        if notes is not None and not isinstance(notes, str):
            self.add(file, line, "$.notes", f"must be a string, got {notes!r}")
        # `ragleaklab label import` writes each label's provenance on its line.
        source = data.get("label_source")
        if source is None:
            self.unsourced_labels += 1
        elif source not in LABEL_SOURCES:
            self.add(
                file,
                line,
                "$.label_source",
                f"must be one of {', '.join(LABEL_SOURCES)}, got {source!r}",
            )
        if not ok or not isinstance(test_id, str):
            return
        first = self.labels.get(test_id)
        if first is not None:
            self.add(
                file, line, "$.test_id", f"duplicate test_id {test_id!r} (first on line {first[1]})"
            )
            return
        self.labels[test_id] = (file, line, label == "positive")

    # -- checks across files --------------------------------------------------------------------

    def references(self) -> None:
        """Every document id and claim a case refers to exists in the pack's documents."""
        if not self.documents_complete:
            return  # a documents file could not be read: that problem is already listed
        where = ", ".join(self.document_files) or "the pack's documents"
        for record in self.case_records:
            truth = record.data.get("ground_truth")
            if not isinstance(truth, dict):
                continue
            for key in sorted(truth):
                value = truth[key]
                base = f"$.ground_truth{_key_path(key)}"
                if key.endswith("doc_ids"):
                    self._ids(record, base, value, where)
                elif key.endswith("doc_id"):
                    if not isinstance(value, str):
                        self.add(record.file, record.line, base, "must be a document id (string)")
                    elif value not in self.documents:
                        self.add(
                            record.file, record.line, base, f"no document {value!r} in {where}"
                        )
        self._metrics_ground_truth()

    def _metrics_ground_truth(self) -> None:
        """Each listed metric that declares ``check_ground_truth`` checks its own keys (the
        claim metric: every claim is stated by a document); the core knows none of them."""
        from ragleaklab_core._discovery import METRICS, plugin_class

        records = [r for r in self.case_records if isinstance(r.data.get("ground_truth"), dict)]
        truths = [r.data["ground_truth"] for r in records]
        for name in dict.fromkeys(self.metric_names):
            try:
                check = getattr(plugin_class(METRICS, name), "check_ground_truth", None)
            except RagleaklabError:
                continue  # an unknown or broken metric is listed already
            if check is None:
                continue
            try:
                for index, key, item, message in check(truths, list(self.document_texts)):
                    record = records[index]
                    path = f"$.ground_truth{_key_path(key)}"
                    if item is not None:
                        path += f"[{item}]"
                    self.add(record.file, record.line, path, message)
            except Exception as exc:
                file, line = (records[0].file, records[0].line) if records else ("metric", 1)
                self.add(
                    file,
                    line,
                    "$.ground_truth",
                    f"metric {name!r} could not check the ground truth: "
                    f"{type(exc).__name__}: {_one_line(exc)}",
                )

    def _ids(self, record: _Record, base: str, value: Any, where: str) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.add(record.file, record.line, base, "must be a list of document ids (strings)")
            return
        for i, doc_id in enumerate(value):
            if doc_id not in self.documents:
                self.add(
                    record.file, record.line, f"{base}[{i}]", f"no document {doc_id!r} in {where}"
                )

    def label_coverage(self) -> None:
        """Labels and cases match one to one, and both classes are present.

        A direction is checked only when the file it relies on was read whole: a line that is
        not JSON could have held the id that looks missing.
        """
        labels_file = self.labels_file
        if labels_file is None or not self.labels_complete:
            return
        cases_read = self.cases_complete and (self.cases_file not in self.broken)
        labels_read = labels_file not in self.broken
        if cases_read:
            cases_file = self.cases_file or "cases"
            for test_id, (file, line, _positive) in self.labels.items():
                if test_id not in self.cases:
                    self.add(file, line, "$.test_id", f"no case {test_id!r} in {cases_file}")
        if labels_read:
            for test_id, (file, line) in self.cases.items():
                if test_id not in self.labelled:
                    self.add(
                        file, line, "$.test_id", f"case {test_id!r} has no label in {labels_file}"
                    )
            # Calibration uses the labels of the pack's cases only.
            usable = [
                p for t, (_f, _n, p) in self.labels.items() if t in self.cases or not cases_read
            ]
            positive = sum(usable)
            for count, name, meaning in (
                (positive, "positive", "the attack succeeded"),
                (len(usable) - positive, "negative", "security held"),
            ):
                if count == 0 and (self.cases or not cases_read):  # no cases: said already
                    self.add(
                        labels_file,
                        1,
                        "$",
                        f"no {name} label ({name} = {meaning}); calibration needs both classes",
                    )

    def cross_checks(self) -> None:
        file = self.cases_file
        # An empty or unreadable cases file has said so already.
        if file is not None and self.cases_complete and self.n_cases == 0:
            said = any(p.file == file for p in self.problems)
            if not said:
                self.add(file, 1, "$", "the pack has no cases")
        self.references()
        self.label_coverage()


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


# -- manifest packs (a directory or an installed package) ---------------------------------------


def _read(
    checker: _Checker,
    root: Traversable,
    rel: str,
    where: str,
    *,
    missing: Callable[[str], None],
) -> bytes | None:
    """The bytes of *rel* under *root*, or None after recording why they cannot be read."""
    label = f"{where}/{rel}"
    checker.opened(label)
    node: Traversable = root
    for part in PurePosixPath(rel).parts:
        node = node.joinpath(part)
    if isinstance(root, Path) and isinstance(node, Path):
        inside = root.resolve()
        resolved = node.resolve()
        if not resolved.is_relative_to(inside):
            checker.add(
                label,
                1,
                "$",
                f"resolves to {resolved.as_posix()}, outside the pack's directory (a symlink?)",
            )
            return None
        try:
            size = node.stat().st_size
        except FileNotFoundError:
            missing(f"file not found: {rel}")
            return None
        except OSError as exc:
            checker.add(label, 1, "$", f"cannot read: {exc.strerror or exc}")
            return None
        if size > MAX_FILE_BYTES:
            checker.add(label, 1, "$", f"file is {size} bytes, over the limit of {MAX_FILE_BYTES}")
            return None
    try:
        raw = node.read_bytes()
    except FileNotFoundError:
        missing(f"file not found: {rel}")
        return None
    except IsADirectoryError:
        checker.add(label, 1, "$", "is a directory, expected a file")
        return None
    except OSError as exc:
        checker.add(label, 1, "$", f"cannot read: {exc.strerror or exc}")
        return None
    if len(raw) > MAX_FILE_BYTES:
        checker.add(label, 1, "$", f"file is {len(raw)} bytes, over the limit of {MAX_FILE_BYTES}")
        return None
    return raw


def _manifest_paths(
    checker: _Checker, data: dict[str, Any], source: str, lines: Callable[[list[str]], int]
) -> dict[str, Any]:
    """Check the manifest's file paths; return *data* with every unsafe one replaced.

    The replacement keeps the loader's path validator from reporting the same problem again,
    less precisely, when the manifest is structured.
    """
    cleaned = dict(data)
    for key in ("documents", "cases", "labels"):
        value = data.get(key)
        items = value if isinstance(value, list) else [value]
        safe = []
        for i, rel in enumerate(items):
            path = f"$.{key}[{i}]" if isinstance(value, list) else f"$.{key}"
            why = unsafe_path(rel) if isinstance(rel, str) else None
            if why is not None:
                checker.add(source, lines([key]), path, why)
                rel = "unsafe-path-replaced"
            safe.append(rel)
        if key in data:
            cleaned[key] = safe if isinstance(value, list) else safe[0]
    return cleaned


def _nested(type_: Any) -> tuple[str, type[Any]] | None:
    """``("class", C)`` for an attrs class field, ``("dict", C)`` for ``dict[str, C]``."""
    if isinstance(type_, type) and attrs.has(type_):
        return "class", type_
    args = typing.get_args(type_)
    if typing.get_origin(type_) is dict and len(args) == 2:
        inner = args[1]
        if isinstance(inner, type) and attrs.has(inner):
            return "dict", inner
    return None


def _field_problems(cls: type[Any], data: Mapping[str, Any], prefix: str = "$") -> list[Any]:
    """``(path, message)`` of each field validator of *cls* that fails, nested tables included.

    The converter runs validators only once every field has the right type; this runs each one
    on the fields that structure on their own, so a bad name is reported next to a mistyped
    threshold instead of one of them per run.
    """
    attrs.resolve_types(cls)
    found: list[tuple[str, str]] = []
    values: dict[str, Any] = {}
    for a in attrs.fields(cls):
        key = a.alias or a.name
        if not a.init or key not in data:
            continue
        path = f"{prefix}.{key}"
        nested, value = _nested(a.type), data[key]
        if nested is not None and isinstance(value, Mapping):
            kind, inner = nested
            if kind == "class":
                found.extend(_field_problems(inner, value, path))
            else:
                for k in sorted(value):
                    if isinstance(value[k], Mapping):
                        found.extend(_field_problems(inner, value[k], f"{path}{_key_path(k)}"))
        try:
            values[a.name] = structure(value, a.type, source="", path=path)
        except (ConfigError, TypeError, ValueError):
            continue
    stand_in = types.SimpleNamespace(**values)
    for a in attrs.fields(cls):
        if a.validator is None or a.name not in values:
            continue
        try:
            a.validator(stand_in, a, values[a.name])
        except (TypeError, ValueError) as exc:
            message = str(exc.args[0]) if exc.args else str(exc)
            found.append((f"{prefix}.{a.alias or a.name}", message))
    return found


_KeyIndex = list[tuple[int, tuple[str, ...]]]


def _check_manifest(
    checker: _Checker, root: Traversable, where: str, expected_name: str | None
) -> tuple[dict[str, Any], _KeyIndex] | None:
    """Check ``pack.toml``; return its raw table and key lines (for the data files), or None."""
    source = f"{where}/{MANIFEST}"
    raw = _read(checker, root, MANIFEST, where, missing=lambda m: checker.add(source, 1, "$", m))
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        checker.add(source, raw[: exc.start].count(b"\n") + 1, "$", "not UTF-8 text")
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"at line (\d+)", str(exc))
        checker.add(source, int(m.group(1)) if m else 1, "$", f"not valid TOML: {exc}")
        return None
    index = _toml_key_lines(text)

    def line_of(keys: list[str]) -> int:
        return _toml_line(index, keys)

    cleaned = _manifest_paths(checker, data, source, line_of)
    seen: set[tuple[str, str]] = set()

    def add(path: str, message: str) -> None:
        if (path, message) in seen:
            return
        seen.add((path, message))
        keys = _path_keys(path)
        if keys == ["label_target"] and "label_target" not in data:
            keys = ["label_source"]  # required by the label_source line
        extra = _extra_keys(message)
        checker.add(source, line_of(keys + extra[:1]), path, message)

    try:
        structure(cleaned, _Manifest, source=source)
    except ConfigError as exc:
        for problem in exc.problems:
            add(*_split_problem(problem))
        for path, message in _field_problems(_Manifest, cleaned):
            add(path, message)
    name = data.get("name")
    if expected_name is not None and isinstance(name, str) and name != expected_name:
        add(
            "$.name",
            f"{name!r} differs from the entry-point name {expected_name!r}; "
            "use the same name in both places",
        )
    if "labels" not in data:
        add(
            "$.labels",
            'no default labels: add labels = "labels.jsonl" (one positive or negative label '
            "per case) so that `ragleaklab calibrate --pack` works",
        )
    metrics = data.get("metrics")
    options = data.get("metric_options")
    if isinstance(metrics, list):
        checker.metric_names = [m for m in metrics if isinstance(m, str)]
    _check_metrics(
        add,
        metrics if isinstance(metrics, list) else [],
        options if isinstance(options, dict) else {},
    )
    return data, index


def _check_metrics(
    add: Callable[[str, str], None], metrics: Sequence[Any], options: Mapping[str, Any]
) -> None:
    """The metrics are installed, and their options fit them (the loader's own check)."""
    from ragleaklab_core._discovery import METRICS, available_names, load_plugin

    installed = available_names(METRICS)
    names = [m for m in metrics if isinstance(m, str)]
    for i, name in enumerate(metrics):
        if isinstance(name, str) and name not in installed:
            add(
                f"$.metrics[{i}]",
                f"no metric plugin named {name!r} is installed "
                f"(installed: {', '.join(installed) or 'none'})",
            )
    for name in sorted(options):
        path = f"$.metric_options{_key_path(name)}"
        if name not in names:
            add(path, f"options for metric {name!r}, which the pack's metrics do not list")
            continue
        if name not in installed or not isinstance(options[name], dict):
            continue
        try:
            load_plugin(METRICS, name, options[name], path=path)
        except ConfigError as exc:
            for problem in exc.problems:
                add(*_split_problem(problem))
        except RagleaklabError as exc:
            add(path, f"metric {name!r} cannot be loaded: {_one_line(exc)}")


def _one_line(exc: BaseException) -> str:
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _check_data_files(
    checker: _Checker, root: Traversable, where: str, data: Mapping[str, Any], index: _KeyIndex
) -> None:
    source = f"{where}/{MANIFEST}"

    def missing_at(key: str, path: str) -> Callable[[str], None]:
        return lambda message: checker.add(source, _toml_line(index, [key]), path, message)

    documents = data.get("documents")
    seen_files: set[str] = set()
    if isinstance(documents, list):
        for i, rel in enumerate(documents):
            if not isinstance(rel, str) or unsafe_path(rel) is not None:
                checker.documents_complete = False
                continue
            if rel in seen_files:
                checker.add(
                    source,
                    _toml_line(index, ["documents"]),
                    f"$.documents[{i}]",
                    f"{rel!r} is listed twice",
                )
                continue
            seen_files.add(rel)
            label = f"{where}/{rel}"
            checker.document_files.append(label)
            raw = _read(
                checker, root, rel, where, missing=missing_at("documents", f"$.documents[{i}]")
            )
            if raw is None:
                checker.documents_complete = False
                continue
            for number, record in checker.jsonl(raw, label):
                checker.document(_Record(label, number, record))
            if label in checker.broken:
                checker.documents_complete = False
    else:
        checker.documents_complete = False

    cases = data.get("cases")
    if isinstance(cases, str) and unsafe_path(cases) is None:
        label = f"{where}/{cases}"
        checker.cases_file = label
        raw = _read(checker, root, cases, where, missing=missing_at("cases", "$.cases"))
        if raw is None:
            checker.cases_complete = False
        else:
            for number, record in checker.jsonl(raw, label):
                checker.case(_Record(label, number, record))
                if checker.n_cases > MAX_CASES:
                    break
    else:
        checker.cases_complete = False

    labels = data.get("labels")
    if isinstance(labels, str) and unsafe_path(labels) is None:
        label = f"{where}/{labels}"
        checker.labels_file = label
        raw = _read(checker, root, labels, where, missing=missing_at("labels", "$.labels"))
        if raw is None:
            checker.labels_complete = False
        else:
            for number, record in checker.jsonl(raw, label):
                checker.label(_Record(label, number, record))
    checker.cross_checks()


def validate_root(
    root: Traversable, *, where: str, pack: str | None = None, expected_name: str | None = None
) -> ValidationReport:
    """Validate the manifest pack in *root* (a directory or an importlib.resources package).

    Args:
        root: The directory holding ``pack.toml``.
        where: How files are named in problems (``where/cases.jsonl``).
        pack: What the report says was validated (default: *where*).
        expected_name: The entry-point name the manifest's ``name`` must equal, if known.

    .. versionadded:: 0.1
    """
    checker = _Checker(pack or where)
    manifest = _check_manifest(checker, root, where, expected_name)
    if manifest is not None:
        _check_data_files(checker, root, where, *manifest)
        data, index = manifest
        if "labels" in data and "label_source" not in data and _unsourced(checker):
            line = _toml_line(index, ["labels"])
            checker.warn(f"{where}/{MANIFEST}", line, "$.label_source", LABEL_SOURCE_MISSING)
    return checker.report()


def _unsourced(checker: _Checker) -> bool:
    """True when some label line does not say who judged it (or none was read)."""
    return checker.unsourced_labels > 0 or not checker.labels


def validate_directory(directory: Path) -> ValidationReport:
    """Validate the pack whose ``pack.toml`` is in *directory*.

    .. versionadded:: 0.1
    """
    where = directory.as_posix().rstrip("/") or "."
    return validate_root(directory, where=where)


# -- packs by name, and pack objects -------------------------------------------------------------


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

    default_labels = getattr(pack, "default_labels", None)
    raw: Any = None
    if callable(default_labels):
        try:
            raw = default_labels()
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
    method = getattr(pack, "label_provenance", None)
    provenance: Any = None
    if callable(method):
        try:
            provenance = method()
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
        package = getattr(type(pack), "data_package", None)
        if not isinstance(package, str):
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


__all__ = [
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
