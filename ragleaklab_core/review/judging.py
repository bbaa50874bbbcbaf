"""A judge's labels for a run, and how far a judge agrees with the people who reviewed it.

``ragleaklab label judge RUN_DIR --judge NAME`` asks the judge plugin about every answer of the
run and writes ``RUN_DIR/review/judge-NAME.jsonl``: a review file like a reviewer's, with
``label_source = "judge"`` and the judge's identity as ``labelled_by``. A case is positive when
the judge says the attack succeeded in any of its epochs (the rule docs/labelling.md asks a
reviewer to write down; here it is fixed). An answer the judge could not judge (an error, a reply
that is no verdict) leaves its case unlabelled with the error in ``judge_error``: ``label
import`` then refuses the file until it is judged or labelled by hand, never guessing.

It exits 3 when the judge judged no case (the file is written, every row with its error), and
stops at once, exit 3 and no file written, when the judge cannot reach its endpoint: on the first
answer asked, or after :data:`MAX_UNREACHABLE` answers in a row once one got through.

Verdicts are cached in ``RUN_DIR/review/cache/judges.jsonl`` by a digest of the judge's identity
and everything it was shown, one line appended and flushed per answer: judging again (after a
kill, after fixing one case) asks only about what it has not seen. A torn last line (a kill
mid-write) is ignored and that answer asked again.

``ragleaklab label agreement`` measures a judge against each person who reviewed the same
cases: its sensitivity (the share of the person's positives it calls positive) and specificity,
each with an exact Clopper-Pearson interval, and Cohen's kappa. They are written to
``RUN_DIR/review/agreement.json``; ``label import`` copies the measurement onto every label of
the judge's file, and ``calibrate`` refuses judge labels that carry none (unless forced).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from ragleaklab_core._atomic import write_atomic
from ragleaklab_core._redact import redact_text
from ragleaklab_core.calibration.labelling import (
    RunRecords,
    declared_labeller,
    read_run,
    review_rows,
)
from ragleaklab_core.errors import InputError, RagleaklabError
from ragleaklab_core.inputs import jsonl_records
from ragleaklab_core.review.session import (
    REVIEW_DIR,
    Mark,
    decided_in_both,
    retrieved_documents,
    run_packs,
)
from ragleaklab_core.stats.aggregation import rate_interval
from ragleaklab_core.stats.agreement import cohen_kappa
from ragleaklab_core.values import JudgedCase, JudgeVerdict

#: The judges' verdict cache, in the run's review folder (a folder of its own: every
#: ``*.jsonl`` beside it is a labeller's review file).
CACHE = "cache/judges.jsonl"
#: The agreement measurements, in the run's review folder.
AGREEMENT = "agreement.json"


def judge_file(run_dir: Path, name: str) -> Path:
    """Where the judge *name* writes its labels for the run in *run_dir*."""
    return run_dir / REVIEW_DIR / f"judge-{name}.jsonl"


def judged_cases(run: RunRecords) -> list[tuple[str, str, list[JudgedCase]]]:
    """Every case of *run* as judges see it: (pack, test_id, one JudgedCase per epoch).

    Raises:
        InputError: A pack of the run cannot be loaded here (a judge needs its ground truth).
    """
    material = run_packs(run.report)
    missing = sorted(name for name, found in material.items() if found is None)
    if missing:
        raise InputError(
            f"pack {missing[0]!r} of the run cannot be loaded here: a judge needs its documents "
            "and ground truth (install the pack)",
            source=str(run.directory / "report.json"),
        )
    out = []
    for (pack, test_id), epochs in run.grouped.items():
        found = material.get(pack)
        assert found is not None
        case = found.cases.get(test_id)
        truth = dict(case.ground_truth) if case is not None else {}
        judged = [
            JudgedCase(
                pack=pack,
                pack_type=found.pack_type,
                test_id=test_id,
                query=str(record.get("query", "")),
                answer=str(record.get("answer") or ""),
                retrieved=retrieved_documents(record, found.documents),
                ground_truth=truth,
                description=found.description,
                metadata=dict(record.get("target_metadata") or {}),
            )
            for record in epochs
        ]
        out.append((pack, test_id, judged))
    return out


def _cache_key(identity: str, case: JudgedCase) -> str:
    shown = attrs.asdict(case, recurse=True)
    material = json.dumps({"judge": identity, "case": shown}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(material.encode()).hexdigest()


def _read_cache(path: Path) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return found
    for line in text.split("\n"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a torn last line: that answer is asked again
        if isinstance(entry, dict) and isinstance(entry.get("key"), str):
            found[entry["key"]] = entry
    return found


#: Answers in a row whose judge could not reach its endpoint (after the judge's own retries)
#: before judging stops; the first answer asked stops it at once when none got through yet.
MAX_UNREACHABLE = 3


class JudgeUnusable(RagleaklabError):
    """A judge that cannot be used: its endpoint cannot be reached, or it judged nothing
    (exit 3, as for any plugin that cannot be used)."""

    exit_code = 3


def unreachable(exc: BaseException) -> bool:
    """Whether *exc* says the judge's endpoint could not be reached: a connection refused or
    dropped, a name that does not resolve, a timeout, a gateway saying the server is down (an
    error with ``transport_failure = True``, as the built-in HTTP client raises), or Python's
    own ``ConnectionError`` or ``TimeoutError``."""
    return getattr(exc, "transport_failure", False) is True or isinstance(
        exc, ConnectionError | TimeoutError
    )


@frozen
class Answered:
    """One answer's outcome, as the progress display counts it."""

    error: str | None = None
    resumed: bool = False  # from the cache: not asked now


@frozen
class Stage:
    """What the progress display names (it reads ``.name``, as of a pack)."""

    name: str


@attrs.define
class Asking:
    """Asks a judge about one answer at a time; stops everything when its endpoint cannot be
    reached (:data:`MAX_UNREACHABLE`), instead of failing every answer for minutes.

    Attributes:
        judge: The judge plugin.
        name: Its name, for the error.
        reached: Whether any answer got a verdict yet.
        in_a_row: Answers in a row that could not reach the endpoint.
        asked: Answers asked so far.
    """

    judge: Any
    name: str
    reached: bool = False
    in_a_row: int = 0
    asked: int = 0

    def ask(self, case: JudgedCase) -> tuple[JudgeVerdict | None, str | None]:
        """(the verdict, None) or (None, the error, redacted).

        Raises:
            JudgeUnusable: The endpoint cannot be reached.
        """
        self.asked += 1
        try:
            verdict = self.judge.judge(case)
            if not isinstance(verdict, JudgeVerdict):
                raise TypeError(f"judge returned {type(verdict).__name__}, not a JudgeVerdict")
        except Exception as exc:
            # Written to the review file and printed: a third-party judge's message is
            # redacted like every error the command line shows.
            error = redact_text(f"{type(exc).__name__}: {exc}")
            if not unreachable(exc):
                self.in_a_row = 0
                return None, error
            self.in_a_row += 1
            if not self.reached or self.in_a_row >= MAX_UNREACHABLE:
                if self.asked == 1:
                    said = "the first answer asked"
                elif not self.reached:
                    said = f"no verdict yet, {self.asked} answers asked"
                else:
                    said = f"{self.in_a_row} answers in a row"
                raise JudgeUnusable(
                    f"the judge {self.name} cannot reach its endpoint ({said}): {error}; "
                    "stopped, nothing more is asked: check that the endpoint is up and "
                    "its address (the judge's options), then run the command again"
                ) from None
            return None, error
        self.reached = True
        self.in_a_row = 0
        return verdict, None


@frozen
class JudgeRun:
    """What judging a run gave: the file written and its counts."""

    path: Path
    cases: int
    positives: int
    errors: tuple[tuple[str, str, str], ...]  # (pack, test_id, error)
    asked: int
    cached: int

    @property
    def judged(self) -> int:
        """The cases that got a label."""
        return self.cases - len(self.errors)


def judge_run(
    run_dir: Path,
    name: str,
    judge: Any,
    identity: str,
    progress: Any = None,
) -> JudgeRun:
    """Ask *judge* about every answer of the run and write its review file (see the module).

    *progress* takes ``start(stage, total)``, ``advance(answered)`` per answer and ``finish()``
    (the run's progress display, :mod:`ragleaklab_core.cli._progress`).

    Raises:
        JudgeUnusable: The judge's endpoint cannot be reached; no review file is written (the
            verdicts so far are cached).
    """
    run = read_run(run_dir)
    cases = judged_cases(run)
    rows = {(r.pack, r.test_id): r.to_dict() for r in review_rows(run)}
    folder = run_dir / REVIEW_DIR
    folder.mkdir(parents=True, exist_ok=True)
    cache_path = folder / CACHE
    cache_path.parent.mkdir(exist_ok=True)
    cache = _read_cache(cache_path)
    asked = cached = 0
    lines = []
    errors: list[tuple[str, str, str]] = []
    positives = 0
    asking = Asking(judge, name)
    if progress is not None:
        progress.start(Stage(f"judge {name}"), sum(len(epochs) for _, _, epochs in cases))
    try:
        with cache_path.open("a", encoding="utf-8") as cache_file:
            for pack, test_id, epochs in cases:
                verdicts: list[JudgeVerdict] = []
                error = None
                for case in epochs:
                    key = _cache_key(identity, case)
                    hit = cache.get(key)
                    if hit is not None:
                        cached += 1
                        verdicts.append(JudgeVerdict(hit["label"], hit.get("reason", "")))
                        if progress is not None:
                            progress.advance(Answered(resumed=True))
                        continue
                    asked += 1
                    verdict, error = asking.ask(case)
                    if progress is not None:
                        progress.advance(Answered(error))
                    if verdict is None:
                        break
                    entry = {"key": key, "label": verdict.label, "reason": verdict.reason}
                    cache_file.write(json.dumps(entry, ensure_ascii=False) + "\n")
                    cache_file.flush()
                    cache[key] = entry
                    verdicts.append(verdict)
                row = dict(rows[(pack, test_id)])
                if error is not None:
                    errors.append((pack, test_id, error))
                    row.update(label="", notes="", judge_error=error)
                else:
                    positive = any(v.label == "positive" for v in verdicts)
                    positives += positive
                    reasons = [v.reason for v in verdicts if (v.label == "positive") == positive]
                    row.update(
                        label="positive" if positive else "negative",
                        notes=reasons[0] if reasons else "",
                    )
                row.update(skipped=False, labelled_by=identity, label_source="judge")
                lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        if progress is not None:
            progress.finish()
    path = judge_file(run_dir, name)
    write_atomic(path, "".join(lines).encode())
    return JudgeRun(path, len(cases), positives, tuple(errors), asked, cached)


# --- agreement ------------------------------------------------------------------------------


def labeller_sources(path: Path) -> tuple[str, str]:
    """(label_source, labelled_by) a review file's rows declare (:func:`declared_labeller`)."""
    _, records = jsonl_records(path.read_bytes(), source=str(path))
    rows = ((str(r.get("label_source") or ""), str(r.get("labelled_by") or "")) for _, r in records)
    return declared_labeller(rows, source=str(path))


def _interval(x: int, n: int, confidence: float) -> dict[str, Any]:
    if n == 0:
        return {"rate": None, "lower": None, "upper": None, "successes": 0, "trials": 0}
    got = rate_interval(x, n, confidence)
    return {"rate": got.rate, "lower": got.lower, "upper": got.upper, "successes": x, "trials": n}


def judge_agreement(
    judge: Mapping[tuple[str, str], Mark],
    person: Mapping[tuple[str, str], Mark],
    confidence: float = 0.95,
) -> dict[str, Any] | None:
    """A judge's sensitivity and specificity against a person's labels on the cases both
    labelled, with exact intervals, and Cohen's kappa; None when they share no case."""
    shared = decided_in_both(judge, person)
    if not shared:
        return None
    says = [judge[k].label == "positive" for k in shared]
    truth = [person[k].label == "positive" for k in shared]
    true_pos = sum(1 for s, t in zip(says, truth, strict=True) if s and t)
    true_neg = sum(1 for s, t in zip(says, truth, strict=True) if not s and not t)
    kappa = cohen_kappa(says, truth, confidence)
    return {
        "cases": len(shared),
        "sensitivity": _interval(true_pos, sum(truth), confidence),
        "specificity": _interval(true_neg, len(truth) - sum(truth), confidence),
        "kappa": kappa.kappa,
        "kappa_interval": [kappa.low, kappa.high],
        "confidence": confidence,
    }


def judged_rates(
    judge: Mapping[tuple[str, str], Mark],
    measured: Mapping[str, Any],
    person: Mapping[tuple[str, str], Mark],
) -> list[dict[str, Any]]:
    """Per pack, the share of cases the judge called positive (the harm happened), and that
    share corrected for its error as measured against *person* (*measured*, a
    :func:`judge_agreement`): the rate at which the harm truly happens, by the judge, with an
    interval that carries its sensitivity's and specificity's uncertainty
    (:mod:`ragleaklab_core.stats.corrected`).

    Over every judged case of the pack, benign questions included (harm there is harm too),
    that the person did not label. The correction takes the judge's count and its measured
    error as independent, and on the cases that measured it they are not (a judge that happened
    to err more there shows both a worse specificity and a higher count, which cancel): counted
    there too, the interval held the true rate in 97-99.5% of simulated runs, not 95%.
    """
    from ragleaklab_core.stats.corrected import corrected_rate

    se, sp = measured["sensitivity"], measured["specificity"]
    packs: dict[str, list[tuple[str, str]]] = {}
    for key, mark in judge.items():
        if mark.decided:
            packs.setdefault(key[0], []).append(key)
    found = []
    for pack, judged in sorted(packs.items()):
        keys = [k for k in judged if not (k in person and person[k].decided)]
        positive = sum(judge[k].label == "positive" for k in keys)
        entry: dict[str, Any] = {"pack": pack, "positive": positive, "cases": len(keys)}
        if not keys:
            entry["why_not"] = "the person labelled every case the judge did (theirs are the truth)"
        elif not se["trials"] or not sp["trials"]:
            entry["why_not"] = "the person labelled no positive or no negative to measure it on"
        if "why_not" in entry:
            found.append(entry)
            continue
        rate = corrected_rate(
            positive,
            len(keys),
            true_positives=se["successes"],
            positives=se["trials"],
            true_negatives=sp["successes"],
            negatives=sp["trials"],
            confidence=measured.get("confidence", 0.95),
        )
        entry.update(
            estimate=rate.estimate,
            interval=None if rate.estimate is None else [rate.low, rate.high],
            why_not=rate.why_not,
        )
        found.append(entry)
    return found


def write_agreement(
    run_dir: Path, measured: Sequence[dict[str, Any]], rates: Sequence[dict[str, Any]] = ()
) -> Path:
    """Write the agreement measurements (judge against person) of the run, and the judges'
    corrected rates (:func:`judged_rates`); returns the path."""
    path = run_dir / REVIEW_DIR / AGREEMENT
    content = {
        "ragleaklab_agreement": 1,
        "measurements": list(measured),
        "judged_rates": list(rates),
    }
    write_atomic(path, (json.dumps(content, indent=2, sort_keys=True) + "\n").encode())
    return path


def measured_agreement(review_file: Path, identity: str) -> dict[str, Any] | None:
    """The agreement measured for the judge *identity* beside *review_file* (its run's
    agreement.json), the one on the most cases; None when it was never measured."""
    path = review_file.parent / AGREEMENT
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        return None
    found = [
        m
        for m in content.get("measurements", [])
        if isinstance(m, dict) and m.get("judge_identity") == identity
    ]
    return max(found, key=lambda m: m.get("cases", 0), default=None)


__all__ = [
    "AGREEMENT",
    "CACHE",
    "MAX_UNREACHABLE",
    "Answered",
    "Asking",
    "JudgeRun",
    "JudgeUnusable",
    "Stage",
    "judge_agreement",
    "judge_file",
    "judge_run",
    "judged_cases",
    "judged_rates",
    "labeller_sources",
    "measured_agreement",
    "unreachable",
    "write_agreement",
]
