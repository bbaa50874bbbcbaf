"""The run session: `ragleaklab run` is a thin adapter over it, so a harness reproduces a run
exactly; every refusal comes before anything is written; one merge of overrides over a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core import (
    ConfigError,
    RunRequest,
    RunResult,
    RunSession,
    UsageError,
    Verdict,
)
from ragleaklab_core.config import Overrides, apply_overrides
from tests.support.cli import EPOCH, rlk

PACKS = ("sentinel-takeover-safe", "relevance-hijack")


def test_the_api_reproduces_ragleaklab_run_byte_for_byte(tmp_path, monkeypatch):
    cli_dir, api_dir = tmp_path / "cli", tmp_path / "api"
    cli_dir.mkdir()
    api_dir.mkdir()
    done = rlk(
        *("run", "--smoke", "-p", PACKS[0], "-p", PACKS[1], "-o", "out"),
        *("--target-option", "filter_injections=true", "--max-fail-rate", f"{PACKS[1]}=0.2"),
        *("--junit", "out/junit.xml", "--markdown", "report.md"),
        cwd=cli_dir,
    )
    assert done.returncode in (0, 1), done.stderr

    monkeypatch.chdir(api_dir)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    request = RunRequest(
        packs=PACKS,
        smoke=True,
        out=Path("out"),
        target_options={"filter_injections": True},
        max_fail_rates={PACKS[1]: 0.2},
        renderings={"junit": Path("out/junit.xml"), "markdown": Path("report.md")},
    )
    result = RunSession(request).run()

    assert isinstance(result, RunResult)
    assert result.exit_code == done.returncode
    assert result.verdict is Verdict.read(result.report["verdict"])
    for name in ("out/report.json", "out/junit.xml", "report.md"):
        assert (api_dir / name).read_bytes() == (cli_dir / name).read_bytes(), name
    # What the CLI prints is the session's summary, then what was written.
    assert done.stdout == result.summary + (
        "wrote out/report.json, runs.jsonl\nwrote out/junit.xml\nwrote report.md\n"
    )
    assert [p.as_posix() for p in result.written] == [
        "out/report.json",
        "out/runs.jsonl",
        "out/junit.xml",
        "report.md",
    ]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (
            RunRequest(record=Path("rec"), replay=Path("rep")),
            "--record and --replay exclude each other",
        ),
        (RunRequest(resume=True, restart=True), "--resume and --restart exclude each other"),
        (RunRequest(fail_on="regression"), "--fail-on compares with a baseline"),
        (RunRequest(baseline_level=0.1), "--baseline-level compares with a baseline"),
        (
            RunRequest(replay=Path("rep"), target="reference"),
            "--replay answers from the recording",
        ),
        (RunRequest(ray={"workers": 2}), "--ray-* options need --executor ray"),
    ],
)
def test_a_contradictory_request_is_refused_before_anything_is_written(
    tmp_path, monkeypatch, request_, message
):
    monkeypatch.chdir(tmp_path)
    request = RunRequest(**{**_fields(request_), "out": Path("out"), "packs": (PACKS[0],)})
    with pytest.raises(UsageError, match=message.replace("*", r"\*")) as caught:
        RunSession(request).prepare()
    assert caught.value.exit_code == 2
    assert list(tmp_path.iterdir()) == []


def test_a_bad_override_is_reported_at_its_path_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "ragleaklab.toml"
    config.write_text("[run]\nconcurrency = 4\n", encoding="utf-8")
    request = RunRequest(config_path=config, epochs=0, out=Path("out"), packs=(PACKS[0],))
    with pytest.raises(ConfigError) as caught:
        RunSession(request).run()
    assert "$.run.epochs" in str(caught.value)
    assert "ragleaklab.toml (with command-line options)" in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ragleaklab.toml"]


def test_a_rendering_path_that_is_a_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "junit").mkdir()
    request = RunRequest(out=Path("out"), renderings={"junit": "junit"})
    with pytest.raises(UsageError, match="--junit junit is a directory"):
        RunSession(request).prepare()
    assert not (tmp_path / "out").exists()


def _fields(request: RunRequest) -> dict[str, Any]:
    import attrs

    return {a.name: getattr(request, a.name) for a in attrs.fields(RunRequest)}


# --------------------------------------------------------------------------- one merge


_keys = st.sampled_from(["epochs", "reducer", "concurrency", "out", "tolerate_errors"])
_scalars = st.one_of(st.integers(0, 9), st.text("ab", min_size=1, max_size=3), st.booleans())
_tables = st.dictionaries(st.sampled_from(["p1", "p2", "p3"]), st.floats(0, 1), max_size=3)


@settings(max_examples=200, deadline=None)
@given(
    file_run=st.dictionaries(_keys, _scalars, max_size=4),
    file_rates=st.one_of(st.none(), _tables),
    over_run=st.dictionaries(_keys, _scalars, max_size=4),
    over_rates=_tables,
    file_target=st.one_of(
        st.none(), st.fixed_dictionaries({"name": st.just("t"), "options": _tables})
    ),
    target=st.one_of(st.none(), st.just("other")),
    target_options=_tables,
)
def test_overrides_win_key_by_key_and_keep_what_they_do_not_name(
    file_run, file_rates, over_run, over_rates, file_target, target, target_options
):
    raw: dict[str, Any] = {"run": dict(file_run)}
    if file_rates is not None:
        raw["run"]["max_fail_rates"] = dict(file_rates)
    if file_target is not None:
        raw["target"] = {"name": file_target["name"], "options": dict(file_target["options"])}
    overrides = Overrides(
        target=target,
        target_options=target_options,
        run={**over_run, "max_fail_rates": over_rates},
    )
    merged = apply_overrides(raw, overrides)

    # [run]: a scalar given wins, one not given keeps the file's; tables merge key by key.
    assert {k: v for k, v in merged["run"].items() if k != "max_fail_rates"} == {
        **file_run,
        **over_run,
    }
    expected_rates = {**(file_rates or {}), **over_rates}
    assert merged["run"].get("max_fail_rates", {}) == expected_rates
    # [target]: a name replaces the whole table; options merge over what remains.
    if target is not None:
        base_name, base_options = target, {}
    elif file_target is not None:
        base_name, base_options = file_target["name"], file_target["options"]
    else:
        base_name, base_options = None, {}
    if base_name is None and not target_options:
        assert "target" not in merged
    else:
        assert merged["target"]["name"] == (base_name or "reference")
        assert merged["target"].get("options", {}) == {**base_options, **target_options}


def test_a_table_of_the_wrong_type_is_left_for_structuring_to_report():
    raw = {"run": {"max_fail_rates": "everything"}, "target": "reference"}
    merged = apply_overrides(
        raw, Overrides(target_options={"top_k": 2}, run={"max_fail_rates": {"p": 0.5}})
    )
    assert merged == {"run": {"max_fail_rates": "everything"}, "target": "reference"}


# --------------------------------------------------------------------------- one read, one build

_COUNTING = """
from typing import ClassVar

from attrs import field, frozen

from ragleaklab_core import TARGETS, load_plugin
from ragleaklab_plugins.packs.sentinel_takeover_safe import SentinelTakeoverSafePack

READS = []
BUILT = []


@frozen
class CountingPack(SentinelTakeoverSafePack):
    data_package: ClassVar[str] = SentinelTakeoverSafePack.data_package

    def cases(self):
        READS.append(1)
        return super().cases()


def _reference():
    BUILT.append(1)
    return load_plugin(TARGETS, "reference").obj


@frozen
class CountingTarget:
    _inner: object = field(factory=_reference, init=False)

    def ingest(self, documents):
        return self._inner.ingest(documents)

    def answer(self, query, principal=None):
        return self._inner.answer(query)
"""


@pytest.mark.parametrize("smoke", [True, False])
def test_a_run_reads_a_packs_cases_once_per_use_and_builds_its_target_once(
    tmp_path, monkeypatch, rlk_fake_dist, smoke
):
    import importlib

    rlk_fake_dist(
        "rlk-counting",
        entry_points={
            "ragleaklab.packs": {"counting": "rlk_counting:CountingPack"},
            "ragleaklab.targets": {"counting": "rlk_counting:CountingTarget"},
        },
        modules={"rlk_counting.py": _COUNTING},
    )
    counting = importlib.import_module("rlk_counting")
    monkeypatch.chdir(tmp_path)
    result = RunSession(
        RunRequest(packs=("counting",), target="counting", smoke=smoke, out=Path("out"))
    ).run()
    assert result.report["packs"][0]["cases"]["run"] == (30 if smoke else 700)
    # One target per pack: the one built to check the options is the one the pack runs on.
    assert len(counting.BUILT) == 1
    # cases() is called once to count and check the selection (a whole case file is not even
    # read: its length is known), then once to ask them; never again to re-count or re-check
    # (before the session, 4 calls with a tag and 3 without).
    assert len(counting.READS) == 2
