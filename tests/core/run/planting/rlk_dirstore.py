"""A store that outlives the process: one JSON file per document in a directory.

Test target for what a run plants (tests/core/run/test_planted*.py), installed as the
``dirstore`` target of a fake distribution so ``ragleaklab run`` in a subprocess can use it. It
keeps the promises a real vector store integration makes: ids are the ones planted_ids gave,
a document already held under an id is never overwritten, reset and remove_planted delete only
what this instance planted (or was asked to), planted_runs reads back each document's run tag,
and retrieval reads every document in the directory (the team's and other runs' too), by word
overlap.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from attrs import define, field

from ragleaklab_core import Response, RetrievedDocument
from ragleaklab_core.run.planted import RUN_TAG, ForeignPlanted, planted_id

WORD = re.compile(r"[a-z0-9]+")


@define
class UntaggedDirStoreTarget:
    """The store, through a target that cannot read tags back (as the http target cannot): only
    what the ledger's run and pack derive is removed."""

    directory: str
    delay: float = 0.0  # seconds per answer, so a test can signal a run mid-pack
    remove_delay: float = 0.0  # seconds per removal, so a test can signal during it
    fail_delete: bool = False
    _run: str | None = field(default=None, init=False)
    _ids: dict[str, str] = field(factory=dict, init=False)  # pack doc_id -> planted id

    @property
    def plants_into(self) -> str:
        return f"dirstore {Path(self.directory).as_posix()}"

    def planted_ids(self, documents, *, run):
        self._run = run
        self._ids = {d.doc_id: planted_id(run, d.doc_id) for d in documents}
        return [self._ids[d.doc_id] for d in documents]

    def ingest(self, documents) -> None:
        root = Path(self.directory)
        root.mkdir(parents=True, exist_ok=True)
        for d in documents:
            path = root / f"{self._ids[d.doc_id]}.json"
            if path.exists():
                raise RuntimeError(f"the store already holds id {path.stem}: not planted over")
            body = {"doc_id": d.doc_id, "text": d.text, RUN_TAG: self._run}
            path.write_text(json.dumps(body), encoding="utf-8")

    def answer(self, query: str) -> Response:
        time.sleep(self.delay)
        words = set(WORD.findall(query.lower()))
        scored = []
        for path in sorted(Path(self.directory).glob("*.json")):
            try:
                body = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # removed (or being written) by another process meanwhile
            overlap = len(words & set(WORD.findall(body["text"].lower())))
            scored.append((-overlap, body["doc_id"], body))
        scored.sort(key=lambda item: (item[0], item[1]))
        top = [body for _, _, body in scored[:5]]
        for body in top:
            tag = body.get(RUN_TAG)
            if tag is not None and tag != self._run:
                raise ForeignPlanted(f"retrieved a document planted by another run ({tag})")
        return Response(
            answer=top[0]["text"] if top else "",
            retrieved=tuple(
                RetrievedDocument(doc_id=b["doc_id"], text=b["text"], score=float(-s))
                for s, _, b in scored[:5]
            ),
        )

    def _delete(self, ids) -> list[str]:
        if self.fail_delete:
            raise RuntimeError("the store refused to delete")
        for i in ids:
            time.sleep(self.remove_delay)
            (Path(self.directory) / f"{i}.json").unlink(missing_ok=True)
        return [i for i in ids if (Path(self.directory) / f"{i}.json").exists()]

    def reset(self) -> None:
        self._delete(list(self._ids.values()))

    def remove_planted(self, ids):
        return self._delete(list(ids))


@define
class DirStoreTarget(UntaggedDirStoreTarget):
    """The store, through a target that reads back the run each document is tagged with."""

    def planted_runs(self, ids):
        """The run each id the directory holds is tagged with (None: a document untagged)."""
        found = {}
        for i in ids:
            path = Path(self.directory) / f"{i}.json"
            if "/" in i or "\\" in i or i in ("", ".", "..") or not path.is_file():
                continue
            found[i] = json.loads(path.read_text(encoding="utf-8")).get(RUN_TAG)
        return found
