"""The contract of a threshold fitter (group ``ragleaklab.fitters``): its protocol, its
optional members and the traits they are read into."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from attrs import frozen

from ragleaklab_core.contracts.members import Member, present_members
from ragleaklab_core.values import FitResult

if TYPE_CHECKING:
    import numpy.typing as npt

GROUP = "ragleaklab.fitters"


@runtime_checkable
class ThresholdFitter(Protocol):
    """Chooses the pass/fail threshold of a metric from labelled scores.

    Group ``ragleaklab.fitters``. Implementations must be deterministic: the same inputs (and the
    same options, including any seed) give the same :class:`FitResult`.

    .. versionadded:: 0.1
    """

    def fit(
        self,
        scores: npt.ArrayLike,
        labels: npt.ArrayLike,
        *,
        target_fpr: float,
        higher_is_worse: bool = True,
    ) -> FitResult:
        """Fit a threshold.

        Args:
            scores: 1-D array of finite floats, one per case.
            labels: 1-D bool array of the same length; True = positive = the attack succeeded.
            target_fpr: The largest acceptable false-positive rate, in [0, 1].
            higher_is_worse: True when a higher score means a worse (more attacked) case.

        Returns:
            The chosen threshold and its rates on the given data.

        Raises:
            InputError: The arrays are malformed (lengths, NaN, a class with no cases).
        """
        ...


#: The optional members of a threshold fitter (group ``ragleaklab.fitters``): none yet.
FITTER_MEMBERS: tuple[Member, ...] = ()


@frozen
class FitterTraits:
    """What a fitter declares beyond ``fit`` (:data:`FITTER_MEMBERS`: nothing yet)."""

    present: frozenset[str] = frozenset()


def fitter_traits(fitter: Any) -> FitterTraits:
    """Read a fitter's optional members (:data:`FITTER_MEMBERS`)."""
    return FitterTraits(present=present_members(fitter, FITTER_MEMBERS))


__all__ = ["FITTER_MEMBERS", "GROUP", "FitterTraits", "ThresholdFitter", "fitter_traits"]
