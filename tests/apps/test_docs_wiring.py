"""The examples of docs/targets.md, 'Wiring your app', run as written.

Each ``<!-- example: NAME/FILE -->`` block is written to ``NAME/FILE`` in a fresh directory;
``ragleaklab run -c ragleaklab.toml`` then runs there (the app imported from the current
directory, as a user would) and every example must be tested with every retrieved id mapped back
to the pack's documents. A doc example that stops working fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .support import no_traceback, report, rlk

DOC = Path(__file__).resolve().parents[2] / "docs" / "targets.md"
BLOCK = re.compile(
    r"<!-- example: (?P<name>\w+)/(?P<file>[\w.]+) -->\n```\w+\n(?P<body>.*?)```\n", re.S
)
PACKS = ["-p", "relevance-hijack", "-p", "sentinel-takeover-safe", "--smoke"]


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


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_documented_wiring_is_tested_and_maps_every_id(tmp_path, name):
    for file, body in EXAMPLES[name].items():
        (tmp_path / file).write_text(body, encoding="utf-8")
    out = rlk("run", "-c", "ragleaklab.toml", *PACKS, "-o", "out", cwd=tmp_path, pythonpath=False)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    no_traceback(out)
    packs = report(tmp_path / "out")["packs"]
    assert [p["name"] for p in packs] == ["relevance-hijack", "sentinel-takeover-safe"]
    for pack in packs:
        assert pack["tested"] is True, (name, pack.get("not_tested_reason"))
        wiring = pack["wiring"]
        assert wiring["reached"] is True and wiring["unknown_ids"] == 0, (name, wiring)
        assert wiring["retrieved_ids"] > 0
