"""The document access convention shared by the reference target and the ``access`` metric.

A document's ``metadata["access"]`` says who may see it: ``{"owner": "acme:alice", "groups":
["acme", "acme:hr"]}``, both keys optional. A document without ``access`` is public. A principal
(``Case.principal``, a string) may see a document when it is the document's owner or a member of
one of its groups.

A principal's groups: its tenant, by the convention ``"<tenant>:<user>"`` (``"acme:alice"`` is a
member of ``"acme"``: multi-tenant apps name users within their tenant, and this keeps a pack
runnable without a directory of users), plus any groups given for it explicitly (the reference
target's ``principal_groups`` option, a case's ``ground_truth["principal_groups"]``). An anonymous
query (no principal) belongs to no group and owns nothing: it sees public documents only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from attrs import frozen

from ragleaklab_core import InputError

#: The keys ``metadata["access"]`` may hold.
ACCESS_KEYS = frozenset({"owner", "groups"})


@frozen
class Access:
    """Who may see one document: its owner (a principal) and its groups."""

    owner: str | None
    groups: frozenset[str]

    def visible_to(self, principal: str | None, groups: frozenset[str]) -> bool:
        """Whether *principal* (a member of *groups*) may see the document."""
        if principal is not None and principal == self.owner:
            return True
        return not self.groups.isdisjoint(groups)


def parse_access(doc_id: str, metadata: Mapping[str, Any]) -> Access | None:
    """The ``access`` of a document's *metadata*, or None (public).

    Raises:
        InputError: ``access`` is not an object of a non-empty string ``owner`` and a list of
            non-empty string ``groups``; the message names the document and the ``$.path``.
    """
    if "access" not in metadata:
        return None
    raw = metadata["access"]
    where = f"document {doc_id!r}: $.metadata.access"
    if not isinstance(raw, Mapping):
        raise InputError(f"{where} must be an object with 'owner' and/or 'groups', got {raw!r}")
    unknown = sorted(set(raw) - ACCESS_KEYS)
    if unknown:
        raise InputError(f"{where} has unknown key(s) {unknown}: only 'owner' and 'groups'")
    owner = raw.get("owner")
    if owner is not None and not (isinstance(owner, str) and owner.strip()):
        raise InputError(f"{where}.owner must be a non-empty string (a principal), got {owner!r}")
    groups = raw.get("groups", [])
    if isinstance(groups, str) or not isinstance(groups, list):
        raise InputError(f"{where}.groups must be a list of group names, got {groups!r}")
    for i, group in enumerate(groups):
        if not (isinstance(group, str) and group.strip()):
            raise InputError(f"{where}.groups[{i}] must be a non-empty string, got {group!r}")
    if owner is None and not groups:
        # Nobody could see it: almost certainly a mistake, not a document meant to be hidden.
        raise InputError(f"{where} names neither an owner nor a group: nobody could see it")
    return Access(owner, frozenset(groups))


def tenant_of(principal: str | None) -> str | None:
    """The tenant of ``"<tenant>:<user>"`` (the text before the first colon), else None."""
    if principal is None or ":" not in principal:
        return None
    tenant = principal.split(":", 1)[0]
    return tenant or None


def groups_of(principal: str | None, explicit: Iterable[str] = ()) -> frozenset[str]:
    """*principal*'s groups: its tenant (``"<tenant>:<user>"``) and the *explicit* ones."""
    tenant = tenant_of(principal)
    return frozenset([*([tenant] if tenant else []), *explicit])


def visible(access: Access | None, principal: str | None, groups: frozenset[str]) -> bool:
    """Whether a document of *access* (None: public) is visible to *principal* in *groups*."""
    return access is None or access.visible_to(principal, groups)


def _tenants(names: Iterable[str]) -> set[str]:
    # "acme:hr" belongs to tenant "acme"; a name without a colon is its own tenant.
    return {tenant_of(name) or name for name in names}


def same_tenant(access: Access | None, groups: frozenset[str]) -> bool:
    """Whether a document of *access* lies in a tenant of *groups*: what an index partitioned
    by tenant (a namespace or a tenant filter per query) lets through. Coarser than
    :func:`visible`: a document of one person, or of one group, is open to their whole tenant."""
    if access is None:
        return True
    mine = _tenants(access.groups) | _tenants([access.owner] if access.owner else [])
    return not mine.isdisjoint(_tenants(groups))
