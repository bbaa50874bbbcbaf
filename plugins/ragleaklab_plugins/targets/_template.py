"""Request templates: JSON-compatible values in which ``{query}`` stands for the query and
``{principal}`` for who asks (a case's principal).

Both are inserted into the template's *string values* in one pass and the result is a new
Python object that the HTTP client serialises; JSON text is never built by concatenation, so
quotes, backslashes, newlines or braces in a query are data, never syntax (a query holding the
text ``{principal}`` stays as it is). Keys are left alone. A case without a principal leaves
out every value that holds ``{principal}`` (see :func:`render`).
"""

from __future__ import annotations

import datetime
import math
import re
from typing import Any

from ragleaklab_plugins.targets._net import (
    REDACTED,
    Secrets,
    env_references,
    expand_env,
    is_secret_name,
)

#: The placeholder replaced by the query.
QUERY = "{query}"
#: The placeholder replaced by the case's principal (who asks).
PRINCIPAL = "{principal}"
_PLACEHOLDER = re.compile(r"\{query\}|\{principal\}")


def render(template: Any, query: str | None, principal: str | None = None) -> Any:
    """A copy of *template* with ``{query}`` replaced by *query* and ``{principal}`` by
    *principal* in every string value (one pass: an inserted value is never scanned again).

    Without a principal (an anonymous case), a string value holding ``{principal}``, alone or
    inside a larger string (``"user:{principal}"``), is **left out**: its key is dropped from its
    object and its item from its list, at any depth. Sending it empty or with the placeholder cut
    out would be another request than the anonymous one (``"user:"`` names nobody, yet says
    someone asks); leaving it out is how a client that knows no user calls the service. An object
    or list emptied that way is sent empty. Only the template is looked at, never an inserted
    value, so a query holding the text ``{principal}`` is sent as written.

    Raises:
        ValueError: *template* itself is a string holding ``{principal}`` and *principal* is
            None (there is nothing to leave it out of), or it holds ``{query}`` and *query* is
            None.
    """
    rendered = _render(template, query, principal)
    if rendered is _LEFT_OUT:
        raise ValueError(
            "the request template is {principal} itself and the case has none: nothing is left "
            "to send"
        )
    return rendered


#: What a string value holding ``{principal}`` renders to without a principal: dropped by the
#: object or list that holds it.
_LEFT_OUT = object()


def _render(template: Any, query: str | None, principal: str | None) -> Any:
    def value(match: re.Match[str]) -> str:
        inserted = query if match.group() == QUERY else principal
        if inserted is None:
            raise ValueError(f"the request template uses {match.group()} and the case has none")
        return inserted

    if isinstance(template, str):
        if principal is None and PRINCIPAL in template:
            return _LEFT_OUT
        return _PLACEHOLDER.sub(value, template)
    if isinstance(template, dict):
        items = ((key, _render(item, query, principal)) for key, item in template.items())
        return {key: item for key, item in items if item is not _LEFT_OUT}
    if isinstance(template, list | tuple):
        rendered = (_render(item, query, principal) for item in template)
        return [item for item in rendered if item is not _LEFT_OUT]
    return template


def mentions(template: Any, placeholder: str) -> bool:
    """True when some string value of *template* holds *placeholder*."""
    if isinstance(template, str):
        return placeholder in template
    if isinstance(template, dict):
        return any(mentions(value, placeholder) for value in template.values())
    if isinstance(template, list | tuple):
        return any(mentions(item, placeholder) for item in template)
    return False


def mentions_query(template: Any) -> bool:
    """True when some string value of *template* holds ``{query}``."""
    return mentions(template, QUERY)


def expand_template_env(template: Any, *, where: str) -> tuple[Any, Secrets]:
    """A copy of *template* with ``${NAME}`` references in string values taken from the
    environment (done once, before any query is inserted, so a query is never expanded).

    Returns:
        The expanded copy and the substituted values, which are secrets.
    """
    found: list[str] = []

    def walk(value: Any, path: str) -> Any:
        if isinstance(value, str):
            text, used = expand_env(value, where=path)
            found.extend(used)
            return text
        if isinstance(value, dict):
            return {k: walk(v, f"{path}.{k}") for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(item, f"{path}[{i}]") for i, item in enumerate(value)]
        return value

    return walk(template, where), Secrets.of(found)


def check_json_value(value: Any, *, where: str) -> None:
    """Raise ``ValueError`` unless *value* is JSON-compatible (TOML dates and NaN are not)."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"'{where}' is {value!r}, which JSON cannot hold")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"'{where}' has a non-string key {key!r}")
            check_json_value(item, where=f"{where}.{key}")
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            check_json_value(item, where=f"{where}[{i}]")
        return
    kind = "a date" if isinstance(value, datetime.date | datetime.time) else type(value).__name__
    raise ValueError(f"'{where}' is {kind}, which JSON cannot hold; quote it as a string")


def hide_literal_secrets(template: Any) -> tuple[Any, Secrets]:
    """A copy of *template* to show, with the literal values of keys named like credentials
    (see :func:`~ragleaklab_plugins.targets._net.is_secret_name`) replaced by ``***``, and
    those values. Values holding ``{query}``, ``{principal}`` or a ``${NAME}`` reference are
    shown as written."""
    hidden: list[str] = []

    def walk(value: Any, key: str | None) -> Any:
        if isinstance(value, str):
            templated = QUERY in value or PRINCIPAL in value
            literal = not templated and not env_references(value)
            if value and key is not None and literal and is_secret_name(key):
                hidden.append(value)
                return REDACTED
            return value
        if isinstance(value, dict):
            return {k: walk(item, k) for k, item in value.items()}
        if isinstance(value, list | tuple):
            return [walk(item, key) for item in value]
        return value

    return walk(template, None), Secrets.of(hidden)
