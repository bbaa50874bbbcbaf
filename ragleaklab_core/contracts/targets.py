"""The contract of a target (group ``ragleaklab.targets``): its protocol, its optional members
and the traits they are read into."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from attrs import frozen

from ragleaklab_core.contracts.members import (
    Member,
    callable_member,
    has_member,
    present_members,
)
from ragleaklab_core.values import Document, Response

GROUP = "ragleaklab.targets"


@runtime_checkable
class Target(Protocol):
    """The RAG system under test.

    Group ``ragleaklab.targets``. It answers a query with an answer and, when it can, the documents
    it retrieved; it may accept the pack's documents to ingest before the cases run. A target
    may define only the asynchronous forms (``aanswer`` without ``answer``, ``aingest`` without
    ``ingest``): the loader accepts either form of each. The runner builds a fresh target for
    every pack, so one pack's documents never leak into another's run, and calls its optional
    ``close()`` when the pack is done.

    Optional members the core reads when present (``aanswer``, ``aingest``, ``reset``/``areset``,
    ``close``/``aclose``, a ``principal`` keyword, ``carries_principal``, ``isolation``,
    ``thread_safe``, ``ingest_scope``, ``answer_case``...) are declared, with their meaning, in
    :data:`TARGET_MEMBERS`, and read once at load into :class:`TargetTraits`. A case with a
    principal is never asked anonymously: a pack with one is refused before the run
    (``PrincipalUnsupported``, exit 3) on a target that cannot carry it.

    A target reports failures by raising: the runner records the case as errored with the
    exception's message, so messages must never contain secrets.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2
        A target may define ``aanswer`` and ``aingest`` alone.
    """

    def ingest(self, documents: Iterable[Document]) -> Any:
        """Load *documents* into the system under test (a no-op for systems that cannot)."""
        ...

    def answer(self, query: str) -> Response:
        """Answer *query* and report what was retrieved."""
        ...


#: The optional members of a target (group ``ragleaklab.targets``).
TARGET_MEMBERS: tuple[Member, ...] = (
    Member(
        "aanswer",
        "async method",
        "aanswer(query) -> Response: an asynchronous answer, used instead of answer; the runner "
        "then asks up to run.concurrency cases at once. A target may define it alone",
        "0.1",
    ),
    Member(
        "aingest",
        "async method",
        "aingest(documents): asynchronous ingest, used instead of ingest; a target may define it "
        "alone",
        "0.1",
    ),
    Member("close", "method", "close(): release clients when the pack is done", "0.1"),
    Member("aclose", "async method", "aclose(): asynchronous close, used instead of it", "0.1"),
    Member(
        "reset",
        "method",
        "reset(): remove what ingest planted, called before close (even after a partial ingest)",
        "0.1",
    ),
    Member("areset", "async method", "areset(): asynchronous reset, used instead of it", "0.1"),
    Member(
        "principal",
        "parameter",
        "a keyword parameter of answer (of aanswer when the target has it): the target can ask as "
        "a case's principal (a user or tenant id); a pack with one is refused on a target without "
        "it",
        "0.2",
    ),
    Member(
        "carries_principal",
        "attribute",
        "bool: False when support for principals depends on options and they do not carry one "
        "(the http target without {principal} in a template); True when they always do; absent: "
        "the target judges per case",
        "0.2",
    ),
    Member(
        "isolation",
        "attribute",
        '"fresh" (a new instance holds no earlier pack\'s state), "reset" (reset removes what '
        'ingest planted) or "shared" (ingested documents outlive it); absent: "reset" with a reset '
        'hook, else "fresh"',
        "0.2",
    ),
    Member(
        "thread_safe",
        "attribute",
        "bool: a synchronous answer may run on worker threads, up to run.concurrency at once",
        "0.2",
    ),
    Member(
        "ingest_scope",
        "attribute",
        '"process" (documents live in the target instance: each Ray worker ingests, the default) '
        'or "system" (an external system every process reaches: the driver ingests once)',
        "0.2",
    ),
    Member(
        "answer_case",
        "method",
        "answer_case(test_id, epoch, query, principal=None) -> Response: answers by case and "
        "epoch (a replayed recording); used instead of answer and aanswer",
        "0.2",
    ),
    Member(
        "plants_into",
        "attribute",
        "str | None: the identity of the store ingest plants into when what it plants outlives "
        "the process (a directory and collection, a database without its password, a service's "
        "URL without credentials); None: nothing outlives it. Never a secret",
        "0.3",
    ),
    Member(
        "planted_ids",
        "method",
        "planted_ids(documents, *, run) -> Sequence[str]: the ids the next ingest gives the "
        "documents, as the store knows them (run is unique to the run and pack); recorded in "
        "<out>/planted.jsonl before ingest. With plants_into, a target must define it. The "
        "same documents and run must give the same ids again: `ragleaklab cleanup` removes "
        "only the ids it derives again from the ledger's run and pack",
        "0.3",
    ),
    Member(
        "remove_planted",
        "method",
        "remove_planted(ids) -> Sequence[str]: remove those ids from the store; return the ones "
        "it still holds ([] when it cannot tell). Used by `ragleaklab cleanup` and by a later run "
        "in the same output directory",
        "0.3",
    ),
    Member(
        "aremove_planted",
        "async method",
        "aremove_planted(ids): asynchronous remove_planted, used instead of it",
        "0.3",
    ),
    Member(
        "planted_runs",
        "method",
        "planted_runs(ids) -> Mapping[str, str | None] | None: for each of ids the store holds, "
        "the ragleaklab_run tag its metadata carries (None: untagged); ids it does not hold left "
        "out; None: the store cannot tell. Before removing what a ledger lists, an id held "
        "untagged or tagged by another run is left alone",
        "0.3",
    ),
    Member(
        "aplanted_runs",
        "async method",
        "aplanted_runs(ids): asynchronous planted_runs, used instead of it",
        "0.3",
    ),
    Member(
        "transport_failure",
        "exception attribute",
        "bool on an exception the target raises: True when the system could not be reached "
        "(consecutive ones stop the pack), False when it answered badly; absent: the standard "
        "library's connection errors and time-outs count",
        "0.2",
    ),
)

#: The isolations a target may declare (its ``isolation``).
ISOLATIONS = ("fresh", "reset", "shared")
#: The ingest scopes a target may declare (its ``ingest_scope``).
INGEST_SCOPES = ("process", "system")


#: Members that stand for each other: an async-only target's ``aanswer`` is not a misspelt
#: ``answer``, and either form of a hook serves.
_ASYNC = ("answer", "ingest", "close", "reset", "remove_planted")
ALTERNATIVES: Mapping[str, str] = {
    **{m: f"a{m}" for m in _ASYNC},
    **{f"a{m}": m for m in _ASYNC},
}


@frozen
class TargetTraits:
    """What a target declares beyond ``ingest`` and ``answer`` (:data:`TARGET_MEMBERS`), read
    once at load.

    Attributes:
        answer, aanswer, ingest, aingest, answer_case: Whether it has each method (an async
            form is used instead of the plain one).
        reset, areset, close, aclose: Whether it has each callable hook.
        thread_safe: Whether a synchronous answer may run on worker threads.
        isolation: How it keeps packs apart (declared, or derived from its reset hooks).
        ingest_scope: Where its documents live.
        accepts_principal: Whether the answering method takes a ``principal`` keyword.
        carries_principal: Its declaration, or None.
        planted_ids, remove_planted, aremove_planted: Whether it has each method (what it plants
            outlives the process when its ``plants_into``, read when it is used, names a store).
        planted_runs, aplanted_runs: Whether it can read back the run a planted id is tagged
            with (checked before a ledger's ids are removed).
        present: The optional members it defines.
    """

    answer: bool = True
    aanswer: bool = False
    ingest: bool = True
    aingest: bool = False
    answer_case: bool = False
    reset: bool = False
    areset: bool = False
    close: bool = False
    aclose: bool = False
    thread_safe: bool = False
    isolation: str = "fresh"
    ingest_scope: str = "process"
    accepts_principal: bool = False
    carries_principal: bool | None = None
    planted_ids: bool = False
    remove_planted: bool = False
    aremove_planted: bool = False
    planted_runs: bool = False
    aplanted_runs: bool = False
    present: frozenset[str] = frozenset()

    @property
    def principal_support(self) -> bool | None:
        """Whether it can ask as a principal as far as is known before a run: False without the
        keyword or when it declares ``carries_principal = False``; None: it judges per case."""
        if not self.accepts_principal:
            return False
        return self.carries_principal


def _accepts_principal(target: Any) -> bool:
    # The signature is the declaration, rather than a flag, because a target cannot then claim
    # support its method does not have; **kwargs does not count (a wrapper that forwards
    # everything may drop it on the floor).
    method = getattr(target, "aanswer", None) or getattr(target, "answer", None)
    if method is None:
        return False
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):  # a builtin or extension method: no signature to read
        return False
    parameter = parameters.get("principal")
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def target_traits(target: Any) -> TargetTraits:
    """Read a target's optional members (:data:`TARGET_MEMBERS`)."""
    reset, areset = callable_member(target, "reset"), callable_member(target, "areset")
    isolation = getattr(target, "isolation", None)
    if isolation not in ISOLATIONS:
        isolation = "reset" if reset or areset else "fresh"
    scope = getattr(target, "ingest_scope", "process")
    carries = getattr(target, "carries_principal", None)
    return TargetTraits(
        answer=callable_member(target, "answer"),
        aanswer=has_member(target, "aanswer"),
        ingest=callable_member(target, "ingest"),
        aingest=has_member(target, "aingest"),
        answer_case=has_member(target, "answer_case"),
        reset=reset,
        areset=areset,
        close=callable_member(target, "close"),
        aclose=callable_member(target, "aclose"),
        thread_safe=bool(getattr(target, "thread_safe", False)),
        isolation=str(isolation),
        ingest_scope=scope if scope in INGEST_SCOPES else "process",
        accepts_principal=_accepts_principal(target),
        carries_principal=carries if isinstance(carries, bool) else None,
        planted_ids=callable_member(target, "planted_ids"),
        remove_planted=callable_member(target, "remove_planted"),
        aremove_planted=callable_member(target, "aremove_planted"),
        planted_runs=callable_member(target, "planted_runs"),
        aplanted_runs=callable_member(target, "aplanted_runs"),
        present=present_members(target, TARGET_MEMBERS),
    )


__all__ = [
    "ALTERNATIVES",
    "GROUP",
    "INGEST_SCOPES",
    "ISOLATIONS",
    "TARGET_MEMBERS",
    "Target",
    "TargetTraits",
    "target_traits",
]
