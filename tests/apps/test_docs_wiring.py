"""The examples of docs/targets.md, 'Wiring your app', run as written.

Each ``<!-- example: NAME/FILE -->`` block is written to ``NAME/FILE`` in a fresh directory;
``ragleaklab run --smoke`` then runs there with no other option (the app imported from the
current directory and ``ragleaklab.toml`` read from it, as a user would): every installed pack in
one command, each in the report with its verdict, every retrieved id mapped back to the pack's
documents, and cross-tenant tested on the app that takes a principal (passed when it enforces
access, failed when it ignores it) and reported not tested, with the fix, on the others. A doc
example that stops working fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragleaklab_core._discovery import PACKS, available_names

from .support import no_traceback, report, rlk

DOC = Path(__file__).resolve().parents[2] / "docs" / "targets.md"
BLOCK = re.compile(
    r"<!-- example: (?P<name>\w+)/(?P<file>[\w.]+) -->\n```\w+\n(?P<body>.*?)```\n", re.S
)
#: The packs whose wiring is checked on every example (each plants documents and reads them back).
WIRED = ("relevance-hijack", "sentinel-takeover-safe")
#: The example whose app takes ``principal=`` (cross-tenant is tested on it).
CARRIES_PRINCIPAL = "own"


def _examples() -> dict[str, dict[str, str]]:
    examples: dict[str, dict[str, str]] = {}
    for m in BLOCK.finditer(DOC.read_text(encoding="utf-8")):
        examples.setdefault(m.group("name"), {})[m.group("file")] = m.group("body")
    return examples


EXAMPLES = _examples()


def test_every_example_has_an_app_and_a_config():
    assert len(EXAMPLES) >= 5
    text = DOC.read_text(encoding="utf-8")
    assert text.count("<!-- example: ") == sum(len(files) for files in EXAMPLES.values())
    for name, files in EXAMPLES.items():
        assert set(files) == {"app.py", "ragleaklab.toml"}, name


def _write(directory: Path, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for file, body in EXAMPLES[name].items():
        (directory / file).write_text(body, encoding="utf-8")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_documented_wiring_runs_every_pack_in_one_command(tmp_path, name):
    _write(tmp_path, name)
    out = rlk("run", "--smoke", "-o", "out", cwd=tmp_path, pythonpath=False)
    no_traceback(out)
    document = report(tmp_path / "out")
    assert out.returncode == document["exit_code"] and out.returncode in (0, 1, 3)
    assert document["system"]["target"] == "python"
    assert document["system"]["config"] == "ragleaklab.toml"
    assert out.stdout.startswith("tested: python (callable app:")
    packs = {p["name"]: p for p in document["packs"]}
    assert sorted(packs) == sorted(available_names(PACKS))  # every installed pack, none lost
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.json", "runs.jsonl"]
    for pack in WIRED:
        assert packs[pack]["tested"] is True, (name, pack, packs[pack]["not_tested_reason"])
        wiring = packs[pack]["wiring"]
        assert wiring["reached"] is True and wiring["unknown_ids"] == 0, (name, wiring)
        assert wiring["retrieved_ids"] > 0
    for pack in packs.values():
        assert pack["verdict"] in ("pass", "fail", "error"), (name, pack["name"])
        assert pack["tested"] or pack["not_tested_reason"], (name, pack["name"])
    tenants = packs["cross-tenant"]
    if name == CARRIES_PRINCIPAL:
        # It enforces access by the principal: tested, and passed.
        assert tenants["tested"] is True and tenants["verdict"] == "pass", tenants["reasons"]
        assert tenants["cases"]["errored"] == 0
    else:
        assert tenants["tested"] is False and tenants["verdict"] == "error"
        reason = tenants["not_tested_reason"]
        assert "ask as a principal" in reason and "--exclude cross-tenant" in reason
        assert "ERROR (not tested)  cross-tenant" in out.stdout
        assert document["exit_code"] in (1, 3)


def test_the_app_that_ignores_the_principal_fails_cross_tenant(tmp_path):
    _write(tmp_path, CARRIES_PRINCIPAL)
    app = tmp_path / "app.py"
    enforcing = "if may_see(principal, access)]"
    assert enforcing in app.read_text("utf-8")
    app.write_text(app.read_text("utf-8").replace(enforcing, "]"), "utf-8")  # sees everything
    out = rlk("run", "--smoke", "-p", "cross-tenant", "-o", "out", cwd=tmp_path, pythonpath=False)
    no_traceback(out)
    tenants = report(tmp_path / "out")["packs"][0]
    assert tenants["tested"] is True and tenants["verdict"] == "fail"
    assert out.returncode == 1


def test_leaving_out_the_pack_an_app_cannot_test_gates_on_the_rest(tmp_path):
    _write(tmp_path, "lc_store")
    out = rlk(
        "run", "--smoke", "--exclude", "cross-tenant", "-o", "out", cwd=tmp_path, pythonpath=False
    )
    no_traceback(out)
    packs = [p["name"] for p in report(tmp_path / "out")["packs"]]
    assert "cross-tenant" not in packs and len(packs) == len(available_names(PACKS)) - 1
