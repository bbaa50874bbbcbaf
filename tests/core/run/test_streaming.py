"""A run whose memory does not grow with its cases: the pieces that make it so.

A pack's cases are read from their file as they are walked (checked whole once, duplicates
found by hash and confirmed exactly); the report's per-case lists are produced as they are
written; report.json is streamed in the same bytes ``dumps`` gives.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core.errors import InputError
from ragleaklab_core.packs import manifest
from ragleaklab_core.packs.manifest import load_manifest
from ragleaklab_core.run.report import chunks, dumps, plain
from ragleaklab_core.run.streamed import Streamed, StreamedMapping

MANIFEST = textwrap.dedent(
    """\
    name = "p"
    version = "1"
    pack_type = "sentinel"
    metrics = ["sentinel"]
    documents = ["documents.jsonl"]
    cases = "cases.jsonl"
    """
)


def _pack(root: Path, lines: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pack.toml").write_text(MANIFEST, encoding="utf-8")
    (root / "documents.jsonl").write_text('{"doc_id": "d", "text": "t"}\n', encoding="utf-8")
    (root / "cases.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


def _case(test_id: str, **extra: object) -> str:
    return json.dumps({"test_id": test_id, "query": f"q {test_id}", **extra})


ids = st.lists(st.sampled_from(["a", "b", "c", "d", "é", "a b", "x" * 30]), min_size=1)


@settings(max_examples=60, deadline=None)
@given(chosen=ids, collide=st.booleans())
def test_a_duplicate_test_id_is_found_with_both_lines_whatever_the_hashes(
    tmp_path_factory, chosen, collide
):
    """Against brute force: the first id seen twice, on the line it repeats, naming the line it
    was first on. With every hash forced equal, the exact second pass alone decides."""
    root = _pack(tmp_path_factory.mktemp("pack"), [_case(i) for i in chosen])
    first: dict[str, int] = {}
    expected = None
    for line, test_id in enumerate(chosen, start=1):
        if test_id in first:
            expected = f"{root}/cases.jsonl:{line}: duplicate test_id {test_id!r} (first on line "
            expected += f"{first[test_id]})"
            break
        first[test_id] = line
    with pytest.MonkeyPatch.context() as mp:
        if collide:
            mp.setattr(manifest, "_id_hash", lambda test_id: 7)
        if expected is None:
            loaded = load_manifest(root)
            assert [c.test_id for c in loaded.cases] == chosen
            assert len(loaded.cases) == len(chosen)
        else:
            with pytest.raises(InputError) as err:
                load_manifest(root)
            assert str(err.value) == expected


def test_cases_are_read_again_from_the_file_and_equal_the_checked_ones(tmp_path):
    lines = [
        _case("c1", tags=["attack", "family:x"], ground_truth={"sentinels": ["S"]}),
        "",
        _case("c2"),
        # Unusual but valid: goes through the full checks, gives the same case.
        json.dumps({"test_id": "c3", "query": "q", "tags": []}),
    ]
    root = _pack(tmp_path / "p", lines)
    cases = load_manifest(root).cases
    assert type(cases).__name__ == "CaseFile"
    first = list(cases)
    assert [c.test_id for c in first] == ["c1", "c2", "c3"]
    assert first[0].tags == ("attack", "family:x")
    assert first[0].ground_truth == {"sentinels": ["S"]}
    assert list(cases) == first  # walked twice, read twice: the same cases
    assert cases[-1] == first[-1] and cases[1:] == tuple(first[1:]) and cases == first
    with pytest.raises(IndexError):
        cases[3]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (json.dumps({"test_id": "", "query": "q"}), "cases.jsonl:2: "),
        (json.dumps({"test_id": "c2", "query": "q", "extra": 1}), "cases.jsonl:2: "),
        (json.dumps({"test_id": "c2", "query": "q", "tags": [1]}), "cases.jsonl:2: "),
        ("[1]", "cases.jsonl:2: expected a JSON object, got list"),
        ("{", "cases.jsonl:2: malformed JSON"),
    ],
)
def test_a_bad_case_line_is_named_by_file_and_line(tmp_path, line, message):
    root = _pack(tmp_path / "p", [_case("c1"), line])
    with pytest.raises(InputError) as err:
        load_manifest(root)
    assert message in str(err.value)


def test_a_pack_with_no_case_or_not_utf8_is_refused(tmp_path):
    root = _pack(tmp_path / "p", [])
    with pytest.raises(InputError, match="empty"):
        load_manifest(root)
    (root / "cases.jsonl").write_bytes(b'{"test_id": "c1", "query": "q"}\n\xff\n')
    with pytest.raises(InputError, match=r"cases.jsonl:2: not UTF-8"):
        load_manifest(root)
    (root / "cases.jsonl").write_bytes(b'\xef\xbb\xbf{"test_id": "c1", "query": "q"}\n')
    assert [c.test_id for c in load_manifest(root).cases] == ["c1"]  # a BOM is allowed


def test_a_streamed_list_is_produced_again_each_walk_and_checked_against_its_length():
    walks = []

    def produce():
        walks.append(1)
        yield from ("a", "b", "c")

    items = Streamed(3, produce)
    assert len(items) == 3 and not walks  # the length costs nothing
    assert list(items) == ["a", "b", "c"] and items == ["a", "b", "c"]
    assert items[:2] == ("a", "b") and items[-1] == "c"
    assert len(walks) == 4  # list, ==, a prefix, the last item: each walks it
    with pytest.raises(RuntimeError, match="produced 3 items, not 4"):
        list(Streamed(4, produce))
    memo = Streamed(3, produce, memo=True)
    list(memo)
    before = len(walks)
    assert list(memo) == ["a", "b", "c"] and len(walks) == before  # kept, not produced again
    mapping = StreamedMapping(2, lambda: iter([("x", 1), ("y", 2)]))
    assert dict(mapping.items()) == {"x": 1, "y": 2} and mapping["y"] == 2 and len(mapping) == 2
    with pytest.raises(KeyError):
        mapping["z"]


finite = st.floats(allow_nan=False, allow_infinity=False)
json_scalars = st.none() | st.booleans() | st.integers() | finite | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(document=st.dictionaries(st.text(), json_values, max_size=5), rows=st.lists(json_values))
def test_the_streamed_report_is_the_json_it_stands_for(document, rows):
    """Whatever the document, the streamed text parses back to it, with a streamed list where
    the document had a list, and each case of case_results on its own line."""
    document = {**document, "case_results": rows}
    streamed = {**document, "case_results": Streamed(len(rows), lambda: iter(rows))}
    text = "".join(chunks(plain(streamed)))
    assert text == dumps(document)
    assert json.loads(text) == json.loads(json.dumps(document))
    if rows:
        lines = text.split("\n")
        start = lines.index('  "case_results": [')
        # the list ends at its closing bracket, wherever the key stands among the others
        end = next(i for i in range(start + 1, len(lines)) if lines[i] in ("  ]", "  ],"))
        assert [json.loads(line.strip().rstrip(",")) for line in lines[start + 1 : end]] == [
            json.loads(json.dumps(r)) for r in rows
        ]


@settings(max_examples=150, deadline=None)
@given(
    values=st.dictionaries(st.sampled_from(["a", "b", "c"]), st.floats(0, 1), max_size=3),
    unscorable=st.sampled_from(["", "no retrieved documents"]),
    reducer=st.sampled_from(["mean", "median", "max", "min", "mode", "at_least_1", "pass_at_1"]),
)
def test_one_epoch_reduces_as_the_general_path_does(values, unscorable, reducer):
    """The one-epoch shortcut against the general reduction, for every reducer."""
    from types import SimpleNamespace

    from ragleaklab_core.run import sink
    from ragleaklab_core.run.records import CaseRecord
    from ragleaklab_core.stats.aggregation import reducer as make_reducer
    from ragleaklab_core.values import Case

    case = Case("c1", "q", {}, ("attack",))
    scored = {"values": {} if unscorable else values, "evidence": {}, "unscorable": unscorable}
    record = CaseRecord("p", "c1", 0, "q", "a", None, {"m": scored}, None, 1.0, {})
    metrics = [SimpleNamespace(name="m")]
    args = (case, [record], metrics, make_reducer(reducer), frozenset({"b"}))
    fast = sink.reduce_case(*args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sink, "LITERAL_REDUCERS", frozenset())
        assert fast == sink.reduce_case(*args)


def test_a_finished_run_holds_no_open_file_per_spool():
    """A suite of hundreds of packs keeps every PackRun: their spools must not each hold a file
    descriptor open once the pack is done, yet still read back and take appends."""
    import os

    from ragleaklab_core.run.records import RunSettings
    from ragleaklab_core.run.runner import load_pack, run_pack
    from ragleaklab_core.run.spool import Spool

    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    pack = load_pack("sentinel-takeover-safe")
    settings = RunSettings(tags=("smoke",))
    run_pack(pack, settings=settings)  # whatever a first run opens for good (imports, caches)
    before = open_files()
    runs = [run_pack(pack, settings=settings) for _ in range(3)]
    assert open_files() == before
    assert all(len(r.records) == len(r.results) > 0 for r in runs)
    spool: Spool[int] = Spool(int)
    spool.append(1)
    spool.seal()
    spool.append(2)
    assert list(spool) == [1, 2] and list(spool.lines()) == ["1", "2"]
