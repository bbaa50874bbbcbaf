"""Label your own system: a run becomes a review file, a reviewed file becomes labels.jsonl.

A label says whether the attack *succeeded on a given system*. The built-in packs ship labels
observed on the reference target; on any other system they are at best a guess. The way to
calibrate honestly on your own system is to have someone (a person, or an LLM judge you trust)
look at what it actually answered:

1. ``ragleaklab run -o out/`` against your target;
2. ``ragleaklab label export out/`` writes ``out/review.jsonl`` (or ``.csv`` for a
   spreadsheet): one row per case with its query, the answer (every epoch), the retrieved ids,
   the metrics' values and evidence, and empty ``label`` and ``notes`` columns;
3. the reviewer fills ``label`` with ``positive`` (the attack succeeded: the system leaked,
   obeyed, asserted the poisoned claim) or ``negative`` for **every** row;
4. ``ragleaklab label import out/review.csv -o labels.jsonl`` checks the judgements and writes
   a labels file whose every line records where it came from: ``label_source`` (``human`` or
   ``judge``), who labelled it, and the target the answers came from (its name and a
   fingerprint of its options), so calibrating those labels against another target can be
   told apart.

A row left without a label is an error, never a silent drop: a calibration on the rows someone
found easy to judge would be biased towards them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from ragleaklab_core.errors import InputError
from ragleaklab_core.inputs import LABELS, jsonl_records

#: The sources a reviewed labels file may declare.
REVIEW_SOURCES = ("human", "judge")
#: Characters of each answer a review row keeps (the full answer stays in runs.jsonl).
ANSWER_CHARS = 2000


def shown_answer(answer: str) -> str:
    """*answer* as a review row keeps it: whole up to :data:`ANSWER_CHARS`, else cut there with
    a note that says so, so a person labelling the file never judges part of an answer unaware
    (a leak after a long preamble is past the cut)."""
    if len(answer) <= ANSWER_CHARS:
        return answer
    return (
        f"{answer[:ANSWER_CHARS]} [... cut here: the answer is {len(answer)} characters; "
        "runs.jsonl and `ragleaklab label review` show it whole]"
    )


#: The columns of a review file, in order.
COLUMNS = (
    "pack",
    "test_id",
    "query",
    "answers",
    "retrieved_ids",
    "metric_values",
    "evidence",
    "errors",
    "target",
    "label",
    "notes",
)
# Columns that hold JSON in a CSV review file (a list or an object per cell).
_JSON_COLUMNS = ("answers", "retrieved_ids", "metric_values", "evidence", "errors")
_FORMATS = {".jsonl": "jsonl", ".csv": "csv"}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def target_identity(target: Mapping[str, Any]) -> str:
    """``name@fingerprint``: the target plugin and a digest of its (redacted) options.

    Two runs against the same system with the same options get the same identity; any change of
    target or option gives another, which is what a label observed on one system needs.
    """
    name = str(target.get("name", "?"))
    digest = hashlib.sha256(_canonical(target.get("options", {})).encode()).hexdigest()
    return f"{name}@{digest[:12]}"


def review_format(path: Path) -> str:
    """``"jsonl"`` or ``"csv"`` from *path*'s suffix."""
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError("a review file must end in .jsonl or .csv", source=str(path))
    return fmt


@frozen
class ReviewRow:
    """One case of a run, as a reviewer sees it."""

    pack: str
    test_id: str
    query: str
    answers: tuple[str, ...]
    retrieved_ids: tuple[tuple[str, ...] | None, ...]
    metric_values: Mapping[str, Any]
    evidence: Mapping[str, Any]
    errors: tuple[str, ...]
    target: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "test_id": self.test_id,
            "query": self.query,
            "answers": list(self.answers),
            "retrieved_ids": [None if r is None else list(r) for r in self.retrieved_ids],
            "metric_values": dict(self.metric_values),
            "evidence": dict(self.evidence),
            "errors": list(self.errors),
            "target": self.target,
            "label": "",
            "notes": "",
        }


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found (is this a run directory?)", source=str(path)) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"cannot read: {exc}", source=str(path)) from None


@frozen
class RunRecords:
    """A run directory as read once: what the review file, the review page and the judges
    all build on.

    Attributes:
        directory: The run directory.
        report: Its report.json.
        identity: Its target's identity (:func:`target_identity`).
        grouped: Its runs.jsonl records grouped by (pack, test_id) in the file's order, each
            group sorted by epoch.
    """

    directory: Path
    report: Mapping[str, Any]
    identity: str
    grouped: Mapping[tuple[str, str], list[dict[str, Any]]]


def read_run(run_dir: Path) -> RunRecords:
    """The run in *run_dir* (its report.json and runs.jsonl), read once."""
    report = _read_json(run_dir / "report.json")
    target = report.get("target") if isinstance(report, dict) else None
    if not isinstance(target, dict):
        raise InputError(
            "$.target: missing; not a ragleaklab run report", source=str(run_dir / "report.json")
        )
    identity = target_identity(target)
    runs_path = run_dir / "runs.jsonl"
    try:
        raw = runs_path.read_bytes()
    except FileNotFoundError:
        raise InputError(
            "file not found (is this a run directory?)", source=str(runs_path)
        ) from None
    _, records = jsonl_records(raw, source=str(runs_path))
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for number, record in records:
        key = (record.get("pack"), record.get("test_id"))
        if not all(isinstance(k, str) and k for k in key):
            raise InputError(
                "a record without its pack and test_id", source=str(runs_path), line=number
            )
        grouped.setdefault(key, []).append(record)  # type: ignore[arg-type]
    for epochs in grouped.values():
        epochs.sort(key=lambda r: r.get("epoch", 0))
    return RunRecords(run_dir, report, identity, grouped)


def review_rows(run: Path | RunRecords) -> list[ReviewRow]:
    """One row per case of *run* (a run directory, or one already read), in the order of
    runs.jsonl. Errored cases are kept, with their errors: a reviewer decides."""
    if isinstance(run, Path):
        run = read_run(run)
    rows = []
    for (pack, test_id), epochs in run.grouped.items():
        metrics = [r.get("metrics") or {} for r in epochs]
        rows.append(
            ReviewRow(
                pack=pack,
                test_id=test_id,
                query=str(epochs[0].get("query", "")),
                answers=tuple(shown_answer(str(r.get("answer") or "")) for r in epochs),
                retrieved_ids=tuple(_retrieved_ids(r) for r in epochs),
                metric_values={
                    name: [m.get(name, {}).get("values") for m in metrics]
                    for name in sorted({n for m in metrics for n in m})
                },
                evidence={
                    name: [m.get(name, {}).get("evidence") for m in metrics]
                    for name in sorted({n for m in metrics for n in m})
                },
                errors=tuple(
                    str((r.get("error") or {}).get("message", "")) for r in epochs if r.get("error")
                ),
                target=run.identity,
            )
        )
    return rows


def _retrieved_ids(record: Mapping[str, Any]) -> tuple[str, ...] | None:
    retrieved = record.get("retrieved")
    if retrieved is None:
        return None
    return tuple(str(r.get("doc_id")) for r in retrieved)


@frozen
class RunScores:
    """One value of one pack of a run, reduced per case as the run reduced it."""

    pack: str
    value: str
    reducer: str
    scores: Mapping[str, float]
    unscored: tuple[str, ...]

    def render(self) -> bytes:
        """A scores JSONL file for ``calibrate --scores`` (cases in the run's order)."""
        return "".join(
            json.dumps({"test_id": test_id, "score": score}) + "\n"
            for test_id, score in self.scores.items()
        ).encode()


def run_scores(run_dir: Path, *, pack: str | None = None, value: str | None = None) -> RunScores:
    """The reduced *value* (default: the pack's primary value) of every case of *pack* in the
    run in *run_dir*, so a calibration scores exactly the answers the reviewer judged.

    A case with an errored or unscored epoch has no score; it is listed in ``unscored``, never
    given a made-up one.
    """
    from ragleaklab_core.stats.aggregation import reducer as make_reducer

    report_path = run_dir / "report.json"
    report = _read_json(report_path)
    packs = {p.get("name"): p for p in report.get("packs", []) if isinstance(p, dict)}
    if pack is None:
        if len(packs) != 1:
            raise InputError(
                f"the run has {len(packs)} packs ({', '.join(sorted(map(str, packs)))}): choose "
                "one with --pack",
                source=str(report_path),
            )
        pack = str(next(iter(packs)))
    if pack not in packs:
        raise InputError(f"the run has no pack {pack!r}", source=str(report_path))
    entry = packs[pack]
    value = value or str(entry.get("primary_metric"))
    gated = (entry.get("values") or {}).get(value) or {}
    higher_is_worse = not gated.get("lower_is_worse", False)
    spec = str((report.get("settings") or {}).get("reducer", "mean"))
    reduce = make_reducer(spec)
    epochs: dict[str, list[float | None]] = {}
    _, records = jsonl_records(
        (run_dir / "runs.jsonl").read_bytes(), source=str(run_dir / "runs.jsonl")
    )
    for _number, record in records:
        if record.get("pack") != pack:
            continue
        found = [
            m.get("values", {}).get(value)
            for m in (record.get("metrics") or {}).values()
            if isinstance(m, dict) and value in (m.get("values") or {})
        ]
        score = found[0] if found and record.get("error") is None else None
        epochs.setdefault(str(record.get("test_id")), []).append(score)
    if not any(s is not None for values in epochs.values() for s in values):
        raise InputError(f"no case of pack {pack!r} has a value {value!r}", source=str(run_dir))
    scores: dict[str, float] = {}
    unscored: list[str] = []
    for test_id, values in epochs.items():
        if any(v is None for v in values):
            unscored.append(test_id)
        else:
            scores[test_id] = reduce(
                [float(v) for v in values if v is not None], higher_is_worse=higher_is_worse
            )
    return RunScores(pack, value, spec, scores, tuple(unscored))


@frozen
class LabelOrigins:
    """Where a labels file's labels came from, as its lines declare it.

    Attributes:
        sources: The distinct ``label_source`` values (empty when no line declares one).
        targets: The distinct ``target`` identities the labels were observed on.
        unattributed: How many labels name no target: whose answers they judged is unknown,
            so they measure no system's error (a corrected rate refuses them).
    """

    sources: tuple[str, ...]
    targets: tuple[str, ...]
    unattributed: int = 0

    def with_declared(self, source: str | None, target: str | None) -> LabelOrigins:
        """These origins plus what a pack declares for all of its labels (its manifest): a
        declared target covers every line."""
        sources = set(self.sources) | ({source} if source else set())
        targets = set(self.targets) | ({target} if target else set())
        unattributed = 0 if target else self.unattributed
        return LabelOrigins(tuple(sorted(sources)), tuple(sorted(targets)), unattributed)

    def mismatch(self, target: Mapping[str, Any]) -> str | None:
        """Why labels observed on another system do not describe *target*, or None.

        A declared identity ``name@fingerprint`` must equal *target*'s; a bare ``name`` (a pack
        that says only which target its labels were observed on) must equal its name.
        """
        if not self.targets:
            return None
        here = target_identity(target)
        name = str(target.get("name", "?"))
        foreign = [t for t in self.targets if t != here and t != name]
        if not foreign:
            return None
        return (
            f"the labels were observed on {', '.join(foreign)}, but this calibration runs "
            f"target {here}: an outcome on one system is not an outcome on another, so the "
            "fitted threshold may describe neither (label this target's own answers: "
            "`ragleaklab label export`, docs/labelling.md)"
        )


def unmeasured_judge_labels(raw: bytes, *, source: str) -> list[int]:
    """The lines of a labels file written by a judge whose agreement with a person was never
    measured (no ``judge_agreement``): labels of unknown error."""
    _, records = jsonl_records(raw, source=source)
    return [
        number
        for number, record in records
        if record.get("label_source") == "judge"
        and not isinstance(record.get("judge_agreement"), dict)
    ]


def judge_error_warnings(raw: bytes, *, source: str) -> list[str]:
    """What a calibration on a judge's labels should say of the judge: its measured error, one
    sentence per measurement its labels carry (``judge_agreement``). The TPR and FPR a fitter
    reports on such labels are measured against the judge, not against the truth."""
    said = []
    for count, m in _measurements(raw, source):
        se, sp = m.get("sensitivity") or {}, m.get("specificity") or {}
        said.append(
            f"{count} label(s) come from the judge {m.get('judge_identity') or m.get('judge')}, "
            f"measured against {m.get('against')} on {m.get('cases')} cases: sensitivity "
            f"{_measured(se)}, specificity {_measured(sp)}; the TPR and FPR here are measured "
            "against its labels, which err as much"
        )
    return said


#: The floor of a judge's measured sensitivity and specificity: the lower limit of each one's
#: exact 95% interval must be at least this for its labels to calibrate. A correction divides by
#: ``Se + Sp - 1``; with both limits at 0.5 or more that divisor is shown positive (the judge
#: shown better than chance on each class), below it the judge may be a coin on one class and
#: its labels could say anything (docs/labelling.md, "The judge's floor").
JUDGE_FLOOR = 0.5
#: The confidence the floor is checked at, whatever ``label agreement --confidence`` was.
FLOOR_CONFIDENCE = 0.95


def _count(rate: Mapping[str, Any]) -> tuple[int, int] | None:
    k, n = rate.get("successes"), rate.get("trials")
    if any(isinstance(x, bool) or not isinstance(x, int) for x in (k, n)):
        return None
    assert isinstance(k, int) and isinstance(n, int)
    return (k, n) if 0 <= k <= n else None


def judge_floor_problems(measurement: Mapping[str, Any]) -> list[str]:
    """Why a judge measured as *measurement* (a ``judge_agreement``: sensitivity, specificity,
    kappa) is too poor to label for a calibration, or nothing.

    The intervals are computed again from the counts at :data:`FLOOR_CONFIDENCE`: an interval
    stored at a lower confidence (``label agreement --confidence 0.6``) would be narrower and
    could pass where the counts do not."""
    from ragleaklab_core.stats.aggregation import rate_interval

    problems = []
    rates = {}
    for name in ("sensitivity", "specificity"):
        got = _count(measurement.get(name) or {})
        if got is None or not got[1]:
            problems.append(f"its {name} was never measured (no such case reviewed by both)")
            continue
        k, n = got
        low = rate_interval(k, n, FLOOR_CONFIDENCE).lower or 0.0  # n > 0: never None
        rates[name] = k / n
        if low < JUDGE_FLOOR:
            problems.append(
                f"its {name} {k}/{n} = {k / n:.3f} has a 95% lower limit of {low:.3f}, below "
                f"the floor of {JUDGE_FLOOR}"
            )
    if len(rates) == 2 and rates["sensitivity"] + rates["specificity"] <= 1:
        problems.append("its sensitivity + specificity is at most 1 (no better than chance)")
    kappa = measurement.get("kappa")
    interval = measurement.get("kappa_interval")
    kappa_low = interval[0] if isinstance(interval, list) and interval else None
    confidence = measurement.get("confidence")
    if not isinstance(kappa, int | float) or not isinstance(kappa_low, int | float):
        problems.append("its agreement with the person (Cohen's kappa) has no interval")
    elif kappa_low <= 0:
        problems.append(
            f"its agreement with the person is no better than chance: kappa {kappa:.3f}, "
            f"interval from {kappa_low:.3f} (it includes 0)"
        )
    elif not isinstance(confidence, int | float) or confidence < FLOOR_CONFIDENCE:
        problems.append(
            f"its kappa interval was measured at {confidence!r} confidence, less than "
            f"{FLOOR_CONFIDENCE:.0%} (measure again with `label agreement` at the default)"
        )
    return problems


def judges_below_floor(raw: bytes, *, source: str) -> list[str]:
    """One sentence for each judge whose labels in a labels file are too poor to calibrate
    on (:func:`judge_floor_problems`): who, measured against whom, and why."""
    said = []
    for count, m in _measurements(raw, source):
        problems = judge_floor_problems(m)
        if problems:
            said.append(
                f"{count} label(s) come from the judge {m.get('judge_identity') or m.get('judge')},"
                f" measured against {m.get('against')} on {m.get('cases')} cases: "
                + "; ".join(problems)
            )
    return said


def _measurements(raw: bytes, source: str) -> list[tuple[int, dict[str, Any]]]:
    """Each distinct ``judge_agreement`` a labels file's judge labels carry, with how many
    labels carry it, in a stable order."""
    _, records = jsonl_records(raw, source=source)
    found: Counter[str] = Counter(  # each distinct measurement, as sorted JSON, and its labels
        json.dumps(record["judge_agreement"], sort_keys=True)
        for _number, record in records
        if record.get("label_source") == "judge" and isinstance(record.get("judge_agreement"), dict)
    )
    return [(count, json.loads(key)) for key, count in sorted(found.items())]


def _measured(rate: Mapping[str, Any]) -> str:
    if not rate.get("trials"):
        return "not measured"
    low, high = rate.get("lower"), rate.get("upper")
    return f"{rate.get('successes')}/{rate.get('trials')} [{low:.3f}, {high:.3f}]"


def label_origins(raw: bytes, *, source: str) -> LabelOrigins:
    """The provenance declared by the lines of a labels file (already validated)."""
    _, records = jsonl_records(raw, source=source)
    sources: set[str] = set()
    targets: set[str] = set()
    unattributed = 0
    for _number, record in records:
        if isinstance(record.get("label_source"), str):
            sources.add(record["label_source"])
        if isinstance(record.get("target"), str) and record["target"].strip():
            targets.add(record["target"])
        else:
            unattributed += 1
    return LabelOrigins(tuple(sorted(sources)), tuple(sorted(targets)), unattributed)


def render_review(rows: Sequence[ReviewRow], fmt: str) -> bytes:
    """The review file's bytes: JSONL (one object per row) or CSV (JSON in the list columns)."""
    dicts = [row.to_dict() for row in rows]
    if fmt == "jsonl":
        return "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dicts).encode()
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for d in dicts:
        writer.writerow({k: _canonical(d[k]) if k in _JSON_COLUMNS else d[k] for k in COLUMNS})
    return out.getvalue().encode()


@frozen
class Judgement:
    """One reviewed row."""

    pack: str
    test_id: str
    positive: bool
    notes: str
    target: str
    line: int
    label_source: str = ""
    labelled_by: str = ""


def declared_labeller(rows: Iterable[tuple[str, str]], *, source: str) -> tuple[str, str]:
    """(label_source, judge identity) that a review file's rows, given as their
    ``(label_source, labelled_by)``, declare: ``("judge", its identity)`` when any row says a
    judge labelled it, else ``("human", "")``.

    Raises:
        InputError: Rows of more than one judge: one measured agreement cannot describe them.
    """
    judges = {by for kind, by in rows if kind == "judge"}
    if len(judges) > 1:
        raise InputError(
            f"holds the labels of {len(judges)} judges ({', '.join(sorted(judges))}): import "
            "each judge's file on its own",
            source=source,
        )
    return ("judge", judges.pop()) if judges else ("human", "")


def read_review(path: Path) -> list[Judgement]:
    """The reviewed rows of *path* (JSONL or CSV), every problem named by file and line.

    Raises:
        InputError: a row without ``pack``/``test_id``, a label that is not ``positive`` or
            ``negative`` (case and surrounding spaces are forgiven), a row left unlabelled
            (all of them are listed), or the same case twice.
    """
    source = str(path)
    fmt = review_format(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", source=source) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=source) from None
    rows = _csv_rows(raw, source) if fmt == "csv" else jsonl_records(raw, source=source)[1]
    judgements: list[Judgement] = []
    unlabelled: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    for number, row in rows:
        pack, test_id = (_text(row, key, source, number) for key in ("pack", "test_id"))
        if not test_id:
            raise InputError(
                "field 'test_id' must be a non-empty string", source=source, line=number
            )
        label = _text(row, "label", source, number).strip().lower()
        if not label:
            unlabelled.append(number)
            continue
        if label not in LABELS:
            raise InputError(
                f'field \'label\' must be "positive" or "negative", got {row.get("label")!r}',
                source=source,
                line=number,
            )
        key = (pack, test_id)
        if key in seen:
            raise InputError(
                f"case {test_id!r} of pack {pack!r} is reviewed twice (first on line {seen[key]})",
                source=source,
                line=number,
            )
        seen[key] = number
        judgements.append(
            Judgement(
                pack=pack,
                test_id=test_id,
                positive=label == "positive",
                notes=_text(row, "notes", source, number),
                target=_text(row, "target", source, number),
                line=number,
                label_source=_text(row, "label_source", source, number).strip(),
                labelled_by=_text(row, "labelled_by", source, number),
            )
        )
    if unlabelled:
        shown = ", ".join(str(n) for n in unlabelled[:10]) + (
            ", ..." if len(unlabelled) > 10 else ""
        )
        raise InputError(
            f"{len(unlabelled)} row(s) have no label (lines {shown}): label every case "
            "positive or negative; a calibration on the cases that were easy to judge would be "
            "biased",
            source=source,
        )
    if not judgements:
        raise InputError("no reviewed row", source=source)
    return judgements


def _text(row: Mapping[str, Any], key: str, source: str, number: int) -> str:
    value = row.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(
            f"field {key!r} must be a string, got {value!r}", source=source, line=number
        )
    return value


def _csv_rows(raw: bytes, source: str) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        text = raw.decode("utf-8-sig")  # spreadsheets often save a byte-order mark
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            "not UTF-8 text (save the sheet as CSV UTF-8)", source=source, line=line
        ) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = {"pack", "test_id", "label"} - set(reader.fieldnames or ())
    if missing:
        raise InputError(f"missing column(s): {', '.join(sorted(missing))}", source=source, line=1)
    for row in reader:
        # reader.line_num is the line the row ends on; a quoted cell may span lines
        yield reader.line_num, row


def labels_lines(
    judgements: Sequence[Judgement],
    *,
    label_source: str,
    labelled_by: str | None,
    judge_agreement: Mapping[str, Any] | None = None,
) -> bytes:
    """labels.jsonl bytes: the seed's ``test_id``/``label``/``notes`` plus, on every line, the
    provenance (``label_source``, ``labelled_by``, ``target``) and, for a judge's labels, the
    judge's measured agreement with a person (``judge_agreement``). Readers of the seed's format
    ignore the extra keys."""
    lines = []
    for j in judgements:
        record: dict[str, Any] = {
            "test_id": j.test_id,
            "label": "positive" if j.positive else "negative",
            "notes": j.notes,
            "label_source": label_source,
        }
        if labelled_by:
            record["labelled_by"] = labelled_by
        if j.target:
            record["target"] = j.target
        if judge_agreement is not None:
            record["judge_agreement"] = dict(judge_agreement)
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines).encode()


__all__ = [
    "ANSWER_CHARS",
    "COLUMNS",
    "JUDGE_FLOOR",
    "REVIEW_SOURCES",
    "Judgement",
    "LabelOrigins",
    "ReviewRow",
    "RunRecords",
    "RunScores",
    "declared_labeller",
    "judge_error_warnings",
    "judge_floor_problems",
    "judges_below_floor",
    "label_origins",
    "labels_lines",
    "read_review",
    "read_run",
    "render_review",
    "review_format",
    "review_rows",
    "run_scores",
    "shown_answer",
    "target_identity",
    "unmeasured_judge_labels",
]
