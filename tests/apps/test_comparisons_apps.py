"""A LangChain app compared with itself, as a team gating CI on a baseline would (issue: no
silent PASS): a changed retriever is the change a comparison exists to judge, so it is named and
compared without --force; a baseline gated at another threshold, or a replay scored with other
metric options, measured something else and is refused before anything is asked.
"""

from __future__ import annotations

import json

import pytest

from tests.apps.support import no_traceback, report, rlk, write_config

pytestmark = pytest.mark.filterwarnings(
    "ignore:`langchain-community` is being sunset:DeprecationWarning"
)

APP = "rlk_app_langchain"
HIJACK = "relevance-hijack"


def app_config(tmp_path, name: str, *, k: int = 5, extra: str = ""):  # type: ignore[no-untyped-def]
    path = write_config(
        tmp_path / f"{name}.toml",
        callable=f"{APP}:build_bm25",
        factory=True,
        ingest_callable=f"{APP}:receive",
    )
    path.write_text(path.read_text() + f"kwargs = {{ k = {k} }}\n" + extra, encoding="utf-8")
    return path


def run(tmp_path, config, out: str, *more: str):  # type: ignore[no-untyped-def]
    done = rlk("run", "-c", str(config), "-p", HIJACK, "--smoke", "-o", out, *more, cwd=tmp_path)
    no_traceback(done)
    return done


def test_a_changed_retriever_is_named_and_compared_without_force(tmp_path):
    base = run(tmp_path, app_config(tmp_path, "base"), "base")
    assert base.returncode in (0, 1), base.stderr
    # The app's retriever now returns 3 documents: a changed target, not another measurement.
    new = run(tmp_path, app_config(tmp_path, "new", k=3), "new", "--baseline",
              "base/report.json", "--fail-on", "regression")  # fmt: skip
    assert new.returncode in (0, 1, 3), new.stderr
    assert "did not measure the same way" not in new.stderr
    assert "target changed from the baseline: the target is python@" in new.stdout
    gate = report(tmp_path / "new")["gate"]
    (change,) = gate["baseline"]["diff"]["target_changes"]
    assert "kwargs" in change and gate["baseline"]["forced"] is False
    # diff names it the same way, and compares the value.
    done = rlk("diff", "base/report.json", "new/report.json", "--json", cwd=tmp_path)
    document = json.loads(done.stdout)
    assert document["target_changes"] == [change]
    # the gated values: relevance-hijack's default gate is what the answer asserts
    assert [v["value"] for v in document["values"]] == ["poison_attribution"]


def test_a_baseline_gated_at_another_threshold_is_refused_before_asking(tmp_path):
    loose = "[thresholds.relevance-hijack.poison_rate_at_k]\nthreshold = 1.0\n"
    strict = "[thresholds.relevance-hijack.poison_rate_at_k]\nthreshold = 0.2\n"
    base = run(tmp_path, app_config(tmp_path, "base", extra=strict), "base")
    assert base.returncode == 1, base.stdout  # any poison in the top 5 fails
    # The new run loosens the threshold: its failing count is no longer the baseline's.
    new = run(tmp_path, app_config(tmp_path, "new", extra=loose), "new", "--baseline",
              "base/report.json", "--fail-on", "regression")  # fmt: skip
    assert new.returncode == 2, new.stdout + new.stderr
    assert "did not measure the same way" in new.stderr
    assert "threshold" in new.stderr and "0.2" in new.stderr and "1.0" in new.stderr
    assert not (tmp_path / "new" / "report.json").exists()


def test_a_replay_scored_with_other_metric_options_is_refused(tmp_path):
    recorded = run(tmp_path, app_config(tmp_path, "rec"), "rec-out", "--record", "rec")
    assert recorded.returncode in (0, 1), recorded.stderr
    # The same recording, replayed as it was made, gives the same verdict.
    again = run(tmp_path, app_config(tmp_path, "rec"), "again", "--replay", "rec")
    assert again.returncode == recorded.returncode, again.stderr
    assert (
        report(tmp_path / "again")["packs"][0]["values"]
        == (report(tmp_path / "rec-out")["packs"][0]["values"])
    )
    other = app_config(tmp_path, "other", extra="[metrics.retrieval]\nk = 1\n")
    done = run(tmp_path, other, "other", "--replay", "rec")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "was recorded with other metric options" in done.stderr
    assert "retrieval.k" in done.stderr
    assert not (tmp_path / "other").exists()
