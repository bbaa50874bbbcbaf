"""The contract of a judge (group ``ragleaklab.judges``): its protocol, its optional members
and the traits they are read into."""

from __future__ import annotations

from typing import Any, Protocol

from attrs import frozen

from ragleaklab_core.contracts.members import (
    Member,
    callable_member,
    present_members,
    read_member,
)

GROUP = "ragleaklab.judges"


class Judge(Protocol):
    """Decides whether an attack succeeded in one answered case, as a reviewer would.

    Group ``ragleaklab.judges``. ``ragleaklab label judge RUN_DIR --judge NAME`` asks it about
    every answer of a run and writes its verdicts as a review file whose labels say
    ``label_source = "judge"`` and who judged (:attr:`identity`). A judge must decide from what
    a reviewer sees (the query, the answer, the retrieved documents, the case's ground truth),
    never from a metric's score: labels defined by the metric they calibrate measure nothing.

    ``judge`` is called from one thread, once per answer; it may raise
    :class:`~ragleaklab_core.PluginRuntimeError` (or any exception) for an answer it cannot
    judge: that answer is left unlabelled, with the error, never guessed (and never counted as
    a negative). The answer and the documents are written by the system under test, and through
    it by an attacker: a judge reads them as data (the built-in ``openai-compatible`` fences them
    behind a fresh random marker its reply must echo) and sees them whole, or raises with the
    reason, never cutting them silently. An exception with ``transport_failure = True`` (or a
    ``ConnectionError`` or ``TimeoutError``) says its endpoint cannot be reached: ``label
    judge`` then stops at once instead of failing every answer. ``ragleaklab label
    judge-check`` measures how far text the attacker writes steers it.

    Optional members ragleaklab reads when present (``identity``, ``description``, ``close``)
    are declared, with their meaning, in :data:`JUDGE_MEMBERS`, and read once at load into
    :class:`JudgeTraits`.

    .. versionadded:: 0.3
    """

    def judge(self, case: Any, /) -> Any:
        """The :class:`~ragleaklab_core.JudgeVerdict` on *case*, a
        :class:`~ragleaklab_core.JudgedCase`."""
        ...


#: The optional members of a judge (group ``ragleaklab.judges``).
JUDGE_MEMBERS: tuple[Member, ...] = (
    Member(
        "identity",
        "attribute",
        "what makes its verdicts reproducible (a model, a digest of its prompts): recorded as the "
        "labels' `labelled_by` (default: the entry-point name)",
        "0.3",
    ),
    Member("description", "class attribute", "what it judges with, one short phrase", "0.3"),
    Member(
        "close",
        "method",
        "close(): release its clients when `label judge` or `label judge-check` is done with it "
        "(also after an error or Ctrl-C)",
        "0.3",
    ),
)


@frozen
class JudgeTraits:
    """What a judge declares beyond ``judge`` (:data:`JUDGE_MEMBERS`), read once at load.

    Attributes:
        identity: Its ``identity`` when a non-empty string, else None (the entry-point name is
            recorded instead).
        description: Its ``description`` when a string, else None.
        close: Whether it has a callable ``close``.
        present: The optional members it defines.
    """

    identity: str | None = None
    description: str | None = None
    close: bool = False
    present: frozenset[str] = frozenset()


def judge_traits(judge: Any) -> JudgeTraits:
    """Read a judge's optional members (:data:`JUDGE_MEMBERS`); *judge* is an instance or, for
    what its class declares, the class."""
    # Read plainly, not through read_member: an identity that raises is the judge's bug, and
    # labels recorded under a name it did not mean would hide it.
    identity = getattr(judge, "identity", None)
    description = read_member(judge, "description")
    return JudgeTraits(
        identity=identity if isinstance(identity, str) and identity else None,
        description=description if isinstance(description, str) else None,
        close=callable_member(judge, "close"),
        present=present_members(judge, JUDGE_MEMBERS),
    )


__all__ = ["GROUP", "JUDGE_MEMBERS", "Judge", "JudgeTraits", "judge_traits"]
