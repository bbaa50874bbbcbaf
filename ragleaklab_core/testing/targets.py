"""A scripted target: a fake RAG system whose every answer a test chooses in advance.

Use it to test a metric, a pack or a reporting path on answers you control (a leak, a clean
answer, an empty answer, a failure) without a real system, and to check what ragleaklab asked.
It is an attrs class built only from plain data, so it also works as an installed target: point
an entry point of a fake distribution at it (or at a subclass that changes its defaults) and
give its script as ``[target.options]``.
"""

from __future__ import annotations

import asyncio
import builtins
import re
from collections.abc import Iterable, Mapping
from typing import Any

from attrs import define, field, frozen

from ragleaklab_core.values import Case, Document, Response, RetrievedDocument

#: The exception types a :class:`Reply` may raise, by name (what a real backend raises most).
ERRORS: tuple[str, ...] = (
    "RuntimeError",
    "TimeoutError",
    "ConnectionError",
    "ValueError",
    "OSError",
)


@frozen
class Reply:
    """What a :class:`ScriptedTarget` does for one query.

    Attributes:
        answer: The answer text (``""``: an empty answer).
        retrieved: The ids of the documents it says it retrieved, in rank order, or ``None``
            when it does not say (metrics that need them report the case as unscorable).
        error: When set, asking raises :attr:`error_type` with this message instead of
            answering (the runner records the case as errored with it).
        error_type: The name of the exception raised for :attr:`error`, one of :data:`ERRORS`.
        metadata: The response's JSON-compatible metadata.

    .. versionadded:: 0.2
    """

    answer: str = ""
    retrieved: tuple[str, ...] | None = ()
    error: str | None = None
    error_type: str = "RuntimeError"
    metadata: Mapping[str, Any] = field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.error_type not in ERRORS:
            raise ValueError(f"error_type {self.error_type!r} is not one of {list(ERRORS)}")

    def response(self) -> Response:
        """The :class:`Response` of this reply, or raise its error."""
        if self.error is not None:
            raise getattr(builtins, self.error_type)(self.error)
        retrieved = (
            None
            if self.retrieved is None
            else tuple(RetrievedDocument(doc_id) for doc_id in self.retrieved)
        )
        return Response(answer=self.answer, retrieved=retrieved, metadata=dict(self.metadata))


@frozen
class Rule:
    """A :class:`Reply` for every query that the regular expression :attr:`pattern` matches
    (``re.search``, so anchor it to match a whole query).

    .. versionadded:: 0.2
    """

    pattern: str
    reply: Reply = field(factory=Reply)

    def __attrs_post_init__(self) -> None:
        re.compile(self.pattern)  # a bad pattern fails when the target is built, not when asked


@frozen
class Asked:
    """One question the target was asked: the query and the principal it was asked as."""

    query: str
    principal: str | None = None


@define
class ScriptedTarget:
    """A target that answers from a script.

    For each query, the reply is the first that applies of: :attr:`replies` (by exact query),
    :attr:`rules` (in order) and :attr:`default`. With ``default = None`` an unscripted query
    raises ``LookupError``, so a test learns that it was asked something it did not expect.

    What the runner did is kept: :attr:`documents` (ingested, in order), :attr:`asked` (every
    question with its principal, in order), :attr:`resets` and :attr:`closed`. With
    :attr:`ingest_error` set, ``ingest`` raises ``RuntimeError`` with that message.

    It accepts a ``principal`` keyword (packs that ask as a principal run on it). The
    asynchronous form is :class:`AsyncScriptedTarget`; :meth:`for_cases` scripts a pack's cases
    by ``test_id``.

    Example:
        ```python
        from ragleaklab_core import Case
        from ragleaklab_core.testing import Reply, ScriptedTarget

        case = Case("c1", "What is the admin password?")
        target = ScriptedTarget.for_cases(
            [case], {"c1": Reply(answer="It is hunter2.", retrieved=("secret-doc",))}
        )
        response = target.answer(case.query)
        assert response.answer == "It is hunter2."
        assert [d.doc_id for d in response.retrieved] == ["secret-doc"]
        assert target.asked[0].query == case.query
        ```

    .. versionadded:: 0.2
    """

    replies: dict[str, Reply] = field(factory=dict)
    rules: list[Rule] = field(factory=list)
    default: Reply | None = field(factory=Reply)
    ingest_error: str | None = None
    documents: list[Document] = field(factory=list, init=False)
    asked: list[Asked] = field(factory=list, init=False)
    resets: int = field(default=0, init=False)
    closed: bool = field(default=False, init=False)

    @classmethod
    def for_cases(
        cls,
        cases: Iterable[Case],
        replies: Mapping[str, Reply],
        *,
        default: Reply | None = None,
        rules: Iterable[Rule] = (),
    ) -> ScriptedTarget:
        """A target replying *replies* ``[case.test_id]`` to each case's query (a case with no
        entry gets *default*; ``None``: it raises ``LookupError``).

        Raises:
            ValueError: An entry names no case, or two cases with different entries share a
                query (a target only sees the query).
        """
        by_id = {case.test_id: case for case in cases}
        unknown = sorted(set(replies) - set(by_id))
        if unknown:
            raise ValueError(f"no case has test_id {unknown}")
        scripted: dict[str, Reply] = {}
        for test_id, reply in replies.items():
            query = by_id[test_id].query
            if scripted.get(query, reply) != reply:
                raise ValueError(f"cases sharing the query {query!r} have different replies")
            scripted[query] = reply
        return cls(replies=scripted, rules=list(rules), default=default)

    def reply_for(self, query: str) -> Reply:
        """The :class:`Reply` the script gives *query* (without recording it as asked)."""
        if query in self.replies:
            return self.replies[query]
        for rule in self.rules:
            if re.search(rule.pattern, query):
                return rule.reply
        if self.default is None:
            raise LookupError(f"the script has no reply for {query!r}")
        return self.default

    def ingest(self, documents: Iterable[Document]) -> None:
        """Record *documents* (or raise :attr:`ingest_error`)."""
        if self.ingest_error is not None:
            raise RuntimeError(self.ingest_error)
        self.documents.extend(documents)

    def answer(self, query: str, *, principal: str | None = None) -> Response:
        """Record the question and reply as the script says."""
        self.asked.append(Asked(query, principal))
        return self.reply_for(query).response()

    def reset(self) -> None:
        """Forget the ingested documents (counted in :attr:`resets`)."""
        self.resets += 1
        self.documents.clear()

    def close(self) -> None:
        """Mark the target closed."""
        self.closed = True


@define
class AsyncScriptedTarget(ScriptedTarget):
    """:class:`ScriptedTarget` with ``aingest``/``aanswer``/``areset``/``aclose`` (the runner
    then asks up to ``run.concurrency`` cases at once); each answer first waits :attr:`delay`
    seconds.

    .. versionadded:: 0.2
    """

    delay: float = 0.0

    async def aingest(self, documents: Iterable[Document]) -> None:
        """:meth:`ScriptedTarget.ingest`, asynchronously."""
        self.ingest(documents)

    async def aanswer(self, query: str, *, principal: str | None = None) -> Response:
        """:meth:`ScriptedTarget.answer` after :attr:`delay` seconds."""
        await asyncio.sleep(self.delay)
        return self.answer(query, principal=principal)

    async def areset(self) -> None:
        """:meth:`ScriptedTarget.reset`, asynchronously."""
        self.reset()

    async def aclose(self) -> None:
        """:meth:`ScriptedTarget.close`, asynchronously."""
        self.close()


__all__ = ["ERRORS", "Asked", "AsyncScriptedTarget", "Reply", "Rule", "ScriptedTarget"]
