"""The ROC plot written next to a calibration report (``ragleaklab calibrate --plot``).

matplotlib is an optional extra (``pip install 'ragleaklab[plot]'``) and is imported only when a
plot is asked for. The figure is drawn on its own Agg canvas (no pyplot, no global backend
switch) under matplotlib's default style, so a user's matplotlibrc cannot change it, and the PNG
carries no software-version metadata: the same inputs give a byte-identical file.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragleaklab_core._atomic import write_atomic
from ragleaklab_core.errors import InputError, RagleaklabError

if TYPE_CHECKING:
    from ragleaklab_core.stats.roc import AucResult

#: What ``--plot`` says when matplotlib is not installed.
MISSING_MATPLOTLIB = "--plot needs matplotlib: pip install 'ragleaklab[plot]'"
#: Figure size in inches and resolution: a 600 x 600 pixel PNG.
FIGSIZE = (6.0, 6.0)
DPI = 100


def _matplotlib() -> tuple[Any, Any, Any]:
    """``(matplotlib.style, Figure, FigureCanvasAgg)``, or a clear error when it is missing."""
    try:
        # The top-level import comes first so that a missing (or blocked) matplotlib fails here
        # even when a submodule happens to be cached.
        import matplotlib
        import matplotlib.style
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise RagleaklabError(MISSING_MATPLOTLIB) from exc
    return matplotlib.style, Figure, FigureCanvasAgg


def _curve(values: npt.ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 2:
        raise InputError(f"{name} must be a 1-D array of at least 2 rates, got shape {arr.shape}")
    if not (np.isfinite(arr).all() and (arr >= 0).all() and (arr <= 1).all()):
        raise InputError(f"{name} must hold rates in [0, 1]")
    return arr


def _auc_label(auc: AucResult) -> str:
    text = f"ROC, AUC {auc.auc:.3f}"
    if auc.variance is None:
        return f"{text} (DeLong CI undefined: a class has one case)"
    interval = f"{auc.confidence:.0%} CI {auc.lower:.3f}–{auc.upper:.3f}"
    if auc.variance == 0.0:
        return f"{text} (DeLong variance 0: {interval})"
    return f"{text} (DeLong {interval})"


def write_roc_plot(
    path: Path | str,
    fpr: npt.ArrayLike,
    tpr: npt.ArrayLike,
    *,
    auc: AucResult,
    chosen: tuple[float, float] | None,
    title: str,
) -> None:
    """Write the ROC curve as a PNG to *path*, atomically (:func:`roc_plot_png` draws it).

    Raises:
        RagleaklabError: matplotlib is not installed (exit code 2).
        InputError: *fpr* and *tpr* differ in length or hold values outside [0, 1].

    .. versionadded:: 0.1
    """
    png = roc_plot_png(fpr, tpr, auc=auc, chosen=chosen, title=title)
    write_atomic(Path(path), png)


def roc_plot_png(
    fpr: npt.ArrayLike,
    tpr: npt.ArrayLike,
    *,
    auc: AucResult,
    chosen: tuple[float, float] | None,
    title: str,
) -> bytes:
    """The ROC curve as the bytes of a PNG, for a caller that writes it with other files.

    The plot shows the curve through the points of :func:`ragleaklab_core.stats.roc.roc_points`
    joined by straight lines (steps, and a diagonal across a tie block, so its area is the
    AUC), the chance diagonal, the chosen operating point ``(fpr, tpr)`` when given, and in the
    legend the AUC with its DeLong interval and the class counts.

    Args:
        fpr, tpr: The curve, as from :func:`ragleaklab_core.stats.roc.roc_points`.
        auc: The AUC result to show.
        chosen: The operating point of the fitted threshold, or ``None`` (e.g. flag nothing).
        title: The plot title, e.g. the pack and metric.

    Raises:
        RagleaklabError: matplotlib is not installed (exit code 2).
        InputError: *fpr* and *tpr* differ in length or hold values outside [0, 1].
    """
    x, y = _curve(fpr, "fpr"), _curve(tpr, "tpr")
    if x.size != y.size:
        raise InputError(f"fpr and tpr differ in length: {x.size} and {y.size}")
    style, figure_cls, canvas_cls = _matplotlib()
    # The default style, restored on exit: the picture must not depend on a user's rc settings.
    with style.context("default"):
        fig = figure_cls(figsize=FIGSIZE, dpi=DPI)
        canvas_cls(fig)
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1], linestyle="--", linewidth=1, color="0.6", label="chance")
        ax.plot(x, y, linewidth=1.8, color="C0", label=_auc_label(auc))
        if chosen is not None:
            cx, cy = float(chosen[0]), float(chosen[1])
            ax.plot(
                [cx],
                [cy],
                linestyle="none",
                marker="o",
                markersize=7,
                color="C3",
                label=f"chosen threshold (FPR {cx:.3g}, TPR {cy:.3g})",
            )
        ax.plot(
            [],
            [],
            linestyle="none",
            label=f"{auc.n_positive} positives, {auc.n_negative} negatives",
        )
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.01, 1.01)
        ax.set_aspect("equal")
        ax.set_xlabel("false-positive rate")
        ax.set_ylabel("true-positive rate")
        ax.set_title(title)
        ax.grid(True, linewidth=0.5, alpha=0.5)
        ax.legend(loc="lower right", fontsize="small")
        buf = io.BytesIO()
        # No "Software" chunk (it names the matplotlib version); size and dpi are fixed.
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
