"""The contract of a threshold fitter (group ``ragleaklab.fitters``): its protocol, its
optional members and the traits they are read into."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from attrs import frozen

from ragleaklab_core.contracts.members import Member, callable_member, present_members
from ragleaklab_core.errors import PluginRuntimeError
from ragleaklab_core.values import FitResult

if TYPE_CHECKING:
    import numpy.typing as npt

GROUP = "ragleaklab.fitters"


@runtime_checkable
class ThresholdFitter(Protocol):
    """Chooses the pass/fail threshold of a metric from labelled scores.

    Group ``ragleaklab.fitters``. Implementations must be deterministic: the same inputs (and the
    same options, including any seed) give the same :class:`FitResult`.

    Its optional member (``negatives_needed``: how many negative labels it needs at a target
    false-positive rate) is declared, with its meaning, in :data:`FITTER_MEMBERS`, and read once
    at load into :class:`FitterTraits`; the core asks it rather than knowing the built-ins.

    .. versionadded:: 0.1
    .. versionchanged:: 0.4
        ``negatives_needed``.
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


#: The optional members of a threshold fitter (group ``ragleaklab.fitters``).
FITTER_MEMBERS: tuple[Member, ...] = (
    Member(
        "negatives_needed",
        "method",
        "negatives_needed(target_fpr, confidence) -> int: the fewest negative labels with which "
        "the fitter, as built with its options, can meet target_fpr (with fewer, its fit flags "
        "nothing, states no guarantee, or cannot resolve the rate: one false positive is already "
        "above it); confidence is the one the caller wants a guarantee at. `label plan` sizes "
        "its sample for it and the test kit's label checks ask for it; without it `label plan` "
        "sizes for the calibration report's guarantee alone, with a note, and the kit's label "
        "checks refuse the fitter",
        "0.4",
    ),
)


@frozen
class FitterTraits:
    """What a fitter declares beyond ``fit`` (:data:`FITTER_MEMBERS`), read once at load.

    Attributes:
        negatives_needed: Whether it says how many negatives it needs (``negatives_needed``);
            ask it through :func:`negatives_needed_by`, which checks the answer.
        present: The optional members it defines.
    """

    negatives_needed: bool = False
    present: frozenset[str] = frozenset()


def fitter_traits(fitter: Any) -> FitterTraits:
    """Read a fitter's optional members (:data:`FITTER_MEMBERS`)."""
    return FitterTraits(
        negatives_needed=callable_member(fitter, "negatives_needed"),
        present=present_members(fitter, FITTER_MEMBERS),
    )


def negatives_needed_by(
    fitter: Any, traits: FitterTraits, *, name: str, target_fpr: float, confidence: float
) -> int | None:
    """How many negative labels *fitter* (named *name*, with *traits*) says it needs at
    *target_fpr* for a guarantee at *confidence*; None when it does not say.

    Raises:
        PluginRuntimeError: Its ``negatives_needed`` raised, or gave anything but a positive
            whole number (a count that means nothing must not size a labelling plan).

    .. versionadded:: 0.4
    """
    if not traits.negatives_needed:
        return None
    asked = f"negatives_needed({target_fpr!r}, {confidence!r})"
    try:
        needed = fitter.negatives_needed(target_fpr, confidence)
    except Exception as exc:
        raise PluginRuntimeError(
            GROUP, name, f"{asked} raised {type(exc).__name__}: {exc}"
        ) from exc
    if isinstance(needed, bool) or not isinstance(needed, numbers.Integral) or needed < 1:
        raise PluginRuntimeError(
            GROUP, name, f"{asked} must return a positive whole number, got {needed!r}"
        )
    return int(needed)


__all__ = [
    "FITTER_MEMBERS",
    "GROUP",
    "FitterTraits",
    "ThresholdFitter",
    "fitter_traits",
    "negatives_needed_by",
]
