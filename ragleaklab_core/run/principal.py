"""What is decided about a pack whose cases ask as a principal, before any of them is asked.

A case with a principal (a user or tenant id) is never asked anonymously: its answer would not
be the one the case is about. So when the target cannot carry a principal, the pack is not
tested, decided in one place whatever answers the cases:

* known when the target is loaded (its ``answer`` takes no ``principal`` keyword, or it
  declares ``carries_principal = False``): :func:`principal_problem`, asked by the run's plan
  for every pack before the first is run (the pack is reported not tested, nothing ingested);
* known only once the target is built (a python factory's app, which exists after ingest): the
  runner marks the pack's work to be judged then, and every executor hands what its built
  target says to the same rule (``PackWork.stop_once_built``, :func:`unsupported_problem`), so
  local, Ray and resumed runs record the same "not asked" for each case.
"""

from __future__ import annotations

from typing import Any

from ragleaklab_core._discovery import LoadedPlugin, pack_info
from ragleaklab_core.errors import RagleaklabError
from ragleaklab_core.interfaces import TargetTraits, target_traits
from ragleaklab_core.run.records import RunSettings


class PrincipalUnsupported(RagleaklabError):
    """A case asks as a principal, and the target cannot carry one: the case is errored, never
    asked anonymously (its answer would not be the one the case is about)."""

    exit_code = 3  # the target cannot be used for this case, as a plugin that cannot be used


def accepts_principal(target: Any) -> bool:
    """Whether *target* can ask as a principal: the method the runner calls (``aanswer`` when
    present, else ``answer``) names a ``principal`` parameter (read by
    :func:`~ragleaklab_core.interfaces.target_traits`, where the contract is declared).
    """
    return _traits(target).accepts_principal


def _traits(target: Any) -> TargetTraits:
    """A loaded target's traits (read at load), else the traits of the object given."""
    if isinstance(target, LoadedPlugin):
        return target.target_traits
    return target_traits(target)


def principal_support(target: Any) -> bool | None:
    """Whether *target* can ask as a principal, as far as the runner can know before the run:
    ``False`` when its method takes no ``principal`` keyword (:func:`accepts_principal`) or it
    declares ``carries_principal = False`` (support that depends on its options, such as the
    http target without ``{principal}`` in a template); ``True`` when it declares
    ``carries_principal = True``; ``None`` when only the target can judge (per case, or once
    built: a python factory's app)."""
    return _traits(target).principal_support


def why_no_principal(target: Any) -> str:
    """Why *target* cannot ask as a principal, in the words of its declaration."""
    if accepts_principal(target):
        return "as configured, it sends no principal to the system"
    return "its answer/aanswer takes no 'principal' keyword"


def first_principal_case(pack: LoadedPlugin, settings: RunSettings) -> str | None:
    """The test id of the first case of *pack* the *settings* select that asks as a principal,
    or None (one read of the cases, stopping there)."""
    for case in pack.obj.cases():
        if case.principal is not None and settings.selects(case.tags):
            return case.test_id
    return None


def principal_reason(pack: str, case: str, target: str, why: str) -> str:
    """The words of a pack not tested because its cases ask as a principal (what, why, the
    fixes): one sentence for the check before the run and the one once the target is built."""
    return (
        f"its cases ask as a principal (the first: {case!r}) and target {target!r} cannot ask "
        f"as one ({why}); nothing was asked: use a target that passes the principal to the "
        f"system (docs/targets.md, asking as a principal), or leave the pack out with "
        f"--exclude {pack}"
    )


def unsupported_problem(
    pack: LoadedPlugin, settings: RunSettings, target: LoadedPlugin
) -> str | None:
    """Why *pack* cannot be tested on *target*, a target that cannot ask as a principal: the
    words of :func:`principal_reason` when a selected case asks as one, else None (one read of
    the cases, stopping at the first such case)."""
    case = first_principal_case(pack, settings)
    if case is None:
        return None
    # The name --exclude takes: the pack's installed name, whatever its info() calls it.
    return principal_reason(pack.name, case, target.name, why_no_principal(target))


def principal_problem(
    pack: LoadedPlugin, settings: RunSettings, target: LoadedPlugin
) -> str | None:
    """Why *pack* cannot be tested on *target*, known before anything is ingested or asked: its
    selected cases ask as a principal and the target cannot carry one. None otherwise.

    One read of the cases, and only for such a target (a target that takes ``principal``, or
    that judges per case or once built, costs nothing). A case with a principal is never asked
    anonymously: its answer would not be the one the case is about.
    """
    if principal_support(target) is not False:
        return None
    return unsupported_problem(pack, settings, target)


def refuse_principals(pack: LoadedPlugin, settings: RunSettings, target: LoadedPlugin) -> None:
    """Refuse (:class:`PrincipalUnsupported`, exit 3) what :func:`principal_problem` finds: for
    a caller running one pack, which has no other pack to report beside it.

    Erroring those cases one by one would still run the rest, and with ``run.tolerate_errors``
    a cross-tenant pack could pass having asked none of its cross-tenant cases.
    """
    problem = principal_problem(pack, settings, target)
    if problem is not None:
        raise PrincipalUnsupported(f"pack {pack_info(pack.obj).name!r}: {problem}")


__all__ = [
    "PrincipalUnsupported",
    "accepts_principal",
    "first_principal_case",
    "principal_problem",
    "principal_reason",
    "principal_support",
    "refuse_principals",
    "unsupported_problem",
    "why_no_principal",
]
