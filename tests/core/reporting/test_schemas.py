"""The JSON Schemas in docs/schemas/ validate every report ragleaklab writes, and only those.

Reports are produced the way users produce them: the CLI on the built-in packs (``--smoke``),
with errored and unscorable cases, a thresholds file, epochs, a recording and its replay;
``calibrate`` on a pack and on a scores file with each fitter, with and without ``--plot``; and
the Python API. The complete examples in the docs are validated too.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test dependency group")

from ragleaklab_core import calibrate  # noqa: E402
from tests.support.workspace import Workspace  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "docs" / "schemas"
FITTERS = ("exact", "bootstrap-ci", "neyman-pearson")


@functools.cache
def validator(name: str) -> Any:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(name: str, document: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(name).iter_errors(document)
    ]


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Every report the commands below write, by schema name."""
    ws = Workspace(tmp_path_factory.mktemp("schemas"))
    ws.cli("run", "--smoke", "-o", "all")
    ws.cli(
        "calibrate",
        "--pack",
        "sentinel-takeover-safe",
        "--smoke",
        "-o",
        "cal-pack",
        "--write-thresholds",
        "--thresholds",
        "thresholds.json",
    )
    ws.cli(
        "run",
        "-p",
        "sentinel-takeover-safe",
        "--smoke",
        "--thresholds",
        "thresholds.json",
        "--epochs",
        "2",
        "--reducer",
        "max",
        "-o",
        "gated",
    )
    ws.cli("run", "-p", "relevance-hijack", "--smoke", "--target", "broken", "-o", "errored")
    ws.cli(
        "run",
        "-p",
        "relevance-hijack",
        "--smoke",
        "--target",
        "unreported",
        "--tolerate-errors",
        "-o",
        "unscorable",
    )
    ws.cli("run", "-p", "sentinel-takeover-safe", "--smoke", "--record", "rec", "-o", "recorded")
    ws.cli("run", "-p", "sentinel-takeover-safe", "--smoke", "--replay", "rec", "-o", "replayed")
    rows = [(f"n{i:02d}", i / 40, "negative") for i in range(30)]
    rows += [(f"p{i:02d}", 0.5 + i / 40, "positive") for i in range(15)]
    (ws.root / "scores.jsonl").write_text(
        "".join(json.dumps({"test_id": t, "score": s}) + "\n" for t, s, _ in rows)
        + json.dumps({"test_id": "unlabelled", "score": 0.3})
        + "\n",
        "utf-8",
    )
    (ws.root / "labels.jsonl").write_text(
        "".join(json.dumps({"test_id": t, "label": lab}) + "\n" for t, _, lab in rows)
        + json.dumps({"test_id": "unscored", "label": "negative"})
        + "\n",
        "utf-8",
    )
    scored = ("--scores", "scores.jsonl", "--labels", "labels.jsonl")
    for fitter in FITTERS:
        ws.cli(
            "calibrate", *scored, "--fitter", fitter, "--target-fpr", "0.1", "-o", f"cal-{fitter}"
        )
    ws.cli("calibrate", *scored, "--lower-is-worse", "--roc-max-rows", "3", "-o", "cal-lower")
    ws.cli("calibrate", *scored, "--plot", "-o", "cal-plot")
    return {
        "report": sorted(ws.root.glob("*/report.json")),
        "runs": sorted(ws.root.glob("*/runs.jsonl")),
        "calibration_report": sorted(ws.root.glob("*/calibration_report.json")),
    }


def test_every_command_wrote_its_report(produced):
    assert [p.parent.name for p in produced["report"]] == [
        "all",
        "errored",
        "gated",
        "recorded",
        "replayed",
        "unscorable",
    ]
    assert len(produced["runs"]) == 6
    assert [p.parent.name for p in produced["calibration_report"]] == [
        "cal-bootstrap-ci",
        "cal-exact",
        "cal-lower",
        "cal-neyman-pearson",
        "cal-pack",
        "cal-plot",
    ]
    assert (produced["calibration_report"][-1].parent / "roc.png").is_file()


def test_run_reports_validate(produced):
    for path in produced["report"]:
        report = json.loads(path.read_text(encoding="utf-8"))
        assert problems("report", report) == [], path
    by_dir = {p.parent.name: json.loads(p.read_text("utf-8")) for p in produced["report"]}
    # the produced reports exercise the optional parts of the schema
    assert by_dir["errored"]["packs"][0]["errored"]
    assert by_dir["unscorable"]["packs"][0]["unscorable"]["retrieval"]["count"] == 30
    assert by_dir["gated"]["inputs"]["thresholds_file"]["sha256"]
    assert by_dir["replayed"]["settings"]["replay"] is not None


def test_every_runs_line_validates(produced):
    lines = 0
    for path in produced["runs"]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert problems("runs", json.loads(line)) == [], f"{path}:{number}"
            lines += 1
    assert lines > 150
    errored = produced["runs"][1].read_text("utf-8").splitlines()
    assert any(json.loads(line)["error"] is not None for line in errored)


def test_calibration_reports_validate(produced):
    for path in produced["calibration_report"]:
        assert problems("calibration_report", json.loads(path.read_text("utf-8"))) == [], path


def test_an_api_calibration_with_a_fitter_object_validates():
    from ragleaklab_plugins.fitters.exact import ExactSweepFitter

    report = calibrate(
        {"a": 0.1, "b": 0.9, "c": 0.4},
        {"a": "negative", "b": "positive", "c": "negative"},
        fitter=ExactSweepFitter(),
        target_fpr=0.5,
        inputs={"harness": {"name": "my-harness", "run": 7}},
    )
    document = json.loads(report.to_json())
    assert document["fitter"]["name"] is None
    assert problems("calibration_report", document) == []


# --------------------------------------------------------------------------- strictness


def mutations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Documents a wrong writer could produce, each with what is wrong."""
    extra = copy.deepcopy(document)
    extra["unexpected"] = 1
    yield "an unknown top-level key", extra
    missing = copy.deepcopy(document)
    del missing[next(iter(missing))]
    yield "a missing key", missing
    stamped = copy.deepcopy(document)
    stamped["generated_at"] = "2023-11-14 22:13"
    yield "a timestamp not in UTC ISO-8601 seconds", stamped


def test_report_schema_rejects_what_ragleaklab_never_writes(produced):
    report = json.loads(produced["report"][0].read_text("utf-8"))
    for what, document in mutations(report):
        assert problems("report", document), what
    bad = copy.deepcopy(report)
    bad["exit_code"] = 1 - bad["exit_code"]
    assert problems("report", bad), "an exit code that contradicts the verdict"
    bad = copy.deepcopy(report)
    value = next(iter(bad["packs"][0]["values"].values()))
    value["failing_ids"] = [f"id-{i}" for i in range(51)]
    assert problems("report", bad), "more than 50 listed ids"
    bad = copy.deepcopy(report)
    value = next(iter(bad["packs"][0]["values"].values()))
    value["threshold"] = {"value": 0.2, "decision_rule": "score => threshold", "source": "x"}
    assert problems("report", bad), "an unknown decision rule"
    bad = copy.deepcopy(report)
    bad["settings"]["epochs"] = 0
    assert problems("report", bad), "zero epochs"


def test_runs_and_calibration_schemas_reject_what_ragleaklab_never_writes(produced):
    line = json.loads(produced["runs"][0].read_text("utf-8").splitlines()[0])
    bad = copy.deepcopy(line)
    next(iter(bad["metrics"].values()))["values"]["x"] = 1.5
    assert problems("runs", bad), "a metric value outside [0, 1]"
    bad = copy.deepcopy(line)
    bad["retrieved"] = [{"doc_id": "d", "chunk_id": None, "score": None, "text": "t"}]
    assert problems("runs", bad), "retrieved text (runs.jsonl never stores it)"
    cal = json.loads(produced["calibration_report"][0].read_text("utf-8"))
    for what, document in mutations(cal):
        assert problems("calibration_report", document), what
    bad = copy.deepcopy(cal)
    bad["result"]["achieved_fpr"] = 1.2
    assert problems("calibration_report", bad), "a rate above 1"
    bad = copy.deepcopy(cal)
    bad["coverage"]["unlabelled"]["ids"] = [str(i) for i in range(21)]
    assert problems("calibration_report", bad), "more than 20 listed ids"


# --------------------------------------------------------------------------- docs

KINDS = (
    ("report", {"tool", "packs", "totals"}),
    ("calibration_report", {"result", "roc_table", "fitter"}),
    ("runs", {"test_id", "epoch", "metrics", "elapsed_ms"}),
)


def _objects(block: str) -> list[Any]:
    try:
        return [json.loads(block)]
    except ValueError:
        pass
    found = []
    for line in block.splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            return []  # neither one document nor JSON lines: not an example of ours
    return found


def _complete(value: Any) -> bool:
    if isinstance(value, str):
        return "..." not in value
    if isinstance(value, dict):
        return all(_complete(v) for v in value.values())
    if isinstance(value, list):
        return all(_complete(v) for v in value)
    return True


def doc_examples() -> list[tuple[str, str, Any]]:
    """(where, schema, document) for every complete report example in the docs."""
    examples = []
    for path in sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"```json\n(.*?)```", text, re.S):
            for document in _objects(match.group(1)):
                if not isinstance(document, dict) or not _complete(document):
                    continue
                for kind, keys in KINDS:
                    if keys <= set(document):
                        line = text.count("\n", 0, match.start()) + 1
                        examples.append((f"{path.name}:{line}", kind, document))
    return examples


def test_complete_report_examples_in_the_docs_validate():
    examples = doc_examples()
    assert {kind for _, kind, _ in examples} >= {"report", "runs"}, "embedding.md shows both"
    for where, kind, document in examples:
        assert problems(kind, document) == [], where


def test_an_abridged_example_is_not_mistaken_for_a_complete_one():
    abridged = textwrap.dedent(
        """
        {"tool": {"name": "ragleaklab", "version": "0.1.0"}, "packs": ["..."], "totals": {}}
        """
    )
    assert _objects(abridged) and not _complete(_objects(abridged)[0])
