"""Validating a manifest pack (``pack.toml`` and its JSONL files) from a directory or a package."""

from __future__ import annotations

import re
import tomllib
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any

import attrs

from ragleaklab_core.config import structure
from ragleaklab_core.errors import ConfigError, RagleaklabError
from ragleaklab_core.packs.manifest import (
    MANIFEST,
    _Manifest,
)
from ragleaklab_core.packs.validation import limits
from ragleaklab_core.packs.validation.collector import _one_line, _Record
from ragleaklab_core.packs.validation.contents import _Checker
from ragleaklab_core.packs.validation.report import (
    LABEL_SOURCE_MISSING,
    ValidationReport,
    unsafe_path,
)
from ragleaklab_core.packs.validation.toml_lines import (
    _extra_keys,
    _key_path,
    _path_keys,
    _split_problem,
    _toml_key_lines,
    _toml_line,
)

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
        if size > limits.MAX_FILE_BYTES:
            checker.add(
                label, 1, "$", f"file is {size} bytes, over the limit of {limits.MAX_FILE_BYTES}"
            )
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
    if len(raw) > limits.MAX_FILE_BYTES:
        checker.add(
            label, 1, "$", f"file is {len(raw)} bytes, over the limit of {limits.MAX_FILE_BYTES}"
        )
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
                if checker.n_cases > limits.MAX_CASES:
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
        declared = data.get("label_target")
        for target, (file, number) in sorted(checker.label_targets.items()):
            # A line naming another system than the manifest contradicts it: one of the two
            # is wrong, and a corrected rate would trust the wrong one.
            if isinstance(declared, str) and target not in (declared, declared.split("@")[0]):
                checker.add(
                    file,
                    number,
                    "$.target",
                    f"the label says it was observed on {target!r}, but the manifest's "
                    f"label_target is {declared!r}",
                )
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
