"""A LangChain app in a debug build echoes the credential it was configured with (issue: no
silent PASS, secrets): the key, written literally in the python target's keyword arguments, is
never in any file the run writes or any line it prints, and every masked record says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.apps.support import no_traceback, report, rlk, runs, write_config

pytestmark = pytest.mark.filterwarnings(
    "ignore:`langchain-community` is being sunset:DeprecationWarning"
)

APP = "rlk_app_langchain"
SENTINEL = "sentinel-takeover-safe"
KEY = "sk-live-7Hq2ZpW9rT4mXv1N"
DSN = "postgresql://rag_app:Pg-9xY2vQ7kL@db.internal:5432/rag"


def test_a_credential_the_app_echoes_is_masked_everywhere_and_marked(tmp_path):
    config = write_config(
        tmp_path / "c.toml", callable=f"{APP}:build_debug_chain", factory=True, input_key="$"
    )
    config.write_text(config.read_text() + f'kwargs = {{ api_key = "{KEY}" }}\n', encoding="utf-8")
    out = rlk("run", "-c", str(config), "-p", SENTINEL, "--smoke", "-o", "o", "--record", "rec",
              "--html", "o/r.html", "--markdown", "o/r.md", "--junit", "o/r.xml", "--sarif",
              "o/r.sarif", cwd=tmp_path)  # fmt: skip
    no_traceback(out)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    written = [p for p in Path(tmp_path).rglob("*") if p.is_file() and p.name != "c.toml"]
    assert {p.name for p in written} >= {"report.json", "runs.jsonl", "r.html", "r.md"}
    for path in written:
        assert KEY not in path.read_text(encoding="utf-8", errors="replace"), path
    assert KEY not in out.stdout + out.stderr
    # The app did echo it: every answer and retrieved text shows the mask, and says so.
    records = runs(tmp_path / "o")
    assert records and all("api_key=***" in r["answer"] for r in records)
    assert all("answer" in r["masked"] for r in records)
    details = [c["detail"] for c in report(tmp_path / "o")["packs"][0]["case_results"]]
    shown = [d for d in details if d]  # report.json details the failing cases
    assert shown or out.returncode == 0
    assert all("answer" in d["masked"] for d in shown)
    # The options the report records show the key as ***, not its value.
    options = report(tmp_path / "o")["target"]["options"]
    assert options["kwargs"]["api_key"] == "***"
    # A replay of that recording would score *** where the app said the key: refused.
    again = rlk("run", "-c", str(config), "-p", SENTINEL, "--smoke", "-o", "again", "--replay",
                "rec", cwd=tmp_path)  # fmt: skip
    assert again.returncode == 2 and "had a secret of the recording run masked" in again.stderr
    assert not (tmp_path / "again").exists()


def test_a_connection_string_in_the_apps_keyword_arguments_never_reaches_a_report(tmp_path):
    config = write_config(
        tmp_path / "c.toml", callable=f"{APP}:build_debug_chain", factory=True, input_key="$"
    )
    config.write_text(config.read_text() + f'kwargs = {{ api_key = "{DSN}" }}\n', encoding="utf-8")
    out = rlk("run", "-c", str(config), "-p", SENTINEL, "--smoke", "-o", "o", cwd=tmp_path)
    no_traceback(out)
    for path in (tmp_path / "o").iterdir():
        assert "Pg-9xY2vQ7kL" not in path.read_text(encoding="utf-8"), path
    assert "Pg-9xY2vQ7kL" not in out.stdout + out.stderr
    shown = json.loads((tmp_path / "o" / "report.json").read_text())["target"]["options"]
    assert "Pg-9xY2vQ7kL" not in json.dumps(shown)
