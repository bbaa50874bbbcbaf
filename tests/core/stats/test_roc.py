"""ROC analysis: DeLong AUC against brute force, the ROC points, the TPR interval and the plot."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr
from scipy.stats import binomtest, mannwhitneyu

from ragleaklab_core import InputError, RagleaklabError
from ragleaklab_core.stats.aggregation import rate_interval
from ragleaklab_core.stats.roc import (
    UNDEFINED_VARIANCE_NOTE,
    ZERO_VARIANCE_NOTE,
    AucResult,
    _delong_components,
    _validated,
    auc_delong,
    roc_points,
    tpr_interval,
)

# The worked example of the calibration-statistics reference (B.9).
POS = [0.9, 0.8, 0.7, 0.55]
NEG = [0.8, 0.6, 0.5, 0.4, 0.3]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _data(pos: list[float], neg: list[float]) -> tuple[np.ndarray, np.ndarray]:
    scores = np.array(pos + neg, dtype=np.float64)
    labels = np.array([True] * len(pos) + [False] * len(neg))
    return scores, labels


def _psi(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """psi(x, y) for every positive-negative pair: 1 if x > y, 1/2 if tied, 0 otherwise."""
    m, n = pos.size, neg.size
    psi = np.empty((m, n))
    for i in range(m):
        for j in range(n):
            psi[i, j] = 1.0 if pos[i] > neg[j] else 0.5 if pos[i] == neg[j] else 0.0
    return psi


def _brute_delong(pos: np.ndarray, neg: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, float]:
    """AUC, V10, V01 and the DeLong variance by the O(mn) double loop (DeLong et al., 1988)."""
    psi = _psi(pos, neg)
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    var = np.var(v10, ddof=1) / pos.size + np.var(v01, ddof=1) / neg.size
    return float(psi.mean()), v10, v01, float(var)


# Scores on a coarse grid produce plenty of ties (within and across classes); plain floats
# produce the untied case.
tied_scores = st.lists(st.integers(0, 6).map(lambda k: k / 4), min_size=2, max_size=25)
free_scores = st.lists(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=2, max_size=25
)
class_pairs = st.one_of(st.tuples(tied_scores, tied_scores), st.tuples(free_scores, free_scores))


# --- the worked example, pinned -----------------------------------------------------------------


def test_worked_example_matches_the_reference() -> None:
    result = auc_delong(*_data(POS, NEG))
    assert result.auc == pytest.approx(0.825, abs=1e-12)
    assert result.variance == pytest.approx(0.029167 / 4 + 0.075 / 5, abs=1e-6)
    assert result.to_dict()["variance"] == 0.022292
    assert result.se == pytest.approx(0.1493, abs=5e-5)
    assert result.lower == pytest.approx(0.532, abs=5e-4)
    assert result.upper == 1.0  # 0.825 + 1.96 * 0.1493 = 1.118, clipped
    assert (result.method, result.confidence, result.note) == ("delong", 0.95, None)
    assert (result.n_positive, result.n_negative) == (4, 5)


def test_worked_example_structural_components() -> None:
    s, y, m, n = _validated(*_data(POS, NEG))
    auc, v10, v01 = _delong_components(s, y, m, n)
    # Components come out in ascending score order.
    assert auc == pytest.approx(0.825)
    np.testing.assert_allclose(v10, [0.6, 0.8, 0.9, 1.0])
    np.testing.assert_allclose(v01, [1.0, 1.0, 1.0, 0.75, 0.375])
    assert np.var(v10, ddof=1) == pytest.approx(0.029167, abs=1e-6)
    assert np.var(v01, ddof=1) == pytest.approx(0.075, abs=1e-12)


def test_to_dict_rounds_to_six_decimals_in_a_fixed_key_order() -> None:
    d = auc_delong(*_data(POS, NEG)).to_dict()
    assert list(d) == [
        "auc",
        "variance",
        "se",
        "lower",
        "upper",
        "confidence",
        "method",
        "n_positive",
        "n_negative",
        "note",
    ]
    assert d == {
        "auc": 0.825,
        "variance": 0.022292,
        "se": 0.149304,
        "lower": 0.53237,
        "upper": 1.0,
        "confidence": 0.95,
        "method": "delong",
        "n_positive": 4,
        "n_negative": 5,
        "note": None,
    }


def test_a_narrower_confidence_gives_a_narrower_unclipped_interval() -> None:
    r90 = auc_delong(*_data(POS, NEG), confidence=0.90)
    z90 = 1.6448536269514722
    assert r90.se is not None
    assert r90.lower == pytest.approx(0.825 - z90 * r90.se)
    assert r90.upper == 1.0  # 0.825 + 0.2456 still exceeds 1
    r50 = auc_delong(*_data(POS, NEG), confidence=0.50)
    assert r50.se is not None
    assert r50.upper == pytest.approx(0.825 + 0.6744897501960817 * r50.se)
    assert r50.upper < 1.0
    assert r90.lower < r50.lower


# --- against brute force ----------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(pair=class_pairs)
def test_auc_and_variance_match_the_double_loop(pair: tuple[list[float], list[float]]) -> None:
    pos, neg = (np.array(c, dtype=np.float64) for c in pair)
    auc, v10, v01, var = _brute_delong(pos, neg)
    result = auc_delong(*_data(list(pos), list(neg)))
    assert result.auc == pytest.approx(auc, abs=1e-12)
    assert result.variance == pytest.approx(var, rel=1e-9, abs=1e-15)
    assert result.se == pytest.approx(math.sqrt(var), rel=1e-9, abs=1e-12)
    s, y, m, n = _validated(*_data(list(pos), list(neg)))
    _, fast10, fast01 = _delong_components(s, y, m, n)
    np.testing.assert_allclose(fast10, np.sort(v10), atol=1e-12)
    np.testing.assert_allclose(np.sort(fast01), np.sort(v01), atol=1e-12)
    if var > 1e-15:
        half = 1.959963984540054 * math.sqrt(var)
        assert result.lower == pytest.approx(max(0.0, auc - half), abs=1e-9)
        assert result.upper == pytest.approx(min(1.0, auc + half), abs=1e-9)
        assert result.note is None


@settings(max_examples=200, deadline=None)
@given(pair=class_pairs)
def test_auc_is_the_mann_whitney_u_over_mn(pair: tuple[list[float], list[float]]) -> None:
    pos, neg = pair
    u = mannwhitneyu(pos, neg, alternative="two-sided", method="asymptotic").statistic
    assert auc_delong(*_data(pos, neg)).auc == pytest.approx(u / (len(pos) * len(neg)), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(pair=class_pairs, data=st.data())
def test_input_order_does_not_matter(
    pair: tuple[list[float], list[float]], data: st.DataObject
) -> None:
    s, y = _data(*pair)
    perm = np.array(data.draw(st.permutations(range(s.size))))
    a, b = auc_delong(s, y), auc_delong(s[perm], y[perm])
    assert (a.auc, a.variance, a.lower, a.upper) == (b.auc, b.variance, b.lower, b.upper)


@settings(max_examples=200, deadline=None)
@given(pair=class_pairs)
def test_both_directions(pair: tuple[list[float], list[float]]) -> None:
    s, y = _data(*pair)
    up = auc_delong(s, y)
    down = auc_delong(s, y, higher_is_worse=False)
    # Lower-is-worse is the same as negating the scores...
    mirrored = auc_delong(-s, y)
    assert (down.auc, down.variance) == (mirrored.auc, mirrored.variance)
    # ...and reverses the AUC with the same variance.
    assert down.auc == pytest.approx(1.0 - up.auc, abs=1e-12)
    assert down.variance == pytest.approx(up.variance, rel=1e-9, abs=1e-15)
    # Swapping the classes does the same.
    swapped = auc_delong(s, ~y)
    assert swapped.auc == pytest.approx(1.0 - up.auc, abs=1e-12)
    assert (swapped.n_positive, swapped.n_negative) == (up.n_negative, up.n_positive)


def test_ties_count_one_half() -> None:
    # Every pair tied except one win out of 4: AUC = (1 + 3 * 0.5) / 4.
    assert auc_delong([1.0, 2.0, 1.0, 1.0], [True, True, False, False]).auc == 0.75
    assert auc_delong([0.0, 0.0, 1.0, 1.0], [True, False, True, False]).auc == 0.5


# --- degenerate cases ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pos", "neg", "auc"),
    [
        ([0.9, 0.8, 0.7], [0.1, 0.2], 1.0),  # perfect separation
        ([0.1, 0.2], [0.9, 0.8, 0.7], 0.0),  # perfectly inverted
        ([0.5, 0.5, 0.5], [0.5, 0.5], 0.5),  # all equal
        ([0.6, 0.6], [0.2, 0.2, 0.2], 1.0),  # each class tied, one cut (exact 1/3 steps)
    ],
)
def test_zero_variance_collapses_the_interval_and_says_so(
    pos: list[float], neg: list[float], auc: float
) -> None:
    result = auc_delong(*_data(pos, neg))
    assert (result.auc, result.variance, result.se) == (auc, 0.0, 0.0)
    assert result.lower == result.upper == auc
    assert result.note == ZERO_VARIANCE_NOTE


@pytest.mark.parametrize(("pos", "neg"), [([0.9], [0.1, 0.5]), ([0.9, 0.2], [0.1]), ([1.0], [0.0])])
def test_one_case_in_a_class_leaves_the_variance_undefined(
    pos: list[float], neg: list[float]
) -> None:
    result = auc_delong(*_data(pos, neg))
    assert result.variance is None and result.se is None
    assert (result.lower, result.upper) == (0.0, 1.0)
    assert result.note == UNDEFINED_VARIANCE_NOTE
    assert result.to_dict()["variance"] is None
    assert result.auc == pytest.approx(_psi(np.array(pos), np.array(neg)).mean())


@pytest.mark.parametrize("labels", [[True, True, True], [False, False, False]])
def test_a_missing_class_is_an_input_error(labels: list[bool]) -> None:
    with pytest.raises(InputError, match="needs both classes"):
        auc_delong([0.1, 0.2, 0.3], labels)
    with pytest.raises(InputError, match="needs both classes"):
        roc_points([0.1, 0.2, 0.3], labels)


@pytest.mark.parametrize(
    ("scores", "labels", "match"),
    [
        ([0.1, float("nan")], [True, False], "finite"),
        ([0.1, float("inf")], [True, False], "finite"),
        ([0.1, 0.2], [True], "equal length"),
        ([[0.1, 0.2]], [[True, False]], "1-D"),
        ([0.1, 0.2], ["positive", "negative"], "booleans"),
        ([0.1, 0.2], [2, 0], "booleans"),
        ([], [], "needs both classes"),
    ],
)
def test_bad_inputs_are_input_errors(scores: Any, labels: Any, match: str) -> None:
    with pytest.raises(InputError, match=match):
        auc_delong(scores, labels)


def test_integer_labels_are_accepted() -> None:
    assert auc_delong([0.9, 0.1], [1, 0]).auc == 1.0


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 95, True])
def test_confidence_must_be_in_the_open_unit_interval(confidence: Any) -> None:
    with pytest.raises(InputError, match="confidence"):
        auc_delong(*_data(POS, NEG), confidence=confidence)
    with pytest.raises(InputError, match="confidence"):
        tpr_interval(1, 2, confidence=confidence)


# --- coverage, simulated ---------------------------------------------------------------------


def test_delong_interval_covers_the_true_auc_about_95_percent_of_the_time() -> None:
    # N(1, 1) positives against N(0, 1) negatives: the true AUC is Phi(1 / sqrt(2)).
    true_auc = float(ndtr(1 / math.sqrt(2)))
    rng = np.random.default_rng(20240504)
    labels = np.r_[np.ones(100, dtype=bool), np.zeros(100, dtype=bool)]
    covered = 0
    for _ in range(500):
        scores = np.r_[rng.normal(1.0, 1.0, 100), rng.normal(0.0, 1.0, 100)]
        result = auc_delong(scores, labels)
        covered += result.lower <= true_auc <= result.upper
    assert 0.90 <= covered / 500 <= 0.99


# --- roc_points -------------------------------------------------------------------------------


def _brute_sweep(
    s: np.ndarray, y: np.ndarray, higher_is_worse: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One point per distinct score, worst first, each counted with the rule directly."""
    distinct = sorted(set(s.tolist()), reverse=higher_is_worse)
    fpr, tpr, thr = [0.0], [0.0], [math.inf if higher_is_worse else -math.inf]
    for t in distinct:
        flagged = s >= t if higher_is_worse else s <= t
        fpr.append(np.count_nonzero(flagged & ~y) / np.count_nonzero(~y))
        tpr.append(np.count_nonzero(flagged & y) / np.count_nonzero(y))
        thr.append(t)
    return np.array(fpr), np.array(tpr), np.array(thr)


def test_roc_points_of_the_worked_example() -> None:
    fpr, tpr, thr = roc_points(*_data(POS, NEG))
    np.testing.assert_array_equal(thr, [math.inf, 0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3])
    np.testing.assert_allclose(fpr, [0, 0, 0.2, 0.2, 0.4, 0.4, 0.6, 0.8, 1])
    np.testing.assert_allclose(tpr, [0, 0.25, 0.5, 0.75, 0.75, 1, 1, 1, 1])
    assert fpr.dtype == tpr.dtype == thr.dtype == np.float64


def test_roc_points_keep_collinear_points() -> None:
    # The B.1 example: drop_intermediate=True would drop the (2/3, 2/3) point at t = 0.8.
    fpr, tpr, thr = roc_points([0.9, 0.9, 0.8, 0.8, 0.7, 0.7], [1, 0, 1, 0, 1, 0])
    np.testing.assert_array_equal(thr, [math.inf, 0.9, 0.8, 0.7])
    np.testing.assert_allclose(fpr, [0, 1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(tpr, [0, 1 / 3, 2 / 3, 1])


@settings(max_examples=300, deadline=None)
@given(pair=class_pairs, higher_is_worse=st.booleans())
def test_roc_points_match_a_brute_force_sweep(
    pair: tuple[list[float], list[float]], higher_is_worse: bool
) -> None:
    s, y = _data(*pair)
    fpr, tpr, thr = roc_points(s, y, higher_is_worse=higher_is_worse)
    bf, bt, bthr = _brute_sweep(s, y, higher_is_worse)
    np.testing.assert_array_equal(thr, bthr)
    np.testing.assert_allclose(fpr, bf, atol=1e-15)
    np.testing.assert_allclose(tpr, bt, atol=1e-15)
    assert (fpr[-1], tpr[-1]) == (1.0, 1.0)
    # The trapezoidal area under the complete curve is the AUC, ties included.
    area = float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))
    assert area == pytest.approx(auc_delong(s, y, higher_is_worse=higher_is_worse).auc, abs=1e-9)


# --- tpr_interval -----------------------------------------------------------------------------


def test_tpr_interval_pinned() -> None:
    d = tpr_interval(45, 50)
    assert list(d) == ["method", "confidence", "lower", "upper", "true_positives", "n_positive"]
    assert d["method"] == "clopper-pearson"
    assert (d["true_positives"], d["n_positive"], d["confidence"]) == (45, 50, 0.95)
    # Reference (truncated to 5 decimals): (0.78186, 0.96672).
    assert d["lower"] == pytest.approx(0.78186, abs=1e-5)
    assert d["upper"] == pytest.approx(0.96672, abs=1e-5)
    exact = binomtest(45, 50).proportion_ci(confidence_level=0.95, method="exact")
    assert (d["lower"], d["upper"]) == (round(exact.low, 6), round(exact.high, 6))


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 400),
    confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_tpr_interval_agrees_with_rate_interval_and_scipy(
    data: st.DataObject, n: int, confidence: float
) -> None:
    tp = data.draw(st.integers(0, n))
    d = tpr_interval(tp, n, confidence)
    same = rate_interval(tp, n, confidence).to_dict()
    assert (d["lower"], d["upper"]) == (same["lower"], same["upper"])
    exact = binomtest(tp, n).proportion_ci(confidence_level=confidence, method="exact")
    assert d["lower"] == pytest.approx(exact.low, abs=1e-6)
    assert d["upper"] == pytest.approx(exact.high, abs=1e-6)


def test_tpr_interval_edges() -> None:
    assert (tpr_interval(0, 10)["lower"], tpr_interval(10, 10)["upper"]) == (0.0, 1.0)
    assert tpr_interval(0, 10)["upper"] == round(1 - 0.025 ** (1 / 10), 6)
    assert tpr_interval(np.int64(3), np.int64(4))["true_positives"] == 3


@pytest.mark.parametrize(("tp", "n"), [(0, 0), (5, 4), (-1, 4), (1.0, 4), (True, 4)])
def test_tpr_interval_rejects_bad_counts(tp: Any, n: Any) -> None:
    with pytest.raises(InputError):
        tpr_interval(tp, n)


# --- the plot ---------------------------------------------------------------------------------


def _plot(
    path: Path,
    *,
    chosen: tuple[float, float] | None = (0.2, 0.75),
    title: str = "relevance-hijack: poison_rate_at_k",
) -> bytes:
    from ragleaklab_core.calibration.plot import write_roc_plot

    s, y = _data(POS, NEG)
    fpr, tpr, _ = roc_points(s, y)
    write_roc_plot(path, fpr, tpr, auc=auc_delong(s, y), chosen=chosen, title=title)
    return path.read_bytes()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_plot_writes_a_png_byte_identical_across_calls(tmp_path: Path) -> None:
    first = _plot(tmp_path / "a.png")
    second = _plot(tmp_path / "b.png")
    assert first.startswith(PNG_MAGIC)
    assert _png_size(first) == (600, 600)
    assert first == second
    assert b"Software" not in first and b"matplotlib" not in first
    # Only the PNG itself is left behind (the write goes through a temporary file).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png"]


def test_plot_shows_the_chosen_point_and_the_title(tmp_path: Path) -> None:
    base = _plot(tmp_path / "a.png")
    assert _plot(tmp_path / "b.png", chosen=None) != base
    assert _plot(tmp_path / "c.png", chosen=(0.4, 1.0)) != base
    assert _plot(tmp_path / "d.png", title="other") != base


def test_plot_is_byte_identical_in_another_process(tmp_path: Path) -> None:
    here = _plot(tmp_path / "here.png")
    code = (
        "import sys; from pathlib import Path; "
        "sys.path.insert(0, sys.argv[2]); "
        "import test_roc; test_roc._plot(Path(sys.argv[1]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "there.png"), str(Path(__file__).parent)],
        check=True,
        env=env,
    )
    assert (tmp_path / "there.png").read_bytes() == here


def test_plot_handles_degenerate_intervals(tmp_path: Path) -> None:
    from ragleaklab_core.calibration.plot import write_roc_plot

    for pos, neg in (([0.9, 0.8], [0.1, 0.2]), ([0.9], [0.1, 0.2])):
        s, y = _data(pos, neg)
        fpr, tpr, _ = roc_points(s, y)
        out = tmp_path / f"{len(pos)}.png"
        write_roc_plot(out, fpr, tpr, auc=auc_delong(s, y), chosen=None, title="t")
        assert out.read_bytes().startswith(PNG_MAGIC)


def test_plot_rejects_a_bad_curve(tmp_path: Path) -> None:
    from ragleaklab_core.calibration.plot import write_roc_plot

    auc = auc_delong(*_data(POS, NEG))
    for fpr, tpr in (([0, 1], [0, 0.5, 1]), ([0, 1.5], [0, 1]), ([0.0], [0.0])):
        with pytest.raises(InputError):
            write_roc_plot(tmp_path / "x.png", fpr, tpr, auc=auc, chosen=None, title="t")
    assert not list(tmp_path.iterdir())


def test_plot_without_matplotlib_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragleaklab_core.calibration.plot import write_roc_plot

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    auc = auc_delong(*_data(POS, NEG))
    with pytest.raises(RagleaklabError) as info:
        write_roc_plot(tmp_path / "x.png", [0, 1], [0, 1], auc=auc, chosen=None, title="t")
    assert str(info.value) == "--plot needs matplotlib: pip install 'ragleaklab[plot]'"
    assert info.value.exit_code == 2
    assert isinstance(info.value.__cause__, ImportError)
    assert not list(tmp_path.iterdir())


def test_auc_result_is_frozen() -> None:
    result = auc_delong(*_data(POS, NEG))
    assert isinstance(result, AucResult)
    with pytest.raises(AttributeError):
        result.auc = 0.5  # type: ignore[misc]
