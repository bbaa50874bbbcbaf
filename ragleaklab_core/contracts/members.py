"""What every plugin group's table of optional members is made of, and how a member is read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from attrs import frozen


@frozen
class Member:
    """One optional member of a plugin group that the core reads when a plugin defines it.

    Attributes:
        name: The attribute's name on the plugin.
        kind: What it is: ``method``, ``async method``, ``classmethod``, ``attribute`` (an
            instance or class attribute, or a property), ``class attribute`` (read from the
            class, without building the plugin), ``parameter`` (a keyword of a method) or
            ``exception attribute`` (on the exceptions the plugin raises).
        meaning: What the core does with it.
        since: The ragleaklab version that first read it.
    """

    name: str
    kind: str
    meaning: str
    since: str

    @property
    def is_attribute(self) -> bool:
        """Whether it is looked up on the plugin's class or instance (a parameter or an
        exception's attribute is not, so a plugin attribute cannot misspell it)."""
        return self.kind not in ("parameter", "exception attribute")


def has_member(obj: Any, name: str) -> bool:
    """Whether *obj* has *name* at all (an async form is used when it exists, whatever it is,
    so that a wrong one fails loudly where it is called)."""
    return hasattr(obj, name)


def callable_member(obj: Any, name: str) -> bool:
    """Whether *obj* has *name* and it can be called."""
    return callable(getattr(obj, name, None))


def read_member(obj: Any, name: str) -> Any:
    """*obj*'s *name*, None when absent or when reading it raises (a plugin's own property or
    descriptor: declarations are read where a crash would break the command line)."""
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def present_members(obj: Any, members: Iterable[Member]) -> frozenset[str]:
    """The names of *members* that *obj* (a plugin, or its class) defines."""
    cls = obj if isinstance(obj, type) else type(obj)
    return frozenset(
        m.name for m in members if m.is_attribute and (hasattr(obj, m.name) or hasattr(cls, m.name))
    )


__all__ = ["Member", "callable_member", "has_member", "present_members", "read_member"]
