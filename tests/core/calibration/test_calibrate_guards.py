"""No silent PASS through calibration: every route to a gate that tests nothing fails loudly.

- ``flags_nothing`` is computed from the data and the rule (a property test against brute force);
- a threshold that flags no positive case is warned about, exits 1, and is never stored by
  ``--write-thresholds`` without ``--force`` (exit 2, nothing written at all);
- every exit 2 writes nothing: no report, no plot, no thresholds file;
- a threshold whose FPR upper confidence bound exceeds the target is warned about, and the report
  carries the fitter's own guarantee;
- a counting reducer with K above the epochs is a configuration error before anything is written;
- the thresholds file says which fitter, when and on which labels, and ``run`` prints it.
"""

from __future__ import annotations

import json
import operator
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core import calibrate
from ragleaklab_core.calibration.report import NO_GUARANTEE
from ragleaklab_core.calibration.thresholds import read_thresholds
from ragleaklab_core.values import (
    DECISION_RULES,
    FLAG_ABOVE,
    FLAG_BELOW,
    FLAG_HIGH,
    FLAG_LOW,
    FitResult,
)
from tests.support.cli import rlk

REPORT = "calibration_report.json"
#: 2026-11-24T12:00:00Z
EPOCH_2026_11_24 = "1795521600"
OPS = {
    FLAG_HIGH: operator.ge,
    FLAG_ABOVE: operator.gt,
    FLAG_LOW: operator.le,
    FLAG_BELOW: operator.lt,
}


def tree(directory: Path) -> dict[str, bytes]:
    """Every file under *directory* with its bytes (to prove nothing was written)."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def scored(directory: Path, negatives: list[float], positives: list[float]) -> tuple[str, ...]:
    """scores.jsonl and labels.jsonl in *directory*; the calibrate arguments that use them."""
    scores, labels = [], []
    for prefix, values, label in (("n", negatives, "negative"), ("p", positives, "positive")):
        for i, value in enumerate(values):
            scores.append({"test_id": f"{prefix}{i:04d}", "score": value})
            labels.append({"test_id": f"{prefix}{i:04d}", "label": label})
    write_jsonl(directory / "scores.jsonl", scores)
    write_jsonl(directory / "labels.jsonl", labels)
    return ("--scores", "scores.jsonl", "--labels", "labels.jsonl")


# The sentinel pack's shape: 0/1 scores, every positive at 1.0, a few negatives at 1.0 too. The
# umbrella's threshold is the highest negative, 1.0, with the strict rule "> 1.0": it flags no
# case at all, though its FPR bound (0 of 334) is comfortably within 1%.
SENTINEL_LIKE = ([0.0] * 331 + [1.0] * 3, [1.0] * 125)
PACK_ARGS = ("--pack", "sentinel-takeover-safe", "--metric", "leak_rate")
NP = ("--fitter", "neyman-pearson")


# -- flags_nothing is computed from the data and the rule -------------------------------------


class Claims:
    """A fitter that returns a given threshold and rule, with honest rates and no counts."""

    def __init__(self, threshold: float | None, rule: str):
        self.threshold, self.rule = threshold, rule

    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        s, y = list(map(float, scores)), list(map(bool, labels))
        hit = [self.threshold is not None and OPS[self.rule](v, self.threshold) for v in s]
        fp = sum(h and not lab for h, lab in zip(hit, y, strict=True))
        tp = sum(h and lab for h, lab in zip(hit, y, strict=True))
        n_pos = sum(y)
        return FitResult(
            threshold=self.threshold,
            achieved_fpr=fp / (len(y) - n_pos),
            achieved_tpr=tp / n_pos,
            n_positive=n_pos,
            n_negative=len(y) - n_pos,
            decision_rule=self.rule,
        )


GRID = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])  # ties and 0..1 ends, like the metrics


@st.composite
def problems(draw):
    n = draw(st.integers(2, 25))
    scores = draw(st.lists(GRID | st.floats(-2, 2), min_size=n, max_size=n))
    labels = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
    if i == j:
        j = (i + 1) % n
    labels[i], labels[j] = True, False  # both classes
    threshold = draw(st.none() | st.sampled_from(scores) | GRID | st.floats(-3, 3))
    rule = draw(st.sampled_from(DECISION_RULES))
    return scores, labels, threshold, rule


@settings(max_examples=300, deadline=None)
@given(problems())
def test_flags_nothing_is_no_positive_satisfying_the_rule_by_brute_force(problem):
    scores, labels, threshold, rule = problem
    ids = [f"c{i:03d}" for i in range(len(scores))]
    report = calibrate(
        dict(zip(ids, scores, strict=True)),
        dict(zip(ids, labels, strict=True)),
        fitter=Claims(threshold, rule),
        target_fpr=1.0,
    )

    def flagged(score: float) -> bool:
        return threshold is not None and OPS[rule](score, threshold)

    catches_a_positive = any(flagged(s) for s, y in zip(scores, labels, strict=True) if y)
    flags_a_case = any(flagged(s) for s in scores)
    result = report.to_dict()["result"]
    assert result["flags_nothing"] is (not catches_a_positive)
    assert result["flags_no_case"] is (not flags_a_case)
    assert report.result.flags_nothing is (not catches_a_positive)
    unusable = [w for w in report.warnings if w.startswith("no usable threshold")]
    assert len(unusable) == (0 if catches_a_positive else 1)
    if threshold is not None and not flags_a_case:
        assert "flags no case at all" in unusable[0]
    # The plain value type agrees once it carries the counts.
    tp = sum(flagged(s) for s, y in zip(scores, labels, strict=True) if y)
    fp = sum(flagged(s) for s, y in zip(scores, labels, strict=True) if not y)
    n_pos = sum(labels)
    counted = FitResult(
        threshold, fp / (len(labels) - n_pos), tp / n_pos, n_pos, len(labels) - n_pos, rule,
        false_positives=fp, true_positives=tp,
    )  # fmt: skip
    assert counted.flags_nothing is (not catches_a_positive)
    assert counted.flags_no_case is (not flags_a_case)


def test_a_threshold_at_the_top_of_a_0_1_metric_with_the_strict_rule_flags_nothing():
    neg, pos = SENTINEL_LIKE
    s = {f"n{i}": v for i, v in enumerate(neg)} | {f"p{i}": v for i, v in enumerate(pos)}
    y = {k: k.startswith("p") for k in s}
    report = calibrate(s, y, fitter="neyman-pearson", target_fpr=0.01)
    r = report.to_dict()["result"]
    assert (r["threshold"], r["decision_rule"]) == (1.0, FLAG_ABOVE)
    assert (r["flags_nothing"], r["flags_no_case"], r["true_positives"]) == (True, True, 0)
    assert any("'score > 1.0 -> FAIL' flags no case at all" in w for w in report.warnings)


# -- the CLI: warn, exit 1, refuse to store; exit 2 writes nothing -----------------------------


def test_write_thresholds_refuses_a_threshold_that_flags_nothing_and_writes_nothing(tmp_path):
    args = scored(tmp_path, *SENTINEL_LIKE)
    before = tree(tmp_path)
    done = rlk("calibrate", *args, *PACK_ARGS, *NP, "--write-thresholds", "-o", "out", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert (
        "warning: no usable threshold: the rule 'score > 1.0 -> FAIL' flags no case" in done.stderr
    )
    assert "error: --write-thresholds refused" in done.stderr and "--force" in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "out").exists()
    assert tree(tmp_path) == before  # no report, no thresholds file, nothing else


def test_a_refused_store_leaves_an_earlier_report_and_thresholds_file_byte_identical(tmp_path):
    args = scored(tmp_path, *SENTINEL_LIKE)
    first = rlk("calibrate", *args, *PACK_ARGS, "--write-thresholds", "-o", "out", cwd=tmp_path)
    assert first.returncode == 0, first.stderr  # exact: ">= 1.0" catches every positive
    before = tree(tmp_path)
    assert {"out/calibration_report.json", "ragleaklab.thresholds.json"} <= set(before)
    again = rlk(
        "calibrate", *args, *PACK_ARGS, *NP, "--write-thresholds", "-o", "out", cwd=tmp_path
    )
    assert again.returncode == 2, again.stderr
    assert tree(tmp_path) == before


def test_force_stores_it_but_the_command_still_fails(tmp_path):
    args = scored(tmp_path, *SENTINEL_LIKE)
    done = rlk(
        "calibrate", *args, *PACK_ARGS, *NP, "--write-thresholds", "--force", "-o", "out",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    entry = json.loads((tmp_path / "ragleaklab.thresholds.json").read_text())["packs"][
        "sentinel-takeover-safe"
    ]["leak_rate"]
    assert (entry["threshold"], entry["decision_rule"], entry["flags_nothing"]) == (
        1.0,
        FLAG_ABOVE,
        True,
    )
    assert json.loads((tmp_path / "out" / REPORT).read_text())["result"]["flags_nothing"] is True


def test_without_write_thresholds_the_report_is_written_the_warning_shown_and_exit_is_1(tmp_path):
    args = scored(tmp_path, *SENTINEL_LIKE)
    done = rlk("calibrate", *args, *NP, "-o", "out", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    report = json.loads((tmp_path / "out" / REPORT).read_text())
    assert report["result"]["flags_nothing"] is True
    assert report["result"]["flags_no_case"] is True
    [warning] = [w for w in report["warnings"] if w.startswith("no usable threshold")]
    assert f"warning: {warning}" in done.stderr
    assert "error: no usable threshold" in done.stderr
    assert not (tmp_path / "ragleaklab.thresholds.json").exists()


def test_the_exact_fitter_finding_only_flag_nothing_exits_1_as_the_docs_say(tmp_path):
    # Every positive scores below the highest negative: at a 0% target only "flag nothing".
    args = scored(tmp_path, [0.1, 0.2, 0.9], [0.5, 0.6])
    done = rlk("calibrate", *args, "--target-fpr", "0", "-o", "out", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    report = json.loads((tmp_path / "out" / REPORT).read_text())
    assert report["result"]["threshold"] is None and report["result"]["flags_nothing"] is True
    assert "threshold none (flag nothing)" in done.stdout
    docs = (Path(__file__).resolve().parents[3] / "docs" / "calibration.md").read_text()
    assert "| 1 | **no usable threshold**: the target is infeasible" in docs


def test_the_issue_command_on_the_real_pack_is_refused_and_writes_nothing(tmp_path):
    before = tree(tmp_path)
    done = rlk(
        "calibrate", "--pack", "sentinel-takeover-safe", *NP, "--write-thresholds", "-o", "out",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "flags no case at all" in done.stderr and "Traceback" not in done.stderr
    assert tree(tmp_path) == before and not (tmp_path / "out").exists()


def _conflict(tmp_path: Path) -> tuple[str, ...]:
    args = scored(tmp_path, [0.1, 0.2, 0.3, 0.4], [0.8, 0.9])
    stored = rlk(
        "calibrate", *args, *PACK_ARGS, "--write-thresholds", "--target-fpr", "0.5", "-o", "o0",
        cwd=tmp_path,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    # Another labels file (its sha256 differs) over a stored threshold: refused without --force.
    with (tmp_path / "labels.jsonl").open("a") as fh:
        fh.write('{"test_id": "only-labelled", "label": "negative"}\n')
    return (*args, *PACK_ARGS, "--target-fpr", "0.5")


def _malformed(tmp_path: Path) -> tuple[str, ...]:
    (tmp_path / "ragleaklab.thresholds.json").write_text('{"format": "nope"}\n')
    return (*scored(tmp_path, [0.1, 0.2], [0.8]), *PACK_ARGS, "--target-fpr", "0.5")


def _bad_option(tmp_path: Path) -> tuple[str, ...]:
    return (*scored(tmp_path, [0.1, 0.2], [0.8]), *NP, "--fitter-option", "delta=2")


def _bad_reducer(tmp_path: Path) -> tuple[str, ...]:
    (tmp_path / "c.toml").write_text('[run]\nepochs = 2\nreducer = "at_least_3"\n')
    return ("--pack", "relevance-hijack", "--config", "c.toml")


@pytest.mark.parametrize(
    ("setup", "needs_store", "expected"),
    [
        (_conflict, True, "pass --force to replace it"),
        (_malformed, True, "ragleaklab.thresholds.json: expected format"),
        (_bad_option, False, "$.calibrate.fitter.options"),
        (_bad_reducer, False, "@ $.run.reducer"),
    ],
)
def test_every_exit_2_writes_no_report_and_touches_no_file(tmp_path, setup, needs_store, expected):
    args = setup(tmp_path)
    before = tree(tmp_path)
    extra = ("--write-thresholds",) if needs_store else ()
    done = rlk("calibrate", *args, *extra, "--plot", "-o", "out", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert expected in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
    assert tree(tmp_path) == before


# -- the FPR upper bound and the fitter's guarantee ---------------------------------------------


def test_a_bound_above_the_target_is_warned_even_though_the_sample_meets_it(tmp_path):
    # 300 negatives, 3 above the threshold: FPR 0.01 meets 1% on the sample; the one-sided 95%
    # Clopper-Pearson bound at 3/300 is about 0.026 > 0.01.
    negatives = [i / 1000 for i in range(297)] + [0.95, 0.96, 0.97]
    args = scored(tmp_path, negatives, [0.9, 0.99, 0.995])
    done = rlk("calibrate", *args, "-o", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "out" / REPORT).read_text())
    assert report["result"]["achieved_fpr"] == 0.01 <= report["target_fpr"]
    bound = report["fpr_upper_bound"]["value"]
    assert bound == pytest.approx(0.0258, abs=5e-4)
    [warning] = report["warnings"]
    assert "cannot be trusted to meet it" in warning and f"{bound:.4g} > 0.01" in warning
    assert "not statistically supported" not in warning  # 300 negatives can support 1%
    assert f"warning: {warning}" in done.stderr
    assert report["guarantee"] == (
        "FPR on the calibration sample <= target; no guarantee beyond the sample"
    )


def test_a_bound_within_the_target_is_not_warned_and_the_umbrella_states_its_guarantee():
    rng = np.random.default_rng(3)
    neg, pos = rng.uniform(0, 1, 400), rng.uniform(0.9, 2, 50)
    s = {f"n{i}": float(v) for i, v in enumerate(neg)} | {
        f"p{i}": float(v) for i, v in enumerate(pos)
    }
    y = {k: k.startswith("p") for k in s}
    report = calibrate(s, y, fitter="neyman-pearson", target_fpr=0.05)
    assert report.fpr_upper_bound["value"] <= 0.05
    assert report.warnings == ()
    assert report.to_dict()["guarantee"].startswith("with probability >= 0.95 (1 - delta), ")
    assert "population FPR <= target" in report.guarantee


def test_bootstrap_states_an_asymptotic_promise_only():
    s = {f"n{i}": i / 100 for i in range(100)} | {f"p{i}": 0.995 + i / 1000 for i in range(5)}
    y = {k: k.startswith("p") for k in s}
    report = calibrate(
        s, y, fitter="bootstrap-ci", fitter_options={"resamples": 400}, target_fpr=0.05
    )
    assert "bootstrap" in report.guarantee and "no finite-sample guarantee" in report.guarantee


def test_a_third_party_fitter_that_states_no_guarantee_still_works_and_the_report_says_so():
    class Legacy:
        def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
            return FitResult(0.5, 0.0, 1.0, 1, 1, FLAG_HIGH)  # written before `guarantee`

    report = calibrate({"a": 0.9, "b": 0.1}, {"a": True, "b": False}, fitter=Legacy())
    assert report.result.guarantee is None
    assert report.to_dict()["guarantee"] == NO_GUARANTEE == "the fitter states no guarantee"


# -- K > epochs: refused while the config is checked, before --out ------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("--epochs", "2", "--reducer", "at_least_3"),
        ("--epochs", "2", "--reducer", "pass_at_3"),
        ("--reducer", "at_least_2"),  # one epoch by default
        ("--config", "c.toml"),
        ("--config", "c.toml", "--epochs", "1"),  # the flag overrides the file: still K > epochs
    ],
)
def test_a_reducer_that_can_never_fail_is_refused_before_out_is_created(tmp_path, args):
    (tmp_path / "c.toml").write_text('[run]\nepochs = 2\nreducer = "at_least_3"\n')
    before = tree(tmp_path)
    done = rlk("run", "-p", "relevance-hijack", "--smoke", *args, "-o", "out", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    [problem] = [line for line in done.stderr.splitlines() if "$.run.reducer" in line]
    assert "> epochs" in problem and "can ever" in problem
    assert not (tmp_path / "out").exists()
    assert tree(tmp_path) == before


def test_a_reducer_refusal_leaves_an_existing_out_untouched(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text('{"earlier": true}\n')
    before = tree(tmp_path)
    done = rlk(
        "run", "-p", "relevance-hijack", "--epochs", "2", "--reducer", "at_least_3", "-o", "out",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "no case can ever fail" in done.stderr
    assert tree(tmp_path) == before


def test_k_equal_to_the_epochs_runs(tmp_path):
    done = rlk(
        "run", "-p", "relevance-hijack", "--smoke", "--epochs", "2", "--reducer", "at_least_2",
        "-o", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert (tmp_path / "out" / "report.json").exists()


# -- the thresholds file says where each threshold came from -----------------------------------


def test_the_thresholds_file_records_fitter_date_and_labels_and_run_prints_them(tmp_path):
    scored(tmp_path, [0.0] * 20 + [0.6], [0.8, 1.0])
    (tmp_path / "labels.jsonl").rename(tmp_path / "my_labels.jsonl")
    args = ("--scores", "scores.jsonl", "--labels", "my_labels.jsonl")
    stored = rlk(
        "calibrate", *args, "--pack", "relevance-hijack", "--metric", "poison_rate_at_k",
        "--target-fpr", "0.05", "--write-thresholds", "-o", "cal",
        cwd=tmp_path, epoch=EPOCH_2026_11_24,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    entry = json.loads((tmp_path / "ragleaklab.thresholds.json").read_text())["packs"][
        "relevance-hijack"
    ]["poison_rate_at_k"]
    assert entry["fitter"]["name"] == "exact"
    assert entry["calibrated_at"] == "2026-11-24T12:00:00Z"
    assert entry["labels"]["source"] == "my_labels.jsonl"
    assert entry["guarantee"].startswith("FPR on the calibration sample <= target")
    record = "(calibrated by exact on 2026-11-24, labels my_labels.jsonl)"
    origin = f"ragleaklab.thresholds.json {record}"
    path = tmp_path / "ragleaklab.thresholds.json"
    [threshold] = read_thresholds(path).thresholds_for("relevance-hijack").values()
    assert (threshold.value, threshold.source) == (0.8, f"{path} {record}")
    ran = rlk("run", "-p", "relevance-hijack", "--smoke", "-o", "out", cwd=tmp_path)
    assert ran.returncode in (0, 1), ran.stderr
    # The summary names the file, fitter, date and labels (wrapped under 100 characters).
    lines = ran.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("    poison_rate_at_k: "))
    said = " ".join(line.strip() for line in lines[at : at + 2])
    assert said == f"poison_rate_at_k: score >= 0.8 -> FAIL, threshold from {origin}"


def test_a_pack_s_own_labels_are_recorded_by_pack_name(tmp_path):
    from ragleaklab_core.run.calibrate_pack import pack_labels

    labels = pack_labels("relevance-hijack").records
    rows = [{"test_id": t, "score": 1.0 if lab else 0.0} for t, lab in labels.items()]
    write_jsonl(tmp_path / "pack_scores.jsonl", rows)
    stored = rlk(
        "calibrate", "--scores", "pack_scores.jsonl", "--pack", "relevance-hijack",
        "--metric", "poison_rate_at_k", "--write-thresholds", "-o", "cal",
        cwd=tmp_path, epoch=EPOCH_2026_11_24,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    path = tmp_path / "ragleaklab.thresholds.json"
    file = read_thresholds(path)
    entry = file.packs["relevance-hijack"]["poison_rate_at_k"]
    assert entry["labels"]["source"] == "pack relevance-hijack"
    assert file.thresholds_for("relevance-hijack")["poison_rate_at_k"].source == (
        f"{path} (calibrated by exact on 2026-11-24, labels of pack relevance-hijack)"
    )


def test_an_old_thresholds_file_without_the_record_still_loads(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(
        json.dumps(
            {
                "format": "ragleaklab-thresholds",
                "version": 1,
                "packs": {
                    "p": {
                        "v": {"threshold": 0.4, "decision_rule": FLAG_HIGH},
                        "w": {
                            "threshold": None,
                            "decision_rule": FLAG_LOW,
                            "fitter": "not-a-table",
                            "labels": {"path": "l.jsonl", "sha256": "x"},
                        },
                    }
                },
            }
        )
    )
    loaded = read_thresholds(path).thresholds_for("p")
    assert (loaded["v"].value, loaded["v"].source) == (0.4, f"{path} (p)")
    assert loaded["w"].value is None and loaded["w"].source == f"{path} (labels l.jsonl)"


# -- a fitter whose threshold misses the target on the labelled data ---------------------------

LOOSE_FITTER = """
import attrs
from ragleaklab_core import FLAG_HIGH, FitResult


@attrs.define
class Loose:
    threshold: float = 0.5

    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        flags = [s >= self.threshold for s in scores]
        fp = sum(f and not y for f, y in zip(flags, labels))
        tp = sum(f and y for f, y in zip(flags, labels))
        n_pos = sum(bool(y) for y in labels)
        n_neg = len(labels) - n_pos
        return FitResult(self.threshold, fp / n_neg, tp / n_pos, n_pos, n_neg, FLAG_HIGH,
                         false_positives=fp, true_positives=tp)
"""


def test_a_threshold_that_misses_the_target_on_the_sample_is_never_said_to_meet_it():
    class Loose:
        def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
            return FitResult(0.5, 0.5, 1.0, 2, 4, FLAG_HIGH, false_positives=2, true_positives=2)

    scores = {"n1": 0.9, "n2": 0.8, "n3": 0.1, "n4": 0.2, "p1": 0.95, "p2": 0.7}
    labels = {k: k.startswith("p") for k in scores}
    report = calibrate(scores, labels, fitter=Loose(), target_fpr=0.25)
    assert report.misses_target
    assert any("misses the target false-positive rate 0.25" in w for w in report.warnings)
    assert any("flags 2 of 4 negatives" in w and "at most 1" in w for w in report.warnings)
    assert not any("meets the target" in w for w in report.warnings)
    # One false positive of four is exactly the target: met.
    met = calibrate(scores, labels, fitter=Loose(), target_fpr=0.5)
    assert not met.misses_target


def test_calibrate_exits_1_when_the_fitted_threshold_misses_the_target(tmp_path, rlk_fake_dist):
    root = rlk_fake_dist(
        "ragleaklab-loose",
        entry_points={"ragleaklab.fitters": {"loose": "rlk_loose:Loose"}},
        modules={"rlk_loose.py": LOOSE_FITTER},
    )
    args = scored(tmp_path, [0.9, 0.8, 0.1, 0.2], [0.95, 0.7])
    environ = {"PYTHONPATH": str(root)}
    done = _rlk_env(
        environ,
        "calibrate",
        *args,
        "--fitter",
        "loose",
        "--target-fpr",
        "0.25",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert "error: the fitted threshold misses the target false-positive rate 0.25" in done.stderr
    assert "flags 2 of 4 negatives" in done.stderr
    assert (tmp_path / "out" / REPORT).is_file()
    # Storing it is refused, and nothing is written at all.
    before = tree(tmp_path)
    refused = _rlk_env(
        environ,
        "calibrate",
        *args,
        "--fitter",
        "loose",
        "--target-fpr",
        "0.25",
        "--out",
        "out2",
        *PACK_ARGS,
        "--write-thresholds",
        cwd=tmp_path,
    )
    assert refused.returncode == 2, refused.stderr
    assert "--write-thresholds refused: the fitted threshold 0.5 flags 2 of 4 negatives" in (
        refused.stderr
    )
    assert "Traceback" not in refused.stderr and refused.stdout == ""
    assert tree(tmp_path) == before


def _rlk_env(environ: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return rlk(*args, cwd=cwd, env=environ)
