"""Configuration that names nothing installed is refused, never ignored (issue: no silent PASS).

An attacker's (or a tired engineer's) way to a green run: a table or key that nobody reads, so
the lenient defaults gate instead. Each is tried here against a loopback RAG service through the
real CLI, and must end with exit 2, a "did you mean", nothing asked and nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import rlk

PACK = "relevance-hijack"


def http_target(server) -> str:  # type: ignore[no-untyped-def]
    return (
        '[target]\nname = "http"\n[target.options]\n'
        f'url = "{server.url("/simple")}"\ningest_url = "{server.url("/ingest")}"\n'
        f'reset_url = "{server.url("/reset")}"\n'
    )


REFUSED = [
    # (the config's tables, what stderr must say)
    (
        "[metrics.retrieval]\nkk = 3\n",
        "metric 'retrieval' has no option 'kk' (did you mean 'k'?) (its options: k) "
        "@ $.metrics.retrieval.kk",
    ),
    # A metric this run's pack does not use: still read by the project's other runs.
    (
        "[metrics.verbatim]\nmin_wordz = 3\n",
        "metric 'verbatim' has no option 'min_wordz' (did you mean 'min_words'?)",
    ),
    ("[metrics.verbatimm]\nmin_words = 3\n", "no installed metric is named 'verbatimm' (did you "),
    (
        "[thresholds.relevance-hijak.poison_rate_at_k]\nthreshold = 0.5\n",
        "no installed pack is named 'relevance-hijak' (did you mean 'relevance-hijack'?)",
    ),
    (
        "[thresholds.relevance-hijack.poison_rate]\nthreshold = 0.5\n",
        "pack 'relevance-hijack' has no metric value 'poison_rate' (did you mean "
        "'poison_rate_at_k'",
    ),
    # A pack's threshold table one level too shallow: its "threshold" key is read as a value.
    (
        "[thresholds.relevance-hijack.threshold]\nthreshold = 0.5\n",
        "pack 'relevance-hijack' has no metric value 'threshold'",
    ),
    (
        "[thresholds.relevance-hijack.poison_rate_at_k]\nthreshold = 0.5\ndecision_rul = 'x'\n",
        "unknown key 'decision_rul' (did you mean 'decision_rule'?)",
    ),
    ("[run]\nmax_fail_rat = 0.0\n", "unknown key 'max_fail_rat' (did you mean 'max_fail_rate'"),
    (
        "[run.max_fail_rates]\nrelevance_hijack = 0.0\n",
        "no installed pack is named 'relevance_hijack' (did you mean 'relevance-hijack'?)",
    ),
    ("[metricz.retrieval]\nk = 3\n", "unknown key 'metricz' (did you mean 'metrics'?)"),
]


@pytest.mark.parametrize(("tables", "message"), REFUSED, ids=[m[:40] for _, m in REFUSED])
def test_a_name_nothing_installed_has_is_refused_before_anything_is_asked(
    server, tmp_path, tables, message
):
    config = tmp_path / "rl.toml"
    config.write_text(http_target(server) + tables, encoding="utf-8")
    out = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert "rl.toml" in out.stderr and message in out.stderr, out.stderr
    assert not (tmp_path / "o").exists()
    assert server.hits == {}  # nothing was ingested or asked


def test_every_unknown_name_is_reported_at_once(tmp_path):
    (tmp_path / "rl.toml").write_text(
        "[metrics.nosuch]\nk = 1\n[metrics.access]\nforbiden = 1\n"
        "[thresholds.nosuch-pack.x]\nthreshold = 1\n",
        encoding="utf-8",
    )
    out = rlk("run", "-c", "rl.toml", "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    problems = [line.strip() for line in out.stderr.splitlines()[1:]]
    assert [p.rsplit(" @ ", 1)[1] for p in problems] == [
        "$.metrics.access.forbiden",
        "$.metrics.nosuch",
        "$.thresholds.nosuch-pack",
    ]


def test_the_thresholds_file_names_only_installed_packs_and_values(tmp_path):
    stored = {
        "format": "ragleaklab-thresholds",
        "version": 1,
        "packs": {
            PACK: {
                "poison_rate_at_kk": {
                    "threshold": 0.5,
                    "decision_rule": "score >= threshold -> FAIL",
                }
            }
        },
    }
    (tmp_path / "t.json").write_text(json.dumps(stored), encoding="utf-8")
    out = rlk("run", "-p", PACK, "--smoke", "--thresholds", "t.json", "-o", "o", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "t.json" in out.stderr
    assert (
        "pack 'relevance-hijack' has no metric value 'poison_rate_at_kk' (did you mean "
        "'poison_rate_at_k', 'poison_share'?)" in out.stderr
    )
    assert "@ $.packs.relevance-hijack.poison_rate_at_kk" in out.stderr
    assert not (tmp_path / "o").exists()
    # The default thresholds file, found in the working directory, is held to the same rule.
    (tmp_path / "t.json").rename(tmp_path / "ragleaklab.thresholds.json")
    out = rlk("run", "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode == 2 and "poison_rate_at_kk" in out.stderr


def test_calibrate_refuses_the_same_names(tmp_path):
    (tmp_path / "rl.toml").write_text("[metrics.retrieval]\nkk = 3\n", encoding="utf-8")
    out = rlk("calibrate", "--pack", PACK, "-c", "rl.toml", "-o", "co", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "(did you mean 'k'?)" in out.stderr
    assert not (tmp_path / "co").exists()


def test_known_names_pass_even_when_this_run_does_not_use_them(tmp_path):
    """The check must not refuse a project's shared config: a metric table for another pack's
    metric, a threshold for a pack this run leaves out."""
    (tmp_path / "rl.toml").write_text(
        "[metrics.verbatim]\nmin_words = 6\n"
        "[thresholds.cross-tenant.forbidden_words]\nthreshold = 2\n",
        encoding="utf-8",
    )
    out = rlk("run", "-c", "rl.toml", "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert out.returncode in (0, 1), out.stderr
    assert json.loads(Path(tmp_path / "o" / "report.json").read_text())["packs"][0]["name"] == PACK


def test_the_python_api_refuses_them_too():
    from ragleaklab_core.config import load_config
    from ragleaklab_core.errors import ConfigError
    from ragleaklab_core.run.suite import run_suite

    config = load_config({"metrics": {"retrieval": {"kk": 3}}}, source="<memory>")
    with pytest.raises(ConfigError, match=r"did you mean 'k'\?"):
        run_suite(config, packs=[PACK], tags=["smoke"])


def test_calibrate_refuses_a_misspelt_metric_value_before_asking(server, tmp_path):
    config = tmp_path / "rl.toml"
    config.write_text(http_target(server), encoding="utf-8")
    out = rlk(
        "calibrate", "--pack", PACK, "-c", "rl.toml", "--metric", "poison_rate_at_kk", "-o", "co",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert (
        "no metric value 'poison_rate_at_kk' (did you mean 'poison_rate_at_k', 'poison_share'?)"
        in out.stderr
    )
    assert server.hits == {} and not (tmp_path / "co").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("--smoke", "--tag", "no-such-tag"),  # beside a real tag it would select nothing, unseen
        ("--tag", "smoke", "--tag", "smkoe"),
    ],
)
def test_a_tag_no_case_carries_is_refused_even_beside_one_that_selects(server, tmp_path, args):
    config = tmp_path / "rl.toml"
    config.write_text(http_target(server), encoding="utf-8")
    out = rlk("run", "-c", "rl.toml", "-p", PACK, *args, "-o", "o", cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    wrong = args[-1]
    assert f"no case of {PACK} is tagged {wrong!r}" in out.stderr
    assert server.hits == {} and not (tmp_path / "o").exists()
