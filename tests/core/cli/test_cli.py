"""`ragleaklab calibrate` end to end, through a real subprocess of the CLI."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from ragleaklab_core._discovery import PACKS, available_names
from tests.support.cli import rlk

EPOCH = "1700000000"
EPOCH_ISO = "2023-11-14T22:13:20Z"
REPORT = "calibration_report.json"

# The worked example: --target-fpr 0.1 gives threshold 0.66, fpr 1/10, tpr 3/5.
NEGATIVES = [0.05, 0.10, 0.12, 0.20, 0.31, 0.33, 0.40, 0.52, 0.61, 0.70]
POSITIVES = [0.35, 0.58, 0.66, 0.80, 0.93]


def run(
    *args: str, cwd: Path, hashseed: str | None = None, **env: str
) -> subprocess.CompletedProcess:
    return rlk(*args, cwd=cwd, epoch=EPOCH, hashseed=hashseed, env=env)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def example(directory: Path, negatives=NEGATIVES, positives=POSITIVES) -> tuple[Path, Path]:
    scores, labels = [], []
    for prefix, values, label in (("n", negatives, "negative"), ("p", positives, "positive")):
        for i, value in enumerate(values):
            scores.append({"test_id": f"{prefix}{i:02d}", "score": value})
            labels.append({"test_id": f"{prefix}{i:02d}", "label": label, "notes": "worked"})
    return (
        write_jsonl(directory / "scores.jsonl", scores),
        write_jsonl(directory / "labels.jsonl", labels),
    )


def calibrate(cwd: Path, *extra: str, out: str = "out", **kw) -> subprocess.CompletedProcess:
    args = ["calibrate", "--scores", "scores.jsonl", "--labels", "labels.jsonl", "--out", out]
    return run(*args, *extra, cwd=cwd, **kw)


def report(cwd: Path, out: str = "out") -> dict:
    return json.loads((cwd / out / REPORT).read_text(encoding="utf-8"))


def brute_roc(negatives, positives, higher_is_worse=True):
    """Hand computation: every distinct score as a threshold, highest first."""
    rows = []
    for t in sorted(set(negatives) | set(positives), reverse=True):
        flag = (lambda s, t=t: s >= t) if higher_is_worse else (lambda s, t=t: s <= t)
        rows.append(
            {
                "threshold": t,
                "fpr": sum(map(flag, negatives)) / len(negatives),
                "tpr": sum(map(flag, positives)) / len(positives),
            }
        )
    return rows


def clopper_pearson_upper(x: int, n: int, confidence: float = 0.95) -> float:
    """The p with P(Binomial(n, p) <= x) = 1 - confidence, by bisection (no scipy)."""

    def cdf(p: float) -> float:
        return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(x + 1))

    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) > 1 - confidence else (lo, mid)
    return (lo + hi) / 2


def assert_clean_failure(proc, out_dir: Path, *fragments: str, code: int = 2) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.lower().count("error:") == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr
    if out_dir.exists():
        assert not (out_dir / REPORT).exists()
        assert [p.name for p in out_dir.iterdir() if p.suffix == ".tmp"] == []


# -- the happy path -----------------------------------------------------------------------------


def test_worked_example_report(tmp_path):
    scores, labels = example(tmp_path)
    proc = calibrate(tmp_path, "--target-fpr", "0.1")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    rep = report(tmp_path)

    assert rep["pack_name"] is None
    assert rep["metric_name"] is None
    assert rep["target_fpr"] == 0.1
    assert rep["higher_is_worse"] is True
    result = rep["result"]
    assert {k: result[k] for k in ("threshold", "achieved_fpr", "achieved_tpr")} == {
        "threshold": 0.66,
        "achieved_fpr": 0.1,
        "achieved_tpr": 0.6,
    }
    assert (result["n_positive"], result["n_negative"]) == (5, 10)
    assert result["decision_rule"] == "score >= threshold -> FAIL"
    assert (result["false_positives"], result["true_positives"]) == (1, 3)
    assert result["flags_nothing"] is False
    assert result["flags_no_case"] is False
    assert rep["guarantee"] == (
        "FPR on the calibration sample <= target; no guarantee beyond the sample"
    )

    # The ROC table, by hand: every distinct score, threshold descending, and the chosen row.
    assert rep["roc_table"] == brute_roc(NEGATIVES, POSITIVES)
    thresholds = [row["threshold"] for row in rep["roc_table"]]
    assert thresholds == sorted(thresholds, reverse=True)
    assert {"threshold": 0.66, "fpr": 0.1, "tpr": 0.6} in rep["roc_table"]
    assert rep["roc_table_info"] == {
        "rows": 15,
        "distinct_thresholds": 15,
        "complete": True,
        "max_rows": 1001,
    }

    assert rep["generated_at"] == EPOCH_ISO
    assert rep["generated_at"].endswith("Z")

    version = importlib.metadata.version("ragleaklab")
    fitter = rep["fitter"]
    assert fitter["name"] == "exact"
    assert fitter["group"] == "ragleaklab.fitters"
    assert fitter["provider"] == f"ragleaklab {version}"
    assert fitter["target"] == "ragleaklab_plugins.fitters.exact:ExactSweepFitter"
    assert fitter["options"] == {}
    assert rep["tool"] == {"name": "ragleaklab", "version": version}
    assert rep["inputs"] == {
        "scores": {
            "path": "scores.jsonl",
            "sha256": hashlib.sha256(scores.read_bytes()).hexdigest(),
        },
        "labels": {
            "path": "labels.jsonl",
            "sha256": hashlib.sha256(labels.read_bytes()).hexdigest(),
            # The plain format says nothing of who labelled or on which system: said as such.
            "label_sources": [],
            "observed_on": [],
            "unattributed": 15,
        },
    }
    assert rep["coverage"] == {
        "n_scored": 15,
        "n_labelled": 15,
        "n_matched": 15,
        "unlabelled": {"count": 0, "ids": [], "truncated": False},
        "unscored": {"count": 0, "ids": [], "truncated": False},
    }

    bound = rep["fpr_upper_bound"]
    assert bound["false_positives"] == 1
    assert bound["n_negative"] == 10
    assert bound["confidence"] == 0.95
    assert bound["value"] == pytest.approx(clopper_pearson_upper(1, 10), abs=1e-9)
    assert bound["value"] == pytest.approx(0.3942, abs=1e-4)
    assert bound["negatives_needed_for_guarantee"] == 29  # 0.9**29 <= 0.05 < 0.9**28

    # stdout: the summary only; stderr: the warning that 10 negatives cannot support 10%.
    assert proc.stdout.splitlines() == [
        "threshold 0.66  rule 'score >= threshold -> FAIL'  fpr 0.1000 (1/10)  "
        "tpr 0.6000 (3/5)  fpr 95% upper bound 0.3942",
        "auc 0.860 [0.663, 1.000]  next point: threshold 0.61  fpr 0.2000 (2/10)  tpr 0.6000 (3/5)",
        "guarantee: FPR on the calibration sample <= target; no guarantee beyond the sample",
        "wrote out/calibration_report.json",
    ]
    [warning] = rep["warnings"]
    # Met on the sample (1/10 <= 0.1) but the 95% bound 0.3942 exceeds the target.
    assert "cannot be trusted to meet it" in warning and "0.3942 > 0.1" in warning
    assert "not statistically supported by 10 negatives" in warning
    assert proc.stderr == f"warning: {warning}\n"


def test_report_is_deterministic_whatever_the_hash_seed(tmp_path):
    example(tmp_path)
    # ids only in one file go through sets: their order must not follow the hash seed
    extra = [{"test_id": f"only-scored-{i}", "score": i / 10} for i in range(30)]
    with (tmp_path / "scores.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in extra))
    outputs = []
    for seed in ("0", "1", "12345"):
        proc = calibrate(tmp_path, "--target-fpr", "0.1", out=f"out-{seed}", hashseed=seed)
        assert proc.returncode == 0, proc.stderr
        outputs.append((tmp_path / f"out-{seed}" / REPORT).read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    rep = json.loads(outputs[0])
    assert rep["generated_at"] == EPOCH_ISO
    assert rep["coverage"]["unlabelled"]["ids"] == sorted(r["test_id"] for r in extra)[:20]
    assert outputs[0].endswith(b"}\n")


def test_lower_is_worse_mirrors(tmp_path):
    example(tmp_path, [-s for s in NEGATIVES], [-s for s in POSITIVES])
    proc = calibrate(tmp_path, "--target-fpr", "0.1", "--lower-is-worse")
    assert proc.returncode == 0, proc.stderr
    rep = report(tmp_path)
    assert rep["higher_is_worse"] is False
    result = rep["result"]
    assert result["threshold"] == -0.66
    assert result["decision_rule"] == "score <= threshold -> FAIL"
    assert (result["achieved_fpr"], result["achieved_tpr"]) == (0.1, 0.6)
    negated = [-s for s in NEGATIVES], [-s for s in POSITIVES]
    assert rep["roc_table"] == brute_roc(*negated, higher_is_worse=False)
    mirrored = {(-r["threshold"], r["fpr"], r["tpr"]) for r in brute_roc(NEGATIVES, POSITIVES)}
    assert {(r["threshold"], r["fpr"], r["tpr"]) for r in rep["roc_table"]} == mirrored


def test_config_file_is_used_and_flags_override_it(tmp_path):
    example(tmp_path)
    (tmp_path / "rl.toml").write_text(
        '[calibrate]\ntarget_fpr = 0.2\nmetric = "poison_rate_at_k"\n', encoding="utf-8"
    )
    proc = calibrate(tmp_path, "--config", "rl.toml")
    assert proc.returncode == 0, proc.stderr
    rep = report(tmp_path)
    assert rep["target_fpr"] == 0.2
    assert rep["metric_name"] == "poison_rate_at_k"
    # fpr <= 0.2 allows two of ten negatives (0.61, 0.70): the threshold drops to 0.58
    assert (rep["result"]["threshold"], rep["result"]["achieved_tpr"]) == (0.58, 0.8)

    proc = calibrate(tmp_path, "--config", "rl.toml", "--target-fpr", "0.1", out="out2")
    assert proc.returncode == 0, proc.stderr
    rep = report(tmp_path, "out2")
    assert rep["target_fpr"] == 0.1
    assert rep["result"]["threshold"] == 0.66
    assert rep["metric_name"] == "poison_rate_at_k"


def test_fitter_option_on_exact_is_rejected(tmp_path):
    example(tmp_path)
    proc = calibrate(tmp_path, "--fitter-option", "nmae=3")
    assert_clean_failure(proc, tmp_path / "out", "unknown key 'nmae'", "$.calibrate.fitter.options")


def test_fitter_option_with_wrong_typed_options_in_the_file(tmp_path):
    example(tmp_path)
    (tmp_path / "rl.toml").write_text(
        '[calibrate]\nfitter = {name = "exact", options = 3}\n', encoding="utf-8"
    )
    proc = calibrate(tmp_path, "--config", "rl.toml", "--fitter-option", "a=1")
    assert_clean_failure(proc, tmp_path / "out", "rl.toml", "$.calibrate.fitter.options")


def test_config_problems_are_reported_together(tmp_path):
    example(tmp_path)
    (tmp_path / "rl.toml").write_text(
        '[calibrate]\ntarget_fpr = "0.05"\nnmae = 1\nroc_table_max_rows = true\n',
        encoding="utf-8",
    )
    proc = calibrate(tmp_path, "--config", "rl.toml")
    assert_clean_failure(
        proc,
        tmp_path / "out",
        "rl.toml",
        "expected float, got str '0.05' @ $.calibrate.target_fpr",
        "unknown key 'nmae'; known keys: fitter, lower_is_worse, metric, roc_table_max_rows, "
        "target_fpr @ $.calibrate",
        "expected int, got bool True @ $.calibrate.roc_table_max_rows",
    )


# -- bad input: exit 2, one clear error, no traceback, no report --------------------------------

S_OK = '{"test_id": "n00", "score": 0.1}\n{"test_id": "p00", "score": 0.9}\n'
L_OK = '{"test_id": "n00", "label": "negative"}\n{"test_id": "p00", "label": "positive"}\n'

BAD_FILES = [
    # (id, scores text, labels text, fragments expected on stderr)
    ("scores-malformed-json", S_OK + '{"test_id": "x", "score": 0.5\n', L_OK,
     ["scores.jsonl:3:", "malformed JSON"]),
    ("labels-malformed-json", S_OK, L_OK + "{bad\n", ["labels.jsonl:3:", "malformed JSON"]),
    ("labels-not-an-object", S_OK, '["n00", "negative"]\n', ["labels.jsonl:1:", "JSON object"]),
    ("scores-missing-test-id", '{"score": 0.5}\n', L_OK,
     ["scores.jsonl:1:", "missing field 'test_id'"]),
    ("scores-missing-score", S_OK + '{"test_id": "x"}\n', L_OK,
     ["scores.jsonl:3:", "missing field 'score'"]),
    ("labels-missing-label", S_OK, '{"test_id": "n00"}\n', ["labels.jsonl:1:", "'label'"]),
    ("test-id-not-a-string", S_OK, L_OK + '{"test_id": 5, "label": "negative"}\n',
     ["labels.jsonl:3:", "'test_id' must be a non-empty string"]),
    ("score-string", '{"test_id": "n00", "score": "0.1"}\n', L_OK,
     ["scores.jsonl:1:", "'score' must be a number"]),
    ("score-bool", S_OK + '{"test_id": "x", "score": true}\n', L_OK,
     ["scores.jsonl:3:", "'score' must be a number"]),
    ("score-non-numeric", S_OK + '{"test_id": "x", "score": "high"}\n', L_OK,
     ["scores.jsonl:3:", "'high'"]),
    ("score-nan", S_OK + '{"test_id": "x", "score": NaN}\n', L_OK, ["scores.jsonl:3:", "NaN"]),
    ("score-infinity", '{"test_id": "x", "score": -Infinity}\n', L_OK,
     ["scores.jsonl:1:", "Infinity"]),
    ("score-overflow", S_OK + '{"test_id": "x", "score": 1e999}\n', L_OK,
     ["scores.jsonl:3:", "finite"]),
    ("label-maybe", S_OK, L_OK + '{"test_id": "x", "label": "maybe"}\n',
     ["labels.jsonl:3:", "'maybe'"]),
    ("label-capitalised", S_OK, '{"test_id": "n00", "label": "Negative"}\n',
     ["labels.jsonl:1:", "'Negative'"]),
    ("label-bool", S_OK, '{"test_id": "n00", "label": true}\n', ["labels.jsonl:1:", "True"]),
    ("duplicate-ids", S_OK, L_OK + '{"test_id": "n00", "label": "positive"}\n',
     ["labels.jsonl:3:", "duplicate test_id 'n00' (first on line 1)"]),
    ("duplicate-scores", S_OK + '{"test_id": "p00", "score": 0.2}\n', L_OK,
     ["scores.jsonl:3:", "duplicate test_id 'p00' (first on line 2)"]),
    ("invalid-utf8", S_OK.encode() + b'{"test_id": "\xff", "score": 1}\n', L_OK,
     ["scores.jsonl:3:", "not UTF-8"]),
    ("no-overlap", S_OK, '{"test_id": "zz", "label": "negative"}\n',
     ["no test_id has both a score and a label"]),
    ("no-positives", S_OK, '{"test_id": "n00", "label": "negative"}\n'
     '{"test_id": "p00", "label": "negative"}\n', ["no positive cases"]),
    ("no-negatives", S_OK, '{"test_id": "n00", "label": "positive"}\n'
     '{"test_id": "p00", "label": "positive"}\n', ["no negative cases"]),
    ("empty-scores", "", L_OK, ["scores.jsonl", "empty"]),
    ("blank-labels", S_OK, "\n  \n", ["labels.jsonl", "empty"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("scores", "labels", "fragments"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES]
)
def test_bad_input_files(tmp_path, scores, labels, fragments):
    for name, text in (("scores.jsonl", scores), ("labels.jsonl", labels)):
        (tmp_path / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    proc = calibrate(tmp_path)
    assert_clean_failure(proc, tmp_path / "out", *fragments)
    assert not (tmp_path / "out").exists()


BAD_USAGE = [
    (["--target-fpr", "-0.1"], ["target_fpr", "[0, 1]", "-0.1"]),
    (["--target-fpr=-0.1"], ["target_fpr", "[0, 1]"]),
    (["--target-fpr", "1.5"], ["target_fpr", "[0, 1]", "1.5"]),
    (["--target-fpr", "nan"], ["target_fpr", "finite"]),
    (["--target-fpr", "inf"], ["target_fpr", "finite"]),
    (["--target-fpr", "lots"], ["--target-fpr", "'lots'"]),
    (["--roc-max-rows", "2"], ["roc_table_max_rows", ">= 3"]),
    (["--write-thresholds"], ["--write-thresholds needs --pack"]),
    (["--fitter-option", "novalue"], ["NAME=VALUE", "'novalue'"]),
    (["--config", "missing.toml"], ["missing.toml", "file not found"]),
]


@pytest.mark.parametrize(("extra", "fragments"), BAD_USAGE, ids=lambda x: " ".join(x)[:30])
def test_bad_options(tmp_path, extra, fragments):
    example(tmp_path)
    proc = calibrate(tmp_path, *extra)
    assert_clean_failure(proc, tmp_path / "out", *fragments)


def test_missing_labels_file(tmp_path):
    example(tmp_path)
    (tmp_path / "labels.jsonl").unlink()
    assert_clean_failure(calibrate(tmp_path), tmp_path / "out", "labels.jsonl: file not found")


def test_scores_path_is_a_directory(tmp_path):
    example(tmp_path)
    (tmp_path / "dir").mkdir()
    proc = run(
        "calibrate", "--scores", "dir", "--labels", "labels.jsonl", "-o", "out", cwd=tmp_path
    )
    assert_clean_failure(proc, tmp_path / "out", "dir", "is a directory")


def test_bad_config_toml_names_the_line(tmp_path):
    example(tmp_path)
    (tmp_path / "rl.toml").write_text("[calibrate]\ntarget_fpr = \n", encoding="utf-8")
    proc = calibrate(tmp_path, "--config", "rl.toml")
    assert_clean_failure(proc, tmp_path / "out", "rl.toml", "not valid TOML", "line 2")


@pytest.mark.parametrize("out", ["scores.jsonl", "scores.jsonl/sub"])
def test_out_that_is_a_file(tmp_path, out):
    example(tmp_path)
    before = (tmp_path / "scores.jsonl").read_bytes()
    proc = calibrate(tmp_path, out=out)
    assert_clean_failure(proc, tmp_path, "scores.jsonl")
    assert (tmp_path / "scores.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["calibrate", "--out", "out"], "--scores"),
        (["calibrate", "--scores", "scores.jsonl", "--out", "out"], "--labels"),
        (["calibrate", "--scores", "scores.jsonl", "--labels", "labels.jsonl"], "--out"),
    ],
    ids=["neither-scores-nor-pack", "scores-without-labels", "no-out"],
)
def test_missing_required_options(tmp_path, args, fragment):
    example(tmp_path)
    assert_clean_failure(run(*args, cwd=tmp_path), tmp_path / "out", fragment)


def test_existing_report_is_left_untouched_by_a_failed_run(tmp_path):
    example(tmp_path)
    assert calibrate(tmp_path, "--target-fpr", "0.1").returncode == 0
    target = tmp_path / "out" / REPORT
    before = target.read_bytes()
    stat_before = target.stat()
    with (tmp_path / "scores.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"test_id": "late", "score": NaN}\n')
    proc = calibrate(tmp_path, "--target-fpr", "0.2")
    assert proc.returncode == 2
    assert "scores.jsonl:16:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert target.read_bytes() == before
    assert target.stat().st_mtime_ns == stat_before.st_mtime_ns
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [REPORT]


# -- plugins: exit 3 ----------------------------------------------------------------------------


def test_unknown_pack_gets_a_did_you_mean(tmp_path):
    assert "relevance-hijack" in available_names(PACKS)
    proc = run("calibrate", "--pack", "relevance-hijak", "--out", "out", cwd=tmp_path)
    assert_clean_failure(
        proc,
        tmp_path / "out",
        "no plugin named 'relevance-hijak' in ragleaklab.packs (did you mean 'relevance-hijack'",
        code=3,
    )


def test_unknown_fitter_gets_a_did_you_mean(tmp_path):
    example(tmp_path)
    proc = calibrate(tmp_path, "--fitter", "exat")
    assert_clean_failure(
        proc,
        tmp_path / "out",
        "no plugin named 'exat' in ragleaklab.fitters",
        "did you mean 'exact'?",
        code=3,
    )


# -- coverage and size --------------------------------------------------------------------------


def test_unlabelled_and_unscored_ids_are_counted_and_listed(tmp_path):
    example(tmp_path)
    unlabelled = [f"u{i:02d}" for i in range(25)]
    with (tmp_path / "scores.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps({"test_id": t, "score": 0.5}) + "\n" for t in unlabelled))
    with (tmp_path / "labels.jsonl").open("a", encoding="utf-8") as fh:
        for t in ("x2", "x1"):
            fh.write(json.dumps({"test_id": t, "label": "positive"}) + "\n")
    proc = calibrate(tmp_path, "--target-fpr", "0.1")
    assert proc.returncode == 0, proc.stderr
    rep = report(tmp_path)
    assert rep["coverage"] == {
        "n_scored": 40,
        "n_labelled": 17,
        "n_matched": 15,
        "unlabelled": {"count": 25, "ids": unlabelled[:20], "truncated": True},
        "unscored": {"count": 2, "ids": ["x1", "x2"], "truncated": False},
    }
    # the unmatched cases take no part in the fit
    assert rep["result"]["threshold"] == 0.66
    assert (rep["result"]["n_positive"], rep["result"]["n_negative"]) == (5, 10)


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """5000 distinct scores, one positive in five."""
    directory = tmp_path_factory.mktemp("large")
    rng = random.Random(20240115)
    values = rng.sample(range(1, 10**6), 5000)
    scores, labels, negatives, positives = [], [], [], []
    for i, value in enumerate(values):
        score = value / 10**6
        positive = rng.random() < 0.2 + 0.6 * score  # positives lean high
        (positives if positive else negatives).append(score)
        scores.append({"test_id": f"c{i:04d}", "score": score})
        labels.append({"test_id": f"c{i:04d}", "label": "positive" if positive else "negative"})
    write_jsonl(directory / "scores.jsonl", scores)
    write_jsonl(directory / "labels.jsonl", labels)
    return directory, negatives, positives


@pytest.mark.parametrize(("extra", "cap"), [((), 1001), (("--roc-max-rows", "11"), 11)])
def test_large_input_caps_the_roc_table(large, extra, cap):
    directory, negatives, positives = large
    out = f"out-{cap}"
    proc = calibrate(directory, "--target-fpr", "0.05", *extra, out=out)
    assert proc.returncode == 0, proc.stderr
    rep = report(directory, out)
    rows = rep["roc_table"]
    assert 3 <= len(rows) <= cap
    assert rep["roc_table_info"] == {
        "rows": len(rows),
        "distinct_thresholds": 5000,
        "complete": False,
        "max_rows": cap,
    }
    thresholds = [r["threshold"] for r in rows]
    assert thresholds == sorted(thresholds, reverse=True)
    assert len(set(thresholds)) == len(thresholds)
    everything = negatives + positives
    assert thresholds[0] == max(everything)
    assert thresholds[-1] == min(everything)
    chosen = rep["result"]["threshold"]
    assert chosen in thresholds
    assert rep["result"]["achieved_fpr"] <= 0.05
    for row in (
        rows[0],
        rows[len(rows) // 2],
        rows[-1],
        *(r for r in rows if r["threshold"] == chosen),
    ):
        t = row["threshold"]
        assert row["fpr"] == sum(s >= t for s in negatives) / len(negatives)
        assert row["tpr"] == sum(s >= t for s in positives) / len(positives)


# -- streams and logging ------------------------------------------------------------------------


def test_json_logs_go_to_stderr_and_stdout_has_results_only(tmp_path):
    example(tmp_path)
    args = ["-v", "--log-format", "json", "calibrate", "--scores", "scores.jsonl"]
    proc = run(
        *args, "--labels", "labels.jsonl", "--out", "out", "--target-fpr", "0.1", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("threshold 0.66  rule ")
    assert proc.stdout.splitlines()[1:] == [
        "auc 0.860 [0.663, 1.000]  next point: threshold 0.61  fpr 0.2000 (2/10)  tpr 0.6000 (3/5)",
        "guarantee: FPR on the calibration sample <= target; no guarantee beyond the sample",
        "wrote out/calibration_report.json",
    ]
    events = []
    for line in proc.stderr.splitlines():
        if line.startswith("warning: "):
            continue  # a user-facing warning, not a log line
        events.append(json.loads(line))
    assert all(isinstance(e, dict) for e in events)
    fitted = [e for e in events if e["event"] == "calibration.fitted"]
    assert len(fitted) == 1
    assert fitted[0]["level"] == "info"
    assert fitted[0]["threshold"] == 0.66
    assert fitted[0]["logger"] == "ragleaklab_core.calibration.report"
    assert "warning: the threshold meets the target false-positive rate 0.1" in proc.stderr


def test_default_verbosity_keeps_info_logs_off(tmp_path):
    example(tmp_path)
    proc = calibrate(tmp_path, "--target-fpr", "0.5")
    assert proc.returncode == 0, proc.stderr
    assert "calibration.fitted" not in proc.stderr + proc.stdout
    # threshold, auc, guarantee, the note (10 negatives could support a guarantee at 50%), wrote
    lines = proc.stdout.splitlines()
    assert len(lines) == 5 and lines[3].startswith("note: these 10 negatives could support")


@pytest.mark.parametrize("args", [["--help"], ["calibrate", "--help"], ["plugins", "--help"]])
def test_help(tmp_path, args):
    proc = run(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: ragleaklab")
    assert proc.stderr == ""


def test_calibrate_help_lists_the_seed_options(tmp_path):
    out = run("calibrate", "--help", cwd=tmp_path).stdout
    for option in (
        "--pack",
        "--out",
        "--labels",
        "--target-fpr",
        "--write-thresholds",
        "--scores",
        "--fitter",
        "--lower-is-worse",
        "--config",
    ):
        assert option in out


def test_plot_writes_a_deterministic_png_next_to_the_report(tmp_path):
    example(tmp_path)
    first = calibrate(tmp_path, "--plot")
    assert first.returncode == 0, first.stderr
    png = (tmp_path / "out" / "roc.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    report = json.loads((tmp_path / "out" / "calibration_report.json").read_text())
    assert 0.5 < report["auc"]["auc"] <= 1.0 and report["auc"]["method"] == "delong"
    assert report["auc"]["lower"] <= report["auc"]["auc"] <= report["auc"]["upper"]
    interval = report["tpr_interval"]
    assert interval["true_positives"] == report["result"]["true_positives"]
    assert interval["lower"] <= report["result"]["achieved_tpr"] <= interval["upper"]
    (tmp_path / "out" / "roc.png").unlink()
    assert calibrate(tmp_path, "--plot").returncode == 0
    assert (tmp_path / "out" / "roc.png").read_bytes() == png


@pytest.mark.parametrize("module", ["ragleaklab", "ragleaklab_core"])
def test_python_dash_m_runs_the_same_command(module, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", module, "label", "export", str(tmp_path), "-o", "x.jsonl"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "report.json: file not found (is this a run directory?)" in result.stderr
    assert "Traceback" not in result.stderr


def test_calibrate_on_a_builtin_pack_names_the_fitter_that_would_give_a_guarantee(tmp_path):
    # The built-in labels describe the default reference target: no foreign-target warning.
    proc = run("calibrate", "--pack", "relevance-hijack", "--out", "exact", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "were observed on" not in proc.stderr
    lines = proc.stdout.splitlines()
    # First the system the threshold is fitted on, then the seed's summary lines.
    assert lines.pop(0) == (
        "tested: reference (the embedded reference RAG, reference@693fcdcd3a7c), no config file"
    )
    assert lines[1].startswith("auc ") and "  next point: " in lines[1]
    assert lines[2].startswith("guarantee: FPR on the calibration sample <= target")
    negatives = json.loads((tmp_path / "exact" / "calibration_report.json").read_text())
    n_neg = negatives["result"]["n_negative"]
    assert n_neg == 343
    assert lines[3] == (
        f"note: these {n_neg} negatives could support a 95% guarantee that the true "
        "false-positive rate meets the target (at least 299 are needed); this fitter gives none "
        "beyond the sample: a fitter that states one (the built-in neyman-pearson) would "
        "(docs/calibration.md)"
    )
    # A fitter that states a guarantee gets no such note.
    proc = run(
        "calibrate",
        "--pack",
        "relevance-hijack",
        "--fitter",
        "neyman-pearson",
        "--out",
        "np",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert not any(line.startswith("note: ") for line in proc.stdout.splitlines())
    assert "population FPR <= target" in proc.stdout


def test_calibrate_against_another_target_option_warns_that_the_labels_are_foreign(tmp_path):
    proc = run(
        "calibrate", "--pack", "relevance-hijack", "--smoke", "--target-fpr", "0.2",
        "--target-option", "filter_injections=true", "--out", "o", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    assert "but this calibration runs target reference@" in proc.stderr
    report = json.loads((tmp_path / "o" / "calibration_report.json").read_text())
    assert report["inputs"]["target"]["options"]["filter_injections"] is True
    # --scores has no target to set: the options would be ignored, so they are refused.
    refused = run(
        "calibrate", "--scores", "s.jsonl", "--labels", "l.jsonl", "--target-option", "top_k=3",
        "--out", "x", cwd=tmp_path,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "--target-option would be ignored" in refused.stderr
    assert not (tmp_path / "x").exists()


def test_summary_prints_the_auc_and_the_next_point_of_the_roc_curve(tmp_path):
    example(tmp_path)
    proc = calibrate(tmp_path, "--target-fpr", "0.1")
    assert proc.returncode == 0, proc.stderr
    # 43 of the 50 (positive, negative) pairs are ordered right; the next score below the
    # threshold 0.66 is the negative 0.61: one more false positive, no more true positive.
    line = next(x for x in proc.stdout.splitlines() if x.startswith("auc "))
    assert line.startswith("auc 0.860 [")
    assert line.endswith("next point: threshold 0.61  fpr 0.2000 (2/10)  tpr 0.6000 (3/5)")
