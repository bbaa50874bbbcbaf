"""No line ragleaklab prints from text it did not write can start a GitHub Actions workflow
command (issue 26, class 7).

The attacker is the system under test: a loopback HTTP RAG service whose ingest error body, whose
answers and whose document ids carry workflow commands, hidden behind every line break a runner
or a log viewer might split at (``\\n``, CR alone, U+2028, U+0085, ...), indented, and in the
legacy ``##[`` form. The real CLI runs with ``GITHUB_ACTIONS=true`` and ``-vv`` (logs on stderr),
and the test reads its stdout and stderr as the runner does: a line is a command when, after its
leading whitespace is trimmed, it starts with ``::`` or ``##[``. The only such lines allowed are
ragleaklab's own annotations, and their data must be escaped by GitHub's rules.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from ragleaklab_core._safe_text import (
    NeutralisingStream,
    command_data,
    command_property,
    neutralise,
    write_workflow_command,
)
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer, Seen

PACK = "relevance-hijack"

#: Workflow commands behind every line break a reader may split at.
PAYLOADS = [
    "\n  ::set-output name=x::y",
    "\n::stop-commands::tok",
    "\n##[error]legacy",
    "\r::add-mask::m",
    "\u2028::error::ls",
    "\x85::error::nel",
    "\r\n\t::error::crlf",
    "\u2029::error::ps",
    "\x0b::error::vt",
    "\x0c##[group]ff",
    "\n\u200b::error::zwsp",
    "\n\u00a0 ::debug::nbsp",
]
HOSTILE = "the service says:" + "".join(PAYLOADS)

#: ragleaklab's own annotation: a level, a ragleaklab title, data after the second "::".
OWN = re.compile(r"::(error|warning) title=ragleaklab[^:,\r\n]*::(?P<data>.*)")


class HostileServer(FakeRagServer):
    """The loopback service, with workflow commands in whatever it controls."""

    mode: str = "ingest"

    def handle(self, seen: Seen) -> tuple[int, dict[str, str], Any]:
        status, headers, body = super().handle(seen)
        if seen.path == "/ingest" and self.mode == "ingest":
            # Plain text, so the line breaks arrive raw; 400: not retried, the pack is not tested.
            return 400, {"Content-Type": "text/plain"}, HOSTILE.encode()
        if seen.path == "/simple" and self.mode == "answers" and isinstance(body, dict):
            body["answer"] = f"{body['answer']} {HOSTILE}"
            for source in body.get("sources", []):
                source["id"] = f"{source['id']}{HOSTILE}"
        return status, headers, body


@pytest.fixture(scope="module")
def hostile():
    with HostileServer() as server:
        yield server


def commands_in(text: str) -> list[str]:
    """Every line of *text* a workflow runner would read as a command, as split by Python's
    splitlines (every Unicode line break), after its leading whitespace is trimmed."""
    found = []
    for line in text.splitlines():
        trimmed = line.lstrip().lstrip("\u200b\ufeff").lstrip()
        if trimmed.startswith(("::", "##[")):
            found.append(trimmed)
    return found


def unescape(data: str) -> str:
    return data.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def assert_only_own_commands(out: Any) -> list[str]:
    """No forged command on stderr; on stdout only ragleaklab's own annotations, each one line
    with its data escaped. Returns the annotations' unescaped data."""
    assert commands_in(out.stderr) == []
    data = []
    for line in commands_in(out.stdout):
        own = OWN.fullmatch(line)
        assert own is not None, f"a forged workflow command reached stdout: {line!r}"
        # Escaped: no raw "%" that is not an escape, no line break of any kind.
        assert re.search(r"%(?!25|0D|0A)", own["data"]) is None, line
        data.append(unescape(own["data"]))
    return data


def config(tmp_path, server, **options: str) -> str:
    path = tmp_path / "target.toml"
    lines = ["[target]", 'name = "http"', "", "[target.options]"]
    lines += [f'url = "{server.url("/simple")}"', f'ingest_url = "{server.url("/ingest")}"']
    lines += [f'reset_url = "{server.url("/reset")}"', "retries = 0"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in options.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("log_format", ["console", "json"])
def test_an_ingest_error_body_starts_no_workflow_command(tmp_path, hostile, log_format):
    hostile.clear()
    hostile.mode = "ingest"
    summary = tmp_path / "summary.md"
    out = rlk(
        "-vv", "--log-format", log_format,
        "run", "-c", config(tmp_path, hostile), "-p", PACK, "--smoke", "-o", "o",
        cwd=tmp_path, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert out.returncode == 3, out.stdout + out.stderr  # not tested: the ingest failed
    assert "Traceback" not in out.stderr
    data = assert_only_own_commands(out)
    # The pack's annotation is there and carries the service's words, escaped, not dropped.
    assert any("ingest failed" in d and "::stop-commands::tok" in d for d in data), data
    # The service's lines really were in what the run printed from (report.json's reason)...
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    reason = report["packs"][0]["not_tested_reason"]
    assert len(commands_in(reason)) >= 5, reason
    # ...and are shown to a person, neutralised, in the summary and the logs.
    assert "::stop-commands::tok" in out.stdout
    assert "stop-commands" in out.stderr
    assert commands_in(summary.read_text(encoding="utf-8")) == []


def test_answers_and_document_ids_start_no_workflow_command(tmp_path, hostile):
    hostile.clear()
    hostile.mode = "answers"
    out = rlk(
        "-vv", "run", "-c", config(tmp_path, hostile), "-p", PACK, "--smoke", "-o", "o",
        "--markdown", "o/r.md",
        cwd=tmp_path, env={"GITHUB_ACTIONS": "true"},
    )  # fmt: skip
    assert out.returncode in (1, 3), out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert_only_own_commands(out)
    assert hostile.hits["/simple"] > 0  # the answers were really asked for and received
    # report --format text and diff print the same foreign text, neutralised the same way.
    shown = rlk("report", "o", "--format", "text", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert_only_own_commands(shown)
    diff = rlk("diff", "o/report.json", "o/report.json", cwd=tmp_path)
    assert_only_own_commands(diff)


def test_a_forged_case_id_in_a_file_name_and_an_error_start_no_workflow_command(tmp_path):
    # Text the user did not write either: a directory named by a pull request, an error message.
    out = rlk(
        "run", "-p", "no-such-pack\n::set-output name=x::y", "-o", "o\r::add-mask::m",
        cwd=tmp_path, env={"GITHUB_ACTIONS": "true"},
    )  # fmt: skip
    assert out.returncode in (2, 3), out.stdout + out.stderr
    assert commands_in(out.stdout + out.stderr) == []
    assert "set-output" in out.stderr  # named, neutralised, not dropped


# -- the rule itself -----------------------------------------------------------------------------


@pytest.mark.parametrize("payload", PAYLOADS)
def test_neutralise_leaves_no_line_a_command(payload):
    text = neutralise(f"reason: {payload} and more")
    assert commands_in(text) == []
    assert "\n" in text or "\n" not in payload  # "\n" itself stays: only the other breaks go


@pytest.mark.parametrize(
    "text",
    ["::error::x", "  ::error::x", "\t##[error]x", "a\n::x", "\ufeff::x", "\x1b::x", "a\r\n::x"],
)
def test_every_line_that_starts_a_command_is_marked(text):
    assert commands_in(neutralise(text)) == []


def test_text_that_starts_no_command_is_left_as_it_is():
    for text in ("ok", "a :: b", "x::y", "  # [ok]", "##", ":", "error: ::\n  fine"):
        assert neutralise(text) == text


def test_own_command_data_is_escaped_by_github_rules_and_stays_on_one_line():
    data = command_data("50% a\r\nb\u2028::c")
    assert data == "50%25 a%0D%0Ab\\u2028::c"
    assert command_property("a:b,c%") == "a%3Ab%2Cc%25"
    assert len(f"::error::{data}".splitlines()) == 1


def test_own_commands_pass_the_stream_and_must_be_one_line(capsys):
    import io

    raw = io.StringIO()
    stream = NeutralisingStream(raw)
    stream.write("::set-output name=x::y\n")
    write_workflow_command("::error title=ragleaklab::z", stream)
    assert raw.getvalue() == "\\::set-output name=x::y\n::error title=ragleaklab::z\n"
    with pytest.raises(ValueError, match="one line"):
        write_workflow_command("::error::a\n::set-output name=x::y", stream)
    with pytest.raises(TypeError):
        stream.write(b"")  # type: ignore[arg-type]


def test_a_crash_quoting_a_target_prints_its_traceback_neutralised(monkeypatch, capsys):
    from ragleaklab_core.cli import commands

    def crash(**_: Any) -> None:
        raise RuntimeError("the target said:\n::stop-commands::tok\r##[error]x")

    monkeypatch.setattr(commands.cli, "main", crash)
    with pytest.raises(SystemExit) as exited:
        commands.main([])
    assert exited.value.code == 1  # as Python exits on an uncaught exception
    err = capsys.readouterr().err
    assert "RuntimeError" in err and "stop-commands" in err
    assert commands_in(err) == []
