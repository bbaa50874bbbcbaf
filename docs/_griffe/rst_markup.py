"""Griffe extension for the API reference: the reST markup of the core's docstrings, in Markdown.

The docstrings are Google-style with Sphinx roles (``:func:`calibrate```), version directives
(``.. versionadded:: 0.1``) and literal blocks introduced by ``::``. mkdocstrings renders Markdown,
so each docstring is rewritten before it is rendered:

- a role becomes a cross-reference to the object when the name resolves in the docstring's scope
  and the object is on the site, and a plain code span otherwise (never a broken link);
- ``versionadded`` becomes an italic line, ``versionchanged`` and ``deprecated`` an admonition
  holding the directive's indented body;
- a paragraph ending in ``::`` ends in ``:`` (its indented block is already a code block).

Loaded by ``mkdocs.yml`` (the python handler's ``extensions``); not part of the package.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|exc|obj):`(?P<tilde>~?)(?P<target>[^`]+)`")
_DIRECTIVE = re.compile(r"^(?P<indent> *)\.\. (?P<kind>[a-z]+)::(?P<arg>.*)$", re.MULTILINE)
_LITERAL = re.compile(r"(?<=\S)::$", re.MULTILINE)
_ADMONITIONS = {
    "versionchanged": ("info", "Changed in version"),
    "deprecated": ("warning", "Deprecated since version"),
}


def _identifier(obj: griffe.Object, target: str) -> str | None:
    """The full path that *target* names from *obj*'s scope, or None."""
    head, _, rest = target.partition(".")
    if head == obj.module.path.split(".")[0]:
        return target
    try:
        resolved = obj.resolve(head)
    except griffe.NameResolutionError:
        return None
    return f"{resolved}.{rest}" if rest else resolved


def _role(obj: griffe.Object, match: re.Match[str]) -> str:
    target = match["target"]
    title = target.rsplit(".", 1)[-1] if match["tilde"] else target
    identifier = _identifier(obj, target)
    if identifier is None:
        return f"`{title}`"
    # `optional`: autorefs renders plain text, with no warning, when the object is not on the site.
    return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'


def _directive(match: re.Match[str]) -> str:
    indent, kind, arg = match["indent"], match["kind"], match["arg"].strip()
    if kind == "versionadded":
        return f"{indent}*Added in version {arg}.*"
    if kind in _ADMONITIONS:
        style, title = _ADMONITIONS[kind]
        return f'{indent}!!! {style} "{title} {arg}"'
    return match[0]


class RstMarkup(griffe.Extension):
    """Rewrite each docstring's reST markup into Markdown once the object tree is complete."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is None or obj.is_alias:
            return
        text = _ROLE.sub(lambda m: _role(obj, m), docstring.value)
        text = _DIRECTIVE.sub(_directive, text)
        docstring.value = _LITERAL.sub(":", text)
