"""`--replay` of something else is refused (exit 2) before anything is asked: a recording of
another pack version, of other metric options, or one lacking a case, an epoch or a query the run
selects. Written as an attacker who holds an old recording and wants exit 0 from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragleaklab_core.errors import InputError
from ragleaklab_core.run.recording import Replay, metric_options
from ragleaklab_core.values import Case, PackInfo
from tests.support.cli import rlk

PACK = "verbatim-extraction"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """The smoke cases of the verbatim pack against the reference target, recorded once."""
    root = tmp_path_factory.mktemp("replay")
    done = rlk("run", "-p", PACK, "--smoke", "-o", "base", "--record", "rec", cwd=root)
    assert done.returncode in (0, 1), done.stderr
    return root


def _copy(recorded: Path, tmp_path: Path) -> Path:
    """A copy of the recording the test may edit."""
    rec = tmp_path / "rec"
    rec.mkdir()
    for path in (recorded / "rec").iterdir():
        (rec / path.name).write_bytes(path.read_bytes())
    return rec


def _index(rec: Path) -> dict:
    return json.loads((rec / "recording.json").read_text(encoding="utf-8"))


def _write_index(rec: Path, index: dict) -> None:
    (rec / "recording.json").write_text(json.dumps(index), encoding="utf-8")


def _replay(tmp_path: Path, *args: str) -> object:
    return rlk("run", "-p", PACK, "-o", "out", "--replay", "rec", *args, cwd=tmp_path)


def _refused(done, tmp_path: Path, *expected: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for text in expected:
        assert text in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()  # nothing asked, no journal, nothing written


def test_the_recording_stores_the_pack_version_and_the_metric_options(recorded):
    entry = _index(recorded / "rec")["packs"][PACK]
    assert entry["pack_version"] == "1.0.0"
    assert entry["metrics"] == {"verbatim": {"min_words": 8}}


def test_a_replay_of_what_was_recorded_scores_the_same(recorded, tmp_path):
    _copy(recorded, tmp_path)
    done = _replay(tmp_path, "--smoke")
    assert done.returncode in (0, 1), done.stderr
    base = json.loads((recorded / "base/report.json").read_text(encoding="utf-8"))
    again = json.loads((tmp_path / "out/report.json").read_text(encoding="utf-8"))
    assert again["packs"][0]["values"] == base["packs"][0]["values"]
    assert done.returncode == base["exit_code"]


@pytest.mark.parametrize("version", ["0.9.0", "1.0.1", None])
def test_a_recording_of_another_pack_version_is_refused(recorded, tmp_path, version):
    rec = _copy(recorded, tmp_path)
    index = _index(rec)
    if version is None:  # a recording that does not say which version it was made on
        del index["packs"][PACK]["pack_version"]
    else:
        index["packs"][PACK]["pack_version"] = version
    _write_index(rec, index)
    shown = version or "(not recorded)"
    done = _replay(tmp_path, "--smoke")
    _refused(
        done,
        tmp_path,
        f"pack {PACK} was recorded at version {shown} and version 1.0.0 is installed",
        "record again with version 1.0.0",
        f"install version {shown} of the pack",
        f"$.packs.{PACK}.pack_version",
    )
    # Tolerating errors does not let it through either.
    _refused(_replay(tmp_path, "--smoke", "--tolerate-errors"), tmp_path, "recorded at version")


def test_a_replay_with_other_metric_options_is_refused(recorded, tmp_path):
    _copy(recorded, tmp_path)
    # A laxer metric (longer quotes needed to count) over the recorded answers.
    (tmp_path / "lax.toml").write_text("[metrics.verbatim]\nmin_words = 40\n", encoding="utf-8")
    done = _replay(tmp_path, "--smoke", "--config", "lax.toml")
    _refused(
        done,
        tmp_path,
        f"pack {PACK} was recorded with other metric options than this run's",
        "verbatim.min_words 8 recorded, 40 now",
        f"$.packs.{PACK}.metrics",
    )
    # Setting the recorded value explicitly is the same run: accepted.
    (tmp_path / "same.toml").write_text("[metrics.verbatim]\nmin_words = 8\n", encoding="utf-8")
    same = _replay(tmp_path, "--smoke", "--config", "same.toml")
    assert same.returncode in (0, 1), same.stderr


@pytest.mark.parametrize(
    "edit",
    [
        lambda entry: entry.pop("metrics"),  # a recording made before they were stored
        lambda entry: entry.__setitem__("metrics", {"verbatim": {"min_words": 2}}),
        lambda entry: entry.__setitem__("metrics", {}),
        lambda entry: entry.__setitem__("metrics", "anything"),
    ],
)
def test_a_recording_whose_metric_options_are_not_the_runs_is_refused(recorded, tmp_path, edit):
    rec = _copy(recorded, tmp_path)
    index = _index(rec)
    edit(index["packs"][PACK])
    _write_index(rec, index)
    _refused(_replay(tmp_path, "--smoke"), tmp_path, "other metric options", "record again")


def test_cases_the_recording_lacks_are_refused_never_skipped(recorded, tmp_path):
    rec = _copy(recorded, tmp_path)
    # The whole pack from a recording of its smoke cases.
    _refused(
        _replay(tmp_path),
        tmp_path,
        f"the recording of pack {PACK} lacks",
        "record again with the same selection",
    )
    # More epochs than were recorded.
    _refused(_replay(tmp_path, "--smoke", "--epochs", "2"), tmp_path, "epoch 1")
    # One line removed (an attacker drops a case that leaked), tolerated errors or not.
    lines = (rec / f"{PACK}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    dropped = json.loads(lines[3])["test_id"]
    (rec / f"{PACK}.jsonl").write_text("".join(lines[:3] + lines[4:]), encoding="utf-8")
    for extra in ((), ("--tolerate-errors",)):
        done = _replay(tmp_path, "--smoke", *extra)
        _refused(done, tmp_path, "lacks 1 of the cases", f"{dropped} epoch 0")


def test_a_recorded_query_that_differs_is_refused(recorded, tmp_path):
    rec = _copy(recorded, tmp_path)
    path = rec / f"{PACK}.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines[0]["query"] = "What is the weather like?"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = _replay(tmp_path, "--smoke")
    _refused(done, tmp_path, "holds another query for 1 of the cases", lines[0]["test_id"])


def test_a_replay_of_a_subset_of_the_recorded_cases_is_accepted(tmp_path):
    info = PackInfo(
        name="p", version="2", pack_type="other", metrics=("m",), metric_options={"m": {"k": 1}}
    )
    lines = [
        {"test_id": t, "epoch": 0, "query": f"q{t}", "response": {"answer": "a", "retrieved": None}}
        for t in ("a", "b")
    ]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    options = metric_options(info)
    entry = {"target": {}, "pack_version": "2", "metrics": options, "file": "p.jsonl"}
    replay = Replay(tmp_path, {"p": entry})
    replay.check_pack(info, [Case("b", "qb")], epochs=1, metrics=options)
    with pytest.raises(InputError, match="lacks 1 of the cases"):
        replay.check_pack(info, [Case("c", "qc")], epochs=1, metrics=options)
    with pytest.raises(InputError, match=r"m.k 1 recorded, 2 now"):
        replay.check_pack(
            info, [Case("b", "qb")], epochs=1, metrics=metric_options(info, {"m": {"k": 2}})
        )
