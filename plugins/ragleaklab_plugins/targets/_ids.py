"""Mapping the ids a system returns to the pack's ``doc_id``s.

Real RAG systems rarely return the ids ragleaklab planted: a chunked index returns
``<doc_id>::chunk-0``, a vector store its own UUID with the planted id in the metadata. Metrics
count *documents*, so an id that is not mapped back makes every retrieval metric read 0, and a
pack would pass having tested nothing (the runner's wiring check then refuses the pack). The
``http`` and ``python`` targets take a ``doc_id_pattern``: a regular expression with a named
group ``doc_id``, searched in each returned id; the group is the pack's document id and the
whole returned id is kept as the chunk id. An id the pattern does not match is kept as it is,
so the wiring check counts it as unknown instead of it being silently dropped.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
from attrs import frozen

__all__ = ["IdPattern", "check_id_pattern"]


def check_id_pattern(instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """attrs validator: *value* is None or a regex with a named group ``doc_id``."""
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"'{attribute.name}' must be a string: {value!r}")
    IdPattern.compile(value, name=attribute.name)


@frozen
class IdPattern:
    """A compiled ``doc_id_pattern``."""

    regex: re.Pattern[str]

    @classmethod
    def compile(cls, pattern: str, *, name: str = "doc_id_pattern") -> IdPattern:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"'{name}' is not a valid regular expression: {exc}") from None
        if "doc_id" not in regex.groupindex:
            raise ValueError(
                f"'{name}' must have a named group (?P<doc_id>...) that captures the pack's "
                f"document id: {pattern!r}"
            )
        return cls(regex)

    def split(self, returned: str) -> tuple[str, str | None]:
        """(document id, chunk id) for an id the system returned.

        The chunk id is the returned id when the pattern mapped it to something else, else None.
        """
        match = self.regex.search(returned)
        if match is None or not match.group("doc_id"):
            return returned, None
        doc_id = match.group("doc_id")
        return doc_id, (None if doc_id == returned else returned)
