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
