"""The attributes of a plugin class that look like a member it lacks: refused at load, so that
``reads_answers`` is never silently ignored.

A public attribute one edit away from a member of its group the plugin lacks (a required method,
or an optional member of the group's table), the same name but for case and underscores, or a
close difflib match, and of the same kind, is reported (:func:`misspelt_members`); a required
method that is missing names the method that looks meant for it (:func:`missing_hint`).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs
from attrs import frozen

from ragleaklab_core.contracts.groups import (
    ALTERNATIVES,
    OPTIONAL_MEMBERS,
    PROTOCOLS,
    group_kind,
    required_members,
)


@frozen
class Misspelling:
    """A public attribute of a plugin class that looks like a member the plugin lacks.

    Attributes:
        attribute: The attribute the plugin defines.
        suggestions: The members it is close to (each one the plugin lacks), the likeliest first.
    """

    attribute: str
    suggestions: tuple[str, ...]

    def message(self, group: str, name: str) -> str:
        """What is wrong and the fix, for a plugin *name* of *group*: ``metric 'acme-x' has no
        method 'score' (it has 'scores': did you mean 'score'?)`` for a required member,
        ``metric 'acme-x' has 'reads_answers': did you mean 'reads_answer'? ...`` for an
        optional one."""
        kind = group_kind(group)
        meant = self.suggestions[0]
        if group in PROTOCOLS and meant in required_members(group):
            return (
                f"{kind} {name!r} has no method {meant!r} "
                f"(it has {self.attribute!r}: did you mean {meant!r}?)"
            )
        options = " or ".join(repr(s) for s in self.suggestions)
        return (
            f"{kind} {name!r} has {self.attribute!r}: did you mean {options}? ragleaklab reads "
            f"only {meant!r}, so {self.attribute!r} would be ignored: rename it, or make it "
            f"private ({'_' + self.attribute!r}) if it is the plugin's own"
        )


#: Packages whose classes are not the plugin's own: what a plugin class may inherit from or be
#: built with (object, Protocol, Generic); the protocols of the contract are skipped too.
_FOREIGN_PACKAGES = frozenset({"builtins", "typing", "abc", "attr", "attrs"})
_PROTOCOL_CLASSES = frozenset(PROTOCOLS.values())


def _own_attributes(cls: type) -> set[str]:
    """The public attribute names the plugin's own class hierarchy defines: class bodies (methods,
    properties, class attributes, slots) and init fields, not object's or attrs' internals."""
    names: set[str] = set()
    for klass in cls.__mro__:
        module = klass.__module__
        if klass in _PROTOCOL_CLASSES or module.split(".")[0] in _FOREIGN_PACKAGES:
            continue
        names.update(vars(klass))
        names.update(getattr(klass, "__annotations__", {}))
    if attrs.has(cls):
        names.update(a.name for a in attrs.fields(cls))
    elif dataclasses.is_dataclass(cls):
        names.update(f.name for f in dataclasses.fields(cls))
    return {n for n in names if not n.startswith("_")}


def _one_edit(a: str, b: str) -> bool:
    """Whether *a* becomes *b* by one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and (a[diff[1]] == b[diff[0]])
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def _squashed(name: str) -> str:
    return name.replace("_", "").lower()


#: How alike (difflib's ratio) an attribute must be to a declared member, beyond one edit, to be
#: reported: high enough that a field such as ``answer_cache`` is not taken for ``answer_case``.
CLOSE_MATCH = 0.9

_METHOD_KINDS = frozenset({"method", "async method", "classmethod"})


def _method_like(cls: type, attribute: str) -> bool:
    """Whether *cls*'s own *attribute* is something called (a function, a classmethod or
    staticmethod, a callable object), rather than a value (a field, a property, data)."""
    for klass in cls.__mro__:
        if attribute in vars(klass):
            raw = vars(klass)[attribute]
            if isinstance(raw, classmethod | staticmethod):
                return True
            return callable(raw) and not isinstance(raw, type | property)
    return False  # an attrs or dataclass field without a class-level value: data


_UNKNOWN = object()


def _collection(value: Any) -> bool:
    return value is None or (isinstance(value, Collection) and not isinstance(value, str | bytes))


def _text(value: Any) -> bool:
    return value is None or isinstance(value, str)


#: What a value member holds, where a plugin's own field of that name-shape could hold something
#: else: a field ``value = "leak_rate"`` is no misspelt ``values`` (a collection of names).
_SHAPES: Mapping[str, Callable[[Any], bool]] = {
    **dict.fromkeys(("values", "VALUES", "lower_is_worse", "accepts", "primary_for"), _collection),
    **dict.fromkeys(
        (
            "description",
            "suffix",
            "isolation",
            "ingest_scope",
            "subject_value",
            "identity",
            "data_package",
            "plants_into",
        ),
        _text,
    ),
}


def _value_of(cls: type, attribute: str) -> Any:
    """The value *cls* gives *attribute* without being built (a class attribute, or an attrs or
    dataclass field's plain default); ``_UNKNOWN`` when only an instance would tell."""
    fields: Any = ()
    if attrs.has(cls):
        fields = [(a.name, a.default) for a in attrs.fields(cls)]
    elif dataclasses.is_dataclass(cls):
        fields = [(f.name, f.default) for f in dataclasses.fields(cls)]
    for name, default in fields:  # first: a slotted class holds a descriptor under the name
        if name == attribute:
            plain = default is not attrs.NOTHING and default is not dataclasses.MISSING
            return default if plain and not isinstance(default, attrs.Factory) else _UNKNOWN  # type: ignore[arg-type]
    for klass in cls.__mro__:
        if attribute in vars(klass):
            raw = vars(klass)[attribute]
            return _UNKNOWN if hasattr(raw, "__get__") else raw  # a property, a slot
    return _UNKNOWN


def _fits(member: str, value: Any) -> bool:
    """Whether *value* could be what *member* holds (unknown: it could)."""
    shape = _SHAPES.get(member)
    return value is _UNKNOWN or shape is None or shape(value)


def _lacked(group: str, cls: type, own: set[str]) -> dict[str, bool]:
    """The members of *group* that *cls* lacks, each mapped to whether it is called (a method)
    rather than read (an attribute); required members are methods."""
    members = {
        m.name: m.kind in _METHOD_KINDS for m in OPTIONAL_MEMBERS.get(group, ()) if m.is_attribute
    }
    if group in PROTOCOLS:
        members.update(dict.fromkeys(required_members(group), True))
    alternatives = ALTERNATIVES.get(group, {})

    def has(n: str) -> bool:
        return n in own or hasattr(cls, n)

    return {
        n: called
        for n, called in members.items()
        if not has(n) and not (n in alternatives and has(alternatives[n]))
    }


def misspelt_members(group: str, cls: Any) -> tuple[Misspelling, ...]:
    """The public attributes of plugin class *cls* (of *group*) that look like a member of the
    group the plugin lacks (a required method, or an optional member of
    :data:`OPTIONAL_MEMBERS`): one edit away, the same name but for case and underscores
    (``readsAnswer``), or a close difflib match, and of the same kind (something called for a
    method, a value for an attribute, of the member's shape where it has one: a collection for
    ``values``, text for ``description``). The core would never read them; a plugin's own helper
    close to a member it does define (``scores`` beside ``score``) is not reported.

    .. versionchanged:: 0.3
        Required members count; only members the plugin lacks, of the attribute's kind.
    """
    if not isinstance(cls, type):
        cls = type(cls)
    own = _own_attributes(cls)
    declared = {m.name for m in OPTIONAL_MEMBERS.get(group, ())}
    if group in PROTOCOLS:
        declared.update(required_members(group))
    lacked = _lacked(group, cls, own)
    found = []
    for attribute in sorted(own - declared):
        called = _method_like(cls, attribute)
        value = _UNKNOWN if called else _value_of(cls, attribute)
        candidates = [n for n, method in lacked.items() if method == called and _fits(n, value)]
        near = [n for n in candidates if _one_edit(attribute, n)]
        near += [n for n in candidates if n not in near and _squashed(n) == _squashed(attribute)]
        if not near:
            near = difflib.get_close_matches(attribute, candidates, n=1, cutoff=CLOSE_MATCH)
        if near:
            near.sort(key=lambda n: -difflib.SequenceMatcher(None, attribute, n).ratio())
            found.append(Misspelling(attribute, tuple(near)))
    return tuple(found)


def missing_hint(group: str, cls: Any, member: str) -> str:
    """For a required *member* plugin class *cls* lacks, ``" (it has 'scores': did you mean
    'score'?)"`` when one of its public methods looks meant for it (looser than
    :func:`misspelt_members`: the plugin fails anyway, so a hint costs nothing), else ``""``."""
    if not isinstance(cls, type):
        cls = type(cls)
    own = sorted(a for a in _own_attributes(cls) if _method_like(cls, a))
    close = [a for a in own if member in a.lower() or (len(a) > 2 and a.lower() in member)]
    close += [a for a in difflib.get_close_matches(member, own, n=3, cutoff=0.6) if a not in close]
    if not close:
        return ""
    close.sort(key=lambda a: -difflib.SequenceMatcher(None, member, a).ratio())
    return f" (it has {close[0]!r}: did you mean {member!r}?)"


__all__ = ["CLOSE_MATCH", "Misspelling", "missing_hint", "misspelt_members"]
