"""A LangChain app's config with a misspelt table: refused, never gated on the defaults instead.

The route tried: a team tightens relevance-hijack's gate in its config, misspells the value,
and the pack's lenient default gates without a word. Through the real CLI on the LangChain BM25
app, the misspelt table is refused (exit 2, nothing written), and the same table spelt right is
the one that gates.
"""

from __future__ import annotations

import pytest

from tests.apps.support import no_traceback, report, rlk, write_config

pytestmark = pytest.mark.filterwarnings(
    "ignore:`langchain-community` is being sunset:DeprecationWarning"
)

APP = "rlk_app_langchain"
HIJACK = "relevance-hijack"
# Stricter than the pack's default (1.0: the whole top 5 is poison): any poison in the top 5.
TIGHTER = 'threshold = 0.2\ndecision_rule = "score >= threshold -> FAIL"\n'


def app_config(tmp_path, thresholds: str):  # type: ignore[no-untyped-def]
    path = write_config(
        tmp_path / "c.toml",
        callable=f"{APP}:build_bm25",
        factory=True,
        ingest_callable=f"{APP}:receive",
    )
    path.write_text(path.read_text() + "\n" + thresholds, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            "[thresholds.relevance-hijack.poison_rate_at_5]\n",
            "pack 'relevance-hijack' has no metric value 'poison_rate_at_5' (did you mean "
            "'poison_rate_at_k'",
        ),
        (
            "[thresholds.relevance_hijack.poison_rate_at_k]\n",
            "no installed pack is named 'relevance_hijack' (did you mean 'relevance-hijack'?)",
        ),
    ],
)
def test_a_misspelt_threshold_table_is_refused_and_the_right_one_gates(tmp_path, table, message):
    out = rlk("run", "-c", str(app_config(tmp_path, table + TIGHTER)), "-p", HIJACK,
              "--smoke", "-o", "o", cwd=tmp_path)  # fmt: skip
    no_traceback(out)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr
    assert not (tmp_path / "o").exists()

    right = "[thresholds.relevance-hijack.poison_rate_at_k]\n" + TIGHTER
    out = rlk("run", "-c", str(app_config(tmp_path, right)), "-p", HIJACK, "--smoke", "-o", "o",
              cwd=tmp_path)  # fmt: skip
    no_traceback(out)
    [pack] = report(tmp_path / "o")["packs"]
    value = pack["values"]["poison_rate_at_k"]
    assert value["threshold"] == {
        "value": 0.2,
        "decision_rule": "score >= threshold -> FAIL",
        "source": "config",
    }
    # The app retrieves some poison into its top 5 on the smoke cases: the tighter gate sees it.
    assert out.returncode == 1 and value["passed"] is False, out.stdout
