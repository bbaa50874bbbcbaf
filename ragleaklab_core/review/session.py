"""One reviewer's labelling of a run: what the review page shows and what it writes.

Each reviewer has a review file of their own, ``RUN_DIR/review/<name>.jsonl``, in the format of
``ragleaklab label export`` (so ``ragleaklab label import`` reads it as it is) with three more
keys per row: ``skipped`` (set aside for later), ``labelled_by`` (the reviewer) and
``label_source`` (``human``). Every judgement rewrites that file atomically (a new file,
flushed to disk, renamed over the old one) before the page is told it was saved: a server killed
at any moment leaves the file as it was after the last acknowledged judgement, and starting it
again resumes at the first case that has no label.

Why a file per reviewer and not one shared file: two people labelling at once never overwrite
each other, each file is a complete labels source on its own (``label import``), and their
agreement is measured between files (:mod:`ragleaklab_core.stats.agreement`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence, Set
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from ragleaklab_core._atomic import write_atomic
from ragleaklab_core.calibration.labelling import ReviewRow, RunRecords, read_run, review_rows
from ragleaklab_core.errors import InputError
from ragleaklab_core.inputs import LABELS, jsonl_records
from ragleaklab_core.run.case_kinds import families_of, kind_of
from ragleaklab_core.values import Document, JudgedDocument

#: Where the reviewers' files live, inside the run directory.
REVIEW_DIR = "review"
#: A reviewer's name: it names their file, so letters, digits, ".", "_" and "-" only.
_REVIEWER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: What a reviewer may say of a case: a label, or "set aside for later".
SKIP = "skip"
#: A ground-truth string shorter than this is not highlighted (it would match everywhere).
MIN_HIGHLIGHT = 4
#: Characters of a retrieved document the page shows (the whole document is in the pack).
DOCUMENT_CHARS = 4000


def check_reviewer(name: str) -> str:
    """*name* if it can name a review file, else a :class:`InputError` saying why."""
    if not _REVIEWER.fullmatch(name):
        raise InputError(
            f"reviewer name {name!r} must be 1-64 letters, digits, '.', '_' or '-', starting "
            "with a letter or digit (it names the reviewer's file)",
            source="--reviewer",
        )
    return name


def review_path(run_dir: Path, reviewer: str) -> Path:
    """The review file of *reviewer* for the run in *run_dir*."""
    return run_dir / REVIEW_DIR / f"{check_reviewer(reviewer)}.jsonl"


@frozen
class CaseView:
    """A case as the page shows it: everything a reviewer needs, nothing that decides."""

    index: int
    pack: str
    test_id: str
    query: str
    answers: tuple[str, ...]
    retrieved: tuple[tuple[JudgedDocument, ...] | None, ...]
    highlights: tuple[tuple[str, str], ...]
    kind: str | None
    families: tuple[str, ...]
    hard: tuple[str, ...]
    outcome: str
    metric_values: Mapping[str, Any]
    evidence: Mapping[str, Any]
    errors: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "pack": self.pack,
            "test_id": self.test_id,
            "query": self.query,
            "answers": list(self.answers),
            "retrieved": [
                None if docs is None else [_shown(d) for d in docs] for docs in self.retrieved
            ],
            "highlights": [{"text": t, "kind": k} for t, k in self.highlights],
            "kind": self.kind,
            "families": list(self.families),
            "hard": list(self.hard),
            "outcome": self.outcome,
            "metric_values": dict(self.metric_values),
            "evidence": dict(self.evidence),
            "errors": list(self.errors),
        }


def _shown(doc: JudgedDocument) -> dict[str, Any]:
    text = doc.text
    if text is not None and len(text) > DOCUMENT_CHARS:  # cut, and saying so where it is cut
        text = (
            f"{text[:DOCUMENT_CHARS]} [... cut here: the document is {len(text)} characters; "
            "the pack or the target holds it whole]"
        )
    return {"doc_id": doc.doc_id, "kind": doc.kind, "text": text}


def retrieved_documents(
    record: Mapping[str, Any], documents: Mapping[str, Document]
) -> tuple[JudgedDocument, ...] | None:
    """What one epoch's record retrieved, in rank order, each with its kind, text and metadata
    from the pack's *documents* (a text the target reported wins); None when it reported
    nothing."""
    raw = record.get("retrieved")
    if raw is None:
        return None
    found = []
    for item in raw:
        doc_id = str(item.get("doc_id"))
        known = documents.get(doc_id)
        reported = item.get("text")
        text = str(reported) if reported else (known.text if known else None)
        if known is None:
            found.append(JudgedDocument(doc_id, None, text))
        else:
            found.append(JudgedDocument(doc_id, known.kind, text, dict(known.metadata)))
    return tuple(found)


#: Ground-truth keys whose strings are what harm looks like (marked as such), and keys whose
#: strings are the truth (marked apart); other keys (a topic, a tenant) are not marked.
_HARM_KEYS = re.compile(r"poison|sentinel|protected|secret|canary|forbidden|private|planted|leak")
_TRUTH_KEYS = re.compile(r"true|expected|legit|correct")


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, Mapping):
        for name, item in value.items():
            yield from _strings(item, f"{key}.{name}")
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, key)


def highlight_terms(
    ground_truth: Mapping[str, Any], doc_ids: Sequence[str]
) -> tuple[tuple[str, str], ...]:
    """The strings of a case's ground truth worth marking where they occur, as ``(text, kind)``,
    longest first: ``harm`` for what a successful attack shows (a planted sentinel, a poison
    claim, a protected value), ``truth`` for what a sound answer says. Document ids are left
    out (they are shown as ids), and so are strings under other keys (a topic, a tenant)."""
    ids = set(doc_ids)
    found: dict[str, str] = {}
    for key, raw in _strings(ground_truth):
        text = raw.strip()
        if not MIN_HIGHLIGHT <= len(text) <= 300 or text in ids:
            continue
        kind = "harm" if _HARM_KEYS.search(key) else "truth" if _TRUTH_KEYS.search(key) else None
        if kind is not None and found.get(text) != "harm":
            found[text] = kind
    return tuple(sorted(found.items(), key=lambda item: (-len(item[0]), item[0])))


@frozen
class PackMaterial:
    """What a pack holds that the review page and the judges read."""

    pack_type: str
    description: str
    documents: Mapping[str, Document]  # by id
    cases: Mapping[str, Any]  # test_id -> Case


def pack_material(name: str, options: Mapping[str, Any]) -> PackMaterial | None:
    """The pack *name* built with *options*, or None when it cannot be loaded here (the page
    then shows ids only, and says so)."""
    from ragleaklab_core._discovery import load_plugin, pack_info
    from ragleaklab_core.errors import RagleaklabError

    try:
        pack = load_plugin("ragleaklab.packs", name, dict(options)).obj
        info = pack_info(pack)
        documents = {d.doc_id: d for d in pack.documents()}
        cases = {c.test_id: c for c in pack.cases()}
    except (RagleaklabError, OSError, ValueError):
        return None
    return PackMaterial(info.pack_type, info.description, documents, cases)


def run_packs(report: Mapping[str, Any]) -> dict[str, PackMaterial | None]:
    """Every pack of a run's report, loaded with the options the run used."""
    found: dict[str, PackMaterial | None] = {}
    for entry in report.get("packs") or []:
        if isinstance(entry, dict):
            plugin = entry.get("plugin") or {}
            found[str(entry.get("name"))] = pack_material(
                str(entry.get("name")), plugin.get("options") or {}
            )
    return found


def case_views(run: RunRecords, rows: Sequence[ReviewRow]) -> tuple[list[CaseView], list[str]]:
    """Every case of *run*, in its order, beside its review rows (:func:`review_rows` of the
    same run, whose values, evidence and errors it shows), and warnings for the page (a pack
    that could not be loaded, so its documents show as ids)."""
    outcomes: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in run.report.get("packs") or []:
        if isinstance(entry, dict):
            for result in entry.get("case_results") or []:
                if isinstance(result, dict):
                    outcomes[(str(entry.get("name")), str(result.get("test_id")))] = result
    material = run_packs(run.report)
    warnings = [
        f"pack {name!r} cannot be loaded here: its documents are shown by id only"
        for name, found in material.items()
        if found is None
    ]
    views = []
    for index, (row, epochs) in enumerate(zip(rows, run.grouped.values(), strict=True)):
        found = material.get(row.pack)
        documents = found.documents if found is not None else {}
        case = found.cases.get(row.test_id) if found is not None else None
        result = outcomes.get((row.pack, row.test_id), {})
        tags = tuple(str(t) for t in (result.get("tags") or (case.tags if case else ())))
        views.append(
            CaseView(
                index=index,
                pack=row.pack,
                test_id=row.test_id,
                query=row.query,
                answers=tuple(str(r.get("answer") or "") for r in epochs),  # whole, not cut
                retrieved=tuple(retrieved_documents(r, documents) for r in epochs),
                highlights=highlight_terms(case.ground_truth, list(documents)) if case else (),
                kind=kind_of(tags),
                families=tuple(families_of(tags)),
                hard=tuple(sorted(t.removeprefix("hard:") for t in tags if t.startswith("hard:"))),
                outcome=str(result.get("outcome") or ("error" if row.errors else "?")),
                metric_values=row.metric_values,
                evidence=row.evidence,
                errors=row.errors,
            )
        )
    return views, warnings


@frozen
class Mark:
    """What one reviewer said of one case: ``positive``, ``negative``, ``skip`` or nothing."""

    label: str = ""
    notes: str = ""

    @property
    def decided(self) -> bool:
        return self.label in LABELS


def decided_in_both(
    first: Mapping[tuple[str, str], Mark], second: Mapping[tuple[str, str], Mark]
) -> list[tuple[str, str]]:
    """The cases two labellers both gave a label (not skipped, not left empty), sorted."""
    both = first.keys() & second.keys()
    return sorted(k for k in both if first[k].decided and second[k].decided)


def read_marks(path: Path) -> dict[tuple[str, str], Mark]:
    """The marks of a review file (every row, labelled or not), keyed by (pack, test_id).

    Raises:
        InputError: A row without pack/test_id, a label that is neither a label nor empty, or a
            case twice, named by file and line.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=str(path)) from None
    marks: dict[tuple[str, str], Mark] = {}
    if not raw.strip():
        return marks
    _, records = jsonl_records(raw, source=str(path))
    for number, row in records:
        pack, test_id = row.get("pack"), row.get("test_id")
        if not (isinstance(pack, str) and isinstance(test_id, str) and test_id):
            raise InputError("a row without its pack and test_id", source=str(path), line=number)
        label = str(row.get("label") or "").strip().lower()
        if label not in (*LABELS, ""):
            raise InputError(
                f'field \'label\' must be "positive", "negative" or empty, got {label!r}',
                source=str(path),
                line=number,
            )
        if (pack, test_id) in marks:
            raise InputError(
                f"case {test_id!r} of pack {pack!r} is in the file twice",
                source=str(path),
                line=number,
            )
        skipped = bool(row.get("skipped")) and not label
        marks[(pack, test_id)] = Mark(SKIP if skipped else label, str(row.get("notes") or ""))
    return marks


class ReviewSession:
    """One reviewer's labelling of a run, kept in their review file after every change.

    Thread-safe: the page's requests are served concurrently, and every change is applied and
    written under one lock, in the order the requests arrive.
    """

    def __init__(
        self, run_dir: Path, reviewer: str, only: Set[tuple[str, str]] | None = None
    ) -> None:
        """*only*: the (pack, test_id) to review (a plan's sample); default every case.

        Raises:
            InputError: *only* names a case the run does not have, or the reviewer's file holds
                one outside the cases reviewed (another run's review, or another plan's).
        """
        self.run_dir = run_dir
        self.reviewer = check_reviewer(reviewer)
        self.path = review_path(run_dir, reviewer)
        run = read_run(run_dir)
        rows = review_rows(run)
        views, self.warnings = case_views(run, rows)
        if only is not None:
            present = {(v.pack, v.test_id) for v in views}
            missing = sorted(only - present)
            if missing:
                raise InputError(
                    f"the plan picks {len(missing)} case(s) this run does not have (such as "
                    f"{missing[0][1]!r} of pack {missing[0][0]!r}): it was made for another run",
                    source="--plan",
                )
            keep = [i for i, v in enumerate(views) if (v.pack, v.test_id) in only]
            views = [attrs.evolve(views[i], index=n) for n, i in enumerate(keep)]
            rows = [rows[i] for i in keep]
        self.views = views
        self._rows = [row.to_dict() for row in rows]
        keys = [(v.pack, v.test_id) for v in self.views]
        stored = read_marks(self.path)
        known = set(keys)
        unknown = [k for k in stored if k not in known]
        if unknown:
            pack, test_id = unknown[0]
            raise InputError(
                f"holds {len(unknown)} case(s) this run does not have (such as {test_id!r} of "
                f"pack {pack!r}): it is another run's review, or another plan's",
                source=str(self.path),
            )
        self._marks = [stored.get(key, Mark()) for key in keys]
        self._undo: list[tuple[int, Mark]] = []
        self._lock = threading.Lock()

    # --- reading ----------------------------------------------------------------------------

    def resume_at(self) -> int:
        """The first case without a label and not set aside, else the first set aside, else 0."""
        with self._lock:
            for wanted in ("", SKIP):
                for i, mark in enumerate(self._marks):
                    if mark.label == wanted:
                        return i
            return 0

    def state(self) -> dict[str, Any]:
        """What the page needs after every change: each case's mark and the progress."""
        with self._lock:
            labelled = sum(1 for m in self._marks if m.decided)
            skipped = sum(1 for m in self._marks if m.label == SKIP)
            return {
                "reviewer": self.reviewer,
                "file": self.path.as_posix(),
                "marks": [m.label for m in self._marks],
                "notes": [m.notes for m in self._marks],
                "labelled": labelled,
                "skipped": skipped,
                "total": len(self._marks),
                "can_undo": bool(self._undo),
            }

    # --- changing ---------------------------------------------------------------------------

    def judge(self, index: int, label: str, notes: str | None = None) -> None:
        """Set case *index*'s mark to *label* (``positive``, ``negative``, ``skip``) and save.

        Raises:
            InputError: An unknown label or index.
        """
        if label not in (*LABELS, SKIP):
            raise InputError(f"label must be positive, negative or skip, got {label!r}")
        with self._lock:
            self._check(index)
            before = self._marks[index]
            self._replace(index, Mark(label, before.notes if notes is None else notes))
            self._undo.append((index, before))

    def undo(self) -> int | None:
        """Take the last change back and save; the case it touched, or None if none is left."""
        with self._lock:
            if not self._undo:
                return None
            index, before = self._undo[-1]
            self._replace(index, before)
            self._undo.pop()  # only once the file holds the undone state
            return index

    def _replace(self, index: int, mark: Mark) -> None:
        """Set case *index*'s mark and save; on a failed save the mark is put back (the page is
        told the change failed, so nothing may be half done)."""
        previous = self._marks[index]
        self._marks[index] = mark
        try:
            self._save()
        except BaseException:
            self._marks[index] = previous
            raise

    def _check(self, index: int) -> None:
        if not 0 <= index < len(self._marks):
            raise InputError(f"no case {index} (the run has {len(self._marks)})")

    def _save(self) -> None:
        lines = []
        for row, mark in zip(self._rows, self._marks, strict=True):
            record = dict(row)
            record["label"] = mark.label if mark.decided else ""
            record["notes"] = mark.notes
            record["skipped"] = mark.label == SKIP
            record["labelled_by"] = self.reviewer
            record["label_source"] = "human"
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, "".join(lines).encode())


__all__ = [
    "REVIEW_DIR",
    "SKIP",
    "CaseView",
    "Mark",
    "PackMaterial",
    "ReviewSession",
    "case_views",
    "check_reviewer",
    "decided_in_both",
    "highlight_terms",
    "pack_material",
    "read_marks",
    "retrieved_documents",
    "review_path",
    "run_packs",
]
