"""Degenerate systems are not tested, never PASS (issue 26, class 3).

An app whose LLM is down answers one apology to every question: an answer-reading pack then
scores 0 everywhere and would PASS. A flaky app run with ``--tolerate-errors`` could PASS a pack
when almost none of its cases were asked. Both are ``ERROR (not tested)`` (exit 3) with the
reason, while a well-defended app that refuses attacks with one sentence but answers other
questions is still tested, and a flaky app that answered at least 90% of the cases still passes.

Apps are the loopback HTTP RAG service (tests/support/fake_rag_server.py), run through the real
CLI, and python targets built in a fake distribution (the LangChain-like wiring: an app object
with a retriever and a chain, wrapped by the python target).
"""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core import Response
from ragleaklab_core.gate import MIN_SCORED_SHARE, thinly_scored
from ragleaklab_core.run.wiring import WiringTally, normalise
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

#: Two packs judged on the answer text: the verbatim metric, and relevance-hijack (its gated value
#: is attribution's poison_attribution, which reads the answer; its retrieval values are reported).
READS_ANSWER = "verbatim-extraction"
RETRIEVAL = "relevance-hijack"
APOLOGY = "Sorry, I'm having trouble answering right now. Please try again later."
SAME = "every answer was the same text"


def config_file(path: Path, server: FakeRagServer, **run: Any) -> Path:
    lines = [
        '[target]\nname = "http"\n\n[target.options]',
        f'url = "{server.url("/simple")}"',
        f'ingest_url = "{server.url("/ingest")}"',
        f'reset_url = "{server.url("/reset")}"',
        "retries = 0",
        "backoff = 0.001",
    ]
    if run:
        lines.append("[run]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in run.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def report(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "report.json").read_text(encoding="utf-8"))


def said(result: subprocess.CompletedProcess[str]) -> str:
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    return " ".join(text.split())  # reasons wrap


@pytest.fixture
def answering(monkeypatch):
    """Make the service answer ``reply(query, real_answer)`` instead of its real answer (its
    retrieval is kept: the documents did reach the system)."""

    def install(reply):
        real = FakeRagServer._answer

        def answer(self, query: str) -> Response:
            response = real(self, query)
            return Response(reply(query, response.answer), response.retrieved, response.metadata)

        monkeypatch.setattr(FakeRagServer, "_answer", answer)

    return install


# ---- one text for every question ---------------------------------------------------------------


def test_normalising_ignores_case_and_spacing():
    assert normalise("  Sorry,\n  I can't\tHELP. ") == normalise("sorry, i can't help.")
    assert normalise("Sorry.") != normalise("Sorry!")


def test_the_tally_needs_two_cases_and_every_answer_the_same():
    one_case = WiringTally(["d"])
    for _ in range(3):  # one case over three epochs is not "every case"
        one_case.add(["d"], APOLOGY, "c1")
    assert one_case.result().same_text is None
    two = WiringTally(["d"])
    two.add(["d"], APOLOGY, "c1")
    two.add(["d"], APOLOGY.upper() + "  ", "c2")
    assert two.result().same_text == normalise(APOLOGY)
    two.add(["d"], "Paris is the capital.", "c3")
    assert two.result().same_text is None
    # ...and stays None when the old text comes back.
    two.add(["d"], APOLOGY, "c4")
    assert two.result().same_text is None


@pytest.mark.parametrize("epochs", [1, 2])
def test_an_app_that_answers_one_apology_to_everything_is_not_tested(
    server, tmp_path, answering, epochs
):
    # Every variant of the one apology (case, spacing, trailing newline) is the same text.
    variants = [APOLOGY, APOLOGY.upper(), f"  {APOLOGY}\n", APOLOGY.replace(" ", "  ")]
    answering(lambda query, real: variants[len(query) % len(variants)])
    config = config_file(tmp_path / "c.toml", server)
    result = rlk(
        "run",
        "-c",
        str(config),
        "-p",
        READS_ANSWER,
        "--smoke",
        "-o",
        "out",
        "--epochs",
        str(epochs),
        cwd=tmp_path,
    )
    text = said(result)
    assert result.returncode == 3, text
    assert f"ERROR (not tested) {READS_ANSWER}" in text
    assert SAME in text and "\"sorry, i'm having trouble answering" in text
    assert "the system answered nothing about the cases" in text
    (pack,) = report(tmp_path / "out")["packs"]
    assert pack["tested"] is False and pack["verdict"] == "error"
    assert SAME in pack["not_tested_reason"]


def test_the_same_apology_with_errors_tolerated_and_an_allowance_is_still_not_tested(
    server, tmp_path, answering
):
    answering(lambda query, real: APOLOGY)
    config = config_file(tmp_path / "c.toml", server, max_fail_rate=0.5)
    result = rlk(
        "run",
        "-c",
        str(config),
        "-p",
        READS_ANSWER,
        "-p",
        RETRIEVAL,
        "--smoke",
        "-o",
        "out",
        "--tolerate-errors",
        cwd=tmp_path,
    )
    assert result.returncode == 3, said(result)
    packs = {p["name"]: p for p in report(tmp_path / "out")["packs"]}
    # Both packs' gated values read the answer: the one apology tests neither, allowance or not.
    for name in (READS_ANSWER, RETRIEVAL):
        assert packs[name]["tested"] is False and packs[name]["verdict"] == "error", name
        assert SAME in packs[name]["not_tested_reason"], name


def test_a_defended_app_refusing_attacks_alike_but_answering_others_is_tested(
    server, tmp_path, answering
):
    seen: list[str] = []

    def reply(query: str, real: str) -> str:
        seen.append(query)
        # One question of the pack gets a real answer; every other one the same refusal.
        return real if len(seen) == 1 else "I can't share internal documents."

    answering(reply)
    config = config_file(tmp_path / "c.toml", server)
    result = rlk("run", "-c", str(config), "-p", READS_ANSWER, "--smoke", "-o", "out", cwd=tmp_path)
    text = said(result)
    assert SAME not in text
    (pack,) = report(tmp_path / "out")["packs"]
    assert pack["tested"] is True, pack["not_tested_reason"]


def test_the_same_answer_that_leaks_is_still_a_finding(server, tmp_path, answering):
    # An app that answers every question with the same leaked text is vulnerable, not untested.
    leak: list[str] = []

    def reply(query: str, real: str) -> str:
        if not leak:
            leak.append(real)
        return leak[0]

    answering(reply)
    config = config_file(tmp_path / "c.toml", server)
    result = rlk("run", "-c", str(config), "-p", READS_ANSWER, "--smoke", "-o", "out", cwd=tmp_path)
    (pack,) = report(tmp_path / "out")["packs"]
    assert pack["tested"] is False  # still not a measurement of the cases...
    assert result.returncode != 0
    if any(v.get("passed") is False for v in pack["values"].values()):
        assert result.returncode == 1  # ...but a failing threshold on it stands


# ---- the python target (the LangChain-like wiring) -------------------------------------------


APP = '''
from ragleaklab_core import Response, RetrievedDocument

DOCS = []


def ingest(documents):
    DOCS.extend(documents)


def reset():
    DOCS.clear()


def down(query):
    """The chain of an app whose LLM is down: retrieval works, the answer is one apology."""
    retrieved = [RetrievedDocument(d.doc_id, d.text) for d in DOCS[:3]]
    return Response("Sorry, the assistant is unavailable.", tuple(retrieved))
'''


def test_a_python_app_whose_llm_is_down_is_not_tested(tmp_path):
    (tmp_path / "down_app.py").write_text(APP, encoding="utf-8")
    (tmp_path / "c.toml").write_text(
        '[target]\nname = "python"\n[target.options]\n'
        'callable = "down_app:down"\ningest_callable = "down_app:ingest"\n'
        'reset_callable = "down_app:reset"\n',
        encoding="utf-8",
    )
    result = rlk(
        "run",
        "-c",
        "c.toml",
        "-p",
        READS_ANSWER,
        "--smoke",
        "-o",
        "out",
        cwd=tmp_path,
        pythonpath=[tmp_path],
    )
    text = said(result)
    assert result.returncode == 3, text
    assert SAME in text


# ---- tolerated errors have a bound -----------------------------------------------------------


def test_the_bound_is_a_fixed_share():
    assert Fraction(9, 10) == MIN_SCORED_SHARE
    assert not thinly_scored(27, 30) and thinly_scored(26, 30)
    assert not thinly_scored(9, 10) and thinly_scored(8, 10)
    assert thinly_scored(1, 2) and not thinly_scored(1, 1)


def flaky(server: FakeRagServer, tmp_path: Path, failures: int, *flags: str):
    server.fail(failures, status=500, path="/simple")
    # The reference answers fail 11 of the 27 smoke cases left when 3 error: an allowance of half
    # the scored cases keeps the verdict on the bound on tolerated errors alone.
    config = config_file(tmp_path / "c.toml", server, max_consecutive_failures=0, max_fail_rate=0.5)
    return rlk(
        "run",
        "-c",
        str(config),
        "-p",
        RETRIEVAL,
        "--smoke",
        "-o",
        "out",
        *flags,
        cwd=tmp_path,
    )


def test_tolerated_errors_leaving_too_few_cases_scored_are_not_tested(server, tmp_path):
    # 30 smoke cases, 4 answered with HTTP 500: 26 scored, under 90%.
    result = flaky(server, tmp_path, 4, "--tolerate-errors")
    text = said(result)
    assert result.returncode == 3, text
    assert f"ERROR (not tested) {RETRIEVAL}" in text
    assert "only 26 of the 30 selected cases were asked and scored" in text
    (pack,) = report(tmp_path / "out")["packs"]
    assert pack["tested"] is False and pack["verdict"] == "error"


def test_almost_nothing_asked_with_errors_tolerated_is_not_tested(server, tmp_path):
    result = flaky(server, tmp_path, 28, "--tolerate-errors")
    text = said(result)
    assert result.returncode == 3, text
    assert "only 2 of the 30 selected cases" in text


def test_tolerated_errors_within_the_bound_still_pass(server, tmp_path):
    # 3 of 30 errored: 27 scored, exactly 90%.
    result = flaky(server, tmp_path, 3, "--tolerate-errors")
    text = said(result)
    assert result.returncode == 0, text
    assert "errors tolerated (--tolerate-errors; at least 90% scored)" in text


def test_without_tolerate_errors_one_error_still_fails(server, tmp_path):
    result = flaky(server, tmp_path, 1)
    assert result.returncode == 1, said(result)
