"""Where a ``$.path`` of ``pack.toml`` is written: the line a problem points at."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from typing import Any

_PATH_TOKEN = re.compile(r"\.([A-Za-z_][\w-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]")
_TOML_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_TOML_KEY = re.compile(rf"^\s*({_TOML_KEY_PART}(?:\s*\.\s*{_TOML_KEY_PART})*)\s*=")
_TOML_HEADER = re.compile(rf"^\s*\[\[?\s*({_TOML_KEY_PART}(?:\s*\.\s*{_TOML_KEY_PART})*)\s*\]")


# -- locating a $.path in pack.toml --------------------------------------------------------------


def _path_keys(path: str) -> list[str]:
    """The table keys of a ``$.a['b'][0].c`` path (indices dropped): ``['a', 'b', 'c']``."""
    return [m.group(1) or m.group(2) for m in _PATH_TOKEN.finditer(path) if m.group(3) is None]


def _decoded(fragment: str, key: str) -> tuple[str, ...] | None:
    """The key path of a ``key = 0`` or ``[key]`` fragment, decoded by tomllib itself (quotes,
    escapes, dots), or None when it is not one (the line is inside a multi-line value)."""
    try:
        node: Any = tomllib.loads(fragment)
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        ((name, node),) = node.items()
        path.append(name)
        if isinstance(node, list):  # an array-of-tables header
            node = node[0]
    return tuple(path) if path else None


#: Above this size the statement check below (which reparses the text before a candidate line)
#: is skipped: lines stay right for every ordinary manifest and approximate for a huge one.
_EXACT_UP_TO = 256 * 1024


def _toml_key_lines(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """``(line, full key path)`` of every table header and ``key =`` line of a TOML text.

    tomllib reports no positions, and no well-kept TOML reader for Python does, so the lines
    are found here; tomllib still decides what each line means. A line is a candidate when it
    looks like a header or a key (a cheap regex); it is a statement only when the text before
    it parses (so a ``x = 1`` inside a multi-line string or array is not one), and its key is
    decoded by tomllib (quoted keys, escapes, dotted keys).
    """
    table: tuple[str, ...] = ()
    out: list[tuple[int, tuple[str, ...]]] = []
    lines = text.split("\n")
    exact = len(text) <= _EXACT_UP_TO
    for number, line in enumerate(lines, start=1):
        header = _TOML_HEADER.match(line)
        key = None if header else _TOML_KEY.match(line)
        if header is None and key is None:
            continue
        if exact and not _parses("\n".join(lines[: number - 1])):
            continue
        if header is not None:
            double = line.lstrip().startswith("[[")
            fragment = f"[[{header.group(1)}]]" if double else f"[{header.group(1)}]"
            parts = _decoded(fragment, header.group(1))
            if parts is not None:
                table = parts
                out.append((number, table))
        elif key is not None:
            parts = _decoded(f"{key.group(1)} = 0", key.group(1))
            if parts is not None:
                out.append((number, table + parts))
    return out


def _parses(text: str) -> bool:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return True


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
    """The keys of the converter's ``unknown key(s) 'a' (did you mean 'b'?), 'c'; known keys:
    ...`` (:func:`ragleaklab_core.config._unknown_keys`), to find their lines."""
    m = re.match(r"unknown keys? (.*?)(?:; known keys: .*)?$", message)
    if not m:
        return []
    named = re.sub(r" \(did you mean [^)]*\)", "", m.group(1))
    return re.findall(r"'([^']*)'", named)


def _key_path(key: str) -> str:
    """A mapping key in a ``$.path``, as the converter writes it: ``['leak_rate']``."""
    return f"[{key!r}]"
