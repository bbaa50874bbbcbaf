"""A system that sends text which is not Unicode (a lone surrogate) never crashes a writer.

An HTTP service may legally send the JSON escape ``"\\ud800"`` and a python-target app may
return such a str. ragleaklab makes it U+FFFD once, before any metric reads it
(``ragleaklab_core._wellformed``): every output is valid UTF-8, the record lists the fields in
``repaired``, the run scores exactly what a system sending U+FFFD itself would get, and a
replay of the recording reproduces it, mark included. Input files holding one are refused.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragleaklab_core import Response, RetrievedDocument
from ragleaklab_core._wellformed import repair_response, well_formed
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

PACK = "sentinel-takeover-safe"
LONE = "\ud800"


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr


def utf8_outputs(directory: Path) -> list[Path]:
    """Every file under *directory*, each checked to be strict UTF-8 with no surrogate."""
    files = [p for p in sorted(directory.rglob("*")) if p.is_file()]
    assert files
    for path in files:
        text = path.read_bytes().decode("utf-8")  # strict: raises on anything else
        assert not any("\ud800" <= ch <= "\udfff" for ch in text), path
    return files


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def schema_valid(directory: Path) -> None:
    """report.json and every runs.jsonl line are valid by the documented schemas."""
    jsonschema = pytest.importorskip("jsonschema")
    schemas = Path(__file__).resolve().parents[3] / "docs" / "schemas"

    def check(name: str, document: Any) -> None:
        schema = json.loads((schemas / f"{name}.schema.json").read_text(encoding="utf-8"))
        jsonschema.validate(document, schema)

    check("report", json.loads((directory / "report.json").read_text(encoding="utf-8")))
    for record in lines(directory / "runs.jsonl"):
        check("runs", record)


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without what differs between two runs of one system (time, the repair mark)."""
    return [{k: v for k, v in r.items() if k not in ("elapsed_ms", "repaired")} for r in records]


# ---- the rule ---------------------------------------------------------------------------------


def by_hand(text: str) -> str:
    """The rule written out code point by code point: a high surrogate followed by a low one is
    the character they encode, any other surrogate is U+FFFD, everything else is kept."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if "\ud800" <= ch <= "\udbff" and "\udc00" <= nxt <= "\udfff":
            out.append(chr(0x10000 + ((ord(ch) - 0xD800) << 10) + ord(nxt) - 0xDC00))
            i += 2
            continue
        out.append("\ufffd" if "\ud800" <= ch <= "\udfff" else ch)
        i += 1
    return "".join(out)


@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)))
def test_well_formed_text_is_utf8_and_repairs_only_surrogates(text):
    fixed = well_formed(text)
    fixed.encode("utf-8")  # never raises
    assert fixed == by_hand(text)
    assert well_formed(fixed) is fixed
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        assert fixed is text  # well-formed text is left alone


def test_a_response_is_repaired_part_by_part_and_pairs_are_joined():
    response = Response(
        f"a {LONE} b",
        (RetrievedDocument("d1", "ok"), RetrievedDocument(f"d{LONE}", "\ud83d\ude00")),
        {"trace": [f"x{LONE}"]},
    )
    fixed, parts = repair_response(response)
    assert parts == ("answer", "retrieved", "target_metadata")
    assert fixed.answer == "a \ufffd b"
    assert fixed.retrieved == (RetrievedDocument("d1", "ok"), RetrievedDocument("d\ufffd", "😀"))
    assert fixed.metadata == {"trace": ["x\ufffd"]}
    clean = Response("fine", None, {"k": "v"})
    assert repair_response(clean) == (clean, ())


def test_every_text_on_its_way_out_is_well_formed():
    # Error messages, log lines and command-line errors pass through redact_text.
    from ragleaklab_core._redact import redact_text
    from ragleaklab_core.run.executor import describe

    assert redact_text(f"body {LONE} end") == "body \ufffd end"
    assert describe(ValueError(f"x{LONE}")) == "ValueError: x\ufffd"


# ---- through the command line: python target -------------------------------------------------

APP = """
def app(query):
    if "{fail}" and "{fail}" in query:
        raise ValueError("the model said {bad} and stopped")
    return "about " + query + " {bad} end"
"""


def python_config(tmp_path: Path, name: str, bad: str, fail: str = "") -> Path:
    body = APP.replace("{bad}", bad).replace("{fail}", fail)
    (tmp_path / f"{name}.py").write_text(body, encoding="utf-8")
    config = tmp_path / f"{name}.toml"
    config.write_text(
        f'[target]\nname = "python"\n[target.options]\ncallable = "{name}:app"\n',
        encoding="utf-8",
    )
    return config


def run(tmp_path: Path, config: Path, out: str, *more: str) -> subprocess.CompletedProcess[str]:
    result = rlk(
        "run", "-c", str(config), "-p", PACK, "--smoke", "-o", out, *more,
        cwd=tmp_path, pythonpath=[tmp_path],
    )  # fmt: skip
    no_traceback(result)
    return result


def test_a_python_app_answering_a_lone_surrogate_runs_records_replays_and_reports(tmp_path):
    # The app writes "\\ud800" in its source: a lone surrogate in the str it returns. Its twin
    # answers U+FFFD itself: the one run must score exactly as the other.
    broken = run(
        tmp_path, python_config(tmp_path, "broken_app", "\\ud800"), "out", "--record", "rec"
    )
    twin = run(tmp_path, python_config(tmp_path, "twin_app", "\\ufffd"), "twin")
    assert broken.returncode == twin.returncode
    assert broken.returncode in (0, 1)  # a verdict, not a crash
    utf8_outputs(tmp_path / "out")
    utf8_outputs(tmp_path / "rec")
    schema_valid(tmp_path / "out")
    records = lines(tmp_path / "out" / "runs.jsonl")
    assert records and all(r["repaired"] == ["answer"] for r in records)
    assert all(r["answer"].endswith(" \ufffd end") for r in records)
    twin_records = lines(tmp_path / "twin" / "runs.jsonl")
    assert all("repaired" not in r for r in twin_records)
    assert comparable(records) == comparable(twin_records)

    replayed = rlk("run", "--replay", "rec", "-p", PACK, "--smoke", "-o", "replayed", cwd=tmp_path)
    no_traceback(replayed)
    assert replayed.returncode == broken.returncode
    again = lines(tmp_path / "replayed" / "runs.jsonl")
    assert comparable(again) == comparable(records)
    assert [r["repaired"] for r in again] == [r["repaired"] for r in records]  # mark kept

    for fmt in ("markdown", "html", "text"):
        shown = rlk("report", "out", "--format", fmt, cwd=tmp_path)
        no_traceback(shown)
        assert shown.returncode == 0, shown.stderr


def test_an_error_message_holding_a_lone_surrogate_is_written_repaired(tmp_path):
    config = python_config(tmp_path, "raising_app", "\\udfff", fail="How")
    result = run(tmp_path, config, "out", "--tolerate-errors")
    assert result.returncode in (1, 3), result.stdout + result.stderr
    utf8_outputs(tmp_path / "out")
    errored = [r for r in lines(tmp_path / "out" / "runs.jsonl") if r["error"]]
    assert errored, "the app raises on every query holding 'How'"
    for record in errored:
        # Described by ragleaklab (made well-formed where it is described, as it is redacted).
        assert "the model said \ufffd and stopped" in record["error"]["message"]


# ---- through the command line: http target ---------------------------------------------------


@pytest.fixture
def surrogate_service(server, monkeypatch):
    """The loopback service, its answers and retrieved texts ending in *mark* (a lone
    surrogate, sent by json as the escape ``\\ud800``, or U+FFFD for the twin run)."""
    real = FakeRagServer._answer
    mark = {"text": LONE}

    def answer(self, query: str) -> Response:
        got = real(self, query)
        retrieved = tuple(
            RetrievedDocument(d.doc_id, f"{d.text} {mark['text']}", d.score, d.chunk_id)
            for d in got.retrieved or ()
        )
        return Response(f"{got.answer} {mark['text']}", retrieved, got.metadata)

    monkeypatch.setattr(FakeRagServer, "_answer", answer)
    return server, mark


def http_config(path: Path, server: FakeRagServer) -> Path:
    path.write_text(
        "\n".join(
            [
                '[target]\nname = "http"\n\n[target.options]',
                f'url = "{server.url("/simple")}"',
                f'ingest_url = "{server.url("/ingest")}"',
                f'reset_url = "{server.url("/reset")}"',
                "retries = 0",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return path


def test_an_http_service_sending_surrogate_escapes_runs_records_replays(
    surrogate_service, tmp_path
):
    server, mark = surrogate_service
    config = http_config(tmp_path / "rlk.toml", server)
    broken = run(tmp_path, config, "out", "--record", "rec")
    assert "\\ud800" in (tmp_path / "rec" / f"{PACK}.jsonl").read_text(encoding="utf-8")
    mark["text"] = "\ufffd"
    twin = run(tmp_path, config, "twin")
    assert broken.returncode == twin.returncode
    assert broken.returncode in (0, 1)
    utf8_outputs(tmp_path / "out")
    records = lines(tmp_path / "out" / "runs.jsonl")
    assert all("answer" in r["repaired"] for r in records)
    assert comparable(records) == comparable(lines(tmp_path / "twin" / "runs.jsonl"))

    replayed = rlk("run", "--replay", "rec", "-p", PACK, "--smoke", "-o", "again", cwd=tmp_path)
    no_traceback(replayed)
    assert replayed.returncode == broken.returncode
    again = lines(tmp_path / "again" / "runs.jsonl")
    assert comparable(again) == comparable(records)
    assert [r.get("repaired") for r in again] == [r.get("repaired") for r in records]
    shown = rlk("report", "out", "--format", "markdown", cwd=tmp_path, ok=[0])
    no_traceback(shown)


# ---- input files ------------------------------------------------------------------------------


def test_a_labels_file_holding_a_lone_surrogate_is_an_input_error(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"test_id": "st-0001", "label": "negative"}\n'
        '{"test_id": "st-\\udc00", "label": "positive"}\n',
        encoding="utf-8",
    )
    # Well-formed scores, so the refusal is the labels' whichever file calibrate reads first.
    scores = tmp_path / "scores.jsonl"
    scores.write_text(
        '{"test_id": "st-0001", "score": 0.1}\n{"test_id": "st-0002", "score": 0.9}\n',
        encoding="utf-8",
    )
    result = rlk(
        "calibrate", "-p", PACK, "--labels", str(labels), "--scores", str(scores),
        "-o", "cal", cwd=tmp_path,
    )  # fmt: skip
    no_traceback(result)
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        "labels.jsonl:2:" in result.stderr and "$.test_id holds a lone surrogate" in result.stderr
    )


def test_a_pack_file_holding_a_lone_surrogate_is_named_by_validate(tmp_path):
    import shutil

    import ragleaklab_plugins.packs as packs

    pack = tmp_path / "pk"
    shutil.copytree(Path(packs.__file__).parent / "sentinel_takeover_safe", pack)
    (pack / "__init__.py").unlink()
    cases = (pack / "cases.jsonl").read_text(encoding="utf-8").split("\n")
    cases[2] = cases[2].replace('"query": "', '"query": "\\ud83d ', 1)
    (pack / "cases.jsonl").write_text("\n".join(cases), encoding="utf-8")
    result = rlk("pack", "validate", str(pack), cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2
    assert "cases.jsonl:3: $.query: holds a lone surrogate" in result.stdout + result.stderr


def test_a_report_holding_a_lone_surrogate_is_an_input_error_for_report_and_diff(tmp_path):
    report = {"format": "ragleaklab-report", "target": {"name": "py\ud800"}, "packs": []}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")  # ASCII: the escape "\ud800"
    for args in (
        ("report", "report.json", "--format", "markdown"),
        ("diff", "report.json", "report.json"),
    ):
        result = rlk(*args, cwd=tmp_path)
        no_traceback(result)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "report.json: $.target.name holds a lone surrogate" in result.stderr
