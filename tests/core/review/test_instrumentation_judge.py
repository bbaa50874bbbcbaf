"""The reference target's instrumentation as a judge (``reference-instrumentation``).

Its rules were written again in the plugins from the reference target's record alone, apart
from the pack generator's (ragleaklab_packgen, which labelled the built-in packs and is not
installed). The check that they are the same rules: on the target the packs were labelled on,
the judge gives every case of every built-in pack the label the pack ships. On any other system
there is no record, and every case is left unlabelled with the reason, never guessed.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from ragleaklab_plugins.judges import reference_instrumentation
from ragleaklab_plugins.judges.reference_instrumentation import (
    RULES,
    InstrumentationError,
    ReferenceInstrumentationJudge,
)

from ragleaklab_core import JudgedCase
from tests.support.cli import rlk

ROOT = Path(__file__).resolve().parents[3]
PACKS = ROOT / "plugins/ragleaklab_plugins/packs"
JUDGED = "review/judge-reference-instrumentation.jsonl"


def shipped_labels() -> dict[tuple[str, str], str]:
    found = {}
    for labels in sorted(PACKS.glob("*/labels.jsonl")):
        name = labels.parent.name.replace("_", "-")
        for line in labels.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            label = row["label"]
            if isinstance(label, bool):
                label = "positive" if label else "negative"
            found[(name, row["test_id"])] = label
    return found


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Every built-in pack's smoke cases, run on the embedded reference target at its defaults
    (the system the packs were labelled on) and judged by its instrumentation."""
    tmp = tmp_path_factory.mktemp("instrumented")
    done = rlk("run", "--smoke", "-o", "run", cwd=tmp)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    done = rlk("label", "judge", "run", "--judge", "reference-instrumentation", cwd=tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 not judged" in done.stdout
    return rows(tmp / "run" / JUDGED)


def test_every_built_in_pack_has_a_rule():
    assert set(RULES) == {p.parent.name.replace("_", "-") for p in PACKS.glob("*/pack.toml")}


def test_on_the_labelled_target_it_gives_every_case_the_label_the_pack_ships(judged):
    shipped = shipped_labels()
    assert {r["pack"] for r in judged} == set(RULES)
    differing = [
        f"{r['pack']} {r['test_id']}: judged {r['label']} ({r['notes']}), shipped "
        f"{shipped[(r['pack'], r['test_id'])]}"
        for r in judged
        if r["label"] != shipped[(r["pack"], r["test_id"])]
    ]
    assert not differing, differing
    # Both labels occur in every pack's smoke cases: a constant judge could not pass this.
    for pack in RULES:
        labels = {r["label"] for r in judged if r["pack"] == pack}
        assert labels == {"positive", "negative"}, pack
    assert {r["label_source"] for r in judged} == {"judge"}
    assert {r["labelled_by"] for r in judged} == {"reference-instrumentation@1"}


def test_on_another_system_no_case_is_labelled(server, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(
        f'[target]\nname = "http"\n[target.options]\nurl = "{server.url("/simple")}"\n'
        f'ingest_url = "{server.url("/ingest")}"\nreset_url = "{server.url("/reset")}"\n',
        encoding="utf-8",
    )
    done = rlk(
        "run", "-c", "c.toml", "-p", "relevance-hijack", "--smoke", "-o", "run", cwd=tmp_path
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    done = rlk("label", "judge", "run", "--judge", "reference-instrumentation", cwd=tmp_path)
    said = done.stdout + done.stderr
    assert "30 not judged" in said, said
    found = rows(tmp_path / "run" / JUDGED)
    assert all(r["label"] in ("", None) for r in found)
    assert all("reference target's runs only" in r["judge_error"] for r in found)
    done = rlk("label", "import", f"run/{JUDGED}", "-o", "labels.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and not (tmp_path / "labels.jsonl").exists()


def test_a_pack_it_has_no_rule_for_is_an_error():
    case = JudgedCase(
        pack="someone-elses-pack",
        pack_type="sentinel",
        test_id="x-1",
        query="q",
        answer="a",
        metadata={"simulated": {"instructions": []}},
    )
    with pytest.raises(InstrumentationError, match="no rule for pack 'someone-elses-pack'"):
        ReferenceInstrumentationJudge().judge(case)


def test_it_decides_from_the_record_never_from_a_metric():
    tree = ast.parse(Path(reference_instrumentation.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert not any("metrics" in name for name in imported), imported
