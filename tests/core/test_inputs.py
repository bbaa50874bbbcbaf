"""The JSONL readers: every bad input is an InputError naming the file and the line."""

from __future__ import annotations

import hashlib
import json

import pytest

from ragleaklab_core.errors import InputError
from ragleaklab_core.inputs import read_labels, read_scores

GOOD_LABEL = '{"test_id": "ok", "label": "negative"}'
GOOD_SCORE = '{"test_id": "ok", "score": 0.5}'


def _write(tmp_path, text, name="data.jsonl"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _error(reader, path) -> InputError:
    with pytest.raises(InputError) as info:
        reader(path)
    return info.value


# -- labels -------------------------------------------------------------------------------------

BAD_LABEL_LINES = [
    ("{not json", "malformed JSON"),
    ('{"test_id": "x", "label": "positive"', "malformed JSON"),
    ('["x", "positive"]', "expected a JSON object, got list"),
    ('"x"', "expected a JSON object, got str"),
    ("null", "expected a JSON object, got NoneType"),
    ('{"label": "positive"}', "missing field 'test_id'"),
    ('{"test_id": 7, "label": "positive"}', "'test_id' must be a non-empty string, got 7"),
    ('{"test_id": null, "label": "positive"}', "'test_id' must be a non-empty string"),
    ('{"test_id": "", "label": "positive"}', "'test_id' must be a non-empty string, got ''"),
    ('{"test_id": "  ", "label": "positive"}', "'test_id' must be a non-empty string"),
    ('{"test_id": ["x"], "label": "positive"}', "'test_id' must be a non-empty string"),
    ('{"test_id": "x"}', "missing field 'label'"),
    ('{"test_id": "x", "label": "maybe"}', "got 'maybe'"),
    ('{"test_id": "x", "label": "Positive"}', "got 'Positive'"),
    ('{"test_id": "x", "label": " positive"}', "got ' positive'"),
    ('{"test_id": "x", "label": true}', "got True"),
    ('{"test_id": "x", "label": 1}', "got 1"),
    ('{"test_id": "x", "label": null}', "got None"),
    ('{"test_id": "x", "label": ["positive"]}', "got ['positive']"),
    ('{"test_id": "x", "label": "positive", "notes": 3}', "'notes' must be a string, got 3"),
    ('{"test_id": "x", "label": "positive", "notes": ["a"]}', "'notes' must be a string"),
]


@pytest.mark.parametrize(("line", "message"), BAD_LABEL_LINES)
def test_bad_label_line_names_file_and_line(tmp_path, line, message):
    path = _write(tmp_path, f"{GOOD_LABEL}\n\n{line}\n", "labels.jsonl")
    err = _error(read_labels, path)
    assert err.source == str(path)
    assert err.line == 3
    assert str(err).startswith(f"{path}:3: ")
    assert message in str(err)
    assert "\n" not in str(err)


def test_label_error_is_a_value_error_with_exit_code_2(tmp_path):
    err = _error(read_labels, _write(tmp_path, '{"test_id": "x", "label": "maybe"}\n'))
    assert isinstance(err, ValueError)
    assert err.exit_code == 2


def test_labels_are_read_as_booleans_with_extra_keys_ignored(tmp_path):
    path = _write(
        tmp_path,
        '{"test_id": "q001", "label": "positive", "notes": "attack succeeds"}\n'
        '{"test_id": "q002", "label": "negative", "notes": null, "weight": 3, "x": {"y": 1}}\n'
        '{"test_id": "q003", "label": "negative"}\n',
    )
    data = read_labels(path)
    assert data.records == {"q001": True, "q002": False, "q003": False}
    assert data.path == str(path)


# -- scores -------------------------------------------------------------------------------------

BAD_SCORE_LINES = [
    ('{"test_id": "x"}', "missing field 'score'"),
    ('{"test_id": "x", "score": "0.5"}', "'score' must be a number, got str '0.5'"),
    ('{"test_id": "x", "score": true}', "'score' must be a number, got bool True"),
    ('{"test_id": "x", "score": false}', "'score' must be a number, got bool False"),
    ('{"test_id": "x", "score": null}', "'score' must be a number, got NoneType None"),
    ('{"test_id": "x", "score": [0.5]}', "'score' must be a number, got list"),
    ('{"test_id": "x", "score": {"v": 0.5}}', "'score' must be a number, got dict"),
    ('{"test_id": "x", "score": NaN}', "NaN"),
    ('{"test_id": "x", "score": Infinity}', "Infinity"),
    ('{"test_id": "x", "score": -Infinity}', "-Infinity"),
    ('{"test_id": "x", "score": 1e999}', "'score' must be finite, got inf"),
    ('{"test_id": "x", "score": -1e999}', "'score' must be finite, got -inf"),
    ('{"test_id": "x", "score": ' + str(10**400) + "}", "too large for a float"),
    ('{"test_id": "x", "score": 0.5', "malformed JSON"),
    ("[0.5]", "expected a JSON object, got list"),
    ("0.5", "expected a JSON object, got float"),
    ('{"score": 0.5}', "missing field 'test_id'"),
    ('{"test_id": 1, "score": 0.5}', "'test_id' must be a non-empty string, got 1"),
    ('{"test_id": "", "score": 0.5}', "'test_id' must be a non-empty string"),
]


@pytest.mark.parametrize(("line", "message"), BAD_SCORE_LINES)
def test_bad_score_line_names_file_and_line(tmp_path, line, message):
    path = _write(tmp_path, f"{GOOD_SCORE}\n{line}\n", "scores.jsonl")
    err = _error(read_scores, path)
    assert (err.source, err.line) == (str(path), 2)
    assert str(err).startswith(f"{path}:2: ")
    assert message in str(err)
    assert "\n" not in str(err)


def test_scores_accept_ints_floats_and_extra_keys(tmp_path):
    path = _write(
        tmp_path,
        '{"test_id": "a", "score": 1}\n'
        '{"test_id": "b", "score": -0.25, "metric": "leak_rate", "run": 2}\n'
        '{"test_id": "c", "score": 1e-300}\n'
        '{"test_id": "d", "score": ' + str(10**300) + "}\n",
    )
    records = read_scores(path).records
    assert records == {"a": 1.0, "b": -0.25, "c": 1e-300, "d": float(10**300)}
    assert all(type(v) is float for v in records.values())


# -- both readers -------------------------------------------------------------------------------

READERS = pytest.mark.parametrize(
    ("reader", "good"),
    [(read_labels, GOOD_LABEL), (read_scores, GOOD_SCORE)],
    ids=["labels", "scores"],
)


@READERS
def test_duplicate_ids_name_both_lines(tmp_path, reader, good):
    other = good.replace('"ok"', '"other"')
    path = _write(tmp_path, f"{good}\n{other}\n\n{good}\n")
    err = _error(reader, path)
    assert err.line == 4
    assert str(err) == f"{path}:4: duplicate test_id 'ok' (first on line 1)"


@READERS
@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n\r\n", "\ufeff", "\ufeff\n \n"])
def test_empty_or_blank_file(tmp_path, reader, good, text):
    path = _write(tmp_path, text)
    err = _error(reader, path)
    assert err.source == str(path)
    assert "empty" in str(err)
    assert str(err).startswith(f"{path}: ")


@READERS
def test_missing_file(tmp_path, reader, good):
    path = tmp_path / "nope.jsonl"
    err = _error(reader, path)
    assert str(err) == f"{path}: file not found"


@READERS
def test_directory(tmp_path, reader, good):
    err = _error(reader, tmp_path)
    assert err.source == str(tmp_path)
    assert "is a directory" in str(err)


@READERS
def test_invalid_utf8_names_the_line(tmp_path, reader, good):
    path = _write(tmp_path, f"{good}\n\n".encode() + b'{"test_id": "caf\xe9"}\n')
    err = _error(reader, path)
    assert err.line == 3
    assert str(err) == f"{path}:3: not UTF-8 text"


@READERS
def test_blank_lines_are_skipped_and_line_numbers_count_them(tmp_path, reader, good):
    other = good.replace('"ok"', '"other"')
    path = _write(tmp_path, f"\n   \n{good}\r\n\t\n{other}\n\n")
    assert set(reader(path).records) == {"ok", "other"}
    bad = _write(tmp_path, f"\n\n{good}\n\n{{bad\n", "bad.jsonl")
    assert _error(reader, bad).line == 5


@READERS
def test_missing_trailing_newline_is_fine(tmp_path, reader, good):
    assert set(reader(_write(tmp_path, good)).records) == {"ok"}


@READERS
def test_utf8_bom_is_accepted_and_hashed_as_is(tmp_path, reader, good):
    raw = b"\xef\xbb\xbf" + f"{good}\n".encode()
    path = _write(tmp_path, raw)
    data = reader(path)
    assert set(data.records) == {"ok"}
    assert data.sha256 == hashlib.sha256(raw).hexdigest()


@READERS
def test_sha256_is_of_the_file_bytes(tmp_path, reader, good):
    raw = f"{good}\n\n".encode()
    data = reader(_write(tmp_path, raw))
    assert data.sha256 == hashlib.sha256(raw).hexdigest()
    assert len(data.sha256) == 64


@READERS
@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85"])
def test_unicode_line_separators_inside_strings_do_not_split_lines(tmp_path, reader, good, sep):
    # JSON allows these characters raw inside strings; JSONL lines end at "\n" only.
    record = json.loads(good)
    record["test_id"] = f"a{sep}b"
    line = json.dumps(record, ensure_ascii=False)
    assert sep in line
    path = _write(tmp_path, f"{line}\n{good}\n{{bad\n")
    err = _error(reader, path)
    assert err.line == 3
    path.write_text(f"{line}\n{good}\n", encoding="utf-8")
    assert set(reader(path).records) == {f"a{sep}b", "ok"}


def test_non_ascii_ids_round_trip(tmp_path):
    path = _write(tmp_path, '{"test_id": "q\u00e9\u4e2d", "score": 0.1}\n')
    assert read_scores(path).records == {"q\u00e9\u4e2d": 0.1}
