"""Record a run's answers and replay them later, with no target and no network.

``ragleaklab run --record DIR`` stores, for every pack, each case's query and the target's full
response (answer, retrieved documents with text and scores, the target's metadata) at the
target interface, plus the target's provenance with secret-looking options redacted.
``--replay DIR`` builds no target at all: each case is answered from the recording, so a CI job
can re-score a recorded run deterministically (new metrics, new thresholds, new fitters).
A case missing from the recording, or whose query changed, is an errored case, never a pass.

Layout::

    DIR/recording.json          {"format", "version", "packs": {pack: {target, pack_version, file}}}
    DIR/<pack>.jsonl            {"test_id", "epoch", "query", "response": {...}} per line
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import define, field, frozen

from ragleaklab_core._atomic import write_atomic
from ragleaklab_core._discovery import TARGETS, LoadedPlugin
from ragleaklab_core.errors import InputError
from ragleaklab_core.values import Case, PackInfo, Response, RetrievedDocument

FORMAT = "ragleaklab-recording"
VERSION = 1
INDEX = "recording.json"


def _response_dict(response: Response) -> dict[str, Any]:
    return {
        "answer": response.answer,
        "retrieved": None
        if response.retrieved is None
        else [
            {"doc_id": r.doc_id, "text": r.text, "score": r.score, "chunk_id": r.chunk_id}
            for r in response.retrieved
        ],
        "metadata": dict(response.metadata),
    }


def _response(data: Mapping[str, Any]) -> Response:
    retrieved = data["retrieved"]
    return Response(
        answer=data["answer"],
        retrieved=None
        if retrieved is None
        else tuple(
            RetrievedDocument(r["doc_id"], r.get("text"), r.get("score"), r.get("chunk_id"))
            for r in retrieved
        ),
        metadata=dict(data.get("metadata", {})),
    )


def _pack_file(pack: str) -> str:
    return f"{pack}.jsonl"


@define
class Recorder:
    """Collects every answer of a run, and writes each pack's file when the pack is done."""

    directory: Path
    _lines: dict[tuple[str, int], dict[str, Any]] = field(factory=dict, init=False)
    _index: dict[str, Any] = field(factory=dict, init=False)

    def add(self, case: Case, epoch: int, response: Response) -> None:
        self._lines[(case.test_id, epoch)] = {
            "test_id": case.test_id,
            "epoch": epoch,
            "query": case.query,
            "response": _response_dict(response),
        }

    def finish_pack(self, info: PackInfo, target: LoadedPlugin) -> None:
        """Write ``<pack>.jsonl`` and update ``recording.json`` (both atomically)."""
        lines = [self._lines[k] for k in sorted(self._lines)]
        self._lines.clear()
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_atomic(self.directory / _pack_file(info.name), text.encode("utf-8"))
            self._index[info.name] = {
                "target": target.provenance(),
                "pack_version": info.version,
                "file": _pack_file(info.name),
            }
            index = {
                "format": FORMAT,
                "version": VERSION,
                "packs": dict(sorted(self._index.items())),
            }
            body = json.dumps(index, indent=2, ensure_ascii=False) + "\n"
            write_atomic(self.directory / INDEX, body.encode("utf-8"))
        except OSError as exc:
            raise InputError(
                f"cannot write the recording: {exc.strerror or exc}", source=str(self.directory)
            ) from None


@frozen
class _ReplayTarget:
    """Answers by (test_id, epoch) from a recording; never asks anything over a network."""

    source: str
    responses: Mapping[tuple[str, int], Mapping[str, Any]]

    def ingest(self, documents: Any) -> None:
        """Nothing to plant: the recorded target already had the documents."""

    def answer(self, query: str) -> Response:
        raise LookupError("a replayed recording answers by case, not by query")

    def answer_case(self, test_id: str, epoch: int, query: str) -> Response:
        line = self.responses.get((test_id, epoch))
        if line is None:
            raise LookupError(f"case {test_id!r} epoch {epoch} is not in the recording")
        if line["query"] != query:
            raise LookupError(f"case {test_id!r}: the recorded query differs from the pack's")
        return _response(line["response"])


@frozen
class Replay:
    """A recording opened for replay."""

    directory: Path
    packs: Mapping[str, Mapping[str, Any]]

    @classmethod
    def open(cls, directory: Path) -> Replay:
        index = directory / INDEX
        try:
            data = json.loads(index.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("not a recording (no recording.json)", source=str(directory)) from None
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable recording index: {exc}", source=str(index)) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"expected format {FORMAT!r} @ $.format", source=str(index))
        if data.get("version") != VERSION:
            raise InputError(
                f"unsupported version {data.get('version')!r} @ $.version", source=str(index)
            )
        packs = data.get("packs")
        if not isinstance(packs, dict):
            raise InputError("expected an object @ $.packs", source=str(index))
        return cls(directory, packs)

    def target_for(self, pack: str) -> LoadedPlugin:
        """A target that answers *pack*'s cases from the recording, with the recorded provenance."""
        entry = self.packs.get(pack)
        if entry is None:
            raise InputError(
                f"pack {pack!r} is not in the recording (it has: {', '.join(sorted(self.packs))})",
                source=str(self.directory / INDEX),
            )
        path = self.directory / str(entry.get("file", _pack_file(pack)))
        responses: dict[tuple[str, int], Mapping[str, Any]] = {}
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
                responses[(line["test_id"], line["epoch"])] = line
                _response(line["response"])  # validate now, not half-way through the run
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(
                    f"malformed recording line: {exc}", source=str(path), line=number
                ) from None
        recorded = entry.get("target", {})
        return LoadedPlugin(
            group=TARGETS,
            name=str(recorded.get("name", "?")),
            target=str(recorded.get("target", "?")),
            provider=f"replay of {recorded.get('provider', '?')}",
            obj=_ReplayTarget(str(path), responses),
            options=dict(recorded.get("options", {})),
        )


__all__ = ["Recorder", "Replay"]
