"""Every option of ``ragleaklab run`` is checked before the journal is opened (issue 26, class 7).

Before, ``--baseline-level nan`` let the run ask every case and write its journal, then exit 2.
Here each option gets a value it must refuse (NaN in every spelling, infinities, out of range,
a missing or wrong kind of file), against a loopback HTTP service that records every request:
exit 2, a message naming the flag (or the file), no traceback, nothing asked, and nothing written
(no output directory, so no journal and no report).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

PACK = "relevance-hijack"


@pytest.fixture(scope="module")
def baseline(shared_server, tmp_path_factory) -> Path:
    """A real, comparable baseline: the same run against the same service, done once."""
    root = tmp_path_factory.mktemp("baseline")
    done = rlk(
        "run", "-c", _config(root, shared_server), "-p", PACK, "--smoke", "-o", "b", cwd=root
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return root / "b" / "report.json"


def _config(root: Path, server: FakeRagServer) -> str:
    path = root / "target.toml"
    path.write_text(
        '[target]\nname = "http"\n\n[target.options]\n'
        f'url = "{server.url("/simple")}"\nretries = 0\n'
        f'ingest_url = "{server.url("/ingest")}"\nreset_url = "{server.url("/reset")}"\n',
        encoding="utf-8",
    )
    return str(path)


LEVELS = ["nan", "NaN", "-nan", "+nan", "inf", "-inf", "0", "0.5", "1e-400", "0.7", "-0.01"]

CASES = [
    *[(["--baseline", "{baseline}", "--baseline-level", v], "--baseline-level") for v in LEVELS],
    (
        ["--baseline", "{baseline}", "--fail-on", "regression", "--baseline-level", "nan"],
        "--baseline-level",
    ),
    (
        ["--baseline", "{baseline}", "--fail-on", "new-failures", "--baseline-level", "-nan"],
        "--baseline-level",
    ),
    (["--baseline-level", "0.05"], "--baseline"),
    (["--fail-on", "regression"], "--baseline"),
    (["--rate-limit", "nan"], "--rate-limit"),
    (["--rate-limit", "inf"], "--rate-limit"),
    (["--rate-limit", "0"], "--rate-limit"),
    (["--rate-limit", "-1"], "--rate-limit"),
    (["--concurrency", "0"], "--concurrency"),
    (["--concurrency", "-3"], "--concurrency"),
    (["--epochs", "0"], "--epochs"),
    (["--epochs", "2", "--reducer", "at_least_3"], "--reducer"),
    (["--reducer", "nan"], "--reducer"),
    (["--max-consecutive-failures", "-1"], "--max-consecutive-failures"),
    (["--max-fail-rate", "nan"], "--max-fail-rate"),
    (["--max-fail-rate", f"{PACK}=inf"], "--max-fail-rate"),
    (["--max-fail-rate", "-0.1"], "--max-fail-rate"),
    (["--executor", "ray", "--ray-cpus-per-worker", "nan"], "--ray-cpus-per-worker"),
    (["--executor", "ray", "--ray-gpus-per-worker", "-1"], "--ray-gpus-per-worker"),
    (["--executor", "ray", "--ray-workers", "0"], "--ray-workers"),
    (["--ray-workers", "2"], "--ray-"),
    (["--target-option", "timeout=nan"], "timeout"),
    (["--thresholds", "missing.json"], "missing.json"),
    (["--baseline", "missing.json"], "missing.json"),
    (["--replay", "afile"], "--replay"),
    (["--record", "afile"], "--record"),
    (["--resume"], "--resume"),
    (["--resume", "--restart"], "--restart"),
    (["--tag", "no-such-tag"], "no-such-tag"),
    (["-p", "no-such-pack"], "no-such-pack"),
]


@pytest.mark.parametrize(("flags", "named"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_bad_option_is_refused_before_anything_is_asked_or_written(
    tmp_path, baseline, server, flags, named
):
    # (baseline, module-scoped, is made first; server then forgets its requests)
    (tmp_path / "afile").write_text("a file, not a directory\n", encoding="utf-8")
    args = [f.replace("{baseline}", str(baseline)) for f in flags]
    # --smoke selects by tag too (a case with any selected tag runs): not with --tag.
    smoke = [] if "--tag" in flags else ["--smoke"]
    out = rlk("run", "-c", _config(tmp_path, server), "-p", PACK, *smoke, "-o", "o", *args,
              cwd=tmp_path)  # fmt: skip
    expected = (2, 3) if named == "no-such-pack" else (2,)  # an unknown pack: plugin, exit 3
    assert out.returncode in expected, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert named in out.stderr, out.stderr
    assert not server.seen  # nothing asked, not even the ingest
    assert not (tmp_path / "o").exists()  # no journal, no report


def test_a_bad_progress_interval_is_refused_before_anything_is_asked(tmp_path, server):
    out = rlk(
        "run", "-c", _config(tmp_path, server), "-p", PACK, "--smoke", "-o", "o",
        cwd=tmp_path, env={"RAGLEAKLAB_PROGRESS_INTERVAL": "nan"},
    )  # fmt: skip
    assert out.returncode == 2 and "RAGLEAKLAB_PROGRESS_INTERVAL" in out.stderr, out.stderr
    assert not server.seen and not (tmp_path / "o").exists()


def test_the_python_api_refuses_a_level_that_is_no_number_before_the_journal(tmp_path):
    from ragleaklab_core import RunRequest, RunSession
    from ragleaklab_core.errors import UsageError

    for level in (float("nan"), True, "0.05", 0, 0.5):
        request = RunRequest(packs=(PACK,), out=tmp_path / "o", baseline=tmp_path / "b.json",
                             baseline_level=level)  # type: ignore[arg-type]  # fmt: skip
        with pytest.raises(UsageError, match="--baseline-level"):
            RunSession(request).prepare()
        assert not (tmp_path / "o").exists()


def test_a_flag_out_of_range_is_named_and_a_file_value_is_not(tmp_path):
    """The flag is named only when a flag set the value; a bad value in the file is named at
    its $.path in the file, never as a flag nobody typed."""
    config = tmp_path / "c.toml"
    config.write_text("[run]\nconcurrency = 0\n", encoding="utf-8")
    out = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode == 2
    assert "@ $.run.concurrency" in out.stderr and "--concurrency" not in out.stderr
    flagged = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o",
                  "--concurrency", "-1", cwd=tmp_path)  # fmt: skip
    assert flagged.returncode == 2
    assert "--concurrency: 'concurrency' must be >= 1: -1 @ $.run.concurrency" in flagged.stderr
    assert not (tmp_path / "o").exists()
