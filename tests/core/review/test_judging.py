"""``ragleaklab label judge``, ``label agreement`` and ``calibrate`` on a judge's labels, end to
end: an LLM judge served by an OpenAI-compatible test server on loopback labels a run, its
agreement with a person's review is measured, and calibrate uses its labels only once it was."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core import JudgedCase
from ragleaklab_core.review.judging import judge_agreement
from ragleaklab_core.review.session import Mark, ReviewSession
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer
from tests.support.judge_models import read_request, reply

PACK = "claim-corruption"
SECRET = "sk-judge-secret-4f1e9a"
SHIPPED = (
    Path(__file__).resolve().parents[3]
    / "plugins/ragleaklab_plugins/packs/claim_corruption/labels.jsonl"
)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def shipped() -> dict[str, str]:
    lines = SHIPPED.read_text(encoding="utf-8").splitlines()
    return {r["test_id"]: r["label"] for r in map(json.loads, lines)}


class Judging:
    """The model behind the test server: "positive" when the answer holds the poison claim's
    number and not the true claim's (a crude judge with an error of its own), garbage for the
    cases in ``broken``."""

    def __init__(self) -> None:
        self.broken: set[str] = set()
        self.asked: list[str] = []

    def __call__(self, request: dict[str, Any]) -> str:
        shown = read_request(request)
        assert shown.marker is not None  # the built-in judge fences the case
        answer, truth = shown.answer, shown.ground_truth
        self.asked.append(answer)
        if any(b in answer for b in self.broken):
            return "I am not sure."
        poison = {n for c in truth.get("poison_claims", []) for n in re.findall(r"\d+", c)}
        true = {n for c in truth.get("true_claims", []) for n in re.findall(r"\d+", c)}
        said = set(re.findall(r"\d+", answer))
        success = bool(said & (poison - true)) and not said & (true - poison)
        return reply(shown, success, f"numbers said: {sorted(said)}")


@pytest.fixture
def served():
    judging = Judging()
    with FakeRagServer(completion=judging) as server:
        yield server, judging


def test_a_judge_labels_a_run_is_measured_and_only_then_calibrates(served, tmp_path):
    server, judging = served
    rlk("run", "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path, ok=(0, 1))
    run_dir = tmp_path / "out"
    answers = [r["answer"] for r in records(run_dir / "runs.jsonl")]
    judging.broken = {answers[4][:40]}
    options = [
        "-O",
        f"base_url={server.base_url}/v1",
        "-O",
        "model=judge-test",
        "-O",
        "api_key_env=JUDGE_KEY",
    ]
    env = {"JUDGE_KEY": SECRET}
    first = rlk(
        "label",
        "judge",
        "out",
        "--judge",
        "openai-compatible",
        *options,
        cwd=tmp_path,
        env=env,
        ok=(0,),
    )
    assert "30 cases judged by openai-compatible:judge-test@" in first.stdout
    assert "1 not judged" in first.stdout and "30 answer(s) asked, 0 from the cache" in first.stdout
    assert "I am not sure" in first.stderr  # which case, and why
    assert all(s.headers.get("authorization") == f"Bearer {SECRET}" for s in server.seen)
    # the key never reaches what is written or printed
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert SECRET not in first.stdout + first.stderr
    file = run_dir / "review" / "judge-openai-compatible.jsonl"
    rows = records(file)
    assert {r["label_source"] for r in rows} == {"judge"}
    assert rows[4]["label"] == "" and "not one JSON object" in rows[4]["judge_error"]
    refused = rlk("label", "import", str(file), "-o", "j.jsonl", cwd=tmp_path, ok=(2,))
    assert "1 row(s) have no label (lines 5)" in refused.stderr
    # judged again: only the answer without a verdict is asked
    judging.broken = set()
    again = rlk(
        "label",
        "judge",
        "out",
        "--judge",
        "openai-compatible",
        *options,
        cwd=tmp_path,
        env=env,
        ok=(0,),
    )
    assert "1 answer(s) asked, 29 from the cache" in again.stdout
    assert "0 not judged" in again.stdout

    # a person reviews the same cases (here: the pack's labels, observed on this target)
    person = ReviewSession(run_dir, "alice")
    truth = shipped()
    for view in person.views:
        person.judge(view.index, truth[view.test_id])
    measured = rlk("label", "agreement", "out", cwd=tmp_path, ok=(0,))
    assert "judge judge-openai-compatible against alice: sensitivity " in measured.stdout
    agreement = json.loads((run_dir / "review" / "agreement.json").read_text())
    only = agreement["measurements"][0]
    judge_rows = {r["test_id"]: r["label"] for r in records(file)}
    positives = [t for t in truth if t in judge_rows and truth[t] == "positive"]
    hits = sum(judge_rows[t] == "positive" for t in positives)
    assert only["sensitivity"]["successes"] == hits
    assert only["sensitivity"]["trials"] == len(positives)

    rlk(
        "label",
        "export",
        "out",
        "-o",
        "review.csv",
        "--scores",
        "scores.jsonl",
        cwd=tmp_path,
        ok=(0,),
    )
    done = rlk("label", "import", str(file), "-o", "judge.jsonl", cwd=tmp_path, ok=(0,))
    assert "warning: this judge is below the floor (its sensitivity " in done.stderr
    imported = records(tmp_path / "judge.jsonl")
    assert all(r["judge_agreement"]["against"] == "alice" for r in imported)
    assert all(r["labelled_by"].startswith("openai-compatible:judge-test@") for r in imported)
    m = imported[0]["judge_agreement"]
    se, sp = m["sensitivity"], m["specificity"]
    # This crude judge misses most successes: measured, but below the floor, so refused with
    # its figures (tests/core/calibration/test_measured_provenance.py tests the floor).
    assert se["successes"] / se["trials"] < 0.5
    poor = rlk(
        "calibrate", "--scores", "scores.jsonl", "--labels", "judge.jsonl", "--pack", PACK,
        "--out", "cal", cwd=tmp_path, ok=(2,),
    )  # fmt: skip
    assert f"its sensitivity {se['successes']}/{se['trials']} = " in poor.stderr
    assert not (tmp_path / "cal").exists()
    calibrated = rlk(
        "calibrate",
        "--scores",
        "scores.jsonl",
        "--labels",
        "judge.jsonl",
        "--pack",
        PACK,
        "--out",
        "cal",
        "--force",
        cwd=tmp_path,
    )
    assert calibrated.returncode in (0, 1), calibrated.stderr
    report = json.loads((tmp_path / "cal" / "calibration_report.json").read_text("utf-8"))
    # The judge's measured error is stated where the threshold fitted on its labels is.
    said = [w for w in report["warnings"] if "come from the judge openai-compatible:" in w]
    overridden = [w for w in said if w.startswith("--force overrode a refusal: ")]
    assert len(overridden) == 1 and "below the floor of 0.5" in overridden[0], said
    said = [w for w in said if w not in overridden]
    assert len(said) == 1, report["warnings"]
    assert f"measured against alice on {m['cases']} cases" in said[0]
    assert f"sensitivity {se['successes']}/{se['trials']} [" in said[0]
    assert f"specificity {sp['successes']}/{sp['trials']} [" in said[0]
    assert said[0].startswith(f"{len(imported)} label(s)")

    # a judge's labels with no measured agreement are refused, unless forced
    bare = tmp_path / "bare.jsonl"
    bare.write_text(
        "".join(
            json.dumps({k: v for k, v in r.items() if k != "judge_agreement"}) + "\n"
            for r in imported
        )
    )
    no = rlk(
        "calibrate",
        "--scores",
        "scores.jsonl",
        "--labels",
        "bare.jsonl",
        "--pack",
        PACK,
        "--out",
        "cal2",
        cwd=tmp_path,
        ok=(2,),
    )
    assert "agreement with a person was never measured (first on line 1)" in no.stderr
    assert not (tmp_path / "cal2").exists()
    forced = rlk(
        "calibrate",
        "--scores",
        "scores.jsonl",
        "--labels",
        "bare.jsonl",
        "--pack",
        PACK,
        "--out",
        "cal3",
        "--force",
        cwd=tmp_path,
    )
    assert forced.returncode in (0, 1), forced.stderr


def test_sensitivity_and_specificity_count_against_the_person():
    def marks(labels: str) -> dict[tuple[str, str], Mark]:
        names = {"p": "positive", "n": "negative", "-": ""}
        return {("p", str(i)): Mark(names[c]) for i, c in enumerate(labels)}

    got = judge_agreement(marks("ppnnnp-n"), marks("pnnnpp-p"))
    assert got is not None and got["cases"] == 7
    # person's positives: 0, 4, 5, 7 -> the judge says p, n, p, n
    assert (got["sensitivity"]["successes"], got["sensitivity"]["trials"]) == (2, 4)
    # person's negatives: 1, 2, 3 -> the judge says p, n, n
    assert (got["specificity"]["successes"], got["specificity"]["trials"]) == (2, 3)
    assert got["sensitivity"]["lower"] < 0.5 < got["sensitivity"]["upper"]


def test_a_file_is_a_judges_when_any_row_says_so_and_one_judges_at_most(tmp_path):
    def row(test_id: str, source: str, by: str) -> str:
        fields = {"pack": PACK, "test_id": test_id, "label": "negative"}
        return json.dumps({**fields, "label_source": source, "labelled_by": by}) + "\n"

    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(row("a", "human", "alice") + row("b", "judge", "llm@1"))
    done = rlk("label", "import", "mixed.jsonl", "-o", "l.jsonl", cwd=tmp_path, ok=(0,))
    assert "label_source judge" in done.stdout and "never measured" in done.stderr
    assert {r["label_source"] for r in records(tmp_path / "l.jsonl")} == {"judge"}
    refused = rlk(
        "label",
        "import",
        "mixed.jsonl",
        "-o",
        "h.jsonl",
        "--label-source",
        "human",
        cwd=tmp_path,
        ok=(2,),
    )
    assert "labelled by a judge" in refused.stderr
    two = tmp_path / "two.jsonl"
    two.write_text(row("a", "judge", "llm@1") + row("b", "judge", "llm@2"))
    both = rlk("label", "import", "two.jsonl", "-o", "t.jsonl", cwd=tmp_path, ok=(2,))
    assert "holds the labels of 2 judges (llm@1, llm@2)" in both.stderr
    assert not (tmp_path / "t.jsonl").exists() and not (tmp_path / "h.jsonl").exists()


def test_a_judges_error_reaches_the_file_redacted(tmp_path):
    from ragleaklab_core._redact import forget_secrets, register_secret
    from ragleaklab_core.review.judging import judge_run

    rlk("run", "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path, ok=(0, 1))

    class Leaky:
        def judge(self, case: JudgedCase) -> None:
            raise RuntimeError(f"401 for key {SECRET} at https://user:pw@judge.example/v1")

    register_secret(SECRET)
    try:
        done = judge_run(tmp_path / "out", "leaky", Leaky(), "leaky")
    finally:
        forget_secrets()
    assert len(done.errors) == 30 and done.positives == 0
    written = done.path.read_text(encoding="utf-8")
    assert SECRET not in written and "pw@" not in written and "RuntimeError: 401" in written
    assert all(SECRET not in error for _, _, error in done.errors)
