"""The contract of a pack (group ``ragleaklab.packs``): its protocol, its optional members
and the traits they are read into."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from attrs import frozen

from ragleaklab_core.contracts.members import Member, callable_member, present_members
from ragleaklab_core.values import Case, Document, PackInfo

GROUP = "ragleaklab.packs"


@runtime_checkable
class Pack(Protocol):
    """A named, versioned attack suite: documents to plant, cases to run, default labels.

    Group ``ragleaklab.packs``. Its optional members (``default_labels() -> bytes | None``, the
    content of its default ``labels.jsonl``, and the rest) are declared in :data:`PACK_MEMBERS`
    and read once at load into :class:`PackTraits`. :class:`ragleaklab_core.ManifestPack`
    implements all of this from a ``pack.toml``.

    .. versionadded:: 0.1
    """

    def info(self) -> PackInfo:
        """The pack's name, version, type, metrics and default thresholds."""
        ...

    def documents(self) -> Iterable[Document]:
        """The documents the pack plants in the target before its cases run."""
        ...

    def cases(self) -> Iterable[Case]:
        """The pack's test cases, in a stable order."""
        ...


#: The optional members of a pack (group ``ragleaklab.packs``).
PACK_MEMBERS: tuple[Member, ...] = (
    Member(
        "default_labels",
        "method",
        "default_labels() -> bytes | None: the content of the pack's default labels.jsonl, used by "
        "`calibrate --pack` when no --labels is given",
        "0.1",
    ),
    Member(
        "label_provenance",
        "method",
        "label_provenance() -> LabelProvenance | None: where the default labels come from and "
        "the target they were observed on; defaults fitted on another target do not gate a run "
        "as calibrated",
        "0.2",
    ),
    Member(
        "labels_source",
        "method",
        "labels_source() -> str | None: how the default labels are named in messages and label "
        "origins",
        "0.2",
    ),
    Member(
        "data_package",
        "class attribute",
        "str: the package holding a ManifestPack's pack.toml, documents and cases",
        "0.1",
    ),
)


@frozen
class PackTraits:
    """What a pack declares beyond ``info``, ``documents`` and ``cases`` (:data:`PACK_MEMBERS`),
    read once at load.

    Attributes:
        default_labels, label_provenance, labels_source: Whether it has each method.
        data_package: Its class's ``data_package`` when it is a string, else None.
        present: The optional members it defines.
    """

    default_labels: bool = False
    label_provenance: bool = False
    labels_source: bool = False
    data_package: str | None = None
    present: frozenset[str] = frozenset()


def pack_traits(pack: Any) -> PackTraits:
    """Read a pack's optional members (:data:`PACK_MEMBERS`)."""
    cls = pack if isinstance(pack, type) else type(pack)
    package = getattr(cls, "data_package", None)
    return PackTraits(
        default_labels=callable_member(pack, "default_labels"),
        label_provenance=callable_member(pack, "label_provenance"),
        labels_source=callable_member(pack, "labels_source"),
        data_package=package if isinstance(package, str) else None,
        present=present_members(pack, PACK_MEMBERS),
    )


__all__ = ["GROUP", "PACK_MEMBERS", "Pack", "PackTraits", "pack_traits"]
