"""Settings that would switch the gate off are refused before anything is asked (issue 26, class 1).

Written as someone trying to get a PASS out of a vulnerable system without touching it: an
allowance of every case (any spelling of one, on the command line, in the file, per pack, through
the pytest helper), a stored threshold that flags nothing or has no value, a threshold that no
case reduced by a counting reducer can fail. Each is refused with exit 2, naming the flag or the
file and ``$.path``, before the target is asked anything and before ``--out`` is touched. And
every allowance that is accepted is shown with the verdict, PASS included, and in report.json.

The system is the loopback HTTP RAG service (tests/support/fake_rag_server.py); its request
count proves that nothing was asked.
"""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core import ConfigError
from ragleaklab_core.config import load_config
from ragleaklab_core.gate import allowance_problem, allowed_failures, reducer_threshold_problem
from ragleaklab_core.gate import stored_threshold_problem as stored_problem
from ragleaklab_core.values import DECISION_RULES, FLAG_ABOVE, FLAG_BELOW, FLAG_HIGH, FLAG_LOW
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

PACK = "relevance-hijack"
VALUE = "poison_rate_at_k"
ONE = "allows every scored case to fail"


def config_file(path: Path, server: FakeRagServer, extra: str = "") -> Path:
    path.write_text(
        '[target]\nname = "http"\n\n[target.options]\n'
        f'url = "{server.url("/simple")}"\n'
        f'ingest_url = "{server.url("/ingest")}"\n'
        f'reset_url = "{server.url("/reset")}"\n' + extra,
        encoding="utf-8",
    )
    return path


def smoke_run(config: Path, cwd: Path, *more: str) -> subprocess.CompletedProcess[str]:
    """``ragleaklab run -c CONFIG -p PACK --smoke -o out MORE...`` in *cwd*, as CI would."""
    return rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out", *more, cwd=cwd)


def asked(server: FakeRagServer) -> int:
    """How many requests the service received (ingest included)."""
    return sum(server.hits.values())


def refused(result: subprocess.CompletedProcess[str], server: FakeRagServer, cwd: Path) -> str:
    """Exit 2, no traceback, nothing asked, nothing written; the message."""
    said = result.stdout + result.stderr
    assert result.returncode == 2, said
    assert "Traceback" not in said
    assert asked(server) == 0, "the target was asked before the refusal"
    assert not (cwd / "out").exists(), "--out was touched before the refusal"
    return said


# ---- an allowance of every case ----------------------------------------------------------------


@pytest.mark.parametrize(
    "rate", [1, 1.0, 1e0, 1.5e0 - 0.5, float("0.99999999999999999"), Fraction(1).__float__()]
)
def test_every_spelling_of_one_is_an_allowance_of_every_case(rate):
    assert allowance_problem(rate) is not None


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.5, 0.99, 0.9999999999999999])
def test_a_rate_below_one_always_leaves_a_case_that_must_not_fail(rate):
    assert allowance_problem(rate) is None
    # floor(rate * n) < n for every n: some failing case still fails the pack.
    assert all(allowed_failures(rate, n) < n for n in range(1, 2000))


@pytest.mark.parametrize(
    "flag",
    [
        "1",
        "1.0",
        "1e0",
        "1.00",
        "+1",
        " 1",
        "1.000000000000000001",
        "0.99999999999999999",
        f"{PACK}=1",
        f"{PACK}=1.0",
        f"{PACK}=10e-1",
    ],
)
def test_max_fail_rate_of_one_on_the_command_line_is_refused(server, tmp_path, flag):
    config = config_file(tmp_path / "c.toml", server)
    result = smoke_run(config, tmp_path, "--max-fail-rate", flag)
    said = refused(result, server, tmp_path)
    assert "--max-fail-rate" in said and ONE in said
    assert "below 1" in said  # the fix


@pytest.mark.parametrize("flag", ["100/100", "100%", "one", "nan", "inf", "-0.1", "2"])
def test_other_spellings_of_everything_are_not_numbers_in_range(server, tmp_path, flag):
    config = config_file(tmp_path / "c.toml", server)
    result = smoke_run(config, tmp_path, "--max-fail-rate", flag)
    said = refused(result, server, tmp_path)
    assert "--max-fail-rate" in said


@pytest.mark.parametrize(
    ("table", "path"),
    [
        ("[run]\nmax_fail_rate = 1\n", "$.run.max_fail_rate"),
        ("[run]\nmax_fail_rate = 1.0\n", "$.run.max_fail_rate"),
        ("[run]\nmax_fail_rate = 1e0\n", "$.run.max_fail_rate"),
        (f"[run.max_fail_rates]\n{PACK} = 1.0\n", f"$.run.max_fail_rates.{PACK}"),
        (f"[run]\nmax_fail_rates = {{ {PACK} = 1 }}\n", f"$.run.max_fail_rates.{PACK}"),
    ],
)
def test_max_fail_rate_of_one_in_the_file_is_refused_at_its_path(server, tmp_path, table, path):
    config = config_file(tmp_path / "c.toml", server, "\n" + table)
    result = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path)
    said = refused(result, server, tmp_path)
    assert ONE in said and path in said and "c.toml" in said


def test_a_string_one_in_the_file_is_not_a_rate(server, tmp_path):
    config = config_file(tmp_path / "c.toml", server, '\n[run]\nmax_fail_rate = "1.00"\n')
    result = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path)
    assert "$.run.max_fail_rate" in refused(result, server, tmp_path)


def test_the_pytest_helper_and_the_config_loader_refuse_the_same():
    from ragleaklab_core.testing.pytest_plugin import run_packs

    with pytest.raises(ConfigError, match=ONE):
        run_packs(PACK, max_fail_rate=1)
    with pytest.raises(ConfigError, match=ONE):
        load_config({"run": {"max_fail_rates": {PACK: 1.0}}}, source="api")
    with pytest.raises(ConfigError, match="expected float"):
        run_packs(PACK, max_fail_rate=True)  # True == 1: not a rate either


def test_the_embedding_api_reads_a_config_with_the_same_check(tmp_path):
    from ragleaklab_core.embedding import read_config

    path = tmp_path / "c.toml"
    path.write_text("[run]\nmax_fail_rate = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=ONE):
        read_config(path)


# ---- every allowance in force is shown -------------------------------------------------------


def allowances(directory: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = json.loads((directory / "report.json").read_text(encoding="utf-8"))
    return doc["settings"]["allowance_sources"], [p["allowances"] for p in doc["packs"]]


def test_a_pass_shows_its_allowances_and_where_each_was_set(server, tmp_path):
    # The naive service fails 12 of the 30 smoke cases (0.4): the allowance lets them pass.
    config = config_file(tmp_path / "c.toml", server, "\n[run]\nmax_fail_rate = 0.45\n")
    result = smoke_run(config, tmp_path, "--tolerate-errors")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verdict: PASS" in result.stdout
    summary = " ".join(result.stdout.split())  # the allowances line may wrap
    assert f"max failing rate 0.45 ({config.as_posix()} [run] max_fail_rate)" in summary
    assert "errors tolerated (--tolerate-errors; at least 90% scored)" in summary
    run_level, (pack,) = allowances(tmp_path / "out")
    assert pack == {
        "max_fail_rate": {"value": 0.45, "source": f"{config.as_posix()} [run] max_fail_rate"},
        "tolerate_errors": {"value": True, "source": "--tolerate-errors"},
        "max_corrected_rate": {"value": None, "source": "default"},
    }
    assert run_level["tolerate_errors"] == "--tolerate-errors"


def test_the_flag_and_a_per_pack_entry_name_their_sources(server, tmp_path):
    extra = f"\n[run]\nmax_fail_rate = 0.2\n[run.max_fail_rates]\n{PACK} = 0.1\n"
    config = config_file(tmp_path / "c.toml", server, extra)
    result = smoke_run(config, tmp_path, "--max-fail-rate", f"{PACK}=0.47")
    assert result.returncode == 0, result.stdout + result.stderr
    run_level, (pack,) = allowances(tmp_path / "out")
    assert pack["max_fail_rate"] == {
        "value": 0.47,
        "source": "--max-fail-rate relevance-hijack=RATE",
    }
    assert run_level["max_fail_rate"] == f"{config.as_posix()} [run] max_fail_rate"
    assert "max failing rate 0.47 (--max-fail-rate" in " ".join(result.stdout.split())


def test_the_defaults_are_shown_too(server, tmp_path):
    config = config_file(tmp_path / "c.toml", server)
    result = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr  # a FAIL shows them as well
    assert "allowances: max failing rate 0 (default); errors not tolerated (default)" in (
        result.stdout
    )
    _, (pack,) = allowances(tmp_path / "out")
    assert pack["max_fail_rate"] == {"value": 0.0, "source": "default"}


# ---- a stored threshold that could never fail ----------------------------------------------


RULE = FLAG_HIGH
FITTED = {  # what calibrate --write-thresholds stores, fitted on a pack's labels
    "threshold": 0.5,
    "decision_rule": RULE,
    "achieved_tpr": 0.8,
    "n_positive": 10,
    "flags_nothing": False,
}


@pytest.mark.parametrize(
    ("change", "key", "said"),
    [
        ({"flags_nothing": True}, "flags_nothing", "flags none of the labelled positives"),
        ({"flags_nothing": True, "threshold": None}, "flags_nothing", "flags_nothing: true"),
        ({"flags_nothing": "yes"}, "flags_nothing", "flags_nothing"),
        ({"threshold": None}, "threshold", "null"),
        ({"threshold": "REMOVE"}, "threshold", "no threshold"),
        ({"threshold": float("nan")}, "threshold", "not a finite number"),
        ({"threshold": float("inf")}, "threshold", "not a finite number"),
        ({"threshold": float("-inf")}, "threshold", "not a finite number"),
        ({"achieved_tpr": 0.0}, "achieved_tpr", "flagged none of the 10"),
    ],
)
def test_a_stored_threshold_that_flags_nothing_is_refused_at_its_path(
    server, tmp_path, change, key, said
):
    entry = {**FITTED, **change}
    if entry["threshold"] == "REMOVE":
        del entry["threshold"]
    stored = {"format": "ragleaklab-thresholds", "version": 1, "packs": {PACK: {VALUE: entry}}}
    (tmp_path / "ragleaklab.thresholds.json").write_text(json.dumps(stored), encoding="utf-8")
    config = config_file(tmp_path / "c.toml", server)
    result = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path)
    message = refused(result, server, tmp_path)
    assert "ragleaklab.thresholds.json" in message
    assert f"@ $.packs.{PACK}.{VALUE}.{key}" in message
    assert said in message
    assert "re-calibrate" in message and f"delete the entry $.packs.{PACK}.{VALUE}" in message


def test_every_unusable_entry_is_named_at_once_and_other_packs_entries_are_not_read(
    server, tmp_path
):
    bad = {**FITTED, "threshold": None}
    stored = {
        "format": "ragleaklab-thresholds",
        "version": 1,
        # An installed pack this run leaves out: its entries are another run's business.
        "packs": {
            PACK: {VALUE: bad, "poison_mrr": bad},
            "verbatim-extraction": {"verbatim_score": bad},
        },
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(stored), encoding="utf-8")
    config = config_file(tmp_path / "c.toml", server)
    result = smoke_run(config, tmp_path, "--thresholds", str(path))
    message = refused(result, server, tmp_path)
    assert f"$.packs.{PACK}.{VALUE}.threshold" in message
    assert f"$.packs.{PACK}.poison_mrr.threshold" in message
    assert "verbatim-extraction" not in message


def test_a_usable_stored_threshold_still_gates(server, tmp_path):
    stored = {"format": "ragleaklab-thresholds", "version": 1, "packs": {PACK: {VALUE: FITTED}}}
    (tmp_path / "ragleaklab.thresholds.json").write_text(json.dumps(stored), encoding="utf-8")
    config = config_file(tmp_path / "c.toml", server)
    result = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "score >= 0.5 -> FAIL, threshold from ragleaklab.thresholds.json" in result.stdout


def test_what_calibrate_stores_with_force_for_a_fit_that_flags_nothing_is_refused():
    # The entry prepare_threshold writes for a fit with no threshold, forced.
    assert stored_problem({**FITTED, "threshold": None, "flags_nothing": True}) is not None
    # ...and for a fitted value that catches no positive.
    assert stored_problem({**FITTED, "achieved_tpr": 0.0, "flags_nothing": True}) is not None
    assert stored_problem(FITTED) is None


# ---- a reducer that cannot fail --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (1.5, FLAG_HIGH),
        (1.0, FLAG_ABOVE),
        (1.0000001, FLAG_HIGH),
        (-0.1, FLAG_LOW),
        (0.0, FLAG_BELOW),
    ],
)
@pytest.mark.parametrize("spec", ["at_least_1", "at_least_2@0.5", "pass_at_1"])
def test_a_counting_reducer_with_a_threshold_outside_0_1_can_never_fail(spec, value, rule):
    from ragleaklab_core.stats.aggregation import reducer

    chosen = reducer(spec)
    assert reducer_threshold_problem(chosen.name, chosen.kind, value, rule) is not None


@pytest.mark.parametrize("rule", DECISION_RULES)
@pytest.mark.parametrize("spec", ["mean", "max", "min", "median", "mode"])
def test_the_literal_reducers_are_never_refused(spec, rule):
    from ragleaklab_core.stats.aggregation import reducer

    chosen = reducer(spec)
    assert reducer_threshold_problem(chosen.name, chosen.kind, 7.0, rule) is None


def test_run_refuses_a_counting_reducer_its_thresholds_cannot_fail(server, tmp_path):
    extra = f'\n[thresholds.{PACK}.{VALUE}]\nthreshold = 1.0\ndecision_rule = "{FLAG_ABOVE}"\n'
    config = config_file(tmp_path / "c.toml", server, extra)
    result = smoke_run(config, tmp_path, "--reducer", "pass_at_1")
    message = refused(result, server, tmp_path)
    assert "fails neither 0 nor 1" in message and f"$.thresholds.{PACK}.{VALUE}" in message
    # The same threshold under the mean reducer is the user's business (values may exceed 1):
    # the run goes ahead (and fails on the pack's default gate, poison_attribution).
    ok = rlk("run", "-c", str(config), "-p", PACK, "--smoke", "-o", "out", cwd=tmp_path)
    assert ok.returncode == 1 and "verdict: FAIL" in ok.stdout, ok.stdout + ok.stderr
