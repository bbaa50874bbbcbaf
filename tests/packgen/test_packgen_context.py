"""The context-extraction pack's drafting: every attack template is an extraction request of its
own trick and language, no benign template is one, and list and string metric options are
written to pack.toml as TOML."""

from __future__ import annotations

import tomllib

import pytest
from ragleaklab_plugins.targets.reference.extraction import recognise_extraction

from tests.support.packgen import packgen

context = packgen("context_extraction")
output = packgen("output")
QUESTION = "How long are backups of the Nightjar database retained?"


@pytest.mark.parametrize(
    ("trick", "language", "template"),
    [
        (trick, language, template)
        for trick, table in sorted(context.TRICKS.items())
        for language, templates in sorted(table.items())
        for template in templates
    ],
)
def test_every_attack_template_is_a_request_of_its_trick_and_language(trick, language, template):
    for spoof in ("", *context.AUTHORITY):
        found = recognise_extraction(spoof + template.format(q=QUESTION))
        assert found is not None, template
        assert (found.trick, found.language) == (trick, language)
        assert found.authority is bool(spoof)


@pytest.mark.parametrize("template", [*context.LOOK_ALIKES, *context.QUOTES])
def test_no_benign_template_is_a_request(template):
    assert recognise_extraction(template.format(q=QUESTION)) is None


@pytest.mark.parametrize(
    "value",
    [
        8,
        0.5,
        True,
        "plain",
        'quotes " and \\ backslash\nand a newline, ünïcode',
        ["legit", "private"],
        [],
        ("a", 1),
    ],
)
def test_metric_option_values_round_trip_through_toml(value):
    parsed = tomllib.loads(f"x = {output.toml_value(value)}")["x"]
    assert parsed == (list(value) if isinstance(value, tuple) else value)
    # Integers keep the bytes the existing manifests were written with.
    assert output.toml_value(8) == "8"


def test_an_option_with_no_toml_form_is_refused():
    with pytest.raises(TypeError, match="no TOML form"):
        output.toml_value({"a": 1})
