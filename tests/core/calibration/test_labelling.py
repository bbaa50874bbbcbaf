"""``ragleaklab label export/import`` end to end, through real subprocesses of the CLI.

A run on the reference target becomes a review file; a "reviewer" (here: the pack's own shipped
labels, which were observed on the reference target) fills it in; the import gives a labels
file with its provenance that ``calibrate`` accepts. Every malformed review is refused with the
file and the line, and nothing is written.
"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

from ragleaklab_core.calibration.labelling import COLUMNS, target_identity
from ragleaklab_core.inputs import read_labels
from tests.support.cli import rlk

PACK = "sentinel-takeover-safe"
SHIPPED = (
    Path(__file__).resolve().parents[3]
    / "plugins"
    / "ragleaklab_plugins"
    / "packs"
    / "sentinel_takeover_safe"
    / "labels.jsonl"
)


def ok(result: subprocess.CompletedProcess[str], *codes: int) -> None:
    assert result.returncode in (codes or (0,)), result.stdout + result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("run")
    ok(rlk("run", "-p", PACK, "--smoke", "--epochs", "2", "-o", "out", cwd=cwd), 0, 1)
    return cwd / "out"


def shipped_labels() -> dict[str, str]:
    lines = SHIPPED.read_text(encoding="utf-8").splitlines()
    return {r["test_id"]: r["label"] for r in map(json.loads, lines)}


def test_export_writes_one_row_per_case_with_every_epoch(run_dir, tmp_path):
    out = tmp_path / "review.jsonl"
    ok(rlk("label", "export", str(run_dir), "-o", str(out), cwd=tmp_path))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    records = [json.loads(line) for line in (run_dir / "runs.jsonl").read_text().splitlines()]
    assert [r["test_id"] for r in rows] == list(dict.fromkeys(r["test_id"] for r in records))
    report = json.loads((run_dir / "report.json").read_text())
    by_case: dict[str, list[dict]] = {}
    for record in records:
        by_case.setdefault(record["test_id"], []).append(record)
    for row in rows:
        assert list(row) == list(COLUMNS)
        epochs = sorted(by_case[row["test_id"]], key=lambda r: r["epoch"])
        assert len(epochs) == 2
        assert row["answers"] == [r["answer"] for r in epochs]
        assert row["retrieved_ids"] == [[d["doc_id"] for d in r["retrieved"]] for r in epochs]
        assert row["metric_values"]["sentinel"] == [
            r["metrics"]["sentinel"]["values"] for r in epochs
        ]
        assert (row["label"], row["notes"], row["pack"]) == ("", "", PACK)
        assert row["target"] == target_identity(report["target"])
    # the same run gives the same bytes
    again = tmp_path / "again.jsonl"
    ok(rlk("label", "export", str(run_dir), "-o", str(again), cwd=tmp_path))
    assert again.read_bytes() == out.read_bytes()


def test_a_reviewed_csv_becomes_labels_with_provenance_that_calibrate_accepts(run_dir, tmp_path):
    review = tmp_path / "review.csv"
    ok(rlk("label", "export", str(run_dir), "-o", str(review), cwd=tmp_path))
    truth = shipped_labels()
    with review.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:  # the reviewer: capitals and spaces are forgiven
        row["label"] = f" {truth[row['test_id']].upper()} "
        row["notes"] = "checked by hand,\nsecond line"
    with review.open("w", encoding="utf-8-sig", newline="") as f:  # a spreadsheet's BOM
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)

    labels = tmp_path / "labels.jsonl"
    result = rlk(
        "label", "import", str(review), "-o", str(labels), "--labelled-by", "alice", cwd=tmp_path
    )
    ok(result)
    positives = sum(truth[r["test_id"]] == "positive" for r in rows)
    assert f"{len(rows)} labels for pack {PACK!r} ({positives} positive" in result.stdout
    written = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    identity = target_identity(json.loads((run_dir / "report.json").read_text())["target"])
    assert written == [
        {
            "test_id": r["test_id"],
            "label": truth[r["test_id"]],
            "notes": "checked by hand,\nsecond line",
            "label_source": "human",
            "labelled_by": "alice",
            "target": identity,
        }
        for r in rows
    ]
    assert read_labels(labels).records == {
        r["test_id"]: truth[r["test_id"]] == "positive" for r in rows
    }
    cal = rlk(
        "calibrate",
        "--pack",
        PACK,
        "--smoke",
        "--labels",
        str(labels),
        "--out",
        "cal",
        cwd=tmp_path,
    )
    ok(cal)
    report = json.loads((tmp_path / "cal" / "calibration_report.json").read_text())
    assert report["inputs"]["labels"]["observed_on"] == [identity]
    assert report["inputs"]["labels"]["label_sources"] == ["human"]
    assert report["inputs"]["labels"]["target_mismatch"] is False
    assert "observed on" not in cal.stderr

    # the same labels against another system (the reference target paraphrasing) are suspect
    (tmp_path / "other.toml").write_text(
        '[target]\nname = "reference"\n\n[target.options]\nparaphrase = true\n'
    )
    other = rlk(
        "calibrate", "--pack", PACK, "--smoke", "--labels", str(labels), "--config",
        "other.toml", "--out", "other", cwd=tmp_path,
    )  # fmt: skip
    ok(other, 0, 1)
    report = json.loads((tmp_path / "other" / "calibration_report.json").read_text())
    assert report["inputs"]["labels"]["target_mismatch"] is True
    [warning] = [w for w in report["warnings"] if "observed on" in w]
    assert warning.startswith(f"the labels were observed on {identity}, but this calibration runs")
    assert "observed on" in other.stderr


def _review_with(tmp_path: Path, run_dir: Path, edit) -> Path:
    review = tmp_path / "review.jsonl"
    ok(rlk("label", "export", str(run_dir), "-o", str(review), "--force", cwd=tmp_path))
    truth = shipped_labels()
    rows = [json.loads(line) for line in review.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["label"] = truth[row["test_id"]]
    edit(rows)
    review.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return review


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rows: rows[3].update(label=""), "review.jsonl: 1 row(s) have no label (lines 4)"),
        (
            lambda rows: rows[2].update(label="yes"),
            "review.jsonl:3: field 'label' must be \"positive\" or \"negative\", got 'yes'",
        ),
        (lambda rows: rows.append(dict(rows[0])), "is reviewed twice (first on line 1)"),
        (
            lambda rows: rows[1].update(test_id=""),
            "review.jsonl:2: field 'test_id' must be a non-empty string",
        ),
        (
            lambda rows: rows[0].update(pack="other-pack"),
            "holds the cases of 2 packs (other-pack, sentinel-takeover-safe): choose one "
            "with --pack",
        ),
    ],
    ids=["unlabelled", "unknown-label", "twice", "no-id", "two-packs"],
)
def test_a_bad_review_is_refused_naming_the_line_and_nothing_is_written(
    run_dir, tmp_path, edit, message
):
    review = _review_with(tmp_path, run_dir, edit)
    labels = tmp_path / "labels.jsonl"
    result = rlk("label", "import", str(review), "-o", str(labels), cwd=tmp_path)
    ok(result, 2)
    assert message in result.stderr
    assert not labels.exists()


def test_import_chooses_a_pack_and_never_overwrites_labels_unasked(run_dir, tmp_path):
    review = _review_with(tmp_path, run_dir, lambda rows: rows[0].update(pack="other-pack"))
    labels = tmp_path / "labels.jsonl"
    ok(rlk("label", "import", str(review), "-o", str(labels), "-p", PACK, cwd=tmp_path))
    n = len(review.read_text().splitlines())
    assert len(labels.read_text().splitlines()) == n - 1
    before = labels.read_bytes()
    again = rlk("label", "import", str(review), "-o", str(labels), "-p", PACK, cwd=tmp_path)
    ok(again, 2)
    assert "use --force" in again.stderr and labels.read_bytes() == before
    missing = rlk(
        "label", "import", str(review), "-o", str(tmp_path / "x.jsonl"), "-p", "nope", cwd=tmp_path
    )
    ok(missing, 2)
    assert "has no case of pack 'nope'" in missing.stderr


def test_export_keeps_a_review_in_progress_and_explains_a_wrong_directory(run_dir, tmp_path):
    out = tmp_path / "review.csv"
    out.write_text("pack,test_id,label\nx,y,positive\n")
    kept = rlk("label", "export", str(run_dir), "-o", str(out), cwd=tmp_path)
    ok(kept, 2)
    assert "review in progress" in kept.stderr and out.read_text().endswith("x,y,positive\n")
    wrong = rlk("label", "export", str(tmp_path), "-o", str(tmp_path / "r.jsonl"), cwd=tmp_path)
    ok(wrong, 2)
    assert "report.json: file not found (is this a run directory?)" in wrong.stderr
    suffix = rlk("label", "export", str(run_dir), "-o", str(tmp_path / "r.txt"), cwd=tmp_path)
    ok(suffix, 2)
    assert "r.txt: a review file must end in .jsonl or .csv" in suffix.stderr


def test_the_target_identity_tells_systems_apart(tmp_path):
    base = {"name": "reference", "options": {"paraphrase": False, "top_k": 5}}
    same = {"name": "reference", "options": {"top_k": 5, "paraphrase": False}}
    other = {"name": "reference", "options": {"paraphrase": True, "top_k": 5}}
    assert target_identity(base) == target_identity(same)
    assert target_identity(base) != target_identity(other)
    assert target_identity(base).startswith("reference@")
    assert target_identity({"name": "http", "options": base["options"]}) != target_identity(base)


def test_the_runs_own_scores_calibrate_against_the_reviewed_labels(run_dir, tmp_path):
    review, scores = tmp_path / "review.jsonl", tmp_path / "scores.jsonl"
    result = rlk(
        "label", "export", str(run_dir), "-o", str(review), "--scores", str(scores), cwd=tmp_path
    )
    ok(result)
    assert (
        "scores of leak_rate for pack 'sentinel-takeover-safe' (epochs reduced by mean)"
        in result.stdout
    )
    records = [json.loads(line) for line in (run_dir / "runs.jsonl").read_text().splitlines()]
    epochs: dict[str, list[float]] = {}
    for record in records:
        epochs.setdefault(record["test_id"], []).append(
            record["metrics"]["sentinel"]["values"]["leak_rate"]
        )
    written = [json.loads(line) for line in scores.read_text().splitlines()]
    assert written == [{"test_id": t, "score": sum(v) / len(v)} for t, v in epochs.items()]

    truth = shipped_labels()
    rows = [json.loads(line) for line in review.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["label"] = truth[row["test_id"]]
    review.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ok(rlk("label", "import", str(review), "-o", "labels.jsonl", cwd=tmp_path))
    cal = rlk(
        "calibrate",
        "--scores",
        str(scores),
        "--labels",
        "labels.jsonl",
        "--out",
        "cal",
        cwd=tmp_path,
    )
    ok(cal)
    report = json.loads((tmp_path / "cal" / "calibration_report.json").read_text())
    n = len(rows)
    assert (report["coverage"]["n_matched"], report["coverage"]["n_labelled"]) == (n, n)
    positives = sum(truth[r["test_id"]] == "positive" for r in rows)
    assert (report["result"]["n_positive"], report["result"]["n_negative"]) == (
        positives,
        n - positives,
    )

    again = rlk(
        "label",
        "export",
        str(run_dir),
        "-o",
        str(tmp_path / "r2.jsonl"),
        "--scores",
        str(scores),
        cwd=tmp_path,
    )
    ok(again, 2)
    assert "scores.jsonl: exists (use --force)" in again.stderr
    assert not (tmp_path / "r2.jsonl").exists()


def test_a_packs_declared_label_target_counts_like_its_lines():
    from ragleaklab_core.packs.manifest import LabelProvenance
    from ragleaklab_core.run.calibrate_pack import _labels_and_origins

    class Pack:
        def default_labels(self) -> bytes:
            return b'{"test_id": "a", "label": "positive"}\n{"test_id": "b", "label": "negative"}\n'

        def label_provenance(self) -> LabelProvenance:
            return LabelProvenance("outcome", "reference")

    data, origins = _labels_and_origins(Pack(), "p", None)
    assert data.records == {"a": True, "b": False}
    assert (origins.sources, origins.targets) == (("outcome",), ("reference",))
    assert origins.mismatch({"name": "reference", "options": {"paraphrase": True}}) is None
    why = origins.mismatch({"name": "http", "options": {"url": "http://127.0.0.1:1/q"}})
    assert why is not None and why.startswith("the labels were observed on reference, but")
