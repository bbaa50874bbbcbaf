"""Record a run's answers and replay them later, with no target and no network.

``ragleaklab run --record DIR`` stores, for every pack, each case's query and the target's full
response (answer, retrieved documents with text and scores, the target's metadata) at the
target interface, plus the target's provenance with secret-looking options redacted.
``--replay DIR`` builds no target at all: each case is answered from the recording, so a CI job
can re-score a recorded run deterministically (new thresholds, new fitters).

A replay of something else is refused before anything is asked (:meth:`Replay.check_pack`,
exit 2): a recording made on another pack version (its cases and documents may differ), with
other metric options than the replaying run's (the recording stores each metric's requested
options, secrets redacted), or lacking a case and epoch the run selects (or holding another
query for it): a case answered from the wrong recording, or skipped, is never a pass.

A case the target failed (or the run stopped before asking) is recorded too, with its error
instead of a response: the error's kind and its message as the run reported it (secrets
redacted), and whether it was a failure to reach the system. A replay raises it again
(:class:`RecordedError`), so the replayed run errors the same cases, stops where the recorded
one stopped, and ends with the same verdict; :meth:`Replay.errored_note` says which cases
errored in the recording and why. Recordings made before errors were recorded hold no such
line and replay as before (a case the service failed is missing from them, and refused).

Layout::

    DIR/recording.json          {"format", "version",
                                 "packs": {pack: {target, pack_version, metrics, file}}}
    DIR/<pack>.jsonl            {"test_id", "epoch", "query", "response": {...}} per line, or
                                {"test_id", "epoch", "query",
                                 "error": {"kind", "message", "transport_failure", "not_asked"}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from attrs import define, field, frozen

from ragleaklab_core._atomic import write_atomic
from ragleaklab_core._discovery import TARGETS, LoadedPlugin
from ragleaklab_core._redact import mask_secrets, redact
from ragleaklab_core._wellformed import lone_surrogate_path
from ragleaklab_core.errors import ConfigError, InputError
from ragleaklab_core.run.records import NOT_ASKED
from ragleaklab_core.values import Case, PackInfo, Response, RetrievedDocument

if TYPE_CHECKING:
    from collections.abc import Iterable

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


def masked_response(response: Response) -> dict[str, Any]:
    """:func:`_response_dict` as it may be written: every registered secret (one the system
    echoed in its answer, a retrieved text or its metadata) replaced by ``***``; ``"masked"``
    lists the parts altered (``response.answer``, ``response.retrieved``, ``response.metadata``)."""
    data = _response_dict(response)
    masked = []
    for part in ("answer", "retrieved", "metadata"):
        data[part], changed = mask_secrets(data[part])
        if changed:
            masked.append(f"response.{part}")
    if masked:
        data["masked"] = masked
    return data


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


def metric_options(
    info: PackInfo, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """The options each metric of pack *info* is asked to score with (the pack's own, with the
    run's ``[metrics.NAME]`` *overrides* over them), secrets redacted: what a recording stores
    and a replay must match."""
    overrides = overrides or {}
    requested = {
        name: {**info.metric_options.get(name, {}), **(overrides.get(name) or {})}
        for name in sorted(info.metrics)
    }
    # Through JSON, as the recording holds them: tuples and lists compare alike.
    return json.loads(
        json.dumps(redact(requested), ensure_ascii=False, sort_keys=True, default=str)
    )


@define
class Recorder:
    """Collects every answer of a run, streaming each to ``<pack>.jsonl.partial`` as it comes
    and writing ``<pack>.jsonl`` when the pack is done.

    With *resume*, what an interrupted run recorded is kept: the finished packs of
    ``recording.json`` and the answers streamed so far, so the recording of a resumed run is as
    complete as that of an uninterrupted one.
    """

    directory: Path
    resume: bool = False
    _lines: dict[tuple[str, int], dict[str, Any]] = field(factory=dict, init=False)
    _index: dict[str, Any] = field(factory=dict, init=False)
    _pack: str | None = field(default=None, init=False)
    _stream: IO[str] | None = field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        if self.resume and (self.directory / INDEX).is_file():
            self._index = dict(Replay.open(self.directory).packs)

    def start_pack(self, pack: str) -> None:
        """Begin recording *pack* (with *resume*, from what was recorded of it before)."""
        self._lines.clear()
        self._pack = pack
        partial = self._partial(pack)
        if self.resume:
            for path in (self.directory / _pack_file(pack), partial):
                for line in _read_lines(path, missing_ok=True):
                    self._lines[(line["test_id"], line["epoch"])] = line
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._stream = partial.open("w", encoding="utf-8")
            for key in sorted(self._lines):  # what the partial file held, and the finished file
                self._stream.write(_dumps(self._lines[key]) + "\n")
            self._stream.flush()
        except OSError as exc:
            raise _unwritable(self.directory, exc) from None

    def add(self, case: Case, epoch: int, response: Response, masked: tuple[str, ...] = ()) -> None:
        """Record *response*, this run's secrets masked (*masked*: parts a Ray worker masked
        already, with secrets of its own environment)."""
        query, query_masked = mask_secrets(case.query)
        line: dict[str, Any] = {"test_id": case.test_id, "epoch": epoch, "query": query}
        if case.principal is not None:  # absent, not null: recordings of before stay the same
            line["principal"] = case.principal
        data = masked_response(response)
        parts = {*masked, *data.pop("masked", ()), *(("query",) if query_masked else ())}
        line["response"] = data
        if parts:  # absent unless text was altered: a replay refuses such a line
            line["masked"] = sorted(parts)
        self._put(line)

    def add_error(
        self,
        case: Case,
        epoch: int,
        error: Mapping[str, str],
        *,
        transport_failure: bool = False,
    ) -> None:
        """Record that the target failed on *case* (or the run did not ask it): *error* is the
        record's ``error`` (its message already redacted), so a replay errors it again."""
        query, _ = mask_secrets(case.query)
        message, _ = mask_secrets(str(error.get("message", "")))
        kind, _, _ = message.partition(":")
        line: dict[str, Any] = {"test_id": case.test_id, "epoch": epoch, "query": query}
        if case.principal is not None:
            line["principal"] = case.principal
        not_asked = error.get("group") == NOT_ASKED
        line["error"] = {
            "kind": "not asked" if not_asked else kind,
            "message": message,
            "transport_failure": transport_failure,
            "not_asked": not_asked,
        }
        self._put(line)

    def keep(self, record: Any) -> None:
        """A case answered before an interruption: keep its recorded answer (it is not asked
        again). Nothing to do when the recording already holds it."""
        if (record.test_id, record.epoch) in self._lines:
            return
        who = {} if record.principal is None else {"principal": record.principal}
        self._put(
            {
                "test_id": record.test_id,
                "epoch": record.epoch,
                "query": record.query,
                **who,
                "response": {
                    "answer": record.answer,
                    "retrieved": None
                    if record.retrieved is None
                    else [dict(r, text=r.get("text")) for r in record.retrieved],
                    "metadata": dict(record.target_metadata),
                },
                **_recorded_mask(record.masked),
            }
        )

    def _put(self, line: dict[str, Any]) -> None:
        self._lines[(line["test_id"], line["epoch"])] = line
        if self._stream is not None:
            self._stream.write(_dumps(line) + "\n")
            self._stream.flush()

    def _partial(self, pack: str) -> Path:
        return self.directory / (_pack_file(pack) + ".partial")

    def finish_pack(
        self,
        info: PackInfo,
        target: LoadedPlugin,
        metrics: Mapping[str, Any] | None = None,
    ) -> None:
        """Write ``<pack>.jsonl`` and update ``recording.json`` (both atomically).

        Args:
            metrics: The metrics' requested options (:func:`metric_options`); the pack's own
                when not given.
        """
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        lines = [self._lines[k] for k in sorted(self._lines)]
        self._lines.clear()
        text = "".join(_dumps(line) + "\n" for line in lines)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_atomic(self.directory / _pack_file(info.name), text.encode("utf-8"))
            self._index[info.name] = {
                "target": target.provenance(),
                "pack_version": info.version,
                "metrics": metric_options(info) if metrics is None else dict(metrics),
                "file": _pack_file(info.name),
            }
            index = {
                "format": FORMAT,
                "version": VERSION,
                "packs": dict(sorted(self._index.items())),
            }
            body = json.dumps(index, indent=2, ensure_ascii=False) + "\n"
            write_atomic(self.directory / INDEX, body.encode("utf-8"))
            self._partial(info.name).unlink(missing_ok=True)
        except OSError as exc:
            raise _unwritable(self.directory, exc) from None

    def close(self) -> None:
        """Stop streaming (an interrupted run keeps its partial file for ``--resume``)."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def _dumps(line: Mapping[str, Any]) -> str:
    """A recording line as JSON. A line holding a lone surrogate (a service may send one) is
    written with ASCII escapes (``\\ud800``): the recording keeps what the system said, and a
    replay makes it well-formed exactly as the recorded run did (``repaired`` included), where
    raw UTF-8 could not be written at all."""
    text = json.dumps(line, ensure_ascii=False)
    return text if lone_surrogate_path(text) is None else json.dumps(line)


# A record's masked fields, as a recording line names them.
_LINE_PARTS = {
    "query": "query",
    "answer": "response.answer",
    "retrieved": "response.retrieved",
    "target_metadata": "response.metadata",
}


def _recorded_mask(masked: tuple[str, ...]) -> dict[str, Any]:
    """The ``masked`` entry of a line kept from a record masked in *masked* (none if none)."""
    # Metrics' evidence and errors are not recorded; every other part is named as it is there.
    parts = sorted({_LINE_PARTS[m] for m in masked if m in _LINE_PARTS})
    return {"masked": parts} if parts else {}


def _unwritable(directory: Path, exc: OSError) -> InputError:
    return InputError(f"cannot write the recording: {exc.strerror or exc}", source=str(directory))


def _read_lines(path: Path, *, missing_ok: bool = False) -> list[dict[str, Any]]:
    """The lines of a recording file, validated; a torn last line (an interrupted write) of a
    partial file is dropped, any other malformed line names the file and line."""
    try:
        raw = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        if missing_ok:
            return []
        raise InputError("file not found", source=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    lines = []
    partial = path.name.endswith(".partial")
    for number, text in enumerate(raw, start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
            if "error" in line:  # a case the recorded run errored on
                _recorded_error(line["error"])
            else:
                _response(line["response"])  # validate now, not half-way through the run
            if not isinstance(line["test_id"], str) or not isinstance(line["epoch"], int):
                raise TypeError("test_id must be a string and epoch an integer")
            line["query"]
            if not isinstance(line.get("principal", ""), str):
                raise TypeError("principal must be a string")
        except (ValueError, KeyError, TypeError) as exc:
            if partial and number >= len(raw) - 1:
                break
            raise InputError(
                f"malformed recording line: {exc}", source=str(path), line=number
            ) from None
        lines.append(line)
    return lines


#: How the runner names a pack whose ingest failed (executor.LocalExecutor).
_INGEST_FAILED = "ingest failed: "


class RecordedError(Exception):
    """A replayed case the recorded run errored on: raised again, so it errors again. A
    failure to reach the system counts towards ``max_consecutive_failures`` as it did."""

    def __init__(self, message: str, *, transport_failure: bool, not_asked: bool = False) -> None:
        super().__init__(f"errored in the recording: {message}")
        self.transport_failure = transport_failure
        #: The recorded run never asked the case (it stopped first): not asked here either,
        #: with the recorded reason, so the pack is not tested as it was not there.
        self.not_asked = not_asked
        self.reason = f"{message.removeprefix('not asked: ')} (in the recording)"


def _recorded_error(data: Any) -> RecordedError:
    """The error of a recording line, checked."""
    if not isinstance(data, Mapping):
        raise TypeError("error must be an object")
    message, transport = data["message"], data.get("transport_failure", False)
    if not isinstance(message, str) or not isinstance(data["kind"], str):
        raise TypeError("error.kind and error.message must be strings")
    if not isinstance(transport, bool) or not isinstance(data.get("not_asked", False), bool):
        raise TypeError("error.transport_failure and error.not_asked must be true or false")
    return RecordedError(
        message, transport_failure=transport, not_asked=data.get("not_asked", False)
    )


def _who(principal: Any) -> str:
    return "no principal" if principal is None else f"principal {principal!r}"


@frozen
class _ReplayTarget:
    """Answers by (test_id, epoch) from a recording; never asks anything over a network."""

    source: str
    responses: Mapping[tuple[str, int], Mapping[str, Any]]

    def ingest(self, documents: Any) -> None:
        """Nothing to plant: the recorded target already had the documents. When its ingest
        failed (every recorded case not asked for that reason), it fails again here, so the
        pack stops as it did."""
        reasons = {
            str(line["error"].get("message", "")).removeprefix("not asked: ")
            for line in self.responses.values()
            if "error" in line and line["error"].get("not_asked") is True
        }
        failed = next(iter(reasons)) if len(reasons) == 1 else ""
        if failed.startswith(_INGEST_FAILED) and all(
            "error" in line for line in self.responses.values()
        ):
            raise RecordedError(failed.removeprefix(_INGEST_FAILED), transport_failure=False)

    def answer(self, query: str) -> Response:
        raise LookupError("a replayed recording answers by case, not by query")

    def answer_case(
        self, test_id: str, epoch: int, query: str, principal: str | None = None
    ) -> Response:
        line = self.responses.get((test_id, epoch))
        if line is None:
            raise LookupError(f"case {test_id!r} epoch {epoch} is not in the recording")
        if line["query"] != query:
            raise LookupError(f"case {test_id!r}: the recorded query differs from the pack's")
        # Who asked is part of the question: an answer given to one principal says nothing
        # about what another may see.
        if line.get("principal") != principal:
            raise LookupError(
                f"case {test_id!r}: the recorded principal differs from the pack's "
                f"({_who(line.get('principal'))} recorded, {_who(principal)} now)"
            )
        if "error" in line:
            raise _recorded_error(line["error"])
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

    def check_target(self, configured: Mapping[str, Any], *, source: str) -> None:
        """Refuse a config whose ``[target]`` is not the recorded one: a replay answers from the
        recording, so a different target (or other options) would silently be ignored."""
        name = configured.get("name")
        options = configured.get("options", {})
        options = options if isinstance(options, Mapping) else {}
        shown = redact(dict(options))
        for pack, entry in sorted(self.packs.items()):
            recorded = entry.get("target", {}) if isinstance(entry, Mapping) else {}
            if name is not None and name != recorded.get("name"):
                raise ConfigError(
                    source,
                    [
                        f"--replay: the config's target {name!r} is not the recorded target "
                        f"{recorded.get('name')!r} (pack {pack}); drop [target] or replay the "
                        "matching recording @ $.target.name"
                    ],
                )
            kept = recorded.get("options", {})
            differ = sorted(k for k in shown if k not in kept or kept[k] != shown[k])
            if differ:
                raise ConfigError(
                    source,
                    [
                        f"--replay: target option {k!r} differs from the recording (pack "
                        f"{pack}), and a replay cannot apply it @ $.target.options.{k}"
                        for k in differ
                    ],
                )

    def check_pack(
        self,
        info: PackInfo,
        cases: Iterable[Case],
        *,
        epochs: int,
        metrics: Mapping[str, Any],
    ) -> None:
        """Refuse, before anything is asked, to replay *info*'s *cases* (the selected ones) for
        *epochs* with *metrics* (:func:`metric_options`) from a recording of something else:
        another pack version, other metric options, or a case, epoch or query it lacks.

        Raises:
            InputError: Naming the pack, what was recorded and what is installed, and the fix.
        """
        entry = self.packs.get(info.name)
        where = str(self.directory / INDEX)
        if not isinstance(entry, Mapping):
            self.target_for(info.name)  # says which packs it has
            return
        recorded = entry.get("pack_version")
        if recorded != info.version:
            raise InputError(
                f"--replay: pack {info.name} was recorded at version {_shown(recorded)} and "
                f"version {info.version} is installed, so the recorded answers are answers to "
                f"other cases: record again with version {info.version} (ragleaklab run "
                f"--record), or install version {_shown(recorded)} of the pack to replay it "
                f"@ $.packs.{info.name}.pack_version",
                source=where,
            )
        kept = entry.get("metrics")
        if kept != dict(metrics):
            raise InputError(
                f"--replay: pack {info.name} was recorded with other metric options than this "
                f"run's ({_metric_change(kept, metrics)}): record again with these options "
                "(ragleaklab run --record), or set the recorded ones ([metrics.NAME] in the "
                f"config) @ $.packs.{info.name}.metrics",
                source=where,
            )
        lines = self._lines(info.name)
        missing, changed = [], []
        for case in cases:
            for epoch in range(epochs):
                line = lines.get((case.test_id, epoch))
                if line is None:
                    missing.append(f"{case.test_id} epoch {epoch}")
                elif line["query"] != case.query:
                    changed.append(case.test_id)
        for found, what in ((missing, "lacks"), (changed, "holds another query for")):
            if found:
                raise InputError(
                    f"--replay: the recording of pack {info.name} {what} {len(found)} of the "
                    f"cases this run selects ({', '.join(found[:5])}"
                    f"{f', +{len(found) - 5} more' if len(found) > 5 else ''}): a case it "
                    "cannot answer is never skipped or passed; record again with the same "
                    "selection (tags, --smoke) and --epochs, or replay with the recorded ones",
                    source=str(self.directory / _pack_file(info.name)),
                )

    def errored_note(self, pack: str, *, shown: int = 3) -> str | None:
        """``"replayed: 3 cases errored in the recording (case c1 epoch 0: ...)"``: which cases
        of *pack* the recorded run errored on and why, as the replay's summary says it; None
        when none did."""
        entry = self.packs.get(pack)
        if not isinstance(entry, Mapping):
            return None
        errored = sorted(
            (line["test_id"], line["epoch"], line["error"]["message"])
            for line in self._lines(pack).values()
            if "error" in line
        )
        if not errored:
            return None
        cases = len({test_id for test_id, _, _ in errored})
        named = "; ".join(
            f"case {test_id} epoch {epoch}: {_clip(message)}"
            for test_id, epoch, message in errored[:shown]
        )
        more = f"; +{len(errored) - shown} more" if len(errored) > shown else ""
        return (
            f"replayed: {cases} {'case' if cases == 1 else 'cases'} errored in the recording "
            f"({named}{more}); they error again here, as they did there"
        )

    def _lines(self, pack: str) -> dict[tuple[str, int], dict[str, Any]]:
        entry = self.packs[pack]
        path = self.directory / str(entry.get("file", _pack_file(pack)))
        lines = {(line["test_id"], line["epoch"]): line for line in _read_lines(path)}
        _refuse_masked(pack, path, lines.values())  # checked with the pack, before any is run
        return lines

    def target_for(self, pack: str) -> LoadedPlugin:
        """A target that answers *pack*'s cases from the recording, with the recorded provenance."""
        entry = self.packs.get(pack)
        if entry is None:
            raise InputError(
                f"pack {pack!r} is not in the recording (it has: {', '.join(sorted(self.packs))})",
                source=str(self.directory / INDEX),
            )
        path = self.directory / str(entry.get("file", _pack_file(pack)))
        responses = self._lines(pack)
        recorded = entry.get("target", {})
        return LoadedPlugin(
            group=TARGETS,
            name=str(recorded.get("name", "?")),
            target=str(recorded.get("target", "?")),
            provider=f"replay of {recorded.get('provider', '?')}",
            obj=_ReplayTarget(str(path), responses),
            options=dict(recorded.get("options", {})),
        )


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _shown(value: Any) -> str:
    return "(not recorded)" if value is None else str(value)


def _metric_change(kept: Any, metrics: Mapping[str, Any]) -> str:
    """What differs between the recorded metric options *kept* and the run's *metrics*."""
    from ragleaklab_core.gate.comparison import metric_option_changes  # only on a refusal

    if not isinstance(kept, Mapping):
        return "the recording holds none: it was made before recordings stored them"
    found = []
    for name, key, was, now in metric_option_changes(kept, metrics):
        if key is None:
            found.append(
                f"metric {name} "
                + ("recorded, not scored now" if was else "scored now, not recorded")
            )
        else:
            found.append(f"{name}.{key} {json.dumps(was)} recorded, {json.dumps(now)} now")
    return "; ".join(found)


def _refuse_masked(pack: str, path: Path, lines: Any) -> None:
    """Refuse to replay a recording in which a secret was masked: the metrics would score
    ``***`` where the system said the secret, and a case that leaked it could pass."""
    masked = sorted((line["test_id"], line["epoch"]) for line in lines if line.get("masked"))
    if not masked:
        return
    test_id, epoch = masked[0]
    raise InputError(
        f"--replay: {len(masked)} recorded answer(s) of pack {pack} had a secret of the "
        f"recording run masked (first: case {test_id!r} epoch {epoch}); a replay would score "
        "'***' instead of what the system said, so it is refused: keep the credential out of "
        "the system's answers and record again",
        source=str(path),
    )


__all__ = ["RecordedError", "Recorder", "Replay", "masked_response", "metric_options"]
