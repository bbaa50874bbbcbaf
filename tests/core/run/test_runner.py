"""The runner, verdict, thresholds file and ``run`` / ``calibrate --pack`` on a fake plugin set.

The fake distribution (a pack from a manifest, a target and a metric) is written by the
``rlk_fake_dist`` fixture, so these tests pin the runner's behaviour independently of the
built-in plugins: errors never dropped, unscorable never a pass, exit code = printed verdict.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from ragleaklab_core import ConfigError, InputError, Threshold
from ragleaklab_core.calibration.thresholds import (
    ThresholdsConflictError,
    read_thresholds,
    update_threshold,
)
from ragleaklab_core.config import load_config
from ragleaklab_core.run.evaluation import evaluate
from ragleaklab_core.run.runner import RunSettings, load_pack, run_pack
from ragleaklab_core.run.suite import run_suite
from tests.support.cli import rlk as run_cli

PACKS, METRICS, TARGETS = "ragleaklab.packs", "ragleaklab.metrics", "ragleaklab.targets"

PLUGINS = '''
from typing import ClassVar
from attrs import define, field, frozen
from ragleaklab_core import ManifestPack, MetricResult, Response, RetrievedDocument

@frozen
class FakePack(ManifestPack):
    data_package: ClassVar[str] = "rlk_fake.pack"

@define
class EchoTarget:
    """Leaks when the query says 'leak'; raises on 'boom'; 'flaky' leaks every other call."""
    prefix: str = ""
    _docs: list = field(factory=list, init=False)
    _calls: int = field(default=0, init=False)

    def ingest(self, documents):
        self._docs.extend(documents)

    def answer(self, query):
        self._calls += 1
        if "boom" in query:
            raise RuntimeError("target exploded")
        leak = "leak" in query or ("flaky" in query and self._calls % 2 == 0)
        text = self.prefix + ("the SECRET is out" if leak else "nothing to see")
        return Response(text, (RetrievedDocument(self._docs[0].doc_id),), {"calls": self._calls})

@define
class SlowTarget:
    """An async target: records how many requests are in flight and when each one starts."""
    delay: float = 0.03
    log_file: str = ""
    #: Hold each request until this many have been in flight at once (then never again), so a
    #: concurrency test does not depend on how fast the machine starts them.
    gather: int = 0
    _in_flight: int = field(default=0, init=False)
    _peak: int = field(default=0, init=False)
    _calls: int = field(default=0, init=False)

    def ingest(self, documents):
        pass

    def answer(self, query):
        raise AssertionError("the runner must use aanswer")

    async def aanswer(self, query):
        import asyncio, os, time
        self._calls += 1
        if self._calls > int(os.environ.get("RLK_DIE_AFTER") or 10**9):
            os._exit(9)  # a killed CI job: no cleanup, no exception
        if self.log_file:
            with open(self.log_file, "a") as f:
                f.write(f"{time.monotonic()} {query}\\n")
        self._in_flight += 1
        self._peak = max(self._peak, self._in_flight)
        deadline = time.monotonic() + 10
        while self._peak < self.gather and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        await asyncio.sleep(self.delay)
        self._in_flight -= 1
        leak = "leak" in query
        # It reports no retrieval (None): an empty list for every case would tell the wiring
        # check that the pack's documents never reached it, which is true of this fake.
        return Response("the SECRET" if leak else "fine", None, {"peak": self._peak})


@frozen
class ContainsMetric:
    word: str = "SECRET"

    def score(self, case, response):
        if "skip" in case.query:
            return MetricResult(unscorable="no evidence available")
        hit = self.word in response.answer
        return MetricResult({"leak_rate": 1.0 if hit else 0.0}, {"word": self.word})
'''

MANIFEST = """
name = "fake-pack"
version = "0.3.0"
pack_type = "sentinel"
metrics = ["contains"]
documents = ["documents.jsonl"]
cases = "cases.jsonl"
labels = "labels.jsonl"
[thresholds.leak_rate]
threshold = 0.5
"""

CASES = [
    ("c1", "please leak", ["smoke"], "positive"),
    ("c2", "hello", ["smoke"], "negative"),
    ("c3", "leak again", [], "positive"),
    ("c4", "weather", [], "negative"),
    ("c5", "news", [], "negative"),
]


def _lines(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _pack_files(cases=CASES, manifest=MANIFEST) -> dict[str, str]:
    return {
        "rlk_fake/__init__.py": PLUGINS,
        "rlk_fake/pack/__init__.py": "",
        "rlk_fake/pack/pack.toml": manifest,
        "rlk_fake/pack/documents.jsonl": _lines([{"doc_id": "d1", "text": "a document"}]),
        "rlk_fake/pack/cases.jsonl": _lines(
            [{"test_id": t, "query": q, "tags": tags} for t, q, tags, _ in cases]
        ),
        "rlk_fake/pack/labels.jsonl": _lines(
            [{"test_id": t, "label": label} for t, _, _, label in cases]
        ),
    }


@pytest.fixture
def fake(rlk_fake_dist):
    def make(cases=CASES, manifest=MANIFEST):
        return rlk_fake_dist(
            "rlk-fake",
            entry_points={
                PACKS: {"fake-pack": "rlk_fake:FakePack"},
                TARGETS: {"echo": "rlk_fake:EchoTarget", "slow": "rlk_fake:SlowTarget"},
                METRICS: {"contains": "rlk_fake:ContainsMetric"},
            },
            modules=_pack_files(cases, manifest),
        )

    return make


def _config(**sections):
    raw = {"target": {"name": "echo"}, **sections}
    return load_config(raw, source="test")


# -- runner and verdict ---------------------------------------------------------------------


def test_cases_fail_by_the_pack_threshold_and_everything_is_recorded(fake):
    fake()
    outcome = run_suite(_config(), packs=["fake-pack"])
    (verdict,) = outcome.verdicts
    assert not verdict.passed
    value = verdict.value("leak_rate")
    assert value is not None and value.failing_ids == ("c1", "c3")
    assert value.threshold == Threshold(0.5, source="pack fake-pack 0.3.0")
    assert value.summary.n == 5 and value.summary.mean == 0.4
    assert value.fail_rate is not None and value.fail_rate.successes == 2
    assert [r.test_id for r in verdict.run.records] == ["c1", "c2", "c3", "c4", "c5"]
    assert "leak_rate: 2 of 5 cases fail (score >= 0.5 -> FAIL)" in verdict.reasons


def test_a_raising_target_errors_the_case_and_fails_the_run(fake):
    fake(cases=[*CASES[1:2], ("c9", "boom", [], "negative")])
    (verdict,) = run_suite(_config(), packs=["fake-pack"]).verdicts
    assert verdict.errored_ids == ("c9",)
    assert "RuntimeError: target exploded" in verdict.errors["c9"]
    assert "ragleaklab.targets:echo" in verdict.errors["c9"]
    assert not verdict.passed  # no leak among the rest, but an error is not a pass
    assert verdict.value("leak_rate").summary.n == 1  # type: ignore[union-attr]
    # Tolerated, the error no longer fails the pack, but 1 scored case of 2 is under the bound
    # of tolerated errors (90% scored): not tested (tests/core/run/test_degenerate_systems.py).
    tolerant = run_suite(_config(run={"tolerate_errors": True}), packs=["fake-pack"])
    (tolerated,) = tolerant.verdicts
    assert not tolerant.passed and not tolerated.tested
    assert "only 1 of the 2 selected cases were asked and scored" in str(tolerated.not_tested)


def test_unscorable_cases_are_never_passes(fake):
    fake(cases=[("c1", "hello", [], "negative"), ("c2", "skip me", [], "negative")])
    (verdict,) = run_suite(_config(), packs=["fake-pack"]).verdicts
    assert verdict.unscorable == {"contains": {"c2": "no evidence available"}}
    assert not verdict.passed
    assert any("could not be scored" in r for r in verdict.reasons)


def test_epochs_are_reduced_per_case(fake):
    fake(cases=[("c1", "flaky", [], "positive"), ("c2", "calm", [], "negative")])
    pack = load_pack("fake-pack")
    mean = run_pack(pack, target_name="echo", settings=RunSettings(epochs=4))
    assert len(mean.records) == 8
    assert {r.test_id: r.values["leak_rate"] for r in mean.results} == {"c1": 0.5, "c2": 0.0}
    worst = run_pack(pack, target_name="echo", settings=RunSettings(epochs=4, reducer="max"))
    assert worst.results[0].values["leak_rate"] == 1.0


def test_bad_reducer_is_a_config_error(fake):
    fake()
    with pytest.raises(ConfigError, match="nope"):
        run_pack(load_pack("fake-pack"), target_name="echo", settings=RunSettings(reducer="nope"))


def test_tags_select_the_smoke_subset(fake):
    fake()
    (verdict,) = run_suite(_config(), packs=["fake-pack"], tags=["smoke"]).verdicts
    assert [r.test_id for r in verdict.run.results] == ["c1", "c2"]
    with pytest.raises(ConfigError, match="no case tagged nightly"):
        run_suite(_config(), packs=["fake-pack"], tags=["nightly"])


def test_threshold_precedence_config_over_file_over_pack(fake, tmp_path):
    fake()
    stored = tmp_path / "t.json"
    entry = {"threshold": 2.0, "decision_rule": "score >= threshold -> FAIL"}
    file, _ = update_threshold(
        read_thresholds(stored, missing_ok=True), "fake-pack", "leak_rate", entry
    )
    stored.write_text(file.to_json())
    from_file = run_suite(_config(), packs=["fake-pack"], thresholds_file=stored)
    assert from_file.passed  # nothing reaches 2.0
    assert from_file.verdicts[0].value("leak_rate").threshold.source.startswith(str(stored))  # type: ignore[union-attr]
    strict = {"fake-pack": {"leak_rate": {"threshold": 0.0}}}
    from_config = run_suite(_config(thresholds=strict), packs=["fake-pack"], thresholds_file=stored)
    assert from_config.verdicts[0].value("leak_rate").n_failing == 5  # type: ignore[union-attr]


def test_max_fail_rate_allows_a_share_of_failing_cases(fake):
    fake()
    assert not run_suite(_config(run={"max_fail_rate": 0.39}), packs=["fake-pack"]).passed
    assert run_suite(_config(run={"max_fail_rate": 0.4}), packs=["fake-pack"]).passed


def test_evaluate_without_thresholds_reports_but_does_not_gate(fake):
    fake()
    run = run_pack(load_pack("fake-pack"), target_name="echo")
    verdict = evaluate(run, {})
    assert verdict.passed and verdict.value("leak_rate").passed is None  # type: ignore[union-attr]


# -- thresholds file ------------------------------------------------------------------------


def _entry(threshold, fitter="exact", sha="a" * 64):
    return {
        "threshold": threshold,
        "decision_rule": "score >= threshold -> FAIL",
        "fitter": {"name": fitter},
        "labels": {"sha256": sha},
    }


def test_update_keeps_the_previous_value_and_refuses_another_origin(tmp_path):
    empty = read_thresholds(tmp_path / "t.json", missing_ok=True)
    first, change = update_threshold(empty, "p", "v", _entry(0.3))
    assert change == "p v: none -> 0.3 (score >= threshold -> FAIL)"
    second, change = update_threshold(first, "p", "v", _entry(0.4))
    assert second.packs["p"]["v"]["previous"]["threshold"] == 0.3
    assert "previous" not in second.packs["p"]["v"]["previous"]
    with pytest.raises(ThresholdsConflictError, match="--force"):
        update_threshold(second, "p", "v", _entry(0.5, fitter="neyman-pearson"))
    with pytest.raises(ThresholdsConflictError):
        update_threshold(second, "p", "v", _entry(0.5, sha="b" * 64))
    forced, _ = update_threshold(second, "p", "v", _entry(0.5, fitter="x"), force=True)
    assert forced.packs["p"]["v"]["threshold"] == 0.5


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[]", "$.format"),
        ('{"format": "ragleaklab-thresholds", "version": 9, "packs": {}}', "$.version"),
        (
            '{"format": "ragleaklab-thresholds", "version": 1, "packs": {"p": {"v": '
            '{"threshold": "high", "decision_rule": "score >= threshold -> FAIL"}}}}',
            "$.packs.p.v.threshold",
        ),
        (
            '{"format": "ragleaklab-thresholds", "version": 1, "packs": {"p": {"v": '
            '{"threshold": 1, "decision_rule": "above"}}}}',
            "$.packs.p.v.decision_rule",
        ),
    ],
)
def test_malformed_thresholds_files_name_the_path(tmp_path, text, where):
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_thresholds(path)
    assert str(path) in str(info.value) and where in str(info.value)


# -- manifests ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "fragment"),
    [
        (MANIFEST.replace('cases = "cases.jsonl"', 'cases = "../escape.jsonl"'), "inside the pack"),
        (MANIFEST.replace('cases = "cases.jsonl"', 'cases = "/etc/passwd"'), "inside the pack"),
        (MANIFEST.replace('metrics = ["contains"]', "metrics = []"), "$.metrics"),
        (MANIFEST + "\nsurprise = 1\n", "surprise"),
        (
            MANIFEST.replace("threshold = 0.5", 'threshold = "x"'),
            "$.thresholds['leak_rate'].threshold",
        ),
    ],
)
def test_bad_manifests_are_config_errors_with_a_path(fake, manifest, fragment):
    fake(manifest=manifest)
    with pytest.raises(ConfigError) as info:
        load_pack("fake-pack")
    assert "pack.toml" in str(info.value) and fragment in str(info.value)


def test_duplicate_test_ids_name_the_file(fake):
    fake(cases=[("c1", "a", [], "negative"), ("c1", "b", [], "positive")])
    with pytest.raises(InputError, match=r"cases\.jsonl.*duplicate test_id 'c1'"):
        load_pack("fake-pack")


# -- the CLI, through a real subprocess -----------------------------------------------------


def rlk(
    root: Path, *args: str, cwd: Path, env_extra: dict | None = None, own_process: bool = False
):
    """``ragleaklab ARGS`` with the fake pack's distribution in *root* importable."""
    return run_cli(*args, cwd=cwd, pythonpath=[root], env=env_extra, own_process=own_process)


def test_run_exit_code_matches_the_printed_verdict_and_the_report(fake, tmp_path):
    root = fake()
    out = rlk(root, "run", "-p", "fake-pack", "--target", "echo", "-o", "o", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "FAIL  fake-pack 0.3.0" in out.stdout and "verdict: FAIL" in out.stdout
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["verdict"] == "fail" and report["exit_code"] == 1
    assert report["packs"][0]["values"]["leak_rate"]["failing_ids"] == ["c1", "c3"]
    assert report["target"]["name"] == "echo" and report["target"]["provider"] == "rlk-fake 1.0"
    lines = (tmp_path / "o" / "runs.jsonl").read_text().splitlines()
    assert [json.loads(line)["test_id"] for line in lines] == ["c1", "c2", "c3", "c4", "c5"]
    smoke = rlk(root, "run", "-p", "fake-pack", "--target", "echo", "--smoke",
                "--target-option", 'prefix="ok "', "-o", "s", cwd=tmp_path)  # fmt: skip
    assert smoke.returncode == 1
    first = json.loads((tmp_path / "s" / "runs.jsonl").read_text().splitlines()[0])
    assert first["answer"].startswith("ok ")


def test_run_report_is_byte_identical_whatever_the_hash_seed(fake, tmp_path):
    root = fake()
    for seed in ("1", "2"):
        out = rlk(root, "run", "-p", "fake-pack", "--target", "echo", "-o", f"o{seed}",
                  cwd=tmp_path, env_extra={"PYTHONHASHSEED": seed})  # fmt: skip
        assert out.returncode == 1
    assert (tmp_path / "o1" / "report.json").read_bytes() == (
        tmp_path / "o2" / "report.json"
    ).read_bytes()


def test_run_passes_with_exit_0_when_no_case_fails(fake, tmp_path):
    root = fake(cases=[("c2", "hello", [], "negative"), ("c1", "leak", [], "positive")])
    config = tmp_path / "c.toml"
    config.write_text(
        '[target]\nname = "echo"\n[thresholds.fake-pack.leak_rate]\nthreshold = 2.0\n'
    )
    out = rlk(root, "run", "--config", str(config), "-p", "fake-pack", "-o", "o", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "verdict: PASS" in out.stdout


def test_run_with_an_unknown_pack_exits_3_before_running(fake, tmp_path):
    root = fake()
    out = rlk(root, "run", "-p", "fake-pak", "--target", "echo", "-o", "o", cwd=tmp_path)
    assert out.returncode == 3
    assert "did you mean 'fake-pack'" in out.stderr
    assert not (tmp_path / "o").exists()


def test_calibrate_pack_writes_thresholds_that_run_then_uses(fake, tmp_path):
    root = fake()
    config = tmp_path / "c.toml"
    config.write_text('[target]\nname = "echo"\n')
    args = ["calibrate", "-p", "fake-pack", "--config", str(config), "-o", "cal",
            "--target-fpr", "0.0", "--write-thresholds"]  # fmt: skip
    out = rlk(root, *args, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "cal" / "calibration_report.json").read_text())
    assert report["pack_name"] == "fake-pack" and report["metric_name"] == "leak_rate"
    assert report["result"]["threshold"] == 1.0 and report["result"]["achieved_tpr"] == 1.0
    assert report["inputs"]["labels"]["path"].endswith("labels.jsonl")
    stored = json.loads((tmp_path / "ragleaklab.thresholds.json").read_text())
    assert stored["packs"]["fake-pack"]["leak_rate"]["threshold"] == 1.0
    assert "fake-pack leak_rate: none -> 1.0" in out.stdout
    # run reads the stored threshold by default
    ran = rlk(root, "run", "--config", str(config), "-p", "fake-pack", "-o", "o", cwd=tmp_path)
    result = json.loads((tmp_path / "o" / "report.json").read_text())
    threshold = result["packs"][0]["values"]["leak_rate"]["threshold"]
    assert threshold["source"].startswith("ragleaklab.thresholds.json")
    assert ran.returncode == 1
    # another labels file: refused without --force, file untouched
    labels = tmp_path / "other.jsonl"
    labels.write_text(_lines([{"test_id": t, "label": lab} for t, _, _, lab in CASES]) + "\n")
    before = (tmp_path / "ragleaklab.thresholds.json").read_bytes()
    refused = rlk(root, *args, "--labels", str(labels), cwd=tmp_path)
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert (tmp_path / "ragleaklab.thresholds.json").read_bytes() == before
    forced = rlk(root, *args, "--labels", str(labels), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr


# -- concurrency, rate limit, resume, record and replay ---------------------------------------

MANY = [(f"c{i:02d}", "leak" if i % 3 == 0 else f"q{i}", [], "negative") for i in range(12)]


def test_async_targets_are_asked_concurrently_and_records_stay_in_case_order(fake):
    fake(cases=MANY)
    pack = load_pack("fake-pack")
    parallel = run_pack(
        pack, target_name="slow", target_options={"gather": 4}, settings=RunSettings(concurrency=4)
    )
    peak = max(r.target_metadata["peak"] for r in parallel.records)
    assert peak == 4  # four were in flight at once, never five
    assert [r.test_id for r in parallel.records] == [c[0] for c in MANY]
    serial = run_pack(pack, target_name="slow", settings=RunSettings(concurrency=1))
    assert max(r.target_metadata["peak"] for r in serial.records) == 1
    assert parallel.results == serial.results


def test_rate_limit_spaces_request_starts(fake, tmp_path):
    fake(cases=MANY[:5])
    log = tmp_path / "starts.log"
    settings = RunSettings(concurrency=5, rate_limit=20.0)
    run_pack(
        load_pack("fake-pack"),
        target_name="slow",
        target_options={"delay": 0.0, "log_file": str(log)},
        settings=settings,
    )
    starts = sorted(float(line.split()[0]) for line in log.read_text().splitlines())
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(starts) == 5 and min(gaps) >= 0.045


def test_an_interrupted_run_resumes_without_asking_done_cases_again(fake, tmp_path):
    root = fake(cases=MANY)
    log = tmp_path / "asked.log"
    config = tmp_path / "c.toml"
    body = '[target]\nname = "slow"\n[target.options]\ndelay = 0.0\nlog_file = "{log}"\n'
    config.write_text(body.format(log=log.as_posix()))
    args = ["run", "-p", "fake-pack", "-o", "o", "--concurrency", "1"]
    killed = rlk(
        root,
        *args,
        "--config",
        str(config),
        cwd=tmp_path,
        env_extra={"RLK_DIE_AFTER": "5"},
        own_process=True,
    )
    assert killed.returncode == 9
    partial = tmp_path / "o" / "runs.jsonl.partial"
    assert len(partial.read_text().splitlines()) == 5
    assert not (tmp_path / "o" / "report.json").exists()
    # other settings: refused
    changed = rlk(root, *args, "--config", str(config), "--epochs", "2", "--resume", cwd=tmp_path)
    assert changed.returncode == 2 and "other settings" in changed.stderr
    log.unlink()
    resumed = rlk(root, *args, "--config", str(config), "--resume", cwd=tmp_path)
    assert resumed.returncode == 1, resumed.stderr
    asked = [line.split()[1] for line in log.read_text().splitlines()]
    assert len(asked) == len(MANY) - 5  # the five done cases were not asked again
    lines = (tmp_path / "o" / "runs.jsonl").read_text().splitlines()
    assert [json.loads(line)["test_id"] for line in lines] == [c[0] for c in MANY]
    assert not partial.exists()
    nothing = rlk(root, *args, "--config", str(config), "--resume", cwd=tmp_path)
    assert nothing.returncode == 2 and "nothing to resume" in nothing.stderr


def test_record_then_replay_scores_the_same_without_the_target(fake, tmp_path):
    root = fake()
    recorded = rlk(root, "run", "-p", "fake-pack", "--target", "echo", "-o", "a",
                   "--record", "rec", cwd=tmp_path)  # fmt: skip
    assert recorded.returncode == 1, recorded.stderr
    index = json.loads((tmp_path / "rec" / "recording.json").read_text())
    assert index["packs"]["fake-pack"]["target"]["name"] == "echo"
    # a target named with --replay would be ignored: refused, nothing written
    for extra in (["--target", "gone"], ["--target-option", "prefix='x'"]):
        refused = rlk(root, "run", "-p", "fake-pack", *extra, "-o", "b", "--replay", "rec",
                      cwd=tmp_path)  # fmt: skip
        assert refused.returncode == 2 and "--replay" in refused.stderr, refused.stderr
        assert not (tmp_path / "b").exists()
    # so is a config whose target differs from the recorded one
    other = tmp_path / "other.toml"
    other.write_text('[target]\nname = "echo"\n[target.options]\nprefix = "x"\n')
    refused = rlk(root, "run", "-p", "fake-pack", "--config", str(other), "-o", "b",
                  "--replay", "rec", cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 2 and "$.target.options.prefix" in refused.stderr
    assert not (tmp_path / "b").exists()
    # replay builds no target at all (the recorded one need not be installed to replay)
    replayed = rlk(root, "run", "-p", "fake-pack", "-o", "b", "--replay", "rec", cwd=tmp_path)
    assert replayed.returncode == 1, replayed.stderr
    a = json.loads((tmp_path / "a" / "report.json").read_text())
    b = json.loads((tmp_path / "b" / "report.json").read_text())
    assert a["packs"][0]["values"] == b["packs"][0]["values"]
    assert b["target"]["provider"] == "replay of rlk-fake 1.0"
    assert b["settings"]["replay"] == "rec"
    # a case missing from the recording is refused before anything is asked, never a pass
    rec = tmp_path / "rec" / "fake-pack.jsonl"
    rec.write_text("".join(rec.read_text().splitlines(keepends=True)[1:]))
    partial = rlk(root, "run", "-p", "fake-pack", "-o", "c", "--replay", "rec", cwd=tmp_path)
    assert partial.returncode == 2, partial.stderr
    assert "lacks 1 of the cases this run selects (c1 epoch 0)" in partial.stderr
    assert not (tmp_path / "c").exists()


def test_progress_counts_every_case_and_epoch(fake):
    import io
    import itertools

    from ragleaklab_core.cli._progress import ProgressLines, TerminalBar

    fake()
    config = _config(run={"epochs": 2})
    stream = io.StringIO()
    bar = TerminalBar(stream)
    run_suite(config, packs=["fake-pack"], on_pack=bar.start, on_record=bar.advance)
    bar.finish()
    drawn = stream.getvalue()
    assert "fake-pack" in drawn and "10/10" in drawn and "11/10" not in drawn
    # The plain lines, on a clock one second further at every reading: a line per answer.
    stream = io.StringIO()
    clock = itertools.count(0.0)
    lines = ProgressLines(1.0, stream=stream, clock=lambda: float(next(clock)), ticker=False)
    run_suite(config, packs=["fake-pack"], on_pack=lines.start, on_record=lines.advance)
    lines.finish()
    written = stream.getvalue().splitlines()
    assert len(written) == 10
    assert written[-1].startswith("progress: fake-pack 10/10 answers, ")


def test_a_symlink_out_of_the_pack_directory_is_refused(tmp_path):
    from ragleaklab_core.packs.manifest import load_manifest

    pack = tmp_path / "pack"
    pack.mkdir()
    for rel, text in _pack_files().items():
        if rel.startswith("rlk_fake/pack/") and not rel.endswith(".py"):
            (pack / rel.removeprefix("rlk_fake/pack/")).write_text(text)
    outside = tmp_path / "secret.jsonl"
    outside.write_text((pack / "documents.jsonl").read_text())
    (pack / "documents.jsonl").unlink()
    (pack / "documents.jsonl").symlink_to(outside)
    with pytest.raises(InputError, match="resolves outside the pack's directory"):
        load_manifest(pack)


@pytest.mark.parametrize(
    ("source", "from_pack"),
    [
        ("pack", True),  # a Python pack's Threshold(...) default
        ("pack demo 1.0.0", True),  # a data-only pack's
        ("config", False),
        ("ragleaklab.thresholds.json (relevance-hijack)", False),
        ("packs.json", False),
    ],
)
def test_a_threshold_knows_whether_it_is_the_packs_default(source, from_pack):
    # One rule for the summary's "the pack's default" and the uncalibrated-defaults warning.
    assert Threshold(0.5, source=source).from_pack is from_pack
