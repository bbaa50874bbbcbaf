"""The line a problem in ``pack.toml`` points at, checked against an independent oracle.

Documents are written by tomli-w (a TOML writer, not our reader) from random nested tables; for
every leaf key, deleting the line the locator names must remove exactly that key and change
nothing else (tomllib parses the rest). A locator that pointed at a header, at a neighbour or
at a line inside a multi-line string would fail this.
"""

from __future__ import annotations

import copy
import string
import tomllib
from typing import Any

import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core.packs.validation.toml_lines import _toml_key_lines, _toml_line

# Bare keys, and keys that must be quoted (spaces, dots, quotes, non-ASCII).
keys = st.one_of(
    st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=6),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=6),
)
# Strings that look like TOML lines, headers and comments, some on several lines.
tricky = st.sampled_from(["x = 1", "[a]", "[[b]]", "# c", 'k = "v"', "'''", '"""', "a.b = 2"])
# (No "\r": a TOML multi-line string reads "\r\n" as "\n", so the document would not round-trip.)
plain = st.text(st.characters(exclude_characters="\r"), max_size=8)
strings = st.lists(st.one_of(tricky, plain), max_size=4).map("\n".join)
scalars = st.one_of(st.integers(), st.booleans(), strings, st.lists(st.integers(), max_size=3))
tables = st.recursive(
    st.dictionaries(keys, scalars, min_size=1, max_size=4),
    lambda children: st.dictionaries(keys, st.one_of(scalars, children), min_size=1, max_size=4),
    max_leaves=12,
)


def _leaves(table: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            out.extend(_leaves(value, (*prefix, key)))
        else:
            out.append((*prefix, key))
    return out


def _without(table: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    out = copy.deepcopy(table)
    node = out
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return out


@settings(max_examples=300, deadline=None)
@given(tables, st.booleans())
def test_the_line_of_a_leaf_key_is_the_line_that_defines_it(table, multiline):
    text = tomli_w.dumps(table, multiline_strings=multiline)
    assert tomllib.loads(text) == table
    index = _toml_key_lines(text)
    lines = text.split("\n")
    for path in _leaves(table):
        number = _toml_line(index, list(path))
        # The key's line starts a block whose removal takes away that key and nothing else (a
        # value written on several lines, a multi-line string, goes with its lines).
        expected = _without(table, path)
        removed = [
            "\n".join(lines[: number - 1] + lines[number - 1 + n :])
            for n in range(1, len(lines) - number + 2)
        ]
        assert any(_parses(rest) and tomllib.loads(rest) == expected for rest in removed), (
            path,
            number,
            text,
        )


def _parses(text: str) -> bool:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return True
