"""How ``report.json`` is written: indented as ``json.dumps(indent=2)`` indents it, except that
each case of a pack's ``case_results`` (thousands of them) is on one line."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ragleaklab_core.run.report import dumps

keys = st.text(max_size=6) | st.sampled_from(["case_results", "packs"])
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=30,
)


def _without_case_results(value: Any) -> bool:
    if isinstance(value, dict):
        return "case_results" not in value and all(map(_without_case_results, value.values()))
    if isinstance(value, list):
        return all(map(_without_case_results, value))
    return True


@given(document=st.dictionaries(keys, json_values, max_size=5))
def test_the_report_reads_back_and_is_indented_as_json_indents_it(document):
    text = dumps(document)
    assert text.endswith("\n") and json.loads(text) == document
    if _without_case_results(document):
        assert text == json.dumps(document, indent=2, ensure_ascii=False) + "\n"


@given(cases=st.lists(st.dictionaries(st.text(max_size=4), json_values, max_size=4), max_size=6))
def test_each_case_is_one_line(cases):
    document = {"packs": [{"name": "p", "case_results": cases, "after": [1]}]}
    lines = dumps(document).split("\n")  # not splitlines: a case may hold U+0085 or U+2028
    start = lines.index('      "case_results": [') if cases else None
    if start is None:
        assert '      "case_results": [],' in lines
        return
    shown = lines[start + 1 : start + 1 + len(cases)]
    assert [json.loads(line.strip().removesuffix(",")) for line in shown] == cases
    assert lines[start + 1 + len(cases)] == "      ],"
