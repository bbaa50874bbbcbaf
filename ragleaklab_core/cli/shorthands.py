"""``run``'s ``--NAME FILE`` shorthands: which reporters get one, and why the others do not.

A reporter asks for a shorthand with its ``shorthand`` member: ``True`` (the flag is its
entry-point name) or a flag name of its own (``"tap"`` for ``--tap``). What a third party
declares must never break the command line, ``run --help`` included: a value that is neither,
a name that cannot be a flag, a flag ``run`` already has, or one two reporters claim, gets no
shorthand, and says why in one warning line (and under the reporter in ``ragleaklab plugins``);
the reporter stays usable through ``--report NAME=FILE``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

from attrs import frozen

#: A flag a shorthand may have, without its ``--``: lowercase words of letters and digits joined
#: by single dashes, starting with a letter (what a shell passes and click parses as one option).
FLAG = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
#: Longest flag name offered (a help line, a command line someone types).
MAX_FLAG = 40
#: The prefix of a shorthand's keyword argument: ``--acme-tap`` -> ``render_acme_tap``.
KEYWORD_PREFIX = "render_"


@frozen
class Shorthand:
    """``--flag FILE``, the same as ``--report reporter=FILE``."""

    reporter: str
    flag: str
    description: str

    @property
    def keyword(self) -> str:
        """The keyword ``run`` receives the FILE under (flags hold no underscore, so two
        flags never share a keyword)."""
        return KEYWORD_PREFIX + self.flag.replace("-", "_")


@frozen
class Refusal:
    """A reporter that asked for a shorthand and gets none, and why."""

    reporter: str
    why: str

    def message(self) -> str:
        """The one warning line: ``reporter 'X' gets no run shorthand: WHY; use --report``."""
        return (
            f"reporter {_shown(self.reporter)} gets no `run` shorthand: {self.why}; "
            f"use --report {_shown(self.reporter)}=FILE"
        )


@frozen
class ShorthandPlan:
    """The shorthands ``run`` offers, by flag, and the reporters refused one."""

    offered: tuple[Shorthand, ...] = ()
    refused: tuple[Refusal, ...] = ()

    def by_keyword(self, keyword: str) -> Shorthand | None:
        """The shorthand ``run`` received a FILE of under *keyword*."""
        return next((s for s in self.offered if s.keyword == keyword), None)

    def warnings_for(self, reporter: str) -> tuple[str, ...]:
        """The warning lines about *reporter*."""
        return tuple(r.message() for r in self.refused if r.reporter == reporter)


def _shown(value: Any, limit: int = 60) -> str:
    """*value* quoted for one line of a message, whatever it is (its repr may raise or be long)."""
    try:
        text = repr(value)
    except Exception:  # a plugin's own __repr__ blew up: name its type instead
        return f"<{type(value).__name__}>"
    text = text.encode("unicode_escape", "backslashreplace").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _flag_for(reporter: str, value: Any) -> tuple[str | None, str | None]:
    """``(flag, None)`` for what *reporter* declared as *value*, ``(None, why)`` when it cannot
    have one, ``(None, None)`` when it asked for none."""
    if value is None or value is False:
        return None, None
    if value is True:
        name, source = reporter, "its name"
    elif isinstance(value, str):
        name, source = value, "its shorthand"
    else:
        return None, (
            f"shorthand must be True or a flag name, got {_shown(value)} ({type(value).__name__})"
        )
    if len(name) > MAX_FLAG or not FLAG.fullmatch(name):
        return None, (
            f"{source} {_shown(name)} cannot be a flag (lowercase letters and digits in words "
            f"joined by single dashes, starting with a letter, at most {MAX_FLAG} characters)"
        )
    return name, None


def plan_shorthands(
    declared: Iterable[tuple[str, Any, Any]], taken: Collection[str]
) -> ShorthandPlan:
    """Which of *declared* (``(reporter, shorthand, description)`` as each reporter declares
    them, unchecked) ``run`` offers, given the options it already has (*taken*, with their
    dashes: ``--out``, ``-o``); deterministic, by reporter name.
    """
    wanted: dict[str, list[tuple[str, str]]] = {}  # flag -> [(reporter, description)]
    refused: list[Refusal] = []
    for reporter, value, description in sorted(declared, key=lambda d: d[0]):
        flag, why = _flag_for(reporter, value)
        if why is not None:
            refused.append(Refusal(reporter, why))
        elif flag is not None:
            text = description if isinstance(description, str) and description else reporter
            wanted.setdefault(flag, []).append((reporter, text))
    offered = []
    for flag, claims in sorted(wanted.items()):
        if f"--{flag}" in taken:
            refused.extend(
                Refusal(r, f"--{flag} is already an option of `ragleaklab run`") for r, _ in claims
            )
        elif len(claims) > 1:
            others = " and ".join(_shown(r) for r, _ in claims)
            refused.extend(Refusal(r, f"--{flag} is claimed by {others}") for r, _ in claims)
        else:
            [(reporter, description)] = claims
            offered.append(Shorthand(reporter, flag, description))
    return ShorthandPlan(tuple(offered), tuple(sorted(refused, key=lambda r: r.reporter)))


def installed_plan(taken: Collection[str]) -> ShorthandPlan:
    """:func:`plan_shorthands` over the installed reporters (their classes imported, not built;
    one that cannot be imported gets none, and is reported where it is named)."""
    from ragleaklab_core.reporting.outputs import declared_shorthands

    return plan_shorthands(declared_shorthands(), taken)


__all__ = [
    "FLAG",
    "Refusal",
    "Shorthand",
    "ShorthandPlan",
    "installed_plan",
    "plan_shorthands",
]
