"""One behaviour per executor: what is decided about a pack (here: not tested, its cases asking
as a principal the target cannot carry) is decided before any executor asks a case, so
``--executor local``, ``--executor ray`` and a Ray run interrupted and ``--resume``d write the
same ``report.json``, byte for byte, and the same ``runs.jsonl`` records (but for each one's
``elapsed_ms``), for every built-in pack.

Two python targets whose answer takes no principal: an app built in its module (known when the
target is loaded: the plan reports ``cross-tenant`` not tested, nothing asked or recorded), and
a class the python target builds per pack, a factory (known only once its app is built: every
case is recorded "not asked" with the same reason, whoever built it). Before this was decided
outside the executors, a Ray worker asked each case and the target refused it with a TypeError.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ray.test_ray_executor import (
    BUILTIN_PACKS,
    _interrupted,
    on_ray,
    ragleaklab,
    ran,
    runs,
)

#: Paced (the same in every run: report.json's settings hold it) so that a run can be
#: interrupted half-way; small batches, so the Ray run's first records come back early.
PACED = ["--smoke", "--rate-limit", "60", "-c", "ray.toml"]
TARGETS = {
    "known-when-loaded": "rlk_ray_targets:ANONYMOUS",
    "known-once-built": "rlk_ray_targets:Anonymous",
}


@pytest.mark.parametrize("when", sorted(TARGETS))
def test_local_ray_and_resumed_runs_write_the_same_bytes(
    cluster: str, tmp_path: Path, when: str
) -> None:
    (tmp_path / "ray.toml").write_text("[run.ray]\nbatch_size = 4\n", encoding="utf-8")
    target = ["--target", "python", "--target-option", f'callable="{TARGETS[when]}"', *PACED]
    local = ragleaklab(tmp_path, *target, "-o", "local", "--record", "rec-local")
    ray = ragleaklab(tmp_path, *target, *on_ray(cluster), "-o", "ray", "--record", "rec-ray")
    ran(local, 1, 3)
    ran(ray, local.returncode)
    _interrupted(tmp_path, *target, *on_ray(cluster), lines=60)
    kept = len((tmp_path / "out" / "runs.jsonl.partial").read_bytes().splitlines())
    assert 60 <= kept < 240  # interrupted half-way: the resumed run asks the rest
    resumed = ragleaklab(tmp_path, *target, *on_ray(cluster), "-o", "out", "--resume")
    ran(resumed, local.returncode)

    expected = (tmp_path / "local" / "report.json").read_bytes()
    assert (tmp_path / "ray" / "report.json").read_bytes() == expected
    assert (tmp_path / "out" / "report.json").read_bytes() == expected
    # runs.jsonl: every record the same, in the same order, but for how long it took.
    expected_runs = runs(tmp_path / "local" / "runs.jsonl")
    assert runs(tmp_path / "ray" / "runs.jsonl") == expected_runs
    assert runs(tmp_path / "out" / "runs.jsonl") == expected_runs
    # And the same recording, every case the run selected in it (a replay refuses one short).
    recorded = sorted(p.name for p in (tmp_path / "rec-local").iterdir())
    assert recorded == sorted(p.name for p in (tmp_path / "rec-ray").iterdir())
    assert "cross-tenant.jsonl" in recorded or when == "known-when-loaded"
    for name in recorded:
        expected_file = (tmp_path / "rec-local" / name).read_bytes()
        assert (tmp_path / "rec-ray" / name).read_bytes() == expected_file, name

    # What is the same is the decision, not the same mistake made three times.
    report = json.loads((tmp_path / "local" / "report.json").read_bytes())
    packs = {p["name"]: p for p in report["packs"]}
    assert set(packs) == BUILTIN_PACKS
    untested = packs.pop("cross-tenant")
    assert untested["tested"] is False and untested["verdict"] == "error"
    reason = untested["not_tested_reason"]
    assert "its cases ask as a principal (the first: " in reason
    assert "target 'python' cannot ask as one" in reason
    assert all(p["tested"] and p["cases"]["run"] == 30 for p in packs.values())
    records = [
        json.loads(line)
        for line in (tmp_path / "local" / "runs.jsonl").read_text("utf-8").splitlines()
    ]
    tenants = [r for r in records if r["pack"] == "cross-tenant"]
    assert all(r["error"] is None for r in records if r["pack"] != "cross-tenant")
    assert "TypeError" not in json.dumps(records)
    if when == "known-when-loaded":  # the plan decided: nothing ingested, nothing recorded
        assert tenants == []
        assert untested["cases"]["run"] == 0
    else:  # decided once built, before any case: every case recorded as not asked
        assert len(tenants) == 30
        assert all(r["answer"] is None and r["error"]["group"] == "ragleaklab.run" for r in tenants)
        assert {r["error"]["message"] for r in tenants} == {f"not asked: {reason}"}
