"""Every pack in one command against your own app: a pack the target cannot test is reported
``not tested`` beside the measured ones (never the end of the run, nothing measured thrown
away, no journal left), packs are left out with ``--exclude``, ``./ragleaklab.toml`` is read,
and every rendering names the system tested. Through the CLI in a subprocess."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ragleaklab_core.config import Config, RunConfig
from ragleaklab_core.errors import ConfigError
from ragleaklab_core.run.suite import pack_names
from tests.core.run.test_principal import LEGACY_DIST
from tests.support.workspace import Workspace

FACTORY = '''

def build_app(documents):
    """A python-target factory whose app takes no principal (known only once it is built)."""
    def answer(query):
        raise AssertionError("a case was asked: " + query)
    return answer
'''

BOTH = ("-p", "acme-tenants", "-p", "relevance-hijack")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    # The legacy target answers each question in words of its own: one text for every question
    # would leave relevance-hijack (its gated value reads the answer) untested too.
    legacy = textwrap.dedent(LEGACY_DIST["rlk_legacy/__init__.py"])
    said = 'Response("nothing to see", '
    assert said in legacy
    legacy = legacy.replace(said, 'Response("nothing to see about: " + query, ')
    files = {name: textwrap.dedent(text) for name, text in LEGACY_DIST.items()}
    return Workspace(
        tmp_path_factory.mktemp("whole"),
        extra_source=FACTORY,
        extra_files=files | {"rlk_legacy/__init__.py": legacy},
        extra_entry_points={
            "ragleaklab.targets": {"acme-legacy": "rlk_legacy:LegacyTarget"},
            "ragleaklab.packs": {"acme-tenants": "rlk_legacy:TenantPack"},
        },
    )


def _report(path: Path) -> dict:
    return json.loads((path / "report.json").read_text("utf-8"))


def _packs(report: dict) -> dict[str, dict]:
    return {p["name"]: p for p in report["packs"]}


def test_a_pack_the_target_cannot_test_is_reported_beside_the_measured_ones(ws: Workspace):
    done = ws.cli(
        "run", "--target", "acme-legacy", *BOTH, "-o", "both", "--markdown", "both.md",
        "--junit", "both.xml", ok=(1, 3),
    )  # fmt: skip
    report = _report(ws.root / "both")
    assert done.returncode == report["exit_code"]
    packs = _packs(report)
    assert list(packs) == ["acme-tenants", "relevance-hijack"]
    untested = packs["acme-tenants"]
    assert untested["verdict"] == "error" and untested["tested"] is False
    assert untested["cases"]["run"] == 0 and untested["cases"]["in_pack"] == 2
    reason = untested["not_tested_reason"]
    assert "ask as a principal (the first: 'as-bob')" in reason
    assert "target 'acme-legacy' cannot ask as one" in reason
    assert "--exclude acme-tenants" in reason
    # The other pack was measured, in full, and kept.
    measured = packs["relevance-hijack"]
    assert measured["tested"] is True and measured["cases"]["run"] == measured["cases"]["in_pack"]
    assert measured["cases"]["run"] > 100
    lines = (ws.root / "both" / "runs.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == measured["cases"]["run"]
    assert {json.loads(line)["pack"] for line in lines} == {"relevance-hijack"}
    # A finished run leaves no journal: the next plain run is not refused.
    assert sorted(p.name for p in (ws.root / "both").iterdir()) == ["report.json", "runs.jsonl"]
    assert "ERROR (not tested)  acme-tenants" in done.stdout
    assert "acme-tenants" in (ws.root / "both.md").read_text("utf-8")
    assert 'type="not tested"' in (ws.root / "both.xml").read_text("utf-8")
    assert report["totals"]["packs_not_tested"] == 1
    again = ws.cli("run", "--target", "acme-legacy", *BOTH, "-o", "both", ok=(1, 3))
    assert again.returncode == done.returncode


def test_a_run_of_only_untestable_packs_writes_its_report_and_exits_3(ws: Workspace):
    done = ws.cli("run", "--target", "acme-legacy", "-p", "acme-tenants", "-o", "alone", ok=(3,))
    report = _report(ws.root / "alone")
    assert report["verdict"] == "error" and report["exit_code"] == 3
    assert report["packs"][0]["tested"] is False
    assert report["system"]["target"] == "acme-legacy"
    assert "Traceback" not in done.stderr
    assert done.stdout.splitlines()[-1] == "wrote alone/report.json, runs.jsonl"


def test_an_excluded_pack_is_left_out(ws: Workspace):
    # Out of the config's own list of packs (a pack asked for with -p is never excluded).
    (ws.root / "both.toml").write_text(
        '[run]\npacks = ["acme-tenants", "relevance-hijack"]\n', "utf-8"
    )
    done = ws.cli(
        "run", "-c", "both.toml", "--target", "acme-legacy", "--exclude", "acme-tenants",
        "-o", "excluded",
    )  # fmt: skip
    report = _report(ws.root / "excluded")
    assert [p["name"] for p in report["packs"]] == ["relevance-hijack"]
    assert report["packs"][0]["tested"] is True
    assert done.returncode == report["exit_code"] == (1 if report["verdict"] == "fail" else 0)
    assert report["settings"]["exclude"] == ["acme-tenants"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--exclude", "acme-tenant"),
            "'acme-tenant' is not an installed pack (did you mean 'acme-tenants'",
        ),
        (
            ("-p", "acme-tenants", "--exclude", "acme-tenants"),
            "every pack of the run is excluded (acme-tenants): nothing would be tested",
        ),
        (
            ("-p", "acme-tenants", "-p", "relevance-hijack", "--exclude", "acme-tenants"),
            "pack 'acme-tenants' is asked for (-p) and excluded: drop one",
        ),
        (
            ("-p", "relevance-hijack", "--exclude", "acme-tenants", "--exclude", "relevnce-hijack"),
            "did you mean 'relevance-hijack'?",
        ),
    ],
)
def test_a_bad_exclusion_is_refused_before_anything_is_written(ws: Workspace, args, said):
    done = ws.cli("run", "--target", "acme-legacy", *args, "-o", "refused", ok=(2,))
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert not (ws.root / "refused").exists()


def test_the_config_excludes_packs_from_every_installed_one():
    every = pack_names(Config())
    assert "relevance-hijack" in every
    left = pack_names(Config(run=RunConfig(exclude=["relevance-hijack"])))
    assert left == [name for name in every if name != "relevance-hijack"]
    # It wins over the config's own list of packs.
    listed = Config(run=RunConfig(packs=list(every), exclude=["relevance-hijack"]))
    assert pack_names(listed) == left
    with pytest.raises(ConfigError) as info:
        pack_names(Config(run=RunConfig(exclude=list(every))))
    assert "every pack of the run is excluded" in str(info.value)


def test_ragleaklab_toml_in_the_working_directory_is_read_and_named(ws: Workspace):
    (ws.root / "ragleaklab.toml").write_text(
        '[target]\nname = "acme-legacy"\n[run]\npacks = ["relevance-hijack"]\n', "utf-8"
    )
    (ws.root / "other.toml").write_text('[run]\npacks = ["relevance-hijack"]\n', "utf-8")
    try:
        found = ws.cli("run", "--smoke", "-o", "found", "--html", "found.html")
        given = ws.cli("run", "--smoke", "-c", "other.toml", "-o", "given")
        calibrated = ws.cli("calibrate", "--pack", "relevance-hijack", "-o", "cal")
    finally:
        (ws.root / "ragleaklab.toml").unlink()
    # calibrate reads it too, and says on which system the threshold was fitted.
    first = calibrated.stdout.splitlines()[0]
    assert (
        first.startswith("tested: acme-legacy (acme-legacy@") and "config ragleaklab.toml" in first
    )
    fitted_on = json.loads((ws.root / "cal" / "calibration_report.json").read_text("utf-8"))
    assert fitted_on["inputs"]["target"]["name"] == "acme-legacy"
    system = _report(ws.root / "found")["system"]
    assert system["target"] == "acme-legacy" and system["config"] == "ragleaklab.toml"
    assert system["identity"].startswith("acme-legacy@")
    assert found.stdout.splitlines()[0].startswith("tested: acme-legacy (acme-legacy@")
    assert found.stdout.splitlines()[0].endswith(", config ragleaklab.toml")
    assert "tested: acme-legacy" in (ws.root / "found.html").read_text("utf-8")
    # --config wins over the file in the working directory.
    system = _report(ws.root / "given")["system"]
    assert system["target"] == "reference" and system["config"] == "other.toml"
    assert given.stdout.startswith("tested: reference (the embedded reference RAG, reference@")
    # Report.json names it before anything else it says about the run.
    assert list(_report(ws.root / "given"))[:2] == ["tool", "system"]


def test_a_factory_app_that_takes_no_principal_is_found_after_it_is_built(ws: Workspace):
    done = ws.cli(
        "run", "--target", "python", "--target-option", "callable=rlk_test_fakes:build_app",
        "--target-option", "factory=true", "-p", "acme-tenants", "--tag", "anonymous",
        "-o", "anonymous", ok=(0, 1, 3),
    )  # fmt: skip
    # Without the principal's cases, the pack runs (and its one case asks the app).
    assert "a case was asked" in (ws.root / "anonymous" / "runs.jsonl").read_text("utf-8")
    done = ws.cli(
        "run", "--target", "python", "--target-option", "callable=rlk_test_fakes:build_app",
        "--target-option", "factory=true", "-p", "acme-tenants", "-o", "factory", ok=(3,),
    )  # fmt: skip
    pack = _report(ws.root / "factory")["packs"][0]
    assert pack["tested"] is False
    assert "ask as a principal (the first: 'as-bob')" in pack["not_tested_reason"]
    records = [
        json.loads(line)
        for line in (ws.root / "factory" / "runs.jsonl").read_text("utf-8").splitlines()
    ]
    # Nothing was asked: not the principal's case, and not the anonymous one either.
    assert records and all(r["answer"] is None for r in records)
    assert "a case was asked" not in json.dumps(records)
    assert "ERROR (not tested)  acme-tenants" in done.stdout


def test_exclude_tag_leaves_out_the_cases_carrying_it(ws: Workspace):
    from ragleaklab_core.run.runner import load_pack

    cases = list(load_pack("relevance-hijack").obj.cases())
    expected = [c.test_id for c in cases if "smoke" in c.tags and "attack" not in c.tags]
    assert 0 < len(expected) < sum("smoke" in c.tags for c in cases)
    done = ws.cli(
        "run", "-p", "relevance-hijack", "--smoke", "--exclude-tag", "attack", "-o", "benign",
        ok=(1, 3),
    )  # fmt: skip
    report = _report(ws.root / "benign")
    pack = report["packs"][0]
    assert pack["cases"]["ids"] == expected
    assert pack["cases"]["exclude_tags"] == ["attack"]
    assert report["settings"]["exclude_tags"] == ["attack"]
    assert "excluding tags attack" in done.stdout.splitlines()[1]
    # Benign cases alone never pass the pack: the attack was not tested.
    assert pack["tested"] is False and pack["verdict"] in ("error", "fail")
    assert "kept none of the pack's" in pack["not_tested_reason"]
    assert "--tag smoke --exclude-tag attack" in pack["not_tested_reason"]


def test_a_tag_selection_without_attack_cases_never_passes(ws: Workspace):
    # An allowance that lets its failing benign cases through (117 of 390 on the reference target)
    # does not make it a pass.
    done = ws.cli(
        "run", "-p", "relevance-hijack", "--tag", "benign", "--max-fail-rate", "0.31",
        "-o", "no-attack", ok=(3,),
    )  # fmt: skip
    pack = _report(ws.root / "no-attack")["packs"][0]
    assert pack["verdict"] == "error" and pack["tested"] is False
    assert pack["cases"]["run"] > 0
    assert "kept none of the pack's" in pack["not_tested_reason"]
    assert "ERROR (not tested)  relevance-hijack" in done.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--exclude-tag", "atack"),
            "no case of relevance-hijack is tagged 'atack' (--exclude-tag",
        ),
        (
            ("--smoke", "--exclude-tag", "smoke"),
            "has no case tagged smoke and none of smoke",
        ),
        (("--exclude-tag", "attack", "--exclude-tag", "benign"), "every case carries a tag of"),
    ],
)
def test_an_exclusion_by_tag_that_does_nothing_or_everything_is_refused(ws, args, said):
    done = ws.cli("run", "-p", "relevance-hijack", *args, "-o", "refused-tags", ok=(2,))
    assert said in done.stderr and "Traceback" not in done.stderr
    assert not (ws.root / "refused-tags").exists()
