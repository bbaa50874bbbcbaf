"""A file in OUT never deletes a team's documents (issue 39, class 3).

``OUT/planted.jsonl`` is a file anyone who can write to OUT can edit. Each test writes or edits
it as an attacker would (a ledger naming the team's ids, mixed with real leftovers, copied from
another run, with a forged run id, an edited pack name, ids spelt with whitespace or Unicode
look-alikes, malformed), then runs ``ragleaklab cleanup``, ``run -o OUT`` (plain, ``--restart``,
``--resume``) or ``calibrate -o OUT`` in a real subprocess against a store the test inspects:
a directory of JSON files (``planting/rlk_dirstore.py``) or a service behind ``reset_url``. The
team's documents must come out byte for byte as they went in; what a run really left is still
removed.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core.run.planted import LEDGER, RUN_TAG, planted_id, read_outstanding, run_key
from ragleaklab_core.run.runner import load_pack
from tests.core.run.test_planted import _start, _wait_mid_pack
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

HERE = Path(__file__).resolve().parent / "planting"
PACK = "context-extraction"
OTHER_PACK = "relevance-hijack"
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
NOT_TOUCHED = "the team's documents were not touched"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A fake distribution providing the ``dirstore`` target (it reads tags back) and
    ``dirstore-untagged`` (it cannot), for subprocesses."""
    root = tmp_path / "site"
    info = root / "rlk_dirstore-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rlk-dirstore\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[ragleaklab.targets]\n"
        "dirstore = rlk_dirstore:DirStoreTarget\n"
        "dirstore-untagged = rlk_dirstore:UntaggedDirStoreTarget\n"
    )
    shutil.copy(HERE / "rlk_dirstore.py", root / "rlk_dirstore.py")
    shutil.copy(HERE / "rlk_jsonstore.py", root / "rlk_jsonstore.py")
    return root


def config(tmp_path: Path, store: Path, target: str = "dirstore", **options: Any) -> Path:
    path = tmp_path / "rag.toml"
    lines = ["[target]", f'name = "{target}"', "[target.options]", f'directory = "{store}"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in options.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def doc_ids(pack: str = PACK) -> list[str]:
    return [d.doc_id for d in load_pack(pack).obj.documents()]


def team(store: Path, *ids: str, tag: str | None = None) -> dict[str, bytes]:
    """The team's own documents, one file per id (tagged as a run's when *tag* is given): the
    bytes each file holds, to compare with afterwards."""
    store.mkdir(parents=True, exist_ok=True)
    files = {}
    for i in ids:
        body = {"doc_id": i, "text": f"the team's page {i}"}
        if tag is not None:
            body[RUN_TAG] = tag
        path = store / f"{i}.json"
        path.write_text(json.dumps(body), encoding="utf-8")
        files[path.name] = path.read_bytes()
    return files


def leftovers(store: Path, run: str, count: int = 5, pack: str = PACK) -> list[str]:
    """What a run killed outright leaves in the store: its first *count* documents, under the
    ids it derives and tagged with its run."""
    key = run_key(run, pack)
    store.mkdir(parents=True, exist_ok=True)
    ids = []
    for doc_id in doc_ids(pack)[:count]:
        i = planted_id(key, doc_id)
        body = {"doc_id": doc_id, "text": "planted", RUN_TAG: key}
        (store / f"{i}.json").write_text(json.dumps(body), encoding="utf-8")
        ids.append(i)
    return ids


def ledger(out: Path, store: Path, *lines: dict[str, Any], target: str = "dirstore") -> Path:
    """OUT/planted.jsonl holding a planted line per *lines* (run, pack, ids), as written by hand."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LEDGER
    with path.open("a", encoding="utf-8") as file:
        for line in lines:
            body = {"store": f"dirstore {store.as_posix()}", "target": target, **line}
            file.write(json.dumps({"planted": body}, ensure_ascii=False) + "\n")
    return path


def survived(store: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        assert (store / name).read_bytes() == content, f"the team's {name} was changed"


def tagged_left(store: Path, run: str, pack: str = PACK) -> list[str]:
    key = run_key(run, pack)
    found = []
    for path in store.glob("*.json"):
        if json.loads(path.read_text(encoding="utf-8")).get(RUN_TAG) == key:
            found.append(path.stem)
    return found


def refused(stderr: str, *ids: str) -> None:
    """The refusal names every id (as ascii() spells it), says they were left alone, no
    traceback."""
    assert NOT_TOUCHED in stderr and "not removed" in stderr, stderr
    assert "Traceback" not in stderr and "ragleaklab plugins" not in stderr, stderr
    assert "removed 0 " not in stderr, stderr
    for i in ids:
        assert ascii(i) in stderr, (i, stderr)


# ---- cleanup ------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["dirstore", "dirstore-untagged"])
def test_cleanup_deletes_none_of_the_team_ids_a_ledger_names(
    site: Path, tmp_path: Path, target: str
) -> None:
    store = tmp_path / "store"
    pack_id = doc_ids()[0]
    ids = ("hr-salaries-2024", "1b4e28ba-2fa1-11d2-883f-0016d3cca427", pack_id)
    files = team(store, *ids)
    path = ledger(tmp_path / "out", store, {"run": "0123456789abcdef", "pack": PACK, "ids": ids})
    before = path.read_bytes()
    cfg = config(tmp_path, store, target)
    done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(3,))
    refused(done.stderr, *ids)
    assert "does not derive it from run '0123456789abcdef' and pack" in done.stderr
    survived(store, files)
    assert path.read_bytes() != b"" and read_outstanding(tmp_path / "out").count == 3
    # Asked again, the same answer: nothing is dropped from the ledger to let a retry pass.
    again = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(3,))
    refused(again.stderr, *ids)
    survived(store, files)
    assert len(before) > 0


def test_mixed_leftovers_are_removed_and_the_team_ids_beside_them_are_not(
    site: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    files = team(store, "kb-001", "kb-002")
    ours = leftovers(store, "run0000000000001", count=4)
    ids = [ours[0], "kb-001", ours[1], ours[2], "kb-002", ours[3]]
    ledger(tmp_path / "out", store, {"run": "run0000000000001", "pack": PACK, "ids": ids})
    cfg = config(tmp_path, store)
    done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(3,))
    refused(done.stderr, "kb-001", "kb-002")
    assert f"removed 4 planted documents from dirstore {store.as_posix()}" in done.stdout
    assert tagged_left(store, "run0000000000001") == []
    survived(store, files)
    listed = read_outstanding(tmp_path / "out")
    assert list(listed.by_store.values()) == [("kb-001", "kb-002")]  # only what was refused
    # Each rewritten line keeps its run and pack: what is left can still be derived (or not).
    assert [(p.run, p.pack) for p in listed.plantings] == [("run0000000000001", PACK)]


def test_a_forged_run_id_derives_no_team_id(site: Path, tmp_path: Path) -> None:
    """Ids a real run left, listed under another run id (or none), and team ids listed under
    run ids chosen to look like theirs: nothing derives, nothing is removed."""
    store = tmp_path / "store"
    real = leftovers(store, "aaaaaaaaaaaaaaaa", count=2)
    files = team(store, "kb-7", "0123456789abcdef")
    forged = [
        {"run": "bbbbbbbbbbbbbbbb", "pack": PACK, "ids": real},  # real ids, wrong run
        {"run": "kb-7", "pack": PACK, "ids": ["kb-7"]},  # the team's id as the run
        {"run": "", "pack": PACK, "ids": ["0123456789abcdef"]},
        {"pack": PACK, "ids": ["kb-7"]},  # no run at all
        {"run": f"aaaaaaaaaaaaaaaa:{PACK}", "pack": PACK, "ids": real},  # the key as the run
    ]
    ledger(tmp_path / "out", store, *forged)
    cfg = config(tmp_path, store)
    done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(3,))
    refused(done.stderr, *real, "kb-7", "0123456789abcdef")
    assert "names no run and pack it could be derived from" in done.stderr
    assert sorted(tagged_left(store, "aaaaaaaaaaaaaaaa")) == sorted(real)
    survived(store, files)


@pytest.mark.parametrize(
    "pack",
    [
        f"{PACK} ",  # trailing space
        PACK.upper(),
        PACK.replace("-", "\u2010"),  # a Unicode hyphen
        PACK.replace("x", "\u0445"),  # a Cyrillic look-alike
        "no-such-pack",
        OTHER_PACK,  # installed, but not the pack these ids derive from
    ],
)
def test_an_edited_pack_name_derives_nothing(site: Path, tmp_path: Path, pack: str) -> None:
    store = tmp_path / "store"
    real = leftovers(store, "cccccccccccccccc", count=3)
    files = team(store, "kb-1")
    ledger(
        tmp_path / "out", store, {"run": "cccccccccccccccc", "pack": pack, "ids": [*real, "kb-1"]}
    )
    cfg = config(tmp_path, store)
    done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(3,))
    refused(done.stderr, *real, "kb-1")
    assert ascii(pack) in done.stderr
    assert len(tagged_left(store, "cccccccccccccccc")) == 3
    survived(store, files)


def test_ids_spelt_like_ours_with_whitespace_or_unicode_are_not_ours(
    site: Path, tmp_path: Path
) -> None:
    """The team's documents stored under ids that differ from a real leftover's by a space, a
    case, a zero-width character or a full-width digit: only the leftover itself is removed."""
    store = tmp_path / "store"
    (real,) = leftovers(store, "dddddddddddddddd", count=1)
    variants = [
        f" {real}",
        f"{real} ",
        f"{real}\t",
        real.upper(),
        real[:8] + "\u200b" + real[8:],
        real.replace("0", "\uff10") if "0" in real else "\uff10" + real,
        real.replace("-", "\u2011"),
    ]
    files = team(store, *variants)
    ledger(
        tmp_path / "out", store, {"run": "dddddddddddddddd", "pack": PACK, "ids": [real, *variants]}
    )
    cfg = config(tmp_path, store)
    done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(3,))
    refused(done.stderr, *variants)
    assert "removed 1 planted documents" in done.stdout
    assert not (store / f"{real}.json").exists()
    survived(store, files)


def test_a_team_document_under_an_id_that_looks_like_ours_is_kept_by_its_tag(
    site: Path, tmp_path: Path
) -> None:
    """Ids that derive from the ledger's run and pack, but the store holds them untagged (a
    team's document) or tagged by another run: a target that reads tags back leaves them."""
    store = tmp_path / "store"
    key = run_key("eeeeeeeeeeeeeeee", PACK)
    first, second, third = (planted_id(key, d) for d in doc_ids()[:3])
    files = team(store, first)  # untagged: the team's
    files |= team(store, second, tag=run_key("ffffffffffffffff", PACK))  # another run's
    ours = {"doc_id": "x", "text": "planted", RUN_TAG: key}
    (store / f"{third}.json").write_text(json.dumps(ours), encoding="utf-8")
    ids = [first, second, third]
    ledger(tmp_path / "out", store, {"run": "eeeeeeeeeeeeeeee", "pack": PACK, "ids": ids})
    cfg = config(tmp_path, store)
    done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(3,))
    refused(done.stderr, first, second)
    assert f"without a {RUN_TAG} tag" in done.stderr
    assert f"tagged {RUN_TAG}='ffffffffffffffff:{PACK}'" in done.stderr
    assert not (store / f"{third}.json").exists()
    survived(store, files)


def test_a_ledger_copied_from_a_finished_run_removes_nothing_else(
    site: Path, tmp_path: Path
) -> None:
    """A real run's ledger lines (killed outright), copied into another OUT after that run's
    leftovers were cleaned up: the ids are ragleaklab's, the store holds none of them, and the
    team's documents are untouched."""
    store = tmp_path / "store"
    files = team(store, *doc_ids()[:3])  # the team's documents under the pack's own ids
    cfg = config(tmp_path, store, delay=0.3)
    run = _start(site, tmp_path, "run", "-c", str(cfg), "-p", PACK, "--smoke", "-o", "one")
    _wait_mid_pack(tmp_path / "one", run)
    run.kill()
    run.communicate(timeout=60)
    (tmp_path / "two").mkdir()
    shutil.copy(tmp_path / "one" / LEDGER, tmp_path / "two" / LEDGER)
    fast = config(tmp_path, store)
    rlk("cleanup", "one", "-c", str(fast), cwd=tmp_path, pythonpath=[site], ok=(0,))
    done = rlk("cleanup", "two", "-c", str(fast), cwd=tmp_path, pythonpath=[site], ok=(0,))
    assert "nothing planted by a run in two is left" in done.stdout
    assert sorted(p.name for p in store.iterdir()) == sorted(files)
    survived(store, files)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"planted": {"store": "S", "run": 5, "pack": "p", "ids": ["kb-1"]}}\n', 1),
        ('{"planted": {"store": "S", "run": "r", "pack": "p", "ids": [1, 2]}}\n', 1),
        ('{"planted": {"store": "S", "run": "r", "pack": "p", "ids": ["kb-1"]}}\n[]\n', 2),
        ('{"removed": {"store": "S", "ids": "kb-1"}}\n', 1),
    ],
)
def test_a_malformed_ledger_is_refused_with_its_line(
    site: Path, tmp_path: Path, text: str, line: int
) -> None:
    store = tmp_path / "store"
    files = team(store, "kb-1")
    (tmp_path / "out").mkdir()
    path = tmp_path / "out" / LEDGER
    path.write_text(text.replace('"S"', json.dumps(f"dirstore {store.as_posix()}")), "utf-8")
    before = path.read_bytes()
    cfg = config(tmp_path, store)
    done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(2,))
    assert f"error: out/{LEDGER}:{line}: malformed line" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_bytes() == before  # not rewritten
    survived(store, files)


def test_a_line_torn_by_a_kill_is_cut_before_anything_is_appended(
    site: Path, tmp_path: Path
) -> None:
    """A run killed while writing its ledger leaves a last line without its line break: the
    next removal appends after a line of its own, so the ledger never turns malformed."""
    store = tmp_path / "store"
    ours = leftovers(store, "4444444444444444", count=2)
    path = ledger(tmp_path / "out", store, {"run": "4444444444444444", "pack": PACK, "ids": ours})
    torn = json.dumps({"planted": {"store": "s", "run": "r", "pack": PACK, "ids": ["kb-1"]}})
    with path.open("a", encoding="utf-8") as file:
        file.write(torn[:40])
    cfg = config(tmp_path, store)
    done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, pythonpath=[site], ok=(0,))
    assert "removed 2 planted documents" in done.stdout
    assert tagged_left(store, "4444444444444444") == [] and not path.exists()


def test_cleanup_never_builds_a_target_from_a_config_the_ledger_names_inside_out(
    site: Path, tmp_path: Path
) -> None:
    """The ledger names the config its run was given, and cleanup uses it when no -c is given;
    a config inside OUT (where a run never writes one) naming an app module there is refused
    before anything is imported."""
    store = tmp_path / "store"
    files = team(store, "kb-1")
    out = tmp_path / "out"
    out.mkdir()
    (out / "evil.py").write_text(
        "import pathlib\npathlib.Path('imported').write_text('yes')\nstore = None\n", "utf-8"
    )
    (out / "rag.toml").write_text(
        '[target]\nname = "python"\n[target.options]\ncallable = "out.evil:store"\n', "utf-8"
    )
    line = {
        "store": "s",
        "run": "r",
        "pack": PACK,
        "ids": ["kb-1"],
        "config": {"config": "out/rag.toml"},
    }
    (out / LEDGER).write_text(json.dumps({"planted": line}) + "\n", "utf-8")
    done = rlk("cleanup", "out", cwd=tmp_path, pythonpath=[site], ok=(2,))
    assert "names the config out/rag.toml, inside OUT" in done.stderr, done.stderr
    assert not (tmp_path / "imported").exists()
    survived(store, files)


# ---- runs in OUT --------------------------------------------------------------------------------


def test_a_plain_run_in_out_deletes_no_team_id_and_plants_nothing(
    site: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    files = team(store, "kb-1", "kb-2", doc_ids()[0])
    ours = leftovers(store, "1111111111111111", count=2)
    ids = ["kb-1", *ours, "kb-2", doc_ids()[0]]
    ledger(tmp_path / "out", store, {"run": "1111111111111111", "pack": PACK, "ids": ids})
    cfg = config(tmp_path, store)
    done = rlk(
        "run", "-c", str(cfg), "-p", PACK, "--smoke", "-o", "out",
        cwd=tmp_path, pythonpath=[site], ok=(3,),
    )  # fmt: skip
    refused(done.stderr, "kb-1", "kb-2", doc_ids()[0])
    assert "nothing was planted or asked" in done.stderr
    assert "removed 2 documents an earlier run in out planted" in done.stderr
    assert sorted(p.name for p in store.iterdir()) == sorted(files)  # nothing planted either
    survived(store, files)
    assert not (tmp_path / "out" / "report.json").exists()
    assert not (tmp_path / "out" / "runs.jsonl.partial").exists()


@POSIX
def test_resume_and_restart_after_a_kill_remove_the_runs_own_and_no_appended_team_id(
    site: Path, tmp_path: Path
) -> None:
    """A run killed outright, its real ledger then appended with the team's ids under the
    run's own id and pack: --resume and --restart remove what the run left, refuse the rest,
    and leave the journal as it was."""
    store = tmp_path / "store"
    ids = ("kb-100", "kb-101", doc_ids()[1])
    files = team(store, *ids)
    cfg = config(tmp_path, store, delay=0.3)
    args = ("run", "-c", str(cfg), "-p", PACK, "--smoke", "-o", "out")
    run = _start(site, tmp_path, *args)
    _wait_mid_pack(tmp_path / "out", run)
    run.kill()
    run.communicate(timeout=60)
    (planting,) = read_outstanding(tmp_path / "out").plantings
    assert len(tagged_left(store, planting.run)) == len(planting.ids) > 100
    ledger(tmp_path / "out", store, {"run": planting.run, "pack": PACK, "ids": list(ids)})
    journal = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.name != LEDGER}
    for flag in ("--resume", "--restart"):
        done = rlk(*args, flag, cwd=tmp_path, pythonpath=[site], ok=(3,))
        refused(done.stderr, *ids)
        assert tagged_left(store, planting.run) == []
        survived(store, files)
        now = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.name != LEDGER}
        assert now == journal, flag  # the interrupted run is still there to resume
    assert len(read_outstanding(tmp_path / "out").plantings[0].ids) == 3
    # Once the ledger is looked at and deleted, the run continues.
    (tmp_path / "out" / LEDGER).unlink()
    rlk(*args, "--resume", cwd=tmp_path, pythonpath=[site], ok=(0, 1))
    survived(store, files)
    assert sorted(p.name for p in store.iterdir()) == sorted(files)


def test_calibrate_in_out_deletes_no_team_id(site: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    files = team(store, "kb-9", doc_ids()[2])
    ours = leftovers(store, "2222222222222222", count=3)
    ids = [*ours, "kb-9", doc_ids()[2]]
    ledger(tmp_path / "cal", store, {"run": "2222222222222222", "pack": PACK, "ids": ids})
    cfg = config(tmp_path, store)
    done = rlk(
        "calibrate", "--pack", PACK, "--smoke", "-o", "cal", "-c", str(cfg),
        cwd=tmp_path, pythonpath=[site], ok=(3,),
    )  # fmt: skip
    refused(done.stderr, "kb-9", doc_ids()[2])
    assert tagged_left(store, "2222222222222222") == []
    assert sorted(p.name for p in store.iterdir()) == sorted(files)
    survived(store, files)
    assert not (tmp_path / "cal" / "calibration_report.json").exists()


# ---- the python target on a vector store that outlives the process --------------------------


def test_the_python_targets_store_keeps_every_team_document_a_ledger_names(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A LangChain-shaped store (``rlk_jsonstore``) through the built-in python target: team
    ids, team documents under ids that derive from the ledger's run (untagged, or tagged by
    another run) and a real leftover; cleanup and a plain run remove the leftover alone."""
    from ragleaklab_plugins.targets._stores import store_identity

    sys.path.insert(0, str(site))
    monkeypatch.setenv("RLK_JSONSTORE", str(tmp_path / "kb"))
    try:
        import rlk_jsonstore

        identity = store_identity(rlk_jsonstore.JsonVectorStore(str(tmp_path / "kb")))
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("rlk_jsonstore", None)
    kb = rlk_jsonstore.JsonVectorStore(str(tmp_path / "kb"))
    key = run_key("5555555555555555", PACK)
    derived = [planted_id(key, d) for d in doc_ids()[:4]]
    kb.add_texts(["team page a", "team page b"], [{"source": "a"}, {"source": "b"}], ids=["a", "b"])
    kb.add_texts(["team page c"], [{"source": "c"}], ids=[derived[0]])  # untagged
    kb.add_texts(["other run"], [{RUN_TAG: run_key("6666666666666666", PACK)}], ids=[derived[1]])
    kb.add_texts(["left"], [{"doc_id": "x", RUN_TAG: key}], ids=[derived[2]])
    kb.add_texts(["left"], [{"doc_id": "y", RUN_TAG: key}], ids=[derived[3]])
    files = {p.name: p.read_bytes() for p in (tmp_path / "kb").iterdir()}
    team_files = {
        k: v for k, v in files.items() if k not in (f"{derived[2]}.json", f"{derived[3]}.json")
    }
    (tmp_path / "rag.toml").write_text(
        '[target]\nname = "python"\n[target.options]\ncallable = "rlk_jsonstore:store"\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    out.mkdir()
    line = {"store": identity, "target": "python", "run": "5555555555555555", "pack": PACK}
    ids = ["a", derived[0], derived[1], derived[2], "b"]
    (out / LEDGER).write_text(json.dumps({"planted": {**line, "ids": ids}}) + "\n", "utf-8")
    env = {"RLK_JSONSTORE": str(tmp_path / "kb")}
    cfg = str(tmp_path / "rag.toml")
    done = rlk("cleanup", "out", "-c", cfg, cwd=tmp_path, env=env, pythonpath=[site], ok=(3,))
    refused(done.stderr, "a", "b", derived[0], derived[1])
    assert f"without a {RUN_TAG} tag" in done.stderr and "6666666666666666" in done.stderr
    assert not (tmp_path / "kb" / f"{derived[2]}.json").exists()
    survived(tmp_path / "kb", team_files)
    # The other leftover, added to the ledger: a plain run removes it, and refuses the rest.
    with (out / LEDGER).open("a", encoding="utf-8") as file:
        file.write(json.dumps({"planted": {**line, "ids": [derived[3], "a"]}}) + "\n")
    done = rlk(
        "run", "-c", cfg, "-p", PACK, "--smoke", "-o", "out",
        cwd=tmp_path, env=env, pythonpath=[site], ok=(3,),
    )  # fmt: skip
    refused(done.stderr, "a", "b", derived[0], derived[1])
    assert "removed 1 documents an earlier run in out planted" in done.stderr
    assert sorted(p.name for p in (tmp_path / "kb").iterdir()) == sorted(team_files)
    survived(tmp_path / "kb", team_files)


# ---- a service behind reset_url -----------------------------------------------------------------


def _http_config(path: Path, server: FakeRagServer) -> Path:
    path.write_text(
        "[target]\n"
        'name = "http"\n'
        "[target.options]\n"
        f'url = "{server.url("/simple")}"\n'
        f'ingest_url = "{server.url("/ingest")}"\n'
        f'reset_url = "{server.url("/reset")}"\n',
        encoding="utf-8",
    )
    return path


def test_a_service_is_not_reset_for_a_ledger_naming_only_ids_no_pack_has(
    tmp_path: Path,
) -> None:
    """The http target's ids are the pack's own doc_ids, and removing them is the service's
    reset_url: a ledger naming only other ids never calls it; one naming the pack's ids too
    calls it once and still names the others."""
    with FakeRagServer() as server:
        cfg = _http_config(tmp_path / "rag.toml", server)
        store = f"the service at {server.url('/ingest')}"
        out = tmp_path / "out"
        out.mkdir()
        line = {"store": store, "target": "http", "run": "3333333333333333", "pack": PACK}
        team_ids = ["kb-1", "customers/42"]
        (out / LEDGER).write_text(json.dumps({"planted": {**line, "ids": team_ids}}) + "\n")
        # Its own process: `cleanup` of an http target leaves its connection to the service
        # open (a process's exit closes it; in the test process it is an unclosed socket).
        done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, ok=(3,), own_process=True)
        refused(done.stderr, *team_ids)
        assert server.resets == 0
        ours = doc_ids()[:2]
        (out / LEDGER).write_text(json.dumps({"planted": {**line, "ids": [*ours, *team_ids]}}))
        done = rlk("cleanup", "out", "-c", str(cfg), cwd=tmp_path, ok=(3,), own_process=True)
        refused(done.stderr, *team_ids)
        assert server.resets == 1
        assert list(read_outstanding(out).by_store.values()) == [tuple(team_ids)]


def test_a_run_waits_for_the_stores_lock_before_removing(site: Path, tmp_path: Path) -> None:
    """A ledger copied from a run still planting in the store: cleanup waits until that run's
    pack is done (its lock), so its documents are never pulled from under it mid-pack."""
    store = tmp_path / "store"
    cfg = config(tmp_path, store, delay=0.3)
    run = _start(site, tmp_path, "run", "-c", str(cfg), "-p", PACK, "--smoke", "-o", "one")
    _wait_mid_pack(tmp_path / "one", run)
    (tmp_path / "two").mkdir()
    shutil.copy(tmp_path / "one" / LEDGER, tmp_path / "two" / LEDGER)
    cleanup = _start(site, tmp_path, "cleanup", "two", "-c", str(cfg))
    time.sleep(2)
    assert cleanup.poll() is None  # waiting for the run's pack
    (planting,) = read_outstanding(tmp_path / "one").plantings
    assert len(tagged_left(store, planting.run)) == len(planting.ids)  # nothing pulled
    run.send_signal(signal.SIGTERM)
    run.communicate(timeout=120)
    stdout, stderr = cleanup.communicate(timeout=120)
    assert cleanup.returncode == 0, stdout + stderr
    assert "store.waiting" in stderr
    assert list(store.glob("*.json")) == []
