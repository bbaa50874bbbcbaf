"""Epoch reducers and per-pack aggregate statistics.

A case run for several epochs yields several values of each metric value. A :class:`Reducer`
(named as in inspect_ai: ``mean``, ``max``, ``median``, ``mode``, ``at_least_<k>``,
``pass_at_<k>``, plus ``min``) turns them into the one number per case that thresholds,
calibration and aggregates use. :func:`summarize` gives the mean and its standard error over the
cases of a pack; :func:`rate_interval` gives a rate (such as the failing-case rate) with its exact
two-sided Clopper-Pearson interval. Both have a ``to_dict()`` with floats rounded to 6 decimals,
so reports built from them are byte-identical across runs.
"""

from __future__ import annotations

import math
import operator
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, SupportsIndex

from attrs import field, frozen

from ragleaklab_core.errors import ConfigError
from ragleaklab_core.stats.beta import beta_ppf

if TYPE_CHECKING:
    import numpy as np

#: Reducer names that take no parameter.
REDUCERS = ("mean", "max", "min", "median", "mode")
#: Reducer families that take a count k (and optionally a success cut): ``at_least_2@0.5``.
COUNTING_REDUCERS = ("at_least", "pass_at")
#: The default success cut: an epoch succeeds when its value is >= 1.0, as in inspect_ai.
DEFAULT_SUCCESS_AT = 1.0
#: Decimals kept by every ``to_dict()``.
DECIMALS = 6

_VALID_FORMS = (
    "expected mean, max, min, median, mode, at_least_<k> or pass_at_<k> (k >= 1), "
    "the last two optionally with @<cut>, 0 < cut <= 1 (e.g. at_least_2@0.5)"
)
# k has at most 9 digits: longer strings are not a count anyone means (and int() limits digits).
_COUNTING = re.compile(r"(at_least|pass_at)_([0-9]{1,9})(?:@(.*))?")
# Plain decimals only: float() would also take "inf", "1e-1" and "0_5".
_CUT = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+")


def _bad(spec: object, why: str) -> ConfigError:
    return ConfigError("reducer", [f"bad reducer {spec!r} ({why}): {_VALID_FORMS}"])


@lru_cache(maxsize=256)
def _parse(spec: str) -> tuple[str, int | None, float]:
    """``(kind, k, success_at)`` of a reducer spec, or :class:`ConfigError`."""
    if spec in REDUCERS:
        return spec, None, DEFAULT_SUCCESS_AT
    if spec.split("@", 1)[0] in REDUCERS:
        raise _bad(spec, "only at_least_<k> and pass_at_<k> take a success cut")
    match = _COUNTING.fullmatch(spec)
    if match is None:
        raise _bad(spec, "unknown name")
    kind, digits, cut_text = match.groups()
    if digits != str(int(digits)) or int(digits) < 1:
        raise _bad(spec, "k must be a whole number >= 1 without leading zeros")
    cut = DEFAULT_SUCCESS_AT
    if cut_text is not None:
        if _CUT.fullmatch(cut_text) is None:
            raise _bad(spec, f"the success cut {cut_text!r} is not a decimal number")
        cut = float(cut_text)
        if not 0.0 < cut <= 1.0:
            raise _bad(spec, f"the success cut {cut_text} is not in (0, 1]")
    return kind, int(digits), cut


def _canonical(spec: object) -> str:
    """The one spelling of a reducer spec: ``at_least_2@1.0`` and ``at_least_2`` are the same."""
    if not isinstance(spec, str):
        raise _bad(spec, f"a reducer is named by a string, not a {type(spec).__name__}")
    kind, k, cut = _parse(spec)
    if k is None:
        return kind
    return f"{kind}_{k}" if cut == DEFAULT_SUCCESS_AT else f"{kind}_{k}@{cut!r}"


def _epoch_values(values: Sequence[float]) -> list[float]:
    out = [float(v) for v in values]
    if not out:
        raise ValueError("cannot reduce an empty list of epoch values")
    bad = next((v for v in out if not math.isfinite(v)), None)
    if bad is not None:
        raise ValueError(f"epoch values must be finite numbers, got {bad!r}")
    return out


#: The reducers that reduce one epoch to its own value (the counting ones turn it into 0 or 1).
LITERAL_REDUCERS = frozenset({"mean", "median", "max", "min", "mode"})


@frozen
class Reducer:
    """Reduces a case's epoch values of one metric value to one number.

    Build one with :func:`reducer` (or ``Reducer("at_least_2@0.5")``); ``name`` is the canonical
    spec, so ``reducer(r.name) == r``.

    Attributes:
        name: The canonical spec, e.g. ``"mean"``, ``"pass_at_3"``, ``"at_least_2@0.5"``.
        kind: ``"mean"``, ``"max"``, ``"min"``, ``"median"``, ``"mode"``, ``"at_least"`` or
            ``"pass_at"``.
        k: The count of ``at_least``/``pass_at``; ``None`` for the others.
        success_at: The success cut of ``at_least``/``pass_at``: an epoch succeeds (the attack
            worked) when its value is ``>= success_at``. 1.0 unless the spec says ``@<cut>``.

    .. versionadded:: 0.1
    """

    name: str = field(converter=_canonical)
    kind: str = field(init=False)
    k: int | None = field(init=False)
    success_at: float = field(init=False)

    @kind.default
    def _kind(self) -> str:
        return _parse(self.name)[0]

    @k.default
    def _k(self) -> int | None:
        return _parse(self.name)[1]

    @success_at.default
    def _success_at(self) -> float:
        return _parse(self.name)[2]

    def __call__(self, values: Sequence[float], *, higher_is_worse: bool = True) -> float:
        """Reduce the epoch values of one case.

        ``mean``, ``median``, ``mode``, ``max`` and ``min`` are literal and ignore
        *higher_is_worse*. ``at_least``/``pass_at`` count successful epochs: value
        ``>= success_at``, or for a lower-is-worse value (*higher_is_worse* false)
        ``value <= 1 - success_at``; their result is then given in the value's own direction
        (``1 - r``), so the same threshold rule applies to it.

        Raises:
            ValueError: *values* is empty or holds a non-finite number.
            ConfigError: ``pass_at_<k>`` with fewer than k epochs.
        """
        vals = _epoch_values(values)
        kind = self.kind
        if len(vals) == 1 and kind in LITERAL_REDUCERS:
            return vals[0]  # what each of them gives for one epoch, without the exact sums
        if kind == "mean":
            # Exact (rational) mean, correctly rounded: order-independent, and equal epochs
            # reduce to exactly their value.
            return float(statistics.mean(vals))
        if kind == "median":
            return float(statistics.median(vals))
        if kind == "max":
            return max(vals)
        if kind == "min":
            return min(vals)
        if kind == "mode":
            counts = Counter(vals)
            top = max(counts.values())
            return min(v for v, c in counts.items() if c == top)
        k = self.k
        assert k is not None  # every counting kind has a k
        if higher_is_worse:
            successes = sum(1 for v in vals if v >= self.success_at)
        else:
            cut = 1.0 - self.success_at
            successes = sum(1 for v in vals if v <= cut)
        if kind == "at_least":
            worked = successes >= k
            # 1.0 means "worked" for a higher-is-worse value, 0.0 for a lower-is-worse one.
            return 1.0 if worked == higher_is_worse else 0.0
        n = len(vals)
        if k > n:
            raise ConfigError(
                "reducer",
                [f"{self.name!r} needs at least {k} epochs per case, got {n} (run more epochs)"],
            )
        # P(no success among k epochs drawn without replacement), exactly.
        none = Fraction(math.comb(n - successes, k), math.comb(n, k))
        return float(1 - none) if higher_is_worse else float(none)


def reducer(spec: str) -> Reducer:
    """The reducer named by *spec*: ``mean``, ``max``, ``min``, ``median``, ``mode``,
    ``at_least_<k>`` or ``pass_at_<k>``, the last two optionally with ``@<cut>``.

    Raises:
        ConfigError: source ``"reducer"``, one problem naming *spec* and the valid forms.

    .. versionadded:: 0.1
    """
    return Reducer(spec)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), DECIMALS)


@frozen
class Summary:
    """Mean, standard error and range of per-case values.

    Attributes:
        n: Number of values.
        mean: Their mean; ``None`` when ``n == 0``.
        stderr: Sample standard deviation (ddof=1) over ``sqrt(n)``; 0.0 when ``n == 1``;
            ``None`` when ``n == 0``.
        min: The smallest value; ``None`` when ``n == 0``.
        max: The largest value; ``None`` when ``n == 0``.

    .. versionadded:: 0.1
    """

    n: int
    mean: float | None
    stderr: float | None
    min: float | None
    max: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form, floats rounded to 6 decimals."""
        return {
            "n": self.n,
            "mean": _rounded(self.mean),
            "stderr": _rounded(self.stderr),
            "min": _rounded(self.min),
            "max": _rounded(self.max),
        }


def summarize(values: Sequence[float] | np.ndarray) -> Summary:
    """:class:`Summary` of *values* (one reduced value per case).

    Mean and standard deviation are computed exactly and rounded once (the ``statistics``
    module), so the result does not depend on the order of the values.

    Raises:
        ValueError: a value is not finite.

    .. versionadded:: 0.1
    """
    # A float array as it is (a million cases' column, not a million float objects); the exact
    # mean and deviation walk it without copying.
    import numpy as np  # imported when used: the core's import stays light

    vals = np.asarray(values, dtype=np.float64)
    n = int(vals.size)
    if n == 0:
        return Summary(n=0, mean=None, stderr=None, min=None, max=None)
    finite = np.isfinite(vals)
    if not finite.all():
        raise ValueError(f"values must be finite numbers, got {float(vals[~finite][0])!r}")
    stderr = statistics.stdev(vals) / math.sqrt(n) if n > 1 else 0.0
    return Summary(
        n=n,
        mean=float(statistics.mean(vals)),
        stderr=float(stderr),
        min=float(vals.min()),
        max=float(vals.max()),
    )


@frozen
class RateInterval:
    """A rate ``successes / trials`` with its exact two-sided Clopper-Pearson interval.

    Attributes:
        successes: Events counted (x), e.g. failing cases.
        trials: Trials (n), e.g. scored cases.
        rate: ``x / n``; ``None`` when ``n == 0``.
        lower: Lower confidence limit (0 when ``x == 0``); ``None`` when ``n == 0``.
        upper: Upper confidence limit (1 when ``x == n``); ``None`` when ``n == 0``.
        confidence: Two-sided confidence level, e.g. 0.95.

    .. versionadded:: 0.1
    """

    successes: int
    trials: int
    rate: float | None
    lower: float | None
    upper: float | None
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form, floats rounded to 6 decimals."""
        return {
            "successes": self.successes,
            "trials": self.trials,
            "rate": _rounded(self.rate),
            "lower": _rounded(self.lower),
            "upper": _rounded(self.upper),
            "confidence": _rounded(self.confidence),
        }


def cp_lower(x: int, n: int, q: float) -> float:
    """The Clopper-Pearson lower limit at quantile *q*: ``BetaInv(q; x, n - x + 1)``, 0 when
    ``x == 0`` and ``q**(1/n)`` when ``x == n``. Every Clopper-Pearson limit in ragleaklab (the
    two-sided :func:`rate_interval`, the one-sided bound of calibration reports, the bootstrap
    fitter's fallback) is this function or :func:`cp_upper`."""
    if x == 0:
        return 0.0
    if x == n:
        return float(q ** (1.0 / n))
    return beta_ppf(q, x, n - x + 1)


def cp_upper(x: int, n: int, q: float) -> float:
    """The Clopper-Pearson upper limit at quantile *q*: ``BetaInv(q; x + 1, n - x)``, 1 when
    ``x == n`` and ``1 - (1 - q)**(1/n)`` when ``x == 0``."""
    if x == n:
        return 1.0
    if x == 0:
        return float(1.0 - (1.0 - q) ** (1.0 / n))
    return beta_ppf(q, x + 1, n - x)


def rate_interval(x: SupportsIndex, n: SupportsIndex, confidence: float = 0.95) -> RateInterval:
    """*x* events in *n* trials, with the exact two-sided Clopper-Pearson interval.

    With ``g = (1 - confidence) / 2``: lower = ``BetaInv(g; x, n - x + 1)`` (0 when ``x == 0``,
    ``g**(1/n)`` when ``x == n``), upper = ``BetaInv(1 - g; x + 1, n - x)`` (1 when ``x == n``,
    ``1 - g**(1/n)`` when ``x == 0``). Coverage is at least *confidence* for every true rate.
    E.g. 0 of 10 at 95% gives (0, 0.308497).

    Raises:
        ValueError: negative counts, ``x > n``, or *confidence* not in (0, 1).
        TypeError: a count is not an integer.

    .. versionadded:: 0.1
    """
    if isinstance(x, bool) or isinstance(n, bool):
        raise TypeError("counts must be integers, not booleans")
    hits, trials = operator.index(x), operator.index(n)
    if not 0 <= hits <= trials:
        raise ValueError(f"need 0 <= x <= n, got x={hits}, n={trials}")
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if trials == 0:
        return RateInterval(hits, trials, None, None, None, confidence)
    tail = (1.0 - confidence) / 2.0
    lower, upper = cp_lower(hits, trials, tail), cp_upper(hits, trials, 1.0 - tail)
    return RateInterval(hits, trials, hits / trials, lower, upper, confidence)
