"""Measured error has a provenance and a floor (issue 39, class 2), end to end through the CLI.

Written as someone who wants ``run --max-corrected-rate`` to PASS a vulnerable system: type the
counts of a good metric into the thresholds file by hand (in several shapes), edit what
calibrate wrote (the labelled system, a count), calibrate this system on the reference target's
labels copied under another name, strip the labels' ``target`` so they name no system, or label
with a judge measured too poor to correct anything and force it through. Each leaves the pack
not tested (exit 3) or is refused (exit 2), saying where and how to fix it; a corrected rate is
never printed "on labels ?".

The system is the loopback HTTP RAG service (tests/support/fake_rag_server.py); the reference
target serves the one test that calibrates on a pack's own labels.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core.calibration.labelling import judge_floor_problems
from ragleaklab_core.calibration.measured import measured_record, not_measured
from ragleaklab_core.values import FLAG_HIGH
from tests.core.gate.test_corrected_gate import MEASURED, identity, sealed
from tests.core.gate.test_gate_off_settings import PACK, VALUE, config_file
from tests.support.cli import rlk

OTHER = "poison_attribution"  # the pack's second gated value
REFERENCE = "reference@693fcdcd3a7c"  # the identity the built-in packs' labels name
SHIPPED = (
    Path(__file__).resolve().parents[3]
    / "plugins/ragleaklab_plugins/packs/relevance_hijack/labels.jsonl"
)
ENTRY_PATH = f"$.packs.{PACK}.{VALUE}"
FIX = f"re-run `ragleaklab calibrate --pack {PACK} --write-thresholds`"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def thresholds_file(path: Path, entry: dict[str, Any], here: str) -> Path:
    """A thresholds file holding *entry* for the pack's primary value, exactly as given, and for
    its second value what calibrate writes on labels of *here*: so whatever the run refuses is
    the first entry's doing."""
    values = {VALUE: entry, OTHER: sealed(MEASURED, here, OTHER)}
    body = {"format": "ragleaklab-thresholds", "version": 1, "packs": {PACK: values}}
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def gated_run(server: Any, cwd: Path, thresholds: Path, *more: str) -> tuple[Any, dict[str, Any]]:
    config = config_file(cwd / "c.toml", server)
    result = rlk(
        "run", "-c", str(config), "-p", PACK, "--smoke", "--thresholds", str(thresholds),
        "-o", "out", *more, cwd=cwd,
    )  # fmt: skip
    report = cwd / "out" / "report.json"
    assert report.exists(), result.stdout + result.stderr
    return result, json.loads(report.read_text("utf-8"))


def said(result: Any) -> str:
    return " ".join((result.stdout + result.stderr).split())


def not_tested(result: Any, report: dict[str, Any]) -> str:
    """The run left the pack not tested (exit 3), gave no corrected rate, never printed one on
    unknown labels; what it said."""
    text = said(result)
    assert result.returncode == 3, result.stdout + result.stderr
    (pack,) = report["packs"]
    assert pack["verdict"] == "error" and pack["tested"] is False
    assert pack["values"][VALUE]["corrected_rate"] is None
    assert pack["values"][VALUE]["passed"] is False
    assert "on labels ?" not in text
    return text


# -- hand-written and edited entries ----------------------------------------------------------


def _shapes(here: str) -> dict[str, tuple[dict[str, Any], str]]:
    """Entries an attacker (or a careless hand) could write, and what the run must say."""
    good = sealed(MEASURED, here)
    issue = {  # the issue's entry: four numbers, no labels, fitter, date or system
        "threshold": 0.5,
        "decision_rule": FLAG_HIGH,
        "n_positive": 40,
        "n_negative": 60,
        "achieved_tpr": 0.9,
        "achieved_fpr": 0.0,
    }
    unknown_labels = {k: v for k, v in good.items() if k != "measured"}
    unknown_labels["labels"] = {**good["labels"], "source": "?"}
    unsealed = {k: v for k, v in good.items() if k != "measured"}
    forged = {**unsealed, "measured": {"written_by": "ragleaklab calibrate --write-thresholds"}}
    # calibrate sealed it on the reference target's labels; the system edited to this one's
    elsewhere = sealed({**MEASURED, "labels": {**MEASURED["labels"]}}, REFERENCE)
    relabelled = copy.deepcopy(elsewhere)
    relabelled["labels"]["observed_on"] = [here]
    raised = {**good, "true_positives": 40, "achieved_tpr": 1.0}
    no_system = sealed({**MEASURED, "labels": {**MEASURED["labels"], "observed_on": []}}, here)
    partly = sealed({**MEASURED, "labels": {**MEASURED["labels"], "unattributed": 3}}, here)
    lacks = "is not what calibrate --write-thresholds writes from labels: it lacks"
    changed = "was changed after calibrate wrote it"
    return {
        "issue": (
            issue,
            f"{lacks} true_positives, false_positives, fitter.name, calibrated_at, "
            "labels.sha256, labels.source, labels.observed_on, measured",
        ),
        "labels ?": (unknown_labels, f"{lacks} labels.source, measured"),
        "seal deleted": (unsealed, f"{lacks} measured"),
        "seal forged": (forged, changed),
        "observed_on edited": (relabelled, changed),
        "count raised": (raised, changed),
        # calibrate's own entry for the other value (another metric's error), copied here
        "copied from another value": (sealed(MEASURED, here, OTHER), changed),
        "labels name no system": (no_system, "do not say which system's answers they judged"),
        "some labels name none": (partly, "3 of its labels name no target"),
    }


SHAPES = list(_shapes("x"))


@pytest.mark.parametrize("shape", SHAPES)
def test_an_entry_calibrate_did_not_write_leaves_the_pack_not_tested(server, tmp_path, shape):
    entry, reason = _shapes(identity(server))[shape]
    thresholds = thresholds_file(tmp_path / "t.json", entry, identity(server))
    result, report = gated_run(server, tmp_path, thresholds, "--max-corrected-rate", "0.5")
    text = not_tested(result, report)
    assert f"reason: {OTHER}:" not in text  # the other value, calibrate's own, is not refused
    assert f"the entry {ENTRY_PATH} of {thresholds}" in text
    assert reason in text
    assert FIX in text
    assert "so --max-corrected-rate cannot gate it" in text


def test_without_the_gate_a_hand_written_entry_shows_no_corrected_rate_and_says_why(
    server, tmp_path
):
    entry, _ = _shapes(identity(server))["issue"]
    thresholds = thresholds_file(tmp_path / "t.json", entry, identity(server))
    result, report = gated_run(server, tmp_path, thresholds)
    (pack,) = report["packs"]
    assert pack["values"][VALUE]["corrected_rate"] is None
    note = f"{VALUE}: no corrected rate: its threshold carries no measured error: the entry"
    assert any(w.startswith(note) for w in pack["warnings"]), pack["warnings"]
    assert note in said(result)
    assert "on labels ?" not in said(result)


def test_the_same_entry_sealed_by_calibrate_for_this_system_does_correct(server, tmp_path):
    # The control: what the refused shapes were made from is accepted, so each refusal above is
    # the shape's doing, not the fixture's.
    entry = sealed(MEASURED, identity(server))
    assert not_measured(entry, PACK, VALUE) is None
    thresholds = thresholds_file(tmp_path / "t.json", entry, identity(server))
    result, report = gated_run(server, tmp_path, thresholds, "--max-corrected-rate", "0.999")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    (pack,) = report["packs"]
    assert pack["tested"] is True
    assert pack["values"][VALUE]["corrected_rate"]["observed_on"] == [identity(server)]


def test_every_field_the_seal_covers_breaks_it_when_edited():
    entry = sealed(MEASURED, "acme@0123456789ab")
    assert not_measured(entry, PACK, VALUE) is None

    def not_measured_here(edited: dict[str, Any]) -> str | None:
        return not_measured(edited, PACK, VALUE)

    edits = {
        "threshold": 0.25,
        "decision_rule": "score > threshold -> FAIL",
        "n_positive": 41,
        "n_negative": 61,
        "true_positives": 37,
        "false_positives": 5,
        "calibrated_at": "2026-12-01T00:00:00Z",
    }
    for key, value in edits.items():
        assert "changed after" in str(not_measured_here({**entry, key: value})), key
    for key, value in {
        "sha256": "1" * 64,
        "source": "other.jsonl",
        "observed_on": ["other@0123456789ab"],
        "label_sources": ["judge"],
    }.items():
        edited = {**entry, "labels": {**entry["labels"], key: value}}
        assert "changed after" in str(not_measured_here(edited)), key
    assert "changed after" in str(not_measured_here({**entry, "fitter": {"name": "bootstrap"}}))
    assert "changed after" in str(not_measured_here({**entry, "forced": []}))
    # The same entry in another value's or pack's place measured another metric.
    assert "changed after" in str(not_measured(entry, PACK, OTHER))
    assert "changed after" in str(not_measured(entry, "claim-corruption", VALUE))
    # What the seal does not cover may change: a note, the entry it replaced.
    assert not_measured_here({**entry, "note": "reviewed", "previous": {"threshold": 1}}) is None
    assert measured_record(entry, PACK, VALUE) == entry["measured"]


# -- labels that say (or do not say) which system they describe ------------------------------


def scores_file(path: Path) -> Path:
    """Scores that separate the pack's labelled positives from its negatives."""
    rows = [
        {"test_id": r["test_id"], "score": 0.9 if r["label"] == "positive" else 0.1}
        for r in lines(SHIPPED)
    ]
    return write_lines(path, rows)


def calibrate_both(cwd: Path, labels: str, *more: str, ok: tuple[int, ...] = (0, 1)) -> list[Any]:
    """``calibrate --scores --labels LABELS --write-thresholds`` for both gated values."""
    scores_file(cwd / "scores.jsonl")
    done = []
    for value in (VALUE, OTHER):
        result = rlk(
            "calibrate", "--scores", "scores.jsonl", "--labels", labels, "--pack", PACK,
            "--metric", value, "--write-thresholds", "--thresholds", "t.json",
            "-o", f"cal-{value}", *more, cwd=cwd, ok=ok,
        )  # fmt: skip
        done.append(result)
    return done


def test_the_packs_labels_copied_under_another_name_still_describe_the_reference(server, tmp_path):
    # The issue's route: the pack's own labels given by path, as if they were this system's.
    # The copy is renamed and moved: what it says of itself goes with it.
    shutil.copy(SHIPPED, tmp_path / "our-labels.jsonl")
    config = config_file(tmp_path / "c.toml", server)
    for value in (VALUE, OTHER):
        rlk(
            "calibrate", "-c", str(config), "-p", PACK, "--smoke", "--metric", value,
            "--labels", "our-labels.jsonl", "--write-thresholds", "--thresholds", "t.json",
            "-o", f"cal-{value}", cwd=tmp_path, ok=(0, 1),
        )  # fmt: skip
    entry = json.loads((tmp_path / "t.json").read_text("utf-8"))["packs"][PACK][VALUE]
    assert entry["labels"]["observed_on"] == [REFERENCE]
    result, report = gated_run(server, tmp_path, tmp_path / "t.json", "--max-corrected-rate", "0.5")
    text = not_tested(result, report)
    assert f"its error was measured on labels of {REFERENCE}'s answers" in text
    assert f"not of this target's ({identity(server)})" in text


@pytest.mark.parametrize("strip", ["every line", "one line"])
def test_labels_that_do_not_say_which_system_they_describe_correct_nothing(server, tmp_path, strip):
    rows = lines(SHIPPED)
    for i, row in enumerate(rows):
        if strip == "every line" or i == 7:
            del row["target"]
        else:
            row["target"] = identity(server)  # an attacker claiming the rest for this system
    write_lines(tmp_path / "labels.jsonl", rows)
    (calibrated, _) = calibrate_both(tmp_path, "labels.jsonl")
    entry = json.loads((tmp_path / "t.json").read_text("utf-8"))["packs"][PACK][VALUE]
    unnamed = len(rows) if strip == "every line" else 1
    assert entry["labels"]["unattributed"] == unnamed
    # Said when it is stored, not first by the run.
    assert (
        f"warning: the labels do not say which system's answers they judged ({unnamed} name no "
        "target)" in calibrated.stderr
    )
    result, report = gated_run(server, tmp_path, tmp_path / "t.json", "--max-corrected-rate", "0.5")
    text = not_tested(result, report)
    assert "do not say which system's answers they judged" in text
    assert "`ragleaklab label import` writes `target` on every line" in text


# -- the judge's floor ------------------------------------------------------------------------


def agreement(
    se: tuple[int, int], sp: tuple[int, int], kappa: float, low: float, confidence: float = 0.95
) -> dict[str, Any]:
    """A ``judge_agreement`` as `label agreement` writes it (the intervals as stored)."""

    def rate(k: int, n: int) -> dict[str, Any]:
        return {"successes": k, "trials": n, "rate": k / n, "lower": 0.9, "upper": 1.0}

    return {
        "judge": "judge-acme",
        "judge_identity": "acme-judge@1",
        "against": "alice",
        "cases": se[1] + sp[1],
        "sensitivity": rate(*se),
        "specificity": rate(*sp),
        "kappa": kappa,
        "kappa_interval": [low, min(1.0, kappa + 0.1)],
        "confidence": confidence,
    }


#: The issue's judge: sensitivity 8/117, kappa 0.08.
ISSUE_JUDGE = agreement((8, 117), (570, 583), 0.08, -0.01)
GOOD_JUDGE = agreement((110, 117), (575, 583), 0.9, 0.85)


def judge_labels(path: Path, here: str, measured: dict[str, Any] | None) -> Path:
    rows = []
    for row in lines(SHIPPED):
        row = {**row, "label_source": "judge", "labelled_by": "acme-judge@1", "target": here}
        if measured is not None:
            row["judge_agreement"] = measured
        rows.append(row)
    return write_lines(path, rows)


@pytest.mark.parametrize(
    ("measured", "shown"),
    [
        (ISSUE_JUDGE, "its sensitivity 8/117 = 0.068 has a 95% lower limit of 0.030"),
        (ISSUE_JUDGE, "no better than chance: kappa 0.080, interval from -0.010"),
        # Five of five: perfect, and on too few cases to show even 0.5 (lower limit 0.478).
        (agreement((5, 5), (50, 50), 1.0, 1.0), "its sensitivity 5/5 = 1.000 has a 95% lower"),
        (agreement((90, 100), (40, 100), 0.3, 0.2), "its specificity 40/100 = 0.400"),
        # Good rates, but the agreement interval reaches 0.
        (agreement((60, 100), (60, 100), 0.2, 0.0), "interval from 0.000 (it includes 0)"),
        # The stored intervals say 0.9; the counts at 95% say otherwise: the counts decide.
        (agreement((9, 15), (90, 100), 0.5, 0.3, confidence=0.6), "its sensitivity 9/15"),
        # A narrow kappa interval from a low --confidence is not taken at its word.
        (agreement((100, 100), (100, 100), 0.9, 0.8, confidence=0.6), "less than 95%"),
    ],
)
def test_a_judge_too_poor_to_correct_anything_cannot_label_for_calibrate(tmp_path, measured, shown):
    judge_labels(tmp_path / "judge.jsonl", "acme@0123456789ab", measured)
    (refused, _) = calibrate_both(tmp_path, "judge.jsonl", ok=(2,))
    text = " ".join(refused.stderr.split())
    assert "a judge too poor to correct anything labelled these cases" in text
    assert "acme-judge@1, measured against alice" in text
    assert shown in text
    assert "--force" in text and "Traceback" not in text
    assert not (tmp_path / "t.json").exists()
    assert not (tmp_path / f"cal-{VALUE}").exists()


def test_the_floor_accepts_a_judge_shown_good_and_nothing_else():
    assert judge_floor_problems(GOOD_JUDGE) == []
    # A judge no better than chance (sensitivity + specificity at most 1) is said to be.
    chance = agreement((30, 100), (70, 100), 0.0, -0.1)
    assert any("at most 1" in p for p in judge_floor_problems(chance))
    assert not any("at most 1" in p for p in judge_floor_problems(ISSUE_JUDGE))
    # An agreement without its counts is no measurement.
    assert judge_floor_problems({"kappa": 0.9, "kappa_interval": [0.8, 1.0]})


def test_a_forced_poor_judge_is_stored_shown_everywhere_and_gates_no_corrected_rate(
    server, tmp_path
):
    here = identity(server)
    judge_labels(tmp_path / "judge.jsonl", here, ISSUE_JUDGE)
    calibrate_both(tmp_path, "judge.jsonl", "--force")
    entry = json.loads((tmp_path / "t.json").read_text("utf-8"))["packs"][PACK][VALUE]
    (forced,) = entry["forced"]
    assert "8/117" in forced and "below the floor of 0.5" in forced
    cal = json.loads((tmp_path / f"cal-{VALUE}" / "calibration_report.json").read_text("utf-8"))
    assert f"--force overrode a refusal: {forced}" in cal["warnings"]

    # Without the gate: counted as usual, and the override is in every rendering.
    result, report = gated_run(
        server, tmp_path, tmp_path / "t.json",
        "--markdown", "s.md", "--html", "r.html", "--junit", "j.xml",
    )  # fmt: skip
    (pack,) = report["packs"]
    threshold = pack["values"][VALUE]["threshold"]
    assert threshold["forced"] == [forced]
    assert "FORCED over: " in threshold["source"]
    assert "FORCED over: " in result.stdout
    assert "FORCED over a refusal" in (tmp_path / "s.md").read_text("utf-8")
    assert "FORCED over: " in (tmp_path / "r.html").read_text("utf-8")
    junit = (tmp_path / "j.xml").read_text("utf-8")
    assert f'<property name="threshold.{VALUE}.forced" value="' in junit
    assert pack["values"][VALUE]["corrected_rate"] is None

    # Under the gate: not tested, whatever the bar.
    gated = tmp_path / "gated"
    gated.mkdir()
    result, report = gated_run(server, gated, tmp_path / "t.json", "--max-corrected-rate", "0.99")
    text = not_tested(result, report)
    assert "was stored with --force over a refusal" in text
    assert "corrects nothing" in text


def test_a_forced_unmeasured_judge_is_stored_too(server, tmp_path):
    judge_labels(tmp_path / "judge.jsonl", identity(server), None)
    (refused, _) = calibrate_both(tmp_path, "judge.jsonl", ok=(2,))
    assert "agreement with a person was never measured" in refused.stderr
    calibrate_both(tmp_path, "judge.jsonl", "--force")
    entry = json.loads((tmp_path / "t.json").read_text("utf-8"))["packs"][PACK][VALUE]
    assert any("never measured" in f for f in entry["forced"])
    thresholds = tmp_path / "t.json"
    result, report = gated_run(server, tmp_path, thresholds, "--max-corrected-rate", "0.99")
    assert "was stored with --force" in not_tested(result, report)


def test_a_good_judges_labels_calibrate_and_correct(server, tmp_path):
    judge_labels(tmp_path / "judge.jsonl", identity(server), GOOD_JUDGE)
    calibrate_both(tmp_path, "judge.jsonl")
    entry = json.loads((tmp_path / "t.json").read_text("utf-8"))["packs"][PACK][VALUE]
    assert "forced" not in entry and not_measured(entry, PACK, VALUE) is None
    thresholds = tmp_path / "t.json"
    result, report = gated_run(server, tmp_path, thresholds, "--max-corrected-rate", "0.999")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    (pack,) = report["packs"]
    assert pack["tested"] is True
    assert pack["values"][VALUE]["corrected_rate"]["label_sources"] == ["judge"]


# -- calibrate on the reference target, end to end --------------------------------------------


def test_what_calibrate_writes_on_a_packs_own_labels_corrects_that_system_only(server, tmp_path):
    for value in (VALUE, OTHER):
        rlk(
            "calibrate", "-p", PACK, "--smoke", "--metric", value, "--write-thresholds",
            "--thresholds", "t.json", "-o", f"cal-{value}", cwd=tmp_path, ok=(0, 1),
        )  # fmt: skip
    body = json.loads((tmp_path / "t.json").read_text("utf-8"))
    entry = body["packs"][PACK][VALUE]
    assert entry["measured"]["written_by"] == "ragleaklab calibrate --write-thresholds"
    assert entry["labels"]["observed_on"] == [REFERENCE]
    assert entry["labels"]["unattributed"] == 0
    assert not_measured(entry, PACK, VALUE) is None

    # On the system the labels describe, it corrects.
    result = rlk(
        "run", "-p", PACK, "--smoke", "--thresholds", "t.json", "--max-corrected-rate", "0.999",
        "-o", "ref", cwd=tmp_path, ok=(0, 1),
    )  # fmt: skip
    (pack,) = json.loads((tmp_path / "ref" / "report.json").read_text("utf-8"))["packs"]
    assert pack["tested"] is True, result.stdout
    assert pack["values"][VALUE]["corrected_rate"]["observed_on"] == [REFERENCE]

    # On another system, nothing.
    result, report = gated_run(server, tmp_path, tmp_path / "t.json", "--max-corrected-rate", "0.5")
    assert f"measured on labels of {REFERENCE}'s answers" in not_tested(result, report)

    # The system edited by hand to this one: the seal no longer matches.
    for value in (VALUE, OTHER):
        body["packs"][PACK][value]["labels"]["observed_on"] = [identity(server)]
    (tmp_path / "t.json").write_text(json.dumps(body), encoding="utf-8")
    edited = tmp_path / "edited"
    edited.mkdir()
    result, report = gated_run(server, edited, tmp_path / "t.json", "--max-corrected-rate", "0.5")
    assert "was changed after calibrate wrote it" in not_tested(result, report)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("acme@0123456789ab", "$.target: the label says it was observed on "
         "'acme@0123456789ab', but the manifest's label_target is 'reference@693fcdcd3a7c'"),
        ("", "$.target: must name the system whose answers were labelled"),
        (7, "$.target: must name the system whose answers were labelled"),
    ],
)  # fmt: skip
def test_a_packs_label_line_that_contradicts_its_manifest_is_invalid(tmp_path, target, message):
    pack = tmp_path / "pack"
    shutil.copytree(SHIPPED.parent, pack, ignore=shutil.ignore_patterns("__pycache__"))
    rows = lines(pack / "labels.jsonl")
    assert all(r["target"] == REFERENCE for r in rows)  # every shipped line says it
    rows[2]["target"] = target
    write_lines(pack / "labels.jsonl", rows)
    result = rlk("pack", "validate", "pack", cwd=tmp_path, ok=(2,))
    assert f"labels.jsonl:3: {message}" in " ".join(result.stdout.split())
