"""The strict config converter: unknown keys and wrong types are errors, all reported at once."""

from __future__ import annotations

import math

import pytest

from ragleaklab_core.config import (
    CalibrateConfig,
    Config,
    PluginRef,
    load_config,
    parse_option_value,
    read_config_file,
)
from ragleaklab_core.errors import ConfigError


def _problems(raw, source="cfg.toml") -> tuple[str, ...]:
    with pytest.raises(ConfigError) as info:
        load_config(raw, source=source)
    err = info.value
    assert err.source == source
    assert err.exit_code == 2
    assert str(err).splitlines()[0] == f"invalid configuration in {source}:"
    assert str(err).splitlines()[1:] == [f"  {p}" for p in err.problems]
    return err.problems


def test_empty_config_is_all_defaults():
    config = load_config({}, source="cfg.toml")
    assert config == Config()
    assert config.calibrate == CalibrateConfig(
        target_fpr=0.01,
        lower_is_worse=False,
        fitter=PluginRef("exact", {}),
        roc_table_max_rows=1001,
        metric=None,
    )


def test_full_config_is_structured():
    raw = {
        "calibrate": {
            "target_fpr": 0.05,
            "lower_is_worse": True,
            "roc_table_max_rows": 11,
            "metric": "poison_rate_at_k",
            "fitter": {"name": "neyman-pearson", "options": {"delta": 0.05, "mode": "x"}},
        }
    }
    c = load_config(raw, source="cfg.toml").calibrate
    assert (c.target_fpr, c.lower_is_worse, c.roc_table_max_rows, c.metric) == (
        0.05,
        True,
        11,
        "poison_rate_at_k",
    )
    assert c.fitter == PluginRef("neyman-pearson", {"delta": 0.05, "mode": "x"})


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, 0.5])
def test_target_fpr_bounds_are_inclusive_and_ints_are_floats(value):
    c = load_config({"calibrate": {"target_fpr": value}}, source="cfg.toml").calibrate
    assert c.target_fpr == value
    assert type(c.target_fpr) is float


CALIBRATE_KEYS = "fitter, lower_is_worse, metric, roc_table_max_rows, target_fpr"
TOP_KEYS = "calibrate, metrics, run, target, thresholds"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (
            {"calibrate": {"nmae": 1}},
            f"unknown key 'nmae'; known keys: {CALIBRATE_KEYS} @ $.calibrate",
        ),
        ({"nmae": 1}, f"unknown key 'nmae'; known keys: {TOP_KEYS} @ $"),
        (
            {"calibrate": {"fitter": {"name": "exact", "optoins": {}}}},
            "unknown key 'optoins' (did you mean 'options'?); known keys: name, options"
            " @ $.calibrate.fitter",
        ),
        # A key one edit from a real one: the misspelt setting must not stay at its default.
        (
            {"run": {"epoch": 3, "max_fail_rat": 0.1}},
            "unknown keys 'epoch' (did you mean 'epochs'?), 'max_fail_rat' (did you mean "
            "'max_fail_rate', 'max_fail_rates'?); known keys: allow_shared_state, concurrency, "
            "epochs, exclude, exclude_tags, executor, markdown_max_chars, "
            "max_consecutive_failures, max_corrected_rate, max_fail_rate, "
            "max_fail_rates, out, packs, rate_limit, ray, reducer, tags, thresholds_file, "
            "tolerate_errors @ $.run",
        ),
        (
            {"thresholds": {"p": {"v": {"threshold": 1, "decision_rul": "x"}}}},
            "unknown key 'decision_rul' (did you mean 'decision_rule'?); known keys: "
            "decision_rule, threshold @ $.thresholds['p']['v']",
        ),
    ],
)
def test_unknown_keys_are_rejected(raw, problem):
    assert _problems(raw) == (problem,)


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        (
            {"target_fpr": "0.05"},
            "invalid value: expected float, got str '0.05' @ $.calibrate.target_fpr",
        ),
        (
            {"target_fpr": True},
            "invalid value: expected float, got bool True @ $.calibrate.target_fpr",
        ),
        (
            {"roc_table_max_rows": True},
            "invalid value: expected int, got bool True @ $.calibrate.roc_table_max_rows",
        ),
        (
            {"roc_table_max_rows": 1.5},
            "invalid value: expected int, got float 1.5 @ $.calibrate.roc_table_max_rows",
        ),
        (
            {"roc_table_max_rows": 11.0},
            "invalid value: expected int, got float 11.0 @ $.calibrate.roc_table_max_rows",
        ),
        (
            {"roc_table_max_rows": "11"},
            "invalid value: expected int, got str '11' @ $.calibrate.roc_table_max_rows",
        ),
        (
            {"lower_is_worse": "false"},
            "invalid value: expected bool, got str 'false' @ $.calibrate.lower_is_worse",
        ),
        (
            {"lower_is_worse": 0},
            "invalid value: expected bool, got int 0 @ $.calibrate.lower_is_worse",
        ),
        ({"metric": 3}, "invalid value: expected str, got int 3 @ $.calibrate.metric"),
        (
            {"fitter": {"name": 3}},
            "invalid value: expected str, got int 3 @ $.calibrate.fitter.name",
        ),
        ({"fitter": {"options": {}}}, "required field missing @ $.calibrate.fitter.name"),
    ],
)
def test_wrong_types_are_not_coerced(section, problem):
    assert _problems({"calibrate": section}) == (problem,)


@pytest.mark.parametrize("value", [-0.1, 1.5, -1, 2, 1.0000001])
def test_target_fpr_outside_unit_interval(value):
    [problem] = _problems({"calibrate": {"target_fpr": value}})
    assert "'target_fpr' must be in [0, 1]" in problem
    assert repr(value) in problem
    assert problem.endswith("@ $.calibrate.target_fpr")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_target_fpr_not_finite(value):
    [problem] = _problems({"calibrate": {"target_fpr": value}})
    assert (
        problem
        == f"invalid value: expected a finite number, got {value!r} @ $.calibrate.target_fpr"
    )


def test_roc_table_max_rows_minimum():
    [problem] = _problems({"calibrate": {"roc_table_max_rows": 2}})
    assert "'roc_table_max_rows' must be >= 3" in problem
    assert problem.endswith("@ $.calibrate.roc_table_max_rows")


def test_bad_plugin_name_is_reported_at_its_path():
    [problem] = _problems({"calibrate": {"fitter": {"name": "Bad Name"}}})
    assert "'Bad Name'" in problem
    assert problem.endswith("@ $.calibrate.fitter.name")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"calibrate": 3}, "invalid value: expected a table, got int 3 @ $.calibrate"),
        (
            {"calibrate": {"fitter": "exact"}},
            "invalid value: expected a table, got str 'exact' @ $.calibrate.fitter",
        ),
        (
            {"calibrate": {"fitter": {"name": "exact", "options": 3}}},
            "expected a mapping @ $.calibrate.fitter.options",
        ),
    ],
)
def test_wrong_table_type(raw, problem):
    assert _problems(raw) == (problem,)


def test_every_problem_is_reported_at_once_with_its_path():
    raw = {
        "nmae": 1,
        "calibrate": {
            "target_fpr": "0.05",
            "roc_table_max_rows": 1.5,
            "lower_is_worse": "no",
            "extra": True,
            "fitter": {"name": "exact", "bogus": 1},
        },
    }
    problems = _problems(raw)
    assert sorted(problems) == sorted(
        [
            f"unknown key 'nmae'; known keys: {TOP_KEYS} @ $",
            f"unknown key 'extra'; known keys: {CALIBRATE_KEYS} @ $.calibrate",
            "unknown key 'bogus'; known keys: name, options @ $.calibrate.fitter",
            "invalid value: expected float, got str '0.05' @ $.calibrate.target_fpr",
            "invalid value: expected int, got float 1.5 @ $.calibrate.roc_table_max_rows",
            "invalid value: expected bool, got str 'no' @ $.calibrate.lower_is_worse",
        ]
    )


def test_every_out_of_range_value_is_reported_at_once_with_its_path():
    problems = _problems({"calibrate": {"target_fpr": 1.5, "roc_table_max_rows": 2}})
    assert len(problems) == 2
    assert [p.rsplit(" @ ", 1)[1] for p in problems] == [
        "$.calibrate.target_fpr",
        "$.calibrate.roc_table_max_rows",
    ]
    assert "'target_fpr' must be in [0, 1] (got 1.5)" in problems[0]
    assert "'roc_table_max_rows' must be >= 3" in problems[1]


# -- parse_option_value -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.6", 0.6),
        ("5", 5),
        ("-3", -3),
        ("true", True),
        ("false", False),
        ('"x"', "x"),
        ("'x y'", "x y"),
        ('"5"', "5"),
        ("[1,2]", [1, 2]),
        ("[1, 2.5]", [1, 2.5]),
        ("{a = 1}", {"a": 1}),
        ("fast", "fast"),
        ("two words", "two words"),
        ("True", "True"),
        ("", ""),
    ],
)
def test_parse_option_value(text, value):
    parsed = parse_option_value(text)
    assert parsed == value
    assert type(parsed) is type(value)


def test_parsed_option_types_meet_the_strict_converter():
    fitter = {"name": "exact", "options": {"k": parse_option_value("5")}}
    ref = load_config({"calibrate": {"fitter": fitter}}, source="flags").calibrate.fitter
    assert ref.options == {"k": 5}
    [problem] = _problems({"calibrate": {"target_fpr": parse_option_value("fast")}}, "flags")
    assert problem == "invalid value: expected float, got str 'fast' @ $.calibrate.target_fpr"


# -- read_config_file ---------------------------------------------------------------------------


def test_read_config_file(tmp_path):
    path = tmp_path / "ragleaklab.toml"
    path.write_text(
        '[calibrate]\ntarget_fpr = 0.2\n\n[calibrate.fitter]\nname = "exact"\noptions = {}\n',
        encoding="utf-8",
    )
    raw = read_config_file(path)
    assert raw == {"calibrate": {"target_fpr": 0.2, "fitter": {"name": "exact", "options": {}}}}
    assert load_config(raw, source=str(path)).calibrate.target_fpr == 0.2


def test_read_config_file_missing(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        read_config_file(path)
    assert info.value.source == str(path)
    assert info.value.problems == ("file not found",)
    assert str(info.value) == f"invalid configuration in {path}:\n  file not found"


def test_read_config_file_directory(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        read_config_file(tmp_path)


def test_read_config_file_bad_toml_names_the_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[calibrate]\ntarget_fpr = 0.1\nfitter = \n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_config_file(path)
    [problem] = info.value.problems
    assert problem.startswith("not valid TOML")
    assert "line 3" in problem
    assert str(path) in str(info.value)


def test_read_config_file_duplicate_key_is_bad_toml(tmp_path):
    path = tmp_path / "dup.toml"
    path.write_text("[calibrate]\ntarget_fpr = 0.1\ntarget_fpr = 0.2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 3"):
        read_config_file(path)


def test_read_config_file_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[calibrate]\nmetric = "caf\xe9"\n')
    with pytest.raises(ConfigError) as info:
        read_config_file(path)
    [problem] = info.value.problems
    assert problem.startswith("not UTF-8 text")
    assert str(path) in str(info.value)


def test_toml_values_keep_their_types_through_the_converter(tmp_path):
    path = tmp_path / "types.toml"
    path.write_text('[calibrate]\ntarget_fpr = "0.05"\nroc_table_max_rows = 1.5\n', "utf-8")
    problems = _problems(read_config_file(path), str(path))
    assert sorted(problems) == [
        "invalid value: expected float, got str '0.05' @ $.calibrate.target_fpr",
        "invalid value: expected int, got float 1.5 @ $.calibrate.roc_table_max_rows",
    ]


def test_a_string_where_a_list_belongs_is_an_error_not_split_into_characters():
    from attrs import frozen

    from ragleaklab_core.config import structure

    @frozen
    class Options:
        kinds: tuple[str, ...] = ("private",)
        sizes: list[int] = [1]  # noqa: RUF008

    assert structure({"kinds": ["a"], "sizes": [2]}, Options, source="s") == Options(("a",), [2])
    with pytest.raises(ConfigError, match=r"expected a list, got str 'private' @ \$\.kinds"):
        structure({"kinds": "private"}, Options, source="s")
    with pytest.raises(ConfigError, match=r"@ \$\.sizes\[1\]"):
        structure({"sizes": [1, "x"]}, Options, source="s")


# -- run.reducer: known, and able to decide a case with the configured epochs -------------------


@pytest.mark.parametrize(
    ("epochs", "spec"),
    [
        (1, "at_least_2"),
        (2, "at_least_3"),
        (2, "pass_at_3"),
        (4, "at_least_5@0.5"),
        (1, "pass_at_2"),
    ],
)
def test_a_counting_reducer_with_k_above_the_epochs_is_refused_at_its_path(epochs, spec):
    [problem] = _problems({"run": {"epochs": epochs, "reducer": spec}})
    message, path = problem.rsplit(" @ ", 1)
    assert path == "$.run.reducer"
    k = int(spec.split("_")[-1].split("@")[0])
    assert f"K={k} > epochs" in message
    assert "can ever" in message and f"run at least {k} epochs" in message
    if spec.startswith("at_least"):
        assert "no case can ever fail" in message


@pytest.mark.parametrize(
    ("epochs", "spec"),
    [(1, "at_least_1"), (3, "at_least_3"), (3, "pass_at_3"), (5, "pass_at_2@0.5"), (1, "max")],
)
def test_a_counting_reducer_with_k_up_to_the_epochs_is_accepted(epochs, spec):
    run = load_config({"run": {"epochs": epochs, "reducer": spec}}, source="cfg.toml").run
    assert (run.epochs, run.reducer) == (epochs, spec)


def test_the_default_single_epoch_refuses_at_least_2_even_when_epochs_is_not_written():
    [problem] = _problems({"run": {"reducer": "at_least_2"}})
    assert problem.endswith("@ $.run.reducer") and "with 1 epoch:" in problem


def test_an_unknown_reducer_is_reported_at_its_path_with_the_valid_forms():
    [problem] = _problems({"run": {"reducer": "nope"}})
    assert problem.endswith("@ $.run.reducer")
    assert "bad reducer 'nope'" in problem and "at_least_<k>" in problem


def test_bad_epochs_and_reducer_are_both_reported_without_a_spurious_k_problem():
    problems = _problems({"run": {"epochs": 0, "reducer": "at_least_3"}})
    assert [p.rsplit(" @ ", 1)[1] for p in problems] == ["$.run.epochs"]
