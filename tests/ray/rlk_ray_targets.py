"""Targets for the Ray executor's tests, imported by the python target on the driver and on the
workers (this directory is on both paths)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ragleaklab_plugins.targets.reference import ReferenceTarget

from ragleaklab_core import Document, Response


class DyingReference:
    """The reference target, except that the first time it is asked *die_on* it ends its own
    process at once (as a worker lost mid-batch: no exception, no clean-up); *marker* is created
    first, so the case is answered normally when it is asked again."""

    def __init__(self, marker: str, die_on: str) -> None:
        self.inner = ReferenceTarget()
        self.marker = marker
        self.die_on = die_on

    def ingest(self, documents: Iterable[Document]) -> None:
        self.inner.ingest(documents)

    def answer(self, query: str) -> Response:
        if query == self.die_on:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os._exit(1)
        return self.inner.answer(query)

    def close(self) -> None:
        self.inner.close()


class BrokenIngest:
    """A target whose ingest always fails."""

    def ingest(self, documents: Iterable[Document]) -> None:
        raise RuntimeError("the index is read-only")

    def answer(self, query: str) -> Response:
        return Response(answer="never asked")


class Anonymous:
    """The reference target behind an ``answer(query)`` that takes no principal: given to the
    python target as a class (a factory), whether it can ask as a principal is known only once
    it is built."""

    def __init__(self) -> None:
        self.inner = ReferenceTarget()

    def ingest(self, documents: Iterable[Document]) -> None:
        self.inner.ingest(documents)

    def answer(self, query: str) -> Response:
        return self.inner.answer(query)

    def reset(self) -> None:
        self.inner.close()
        self.inner = ReferenceTarget()  # what the pack's ingest planted is gone with it

    def close(self) -> None:
        self.inner.close()


#: The same app built once, in the module: known before the run to take no principal.
ANONYMOUS = Anonymous()
