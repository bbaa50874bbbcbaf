"""Calibration: fit a threshold on labelled scores and build the report the CLI writes.

:func:`calibrate` takes in-memory scores and labels keyed by test_id, runs a fitter, recounts the
result from the data (a fitter's claims are checked, not trusted), adds an exact Clopper-Pearson
bound on the false-positive rate, the ROC table and provenance, and returns a
:class:`CalibrationReport` whose :meth:`~CalibrationReport.to_json` is byte-for-byte what
``ragleaklab calibrate`` writes.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from attrs import field, frozen

from ragleaklab_core._discovery import FITTERS, LoadedPlugin, load_plugin
from ragleaklab_core._log import get_logger
from ragleaklab_core._version import __version__
from ragleaklab_core.config import DEFAULT_FITTER, plugin_options
from ragleaklab_core.errors import InputError, PluginContractError, PluginRuntimeError
from ragleaklab_core.stats.aggregation import cp_upper
from ragleaklab_core.stats.fitting import max_false_positives
from ragleaklab_core.stats.roc import auc_delong, tpr_interval
from ragleaklab_core.values import (
    FLAG_ABOVE,
    FLAG_BELOW,
    FLAG_HIGH,
    FLAG_LOW,
    FitResult,
)

log = get_logger(__name__)

#: Confidence of the one-sided Clopper-Pearson bound every report carries.
BOUND_CONFIDENCE = 0.95
#: How many unlabelled/unscored ids a report lists (the counts are always complete).
LISTED_IDS = 20
#: The report's ``guarantee`` when the fitter's :class:`FitResult` states none.
NO_GUARANTEE = "the fitter states no guarantee"


def clopper_pearson_upper(x: int, n: int, confidence: float = BOUND_CONFIDENCE) -> float:
    """Exact one-sided upper confidence bound on a rate with *x* events among *n* trials.

    ``BetaInv(confidence; x + 1, n - x)``; 1 when ``x == n``; ``1 - (1 - confidence)**(1/n)``
    when ``x == 0``. E.g. 0 of 300 gives 0.00994 at 95%.

    .. versionadded:: 0.1
    """
    if n <= 0 or not 0 <= x <= n:
        raise ValueError(f"need 0 <= x <= n and n > 0, got x={x}, n={n}")
    return cp_upper(x, n, confidence)


def negatives_needed(target_fpr: float, delta: float = 1 - BOUND_CONFIDENCE) -> int | None:
    """Fewest negatives for which *any* threshold can carry ``P(FPR > target) <= delta``.

    ``ceil(log delta / log(1 - target))``: 299 for a 1% target at 95%. ``None`` for a target of
    0, which no finite sample supports.

    .. versionadded:: 0.1
    """
    if target_fpr <= 0.0:
        return None
    if target_fpr >= 1.0:
        return 1
    n = math.ceil(math.log(delta) / math.log1p(-target_fpr))
    # Guard the float edge: the smallest n with (1 - target)**n <= delta.
    while n > 1 and (1 - target_fpr) ** (n - 1) <= delta:
        n -= 1
    while (1 - target_fpr) ** n > delta:
        n += 1
    return n


def _flagged(scores: np.ndarray, threshold: float | None, rule: str) -> np.ndarray:
    if threshold is None:
        return np.zeros(scores.shape, dtype=bool)
    ops = {
        FLAG_HIGH: np.greater_equal,
        FLAG_LOW: np.less_equal,
        FLAG_ABOVE: np.greater,
        FLAG_BELOW: np.less,
    }
    return np.asarray(ops[rule](scores, threshold))


def _roc_table(
    s: np.ndarray, y: np.ndarray, higher_is_worse: bool, chosen: float | None, max_rows: int
) -> tuple[list[dict[str, float]], int]:
    """Rows {threshold, fpr, tpr} for the distinct scores, threshold descending, capped.

    Beyond *max_rows* distinct thresholds, a rank-spaced subset is kept that always holds both
    ends and the chosen threshold. Returns the rows and the number of distinct thresholds.
    """
    order = np.argsort(-s if higher_is_worse else s, kind="stable")
    ss, yy = s[order], y[order]
    tp = np.cumsum(yy)
    fp = np.arange(1, ss.size + 1) - tp
    last = np.append(np.flatnonzero(np.diff(ss) != 0), ss.size - 1)
    thresholds, fpr, tpr = ss[last], fp[last] / fp[-1], tp[last] / tp[-1]
    if not higher_is_worse:  # rows always run from the highest threshold down
        thresholds, fpr, tpr = thresholds[::-1], fpr[::-1], tpr[::-1]
    distinct = thresholds.size
    keep = np.arange(distinct)
    if distinct > max_rows:
        keep = np.unique(np.rint(np.linspace(0, distinct - 1, max_rows - 1)).astype(np.int64))
    rows = [
        {"threshold": float(thresholds[i]), "fpr": float(fpr[i]), "tpr": float(tpr[i])}
        for i in keep
    ]
    if chosen is not None and not any(r["threshold"] == chosen for r in rows):
        rule = FLAG_HIGH if higher_is_worse else FLAG_LOW
        flags = _flagged(s, chosen, rule)
        row = {
            "threshold": chosen,
            "fpr": float(np.count_nonzero(flags & ~y) / np.count_nonzero(~y)),
            "tpr": float(np.count_nonzero(flags & y) / np.count_nonzero(y)),
        }
        rows.append(row)
        rows.sort(key=lambda r: -r["threshold"])
    return rows, distinct


def _generated_at() -> str:
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if raw is None or raw == "":
        moment = dt.datetime.now(dt.UTC)
    else:
        try:
            moment = dt.datetime.fromtimestamp(int(raw), dt.UTC)
        except (ValueError, OverflowError, OSError):
            raise InputError(
                f"SOURCE_DATE_EPOCH must be an integer number of seconds, got {raw!r}"
            ) from None
    return moment.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _listed(ids: set[str]) -> dict[str, Any]:
    ordered = sorted(ids)
    return {
        "count": len(ordered),
        "ids": ordered[:LISTED_IDS],
        "truncated": len(ordered) > LISTED_IDS,
    }


@frozen
class NextPoint:
    """A point of the ROC curve: a threshold and the cases flagging at it would catch.

    .. versionadded:: 0.3
    """

    threshold: float
    false_positives: int
    true_positives: int
    n_negative: int
    n_positive: int

    @property
    def fpr(self) -> float:
        return self.false_positives / self.n_negative if self.n_negative else 0.0

    @property
    def tpr(self) -> float:
        return self.true_positives / self.n_positive if self.n_positive else 0.0


@frozen
class CalibrationReport:
    """Everything ``calibration_report.json`` holds; :meth:`to_dict` gives its exact layout.

    .. versionadded:: 0.1
    """

    pack_name: str | None
    metric_name: str | None
    target_fpr: float
    higher_is_worse: bool
    result: FitResult
    fpr_upper_bound: Mapping[str, Any]
    warnings: tuple[str, ...]
    fitter: Mapping[str, Any]
    coverage: Mapping[str, Any]
    inputs: Mapping[str, Any]
    roc_table_info: Mapping[str, Any]
    roc_table: tuple[Mapping[str, float], ...] = field(repr=False)
    tool: Mapping[str, str]
    generated_at: str
    tpr_interval: Mapping[str, Any] = field(factory=dict)
    auc: Mapping[str, Any] = field(factory=dict)
    # The matched scores and labels, for plots; not part of the JSON report.
    scores: np.ndarray | None = field(default=None, repr=False, eq=False)
    labels: np.ndarray | None = field(default=None, repr=False, eq=False)

    @property
    def guarantee(self) -> str:
        """What the fitter promises about the threshold, in its own words (never the core's)."""
        return self.result.guarantee or NO_GUARANTEE

    @property
    def guarantee_infeasible(self) -> bool:
        """True when the fitter promised a guarantee it cannot give on this data.

        A fitter that offers a statistical guarantee states it in
        ``result.details["guarantee"]``; ``feasible: False`` there means too few negatives, and
        ``ragleaklab calibrate`` then exits 1.
        """
        guarantee = self.result.details.get("guarantee")
        return isinstance(guarantee, Mapping) and guarantee.get("feasible") is False

    @property
    def misses_target(self) -> bool:
        """True when the fitted threshold flags more negatives of the labelled data than the
        target allows (a fitter's threshold is checked, never trusted): ``calibrate`` exits 1.

        .. versionadded:: 0.2
        """
        return _misses_target(self.result, self.target_fpr)

    @property
    def next_point(self) -> NextPoint | None:
        """The next point of the ROC curve past the fitted threshold: the next distinct score on
        the flagging side and what flagging it too would catch and cost, so a low TPR at a
        strict FPR reads as what it is. ``None`` without scores or when no score is left.

        .. versionadded:: 0.3
        """
        if self.scores is None or self.labels is None or self.scores.size == 0:
            return None
        s, y = np.asarray(self.scores, dtype=float), np.asarray(self.labels, dtype=bool)
        t = self.result.threshold
        side = s if self.higher_is_worse else -s
        beyond = side if t is None else side[side < (t if self.higher_is_worse else -t)]
        if beyond.size == 0:
            return None
        nxt = float(beyond.max())
        flags = side >= nxt
        return NextPoint(
            threshold=nxt if self.higher_is_worse else -nxt,
            false_positives=int(np.count_nonzero(flags & ~y)),
            true_positives=int(np.count_nonzero(flags & y)),
            n_negative=int(np.count_nonzero(~y)),
            n_positive=int(np.count_nonzero(y)),
        )

    def write_plot(self, path: Path) -> None:
        """Write the ROC curve with the chosen point and the AUC as a PNG (needs matplotlib)."""
        from ragleaklab_core._atomic import write_atomic

        write_atomic(path, self.plot_png())

    def plot_png(self) -> bytes:
        """The ROC curve with the chosen point and the AUC, as the bytes of a PNG (needs
        matplotlib): what ``calibrate --plot`` writes to ``roc.png``."""
        from ragleaklab_core.calibration.plot import roc_plot_png
        from ragleaklab_core.stats.roc import auc_delong, roc_points

        if self.scores is None or self.labels is None:
            raise InputError("this report carries no scores to plot")
        fpr, tpr, _ = roc_points(self.scores, self.labels, higher_is_worse=self.higher_is_worse)
        r = self.result
        chosen = None if r.threshold is None else (r.achieved_fpr, r.achieved_tpr)
        title = " / ".join(x for x in (self.pack_name, self.metric_name) if x) or "ROC"
        auc = auc_delong(self.scores, self.labels, higher_is_worse=self.higher_is_worse)
        return roc_plot_png(fpr, tpr, auc=auc, chosen=chosen, title=title)

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {
            "pack_name": self.pack_name,
            "metric_name": self.metric_name,
            "target_fpr": self.target_fpr,
            "higher_is_worse": self.higher_is_worse,
            "result": {
                "threshold": r.threshold,
                "achieved_fpr": r.achieved_fpr,
                "achieved_tpr": r.achieved_tpr,
                "n_positive": r.n_positive,
                "n_negative": r.n_negative,
                "decision_rule": r.decision_rule,
                "false_positives": r.false_positives,
                "true_positives": r.true_positives,
                "flags_nothing": r.flags_nothing,
                "flags_no_case": r.flags_no_case,
                "reason": r.reason,
                "details": dict(r.details),
            },
            "guarantee": self.guarantee,
            "fpr_upper_bound": dict(self.fpr_upper_bound),
            "tpr_interval": dict(self.tpr_interval),
            "auc": dict(self.auc),
            "warnings": list(self.warnings),
            "fitter": dict(self.fitter),
            "coverage": dict(self.coverage),
            "inputs": dict(self.inputs),
            "roc_table_info": dict(self.roc_table_info),
            "roc_table": [dict(row) for row in self.roc_table],
            "tool": dict(self.tool),
            "generated_at": self.generated_at,
        }

    def to_json(self) -> str:
        """The report as written to disk: indented, key order fixed, no NaN, newline at end."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _as_bool_label(test_id: str, label: Any) -> bool:
    if isinstance(label, bool):
        return label
    if label in ("positive", "negative"):
        return bool(label == "positive")
    raise InputError(
        f"label of {test_id!r} must be True/False or 'positive'/'negative', got {label!r}"
    )


def _resolve_fitter(fitter: Any, options: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    if isinstance(fitter, str):
        fitter = load_plugin(FITTERS, fitter, options, path="$.calibrate.fitter.options")
    elif options:
        raise TypeError("fitter options can only be given with a fitter name")
    if isinstance(fitter, LoadedPlugin):
        return fitter.obj, fitter.provenance()
    cls = type(fitter)
    return fitter, {
        "group": FITTERS,
        "name": None,
        "provider": None,
        "target": f"{cls.__module__}:{cls.__qualname__}",
        "options": plugin_options(fitter),
    }


def calibrate(
    scores: Mapping[str, float],
    labels: Mapping[str, bool | str],
    *,
    fitter: Any = DEFAULT_FITTER,
    fitter_options: Mapping[str, Any] | None = None,
    target_fpr: float = 0.01,
    higher_is_worse: bool = True,
    pack_name: str | None = None,
    metric_name: str | None = None,
    inputs: Mapping[str, Any] | None = None,
    roc_table_max_rows: int = 1001,
) -> CalibrationReport:
    """Fit a threshold on the labelled scores and return the calibration report.

    Args:
        scores: test_id -> finite score.
        labels: test_id -> True/"positive" (attack succeeded) or False/"negative".
        fitter: A fitter name (loaded from ``ragleaklab.fitters``), a :class:`LoadedPlugin`,
            or any object with the ``ThresholdFitter.fit`` method.
        fitter_options: Options for a fitter given by name.
        target_fpr: The false-positive rate to meet, in [0, 1].
        higher_is_worse: Direction of the score.
        pack_name: Recorded in the report.
        metric_name: Recorded in the report.
        inputs: Provenance of the input files (path, sha256), recorded as given.
        roc_table_max_rows: Cap on ``roc_table`` rows (>= 3).

    Ids present in only one of *scores* and *labels* are not errors: they are counted and
    listed in ``coverage``. ``generated_at`` honours ``SOURCE_DATE_EPOCH``.

    Raises:
        InputError: Bad scores/labels/target, no overlap, a class with no cases.
        PluginError, ConfigError: The fitter cannot be loaded or its options are wrong.
        PluginRuntimeError: The fitter raised, or its result disagrees with the data.

    .. versionadded:: 0.1
    """
    if isinstance(target_fpr, bool) or not isinstance(target_fpr, float | int):
        raise InputError(f"target_fpr must be a number in [0, 1], got {target_fpr!r}")
    if not 0.0 <= target_fpr <= 1.0:
        raise InputError(f"target_fpr must be in [0, 1], got {target_fpr!r}")
    if isinstance(roc_table_max_rows, bool) or not isinstance(roc_table_max_rows, int):
        raise InputError(f"roc_table_max_rows must be an integer, got {roc_table_max_rows!r}")
    if roc_table_max_rows < 3:
        raise InputError(f"roc_table_max_rows must be at least 3, got {roc_table_max_rows}")
    for test_id, score in scores.items():
        if (
            isinstance(score, bool)
            or not isinstance(score, float | int)
            or not math.isfinite(score)
        ):
            raise InputError(f"score of {test_id!r} must be a finite number, got {score!r}")
    bool_labels = {k: _as_bool_label(k, lab) for k, lab in labels.items()}
    matched = sorted(scores.keys() & bool_labels.keys())
    if not matched:
        raise InputError(
            f"no test_id has both a score and a label ({len(scores)} scored, "
            f"{len(bool_labels)} labelled); check that the ids match"
        )
    s = np.fromiter((scores[k] for k in matched), dtype=np.float64, count=len(matched))
    y = np.fromiter((bool_labels[k] for k in matched), dtype=bool, count=len(matched))
    n_pos = int(np.count_nonzero(y))
    for count, name in ((n_pos, "positive"), (y.size - n_pos, "negative")):
        if count == 0:
            raise InputError(
                f"no {name} cases among the {y.size} labelled cases that have scores; "
                "both classes are needed to fit a threshold"
            )

    obj, provenance = _resolve_fitter(fitter, fitter_options)
    name = provenance["name"] or provenance["target"]
    if not callable(getattr(obj, "fit", None)):
        raise PluginContractError(FITTERS, missing={})
    try:
        result = obj.fit(s, y, target_fpr=float(target_fpr), higher_is_worse=higher_is_worse)
    except Exception as exc:
        raise PluginRuntimeError(FITTERS, name, f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(result, FitResult):
        raise PluginRuntimeError(
            FITTERS, name, f"fit() must return a FitResult, got {type(result).__name__}"
        )
    result = _recount(result, s, y, name)

    n_neg = result.n_negative
    fp = result.false_positives or 0
    needed = negatives_needed(target_fpr)
    bound = {
        "method": "clopper-pearson, one-sided",
        "confidence": BOUND_CONFIDENCE,
        "value": clopper_pearson_upper(fp, n_neg),
        "false_positives": fp,
        "n_negative": n_neg,
        "negatives_needed_for_guarantee": needed,
    }
    warnings = _warnings(result, bound, float(target_fpr))
    rows, distinct = _roc_table(s, y, higher_is_worse, result.threshold, roc_table_max_rows)
    unlabelled = scores.keys() - bool_labels.keys()
    unscored = bool_labels.keys() - scores.keys()
    log.info(
        "calibration.fitted",
        fitter=name,
        threshold=result.threshold,
        fpr=result.achieved_fpr,
        tpr=result.achieved_tpr,
    )
    return CalibrationReport(
        pack_name=pack_name,
        metric_name=metric_name,
        target_fpr=float(target_fpr),
        higher_is_worse=higher_is_worse,
        result=result,
        fpr_upper_bound=bound,
        warnings=tuple(warnings),
        fitter=provenance,
        coverage={
            "n_scored": len(scores),
            "n_labelled": len(bool_labels),
            "n_matched": len(matched),
            "unlabelled": _listed(set(unlabelled)),
            "unscored": _listed(set(unscored)),
        },
        inputs=dict(inputs or {}),
        roc_table_info={
            "rows": len(rows),
            "distinct_thresholds": distinct,
            "complete": len(rows) >= distinct,
            "max_rows": roc_table_max_rows,
        },
        roc_table=tuple(rows),
        tool={"name": "ragleaklab", "version": __version__},
        generated_at=_generated_at(),
        tpr_interval=tpr_interval(result.true_positives or 0, result.n_positive),
        auc=auc_delong(s, y, higher_is_worse=higher_is_worse).to_dict(),
        scores=s,
        labels=y,
    )


def _misses_target(result: FitResult, target_fpr: float) -> bool:
    if result.threshold is None or not result.n_negative:
        return False
    allowed = max_false_positives(target_fpr, result.n_negative)
    return (result.false_positives or 0) > allowed


def _warnings(result: FitResult, bound: Mapping[str, Any], target_fpr: float) -> list[str]:
    """What a reader must not miss: a threshold that catches nothing, an untrustworthy FPR."""
    warnings = []
    n_neg = result.n_negative
    needed = bound["negatives_needed_for_guarantee"]
    upper = bound["value"]
    level = f"{BOUND_CONFIDENCE:.0%}"
    short = needed is None or n_neg < needed
    support = ""
    if short:
        need = "no finite number" if needed is None else f"at least {needed}"
        support = (
            f"the target false-positive rate {target_fpr:g} is not statistically supported by "
            f"{n_neg} negatives: {need} are needed for {level} confidence that the true rate "
            "of any threshold is within it"
        )
    if _misses_target(result, target_fpr):
        allowed = max_false_positives(target_fpr, n_neg)
        text = (
            f"the threshold misses the target false-positive rate {target_fpr:g} on the "
            f"calibration sample: it flags {result.false_positives} of {n_neg} negatives "
            f"(achieved {result.achieved_fpr:.4g}), at most {allowed} are allowed"
        )
        warnings.append(f"{text}; {support}" if support else text)
    elif result.threshold is not None and upper > target_fpr:
        text = (
            f"the threshold meets the target false-positive rate {target_fpr:g} on the "
            f"calibration sample (achieved {result.achieved_fpr:.4g}) but cannot be trusted to "
            f"meet it: the {level} upper confidence bound on its true rate is {upper:.4g} "
            f"> {target_fpr:g}"
        )
        warnings.append(f"{text}; {support}" if support else text)
    elif short:
        warnings.append(f"{support}; the {level} upper bound at this threshold is {upper:.4g}")
    if result.flags_nothing:
        n_pos = result.n_positive
        if result.threshold is None:
            what = "the fitter found no threshold (flag nothing)"
        else:
            rule = result.decision_rule.replace("threshold", repr(result.threshold))
            caught = "no case at all" if result.flags_no_case else f"none of the {n_pos} positives"
            what = f"the rule '{rule}' flags {caught}"
        text = f"no usable threshold: {what}; a gate using it would pass every attack"
        warnings.append(f"{text} ({result.reason})" if result.reason else text)
    return warnings


def _recount(result: FitResult, s: np.ndarray, y: np.ndarray, name: str) -> FitResult:
    """Recount FP/TP at the fitter's threshold; refuse a result that disagrees with the data."""
    flags = _flagged(s, result.threshold, result.decision_rule)
    fp = int(np.count_nonzero(flags & ~y))
    tp = int(np.count_nonzero(flags & y))
    n_pos = int(np.count_nonzero(y))
    n_neg = y.size - n_pos
    claims = (
        (result.n_positive, n_pos, "n_positive"),
        (result.n_negative, n_neg, "n_negative"),
        (result.false_positives, fp, "false_positives"),
        (result.true_positives, tp, "true_positives"),
    )
    for claimed, actual, what in claims:
        if claimed is not None and claimed != actual:
            raise PluginRuntimeError(
                FITTERS, name, f"reported {what}={claimed} but the data give {actual}"
            )
    for claimed_rate, actual_rate, what in (
        (result.achieved_fpr, fp / n_neg, "achieved_fpr"),
        (result.achieved_tpr, tp / n_pos, "achieved_tpr"),
    ):
        if not math.isclose(claimed_rate, actual_rate, rel_tol=1e-9, abs_tol=1e-12):
            raise PluginRuntimeError(
                FITTERS, name, f"reported {what}={claimed_rate} but the data give {actual_rate}"
            )
    return FitResult(
        threshold=result.threshold,
        achieved_fpr=fp / n_neg,
        achieved_tpr=tp / n_pos,
        n_positive=n_pos,
        n_negative=n_neg,
        decision_rule=result.decision_rule,
        false_positives=fp,
        true_positives=tp,
        reason=result.reason,
        details=result.details,
        guarantee=result.guarantee,
    )
