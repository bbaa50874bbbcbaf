"""Paths into a JSON response: ``data.sources[*].id``, ``choices[0].message.content``.

Syntax: keys separated by dots; ``[n]`` indexes a list (negative counts from the end); ``[*]``
takes every item of a list, so the path selects one value per item. ``$`` alone (or as the first
step, ``$.data``) is the whole document. Keys may hold any character except ``.``, ``[`` and ``]``.
"""

from __future__ import annotations

import re
from typing import Any

from attrs import frozen


class _Wildcard:
    def __repr__(self) -> str:
        return "[*]"


#: The ``[*]`` step.
WILDCARD = _Wildcard()

Step = str | int | _Wildcard

_STEP = re.compile(r"\.([^.\[\]]+)|\[(\*|-?\d+)\]")


class PathMismatch(ValueError):
    """The path does not match the document; the message says where it stopped."""


@frozen
class JsonPath:
    """A parsed path. Build it with :meth:`parse`.

    Attributes:
        text: The path as written.
        steps: Keys (str), indices (int) and :data:`WILDCARD`.
    """

    text: str
    steps: tuple[Step, ...]

    @classmethod
    def parse(cls, text: str) -> JsonPath:
        """Parse *text*; ``ValueError`` says what is wrong with it."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"empty path {text!r}")
        # Normalise to a run of ".key" / "[n]" steps, remembering the shift for error positions.
        if text.startswith("$"):
            body, shift = text[1:], 1
        elif text.startswith("["):
            body, shift = text, 0
        else:
            body, shift = "." + text, -1
        steps: list[Step] = []
        pos = 0
        while pos < len(body):
            match = _STEP.match(body, pos)
            if match is None:
                raise ValueError(
                    f"bad path {text!r} at character {max(0, pos + shift)}: use keys separated "
                    "by dots, [n] and [*], e.g. 'data.sources[*].id'"
                )
            key, index = match.groups()
            if key is not None:
                steps.append(key)
            elif index == "*":
                steps.append(WILDCARD)
            else:
                steps.append(int(index))
            pos = match.end()
        return cls(text, tuple(steps))

    @property
    def has_wildcard(self) -> bool:
        """True when the path selects one value per list item."""
        return any(s is WILDCARD for s in self.steps)

    def select(self, document: Any) -> list[Any]:
        """Every value the path selects, in document order.

        Raises:
            PathMismatch: A key is absent, an index out of range, or a step meets a value of the
                wrong kind (a key into a list, ``[*]`` into an object); a ``null`` counts as absent.
        """
        found: list[tuple[Any, str]] = [(document, "$")]
        for step in self.steps:
            after: list[tuple[Any, str]] = []
            for value, where in found:
                if value is None:
                    raise PathMismatch(f"{where} is null")
                if isinstance(step, str):
                    if not isinstance(value, dict):
                        raise PathMismatch(f"{where} is {_kind(value)}, not an object")
                    if step not in value:
                        raise PathMismatch(f"no key {step!r} in {where}")
                    after.append((value[step], f"{where}.{step}"))
                    continue
                if not isinstance(value, list):
                    raise PathMismatch(f"{where} is {_kind(value)}, not a list")
                if isinstance(step, int):
                    if not -len(value) <= step < len(value):
                        raise PathMismatch(f"{where} has {len(value)} items, no [{step}]")
                    after.append((value[step], f"{where}[{step}]"))
                else:
                    after.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
            found = after
        return [value for value, _ in found]

    def select_one(self, document: Any) -> Any:
        """The single value a path without ``[*]`` selects (see :meth:`select`)."""
        return self.select(document)[0]

    def __str__(self) -> str:
        return self.text


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "a number" if isinstance(value, int | float) else type(value).__name__


def check_path(value: str | None, *, name: str, single: bool = False) -> None:
    """Validate an option holding a path (``None`` allowed); *single* forbids ``[*]``."""
    if value is None:
        return
    path = JsonPath.parse(value)
    if single and path.has_wildcard:
        raise ValueError(f"'{name}' must select one value, so no [*]: {value!r}")
