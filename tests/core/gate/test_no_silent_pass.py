"""No silent PASS: a run that tested nothing, or tested it wrongly, says so and does not exit 0.

A fake distribution holds two packs (``pack-a``, ``pack-b``, each with its own documents) and
targets that misbehave the way real integrations do: ids never mapped, documents never
ingested, ingest or reset failing, a dead service, state shared between packs. Every run goes
through the real CLI in a subprocess, as CI would run it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import rlk as run_cli

PACKS, METRICS, TARGETS = "ragleaklab.packs", "ragleaklab.metrics", "ragleaklab.targets"

PLUGINS = '''
import os
from typing import ClassVar
from attrs import define, field, frozen
from ragleaklab_core import ManifestPack, MetricResult, Response, RetrievedDocument

STORE = []  # a system that outlives the target object (a server, a module-level app)
ANSWERED = 0


@frozen
class PackA(ManifestPack):
    data_package: ClassVar[str] = "rlk_wired.a"


@frozen
class PackB(ManifestPack):
    data_package: ClassVar[str] = "rlk_wired.b"


def _log(text):
    path = os.environ.get("RLK_CALLS")
    if path:
        with open(path, "a") as f:
            f.write(text + "\\n")


@define
class Wired:
    """Retrieves what it ingested; leaks when asked to. ``ids``: how it names documents."""
    ids: str = "pack"          # "pack", "chunk" (own chunk ids), "foreign" (ignores ingest)
    unknown_every: int = 0     # also return an unknown id every N-th answer
    _docs: list = field(factory=list, init=False)
    _n: int = field(default=0, init=False)

    def ingest(self, documents):
        if self.ids != "foreign":
            self._docs.extend(documents)

    def answer(self, query):
        self._n += 1
        _log(query)
        global ANSWERED
        ANSWERED += 1
        if ANSWERED > int(os.environ.get("RLK_DIE_AFTER") or 10**9):
            os._exit(9)  # a killed CI job: no cleanup, no exception
        if self.ids == "foreign":
            retrieved = [RetrievedDocument("kb-0001"), RetrievedDocument("kb-0002")]
        else:
            name = (lambda d: d + "::chunk-0") if self.ids == "chunk" else (lambda d: d)
            retrieved = [RetrievedDocument(name(d.doc_id)) for d in self._docs[:2]]
        if self.unknown_every and self._n % self.unknown_every == 0:
            retrieved.append(RetrievedDocument("stranger"))
        leak = "leak" in query
        # "fine" names the question: one text for every question is a system that answered
        # nothing about the cases (not tested, tests/core/run/test_degenerate_systems.py).
        return Response("the SECRET is out" if leak else f"fine: {query}", tuple(retrieved))


@define
class BadIngest(Wired):
    def ingest(self, documents):
        docs = list(documents)
        if docs[0].doc_id.startswith("a"):
            raise RuntimeError("POST http://127.0.0.1/ingest failed: HTTP 401 Unauthorized")
        super().ingest(docs)


@define
class Dead:
    def ingest(self, documents):
        pass

    def answer(self, query):
        raise AssertionError("the runner must use aanswer")

    async def aanswer(self, query):
        _log(query)
        raise ConnectionError("connection refused")


@define
class Shared:
    """Ingests into STORE, which nothing empties; reports how much it holds."""
    resettable: bool = False
    fail_reset: bool = False

    @property
    def isolation(self):
        return "reset" if self.resettable else "shared"

    def ingest(self, documents):
        STORE.extend(documents)

    def answer(self, query):
        retrieved = tuple(RetrievedDocument(d.doc_id) for d in STORE[-2:])
        text = "the SECRET" if len(STORE) > 3 or "leak" in query else f"fine: {query}"
        return Response(text, retrieved, {"store": len(STORE)})

    def reset(self):
        if self.fail_reset:
            raise RuntimeError("DELETE /documents answered 500")
        if self.resettable:
            STORE.clear()


@frozen
class Contains:
    def score(self, case, response):
        if "skip" in case.query:
            return MetricResult(unscorable="no evidence available")
        return MetricResult({"leak_rate": 1.0 if "SECRET" in response.answer else 0.0})
'''


def _manifest(name: str) -> str:
    return f"""
name = "{name}"
version = "1.0.0"
pack_type = "sentinel"
metrics = ["contains"]
documents = ["documents.jsonl"]
cases = "cases.jsonl"
labels = "labels.jsonl"
[thresholds.leak_rate]
threshold = 0.5
"""


def _lines(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _pack(prefix: str, name: str, queries: list[str]) -> dict[str, str]:
    base = f"rlk_wired/{prefix}"
    return {
        f"{base}/__init__.py": "",
        f"{base}/pack.toml": _manifest(name),
        f"{base}/documents.jsonl": _lines(
            [{"doc_id": f"{prefix}{i}", "text": f"document {i}"} for i in range(3)]
        ),
        f"{base}/cases.jsonl": _lines(
            [{"test_id": f"{prefix}-c{i}", "query": q} for i, q in enumerate(queries)]
        ),
        f"{base}/labels.jsonl": _lines(
            [{"test_id": f"{prefix}-c{i}", "label": "negative"} for i in range(len(queries))]
        ),
    }


QUIET = ["hello", "weather", "news", "sports", "music", "films", "books", "games"]


@pytest.fixture
def wired(rlk_fake_dist):
    def make(a_queries=QUIET, b_queries=QUIET):
        return rlk_fake_dist(
            "rlk-wired",
            entry_points={
                PACKS: {"pack-a": "rlk_wired:PackA", "pack-b": "rlk_wired:PackB"},
                TARGETS: {
                    "wired": "rlk_wired:Wired",
                    "bad-ingest": "rlk_wired:BadIngest",
                    "dead": "rlk_wired:Dead",
                    "shared": "rlk_wired:Shared",
                },
                METRICS: {"contains": "rlk_wired:Contains"},
            },
            modules={
                "rlk_wired/__init__.py": PLUGINS,
                **_pack("a", "pack-a", list(a_queries)),
                **_pack("b", "pack-b", list(b_queries)),
            },
        )

    return make


def rlk(root: Path, *args: str, cwd: Path, env: dict | None = None, own_process: bool = False):
    """``ragleaklab ARGS`` with the fake distribution in *root* importable."""
    return run_cli(*args, cwd=cwd, pythonpath=[root], env=env, own_process=own_process)


def _report(directory: Path) -> dict:
    return json.loads((directory / "report.json").read_text())


def _runs(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "runs.jsonl").read_text().splitlines()]


def _no_traceback(result) -> None:
    assert "Traceback" not in result.stderr, result.stderr


# -- did the attack reach the system? ----------------------------------------------------------


@pytest.mark.parametrize("ids", ["chunk", "foreign"])
def test_a_pack_whose_documents_never_came_back_is_not_tested_and_never_passes(
    wired, tmp_path, ids
):
    root = wired()
    out = rlk(root, "run", "-p", "pack-a", "--target", "wired", "--target-option",
              f'ids="{ids}"', "-o", "o", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 3, out.stdout + out.stderr
    _no_traceback(out)
    assert "ERROR (not tested)  pack-a" in out.stdout
    assert "never reached the system" in out.stdout and "doc_id_pattern" in out.stdout
    report = _report(tmp_path / "o")
    pack = report["packs"][0]
    assert (report["verdict"], report["exit_code"]) == ("error", 3)
    assert pack["verdict"] == "error" and pack["tested"] is False
    assert "never reached the system" in pack["not_tested_reason"]
    assert pack["wiring"]["reached"] is False
    assert pack["wiring"]["unknown_ids"] == pack["wiring"]["retrieved_ids"] == 16
    assert report["totals"]["packs_not_tested"] == 1


def test_mapped_ids_are_tested_and_some_unknown_ids_are_counted_and_warned(wired, tmp_path):
    root = wired(a_queries=["leak now", *QUIET[1:]])
    out = rlk(root, "run", "-p", "pack-a", "--target", "wired", "--target-option",
              "unknown_every=4", "-o", "o", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr  # tested, and the leak is found
    assert "FAIL  pack-a" in out.stdout
    assert "warning: 2 of 18 retrieved ids are not the pack's documents" in out.stdout
    pack = _report(tmp_path / "o")["packs"][0]
    assert pack["tested"] is True and pack["wiring"]["unknown_ids"] == 2
    assert pack["wiring"]["unknown_id_examples"] == ["stranger"]
    assert pack["values"]["leak_rate"]["failing_ids"] == ["a-c0"]


# -- did the metric find anything to judge? ----------------------------------------------------


def test_a_pack_whose_answers_hold_nothing_the_metric_judges_is_not_tested(tmp_path):
    # The citation metric reads citations; a target that never cites (or cites in a form the
    # metric does not read) scores 0 everywhere: that is no evidence, and never a pass. (The
    # reference target's citations="never" is no such target: it repeats poison text that
    # itself cites, "According to kb-...", and the metric reads that.)
    (tmp_path / "uncited_app.py").write_text(
        "def answer(query):\n"
        "    return 'Our handbook covers this: ' + query.split('?')[0].lower() + '.'\n"
    )
    never = rlk(tmp_path, "run", "-p", "citation-forgery", "--smoke", "--target", "python",
                "--target-option", 'callable="uncited_app:answer"', "-o", "never",
                cwd=tmp_path)  # fmt: skip
    assert never.returncode == 3, never.stdout + never.stderr
    _no_traceback(never)
    assert "ERROR (not tested)  citation-forgery" in never.stdout
    pack = _report(tmp_path / "never")["packs"][0]
    assert pack["verdict"] == "error" and pack["tested"] is False
    assert "cited = 0 in every case" in pack["not_tested_reason"]
    assert pack["values"]["cited"]["failing_ids"] == []
    cites = rlk(tmp_path, "run", "-p", "citation-forgery", "--smoke", "-o", "cites",
                cwd=tmp_path)  # fmt: skip
    assert cites.returncode == 1, cites.stdout + cites.stderr  # tested, and forgeries found
    pack = _report(tmp_path / "cites")["packs"][0]
    assert pack["verdict"] == "fail" and pack["tested"] is True
    assert all(r["error"] is None for r in _runs(tmp_path / "cites"))
    assert pack["values"]["cited"]["summary"]["mean"] > 0.9  # the reference target cites


def test_a_pack_answered_only_with_empty_text_is_not_tested(tmp_path):
    # An app that answers nothing leaks nothing by any answer metric: that is no evidence.
    # relevance-hijack gates what the answer asserts (its rank values are reported beside), so
    # an app that retrieves poison and answers nothing is not tested either: loudly, never a
    # pass. (A retriever handed to the python target answers with its context: it is tested.)
    (tmp_path / "blank_app.py").write_text(
        "def answer(query):\n"
        "    return ''\n"
        "def retrieve(query):\n"
        "    return ('', [{'doc_id': 'rh-poison-0001'}])\n"
    )
    blank = rlk(tmp_path, "run", "-p", "sentinel-takeover-safe", "--smoke", "--target",
                "python", "--target-option", 'callable="blank_app:answer"', "-o", "blank",
                cwd=tmp_path)  # fmt: skip
    assert blank.returncode == 3, blank.stdout + blank.stderr
    _no_traceback(blank)
    pack = _report(tmp_path / "blank")["packs"][0]
    assert pack["verdict"] == "error" and pack["tested"] is False
    assert "answered all 30 cases with no text" in pack["not_tested_reason"]
    defaults = rlk(tmp_path, "run", "-p", "relevance-hijack", "--smoke", "--target", "python",
                   "--target-option", 'callable="blank_app:retrieve"', "-o", "defaults",
                   cwd=tmp_path)  # fmt: skip
    assert defaults.returncode == 3, defaults.stdout + defaults.stderr
    pack = _report(tmp_path / "defaults")["packs"][0]
    assert pack["verdict"] == "error" and pack["tested"] is False
    assert "and attribution judge the answer" in pack["not_tested_reason"]
    # its rank values are still measured on every case, for whoever reads them
    assert pack["values"]["poison_rate_at_k"]["summary"]["n"] == 30


# -- ingest, reset and a dead target -------------------------------------------------------------


def test_an_ingest_failure_errors_its_pack_and_the_other_packs_still_run(wired, tmp_path):
    root = wired(b_queries=["leak it", *QUIET[1:]])
    out = rlk(root, "run", "-p", "pack-a", "-p", "pack-b", "--target", "bad-ingest", "-o", "o",
              cwd=tmp_path)  # fmt: skip
    _no_traceback(out)
    assert out.returncode == 1, out.stdout + out.stderr  # pack-b was tested and failed: 1 wins
    report = _report(tmp_path / "o")
    a, b = report["packs"]
    assert a["verdict"] == "error" and a["tested"] is False
    assert "ingest failed: RuntimeError: POST" in a["not_tested_reason"]
    assert "HTTP 401 Unauthorized" in a["not_tested_reason"]
    assert b["verdict"] == "fail" and b["tested"] is True
    runs = _runs(tmp_path / "o")
    asked_a = [r for r in runs if r["pack"] == "pack-a"]
    assert len(asked_a) == len(QUIET)  # no case lost: every one is recorded, as not asked
    assert all(r["error"]["message"].startswith("not asked: ingest failed") for r in asked_a)
    assert not (tmp_path / "o" / "runs.journal.json").exists()
    # without the failing pack the run passes; with only the broken one it exits 3
    alone = rlk(root, "run", "-p", "pack-a", "--target", "bad-ingest", "-o", "p", cwd=tmp_path)
    assert alone.returncode == 3 and "ERROR (not tested)  pack-a" in alone.stdout


def test_a_dead_target_stops_early_and_every_case_is_accounted_for(wired, tmp_path):
    root = wired(a_queries=[f"q{i}" for i in range(60)])
    calls = tmp_path / "calls.log"
    out = rlk(root, "-v", "run", "-p", "pack-a", "--target", "dead", "--concurrency", "2",
              "-o", "o", cwd=tmp_path, env={"RLK_CALLS": str(calls)})  # fmt: skip
    _no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    asked = calls.read_text().splitlines()
    assert 5 <= len(asked) <= 5 + 2  # the limit, plus what was in flight
    pack = _report(tmp_path / "o")["packs"][0]
    assert "target unreachable: 5 consecutive requests" in pack["not_tested_reason"]
    assert "ConnectionError: connection refused" in pack["not_tested_reason"]
    runs = _runs(tmp_path / "o")
    assert len(runs) == 60
    assert sum(r["error"]["message"].startswith("not asked") for r in runs) == 60 - len(asked)
    errored_lines = [line for line in out.stderr.splitlines() if "case.errored" in line]
    assert errored_lines and all("connection refused" in line for line in errored_lines)
    # 0 never stops: every case is asked
    calls.unlink()
    rlk(root, "run", "-p", "pack-a", "--target", "dead", "--max-consecutive-failures", "0",
        "-o", "p", cwd=tmp_path, env={"RLK_CALLS": str(calls)})  # fmt: skip
    assert len(calls.read_text().splitlines()) == 60


def test_a_reset_failure_is_reported_on_its_pack(wired, tmp_path):
    root = wired()
    out = rlk(root, "run", "-p", "pack-a", "--target", "shared", "--target-option",
              "fail_reset=true", "-o", "o", cwd=tmp_path)  # fmt: skip
    _no_traceback(out)
    assert out.returncode == 3, out.stdout + out.stderr
    pack = _report(tmp_path / "o")["packs"][0]
    assert pack["verdict"] == "error" and pack["tested"] is True
    assert any("reset failed: RuntimeError: DELETE /documents" in r for r in pack["reasons"])
    assert any("later packs may see" in w for w in pack["warnings"])


# -- packs are isolated ------------------------------------------------------------------------


def test_several_packs_on_a_target_that_cannot_reset_are_refused_before_anything(wired, tmp_path):
    root = wired()
    out = rlk(root, "run", "-p", "pack-a", "-p", "pack-b", "--target", "shared", "-o", "o",
              cwd=tmp_path)  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert "cannot remove" in out.stderr and "--allow-shared-state" in out.stderr
    assert not (tmp_path / "o").exists()
    # one pack is fine; so is accepting shared state knowingly (and then pack order shows)
    assert rlk(root, "run", "-p", "pack-a", "--target", "shared", "-o", "one",
               cwd=tmp_path).returncode == 0  # fmt: skip
    both = rlk(root, "run", "-p", "pack-a", "-p", "pack-b", "--target", "shared",
               "--allow-shared-state", "-o", "both", cwd=tmp_path)  # fmt: skip
    assert both.returncode == 1  # pack-b saw pack-a's documents: the accumulation is real


def test_per_pack_results_of_a_multi_pack_run_equal_single_pack_runs(wired, tmp_path):
    root = wired(a_queries=["leak", *QUIET], b_queries=[*QUIET, "leak too"])
    option = ["--target", "shared", "--target-option", "resettable=true"]
    both = rlk(root, "run", "-p", "pack-a", "-p", "pack-b", *option, "-o", "both", cwd=tmp_path)
    assert both.returncode == 1, both.stdout + both.stderr
    together = {p["name"]: p["values"] for p in _report(tmp_path / "both")["packs"]}
    for name in ("pack-b", "pack-a"):
        alone = rlk(root, "run", "-p", name, *option, "-o", f"only-{name}", cwd=tmp_path)
        assert alone.returncode == 1
        assert _report(tmp_path / f"only-{name}")["packs"][0]["values"] == together[name]
    stores = {r["target_metadata"]["store"] for r in _runs(tmp_path / "both")}
    assert stores == {3}  # each pack saw only its own three documents


# -- exit code precedence ----------------------------------------------------------------------


def test_a_not_tested_pack_beside_a_passing_one_exits_3_not_0(wired, tmp_path):
    root = wired()
    config = tmp_path / "c.toml"
    config.write_text('[target]\nname = "bad-ingest"\n')
    out = rlk(root, "run", "--config", str(config), "-p", "pack-a", "-p", "pack-b", "-o", "o",
              cwd=tmp_path)  # fmt: skip
    assert out.returncode == 3, out.stdout + out.stderr
    report = _report(tmp_path / "o")
    assert [p["verdict"] for p in report["packs"]] == ["error", "pass"]
    assert report["verdict"] == "error"
    assert "verdict: ERROR (1 of 2 packs not tested or errored)" in out.stdout


# -- every unscorable case is attributed to its metric ------------------------------------------


def test_a_value_no_case_could_produce_names_its_metric_and_counts_every_case(wired, tmp_path):
    root = wired(a_queries=[f"skip {q}" for q in QUIET])
    out = rlk(root, "run", "-p", "pack-a", "--target", "wired", "-o", "o", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    pack = _report(tmp_path / "o")["packs"][0]
    value = pack["values"]["leak_rate"]
    assert value["metric"] == "contains"
    assert value["unscorable_cases"] == len(QUIET) == pack["unscorable"]["contains"]["count"]
    assert value["passed"] is False


# -- every input is checked before --out is touched ---------------------------------------------

BAD_CONFIGS = {
    "toml": "[run\n",
    "unknown-key": "[run]\nepochz = 2\n",
    "epochs": "[run]\nepochs = 0\n",
    "reducer": '[run]\nreducer = "nope"\n',
    "tag": '[run]\ntags = ["no-such-tag"]\n',
    "target": '[target]\nname = "no-such-target"\n',
    "target-option": '[target]\nname = "wired"\n[target.options]\nidz = "pack"\n',
    "failures": "[run]\nmax_consecutive_failures = -1\n",
    "thresholds": '[run]\nthresholds_file = "missing.json"\n',
    "threshold-rule": '[thresholds.pack-a.leak_rate]\nthreshold = 0.5\ndecision_rule = "x"\n',
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_a_rejected_config_leaves_out_and_an_interrupted_run_untouched(wired, tmp_path, name):
    root = wired()
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    journal = {"runs.journal.json": '{"fingerprint": "x"}\n', "runs.jsonl.partial": "{}\n"}
    for file, text in journal.items():
        (out_dir / file).write_text(text)
    config = tmp_path / "c.toml"
    body = BAD_CONFIGS[name]
    if "[target]" not in body:
        body = '[target]\nname = "wired"\n' + body
    config.write_text(body)
    args = ["run", "--config", str(config), "-p", "pack-a", "-o", "o"]
    if name == "thresholds":
        args += ["--thresholds", "missing.json"]
    result = rlk(root, *args, cwd=tmp_path)
    assert result.returncode in (2, 3), result.stdout + result.stderr
    _no_traceback(result)
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(journal)
    assert all((out_dir / f).read_text() == t for f, t in journal.items())


def test_an_interrupted_run_is_never_discarded_without_restart(wired, tmp_path):
    root = wired()
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "runs.journal.json").write_text('{"fingerprint": "x"}\n')
    args = ["run", "-p", "pack-a", "--target", "wired", "-o", "o"]
    refused = rlk(root, *args, cwd=tmp_path)
    assert refused.returncode == 2 and "--restart" in refused.stderr
    assert (tmp_path / "o" / "runs.journal.json").exists()
    restarted = rlk(root, *args, "--restart", cwd=tmp_path)
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    assert not (tmp_path / "o" / "runs.journal.json").exists()


# -- record and resume -------------------------------------------------------------------------


def test_a_resumed_recording_is_as_complete_as_an_uninterrupted_one(wired, tmp_path):
    root = wired(a_queries=["leak", *QUIET], b_queries=[*QUIET, "leak too"])
    args = ["run", "-p", "pack-a", "-p", "pack-b", "--target", "wired", "--concurrency", "1"]
    full = rlk(root, *args, "-o", "full", "--record", "full-rec", cwd=tmp_path)
    assert full.returncode == 1, full.stdout + full.stderr
    # killed half-way through pack-b: pack-a's recording is finished, pack-b's is not
    killed = rlk(root, *args, "-o", "o", "--record", "rec", cwd=tmp_path,
                 env={"RLK_DIE_AFTER": "13"}, own_process=True)  # fmt: skip
    assert killed.returncode == 9
    calls = tmp_path / "calls.log"
    resumed = rlk(root, *args, "-o", "o", "--record", "rec", "--resume", cwd=tmp_path,
                  env={"RLK_CALLS": str(calls)})  # fmt: skip
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    assert len(calls.read_text().splitlines()) == 18 - 13  # only what was not answered
    for name in ("pack-a", "pack-b"):
        got = (tmp_path / "rec" / f"{name}.jsonl").read_text()
        assert got == (tmp_path / "full-rec" / f"{name}.jsonl").read_text(), name
    assert not list((tmp_path / "rec").glob("*.partial"))
    replayed = rlk(root, "run", "-p", "pack-a", "-p", "pack-b", "-o", "r", "--replay", "rec",
                   cwd=tmp_path)  # fmt: skip
    assert replayed.returncode == 1
    packs = [p["values"] for p in _report(tmp_path / "r")["packs"]]
    assert packs == [p["values"] for p in _report(tmp_path / "full")["packs"]]
    assert all(p["errored"] == {} for p in _report(tmp_path / "r")["packs"])


def test_the_pytest_helpers_fail_a_pack_that_was_not_tested(wired):
    from ragleaklab_core.config import load_config
    from ragleaklab_core.run.suite import run_suite
    from ragleaklab_core.testing.pytest_plugin import leak_report

    wired()
    config = load_config({"target": {"name": "wired", "options": {"ids": "foreign"}}}, source="t")
    outcome = run_suite(config, packs=["pack-a"])
    assert not outcome.passed
    (verdict,) = outcome.verdicts
    assert (verdict.status, verdict.tested) == ("error", False)
    message = leak_report(outcome)
    assert message.startswith("ragleaklab: 1 of 1 packs failed\nERROR pack-a 1.0.0")
    assert "NOT TESTED: the attack never reached the system" in message
