"""Access groups and principals in the reference target: who may see which document.

Documents carry the convention of :mod:`ragleaklab_plugins._access` (``metadata["access"]``,
owner and groups; none is public), and a query may be asked as a principal. Like many RAG apps
built on one shared index, the reference target by default **ignores** access: every document is
retrievable by everyone, which is the cross-tenant leak the ``cross-tenant`` pack tests. The
defence, ``access_filter``, drops documents from the ranking *before* the top-k cut, so the
context is backfilled from the next documents the principal may see (an app that filters after
the cut returns fewer documents instead, and one that filters the answer has already shown the
model the data). It comes in the two shapes deployed apps have: ``"tenant"``, an index
partitioned by tenant (a namespace or a tenant filter on every query: the common way to isolate
customers), which keeps tenants apart but opens a document of one person or one group to their
whole tenant; and ``"acl"``, the document's own owner and groups checked for every query.

What happened is recorded under ``metadata["simulated"]["access"]`` (when the corpus has
restricted documents or the query has a principal): every retrieved document and whether the
principal may see it, the documents the defence withheld, and which documents the principal
may not see reached the answer, read from the simulated model's own record of the code path
that used each one (a disclosed record, a stated claim, a followed or quoted instruction).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from attrs import define, field

from ragleaklab_core import Document, InputError
from ragleaklab_plugins._access import Access, groups_of, parse_access, same_tenant, visible

#: The retrieval filters: none (access ignored), by tenant, or by each document's owner and groups.
ACCESS_FILTERS = ("none", "tenant", "acl")


def principal_groups_option(value: Any) -> dict[str, tuple[str, ...]]:
    """The ``principal_groups`` option (a TOML table ``{principal = [groups...]}``), checked."""
    if not isinstance(value, Mapping):
        raise TypeError(f"'principal_groups' must map principals to lists of groups: {value!r}")
    out: dict[str, tuple[str, ...]] = {}
    for principal, groups in value.items():
        if not (isinstance(principal, str) and principal.strip()):
            raise ValueError(f"'principal_groups' key {principal!r} must be a non-empty string")
        if isinstance(groups, str) or not isinstance(groups, Iterable):
            raise ValueError(
                f"'principal_groups' entry {principal!r} must be a list of groups: {groups!r}"
            )
        groups = tuple(groups)
        for group in groups:
            if not (isinstance(group, str) and group.strip()):
                raise ValueError(
                    f"'principal_groups' entry {principal!r} holds {group!r}, not a group name"
                )
        out[principal] = groups
    return out


@define
class AccessControl:
    """The ingested documents' access and the principal -> groups mapping.

    Attributes:
        mode: The defence: ``"none"`` (access ignored), ``"tenant"`` or ``"acl"``.
        principal_groups: Groups given explicitly per principal (on top of the tenant of
            ``"<tenant>:<user>"``).
    """

    mode: str = "none"
    principal_groups: Mapping[str, tuple[str, ...]] = field(factory=dict)
    _access: dict[str, Access] = field(factory=dict, init=False)

    def parse(self, documents: Sequence[Document]) -> dict[str, Access]:
        """The access of the restricted documents of *documents* (checked before any is added).

        Raises:
            InputError: A document's ``metadata["access"]`` is malformed.
        """
        found: dict[str, Access] = {}
        for doc in documents:
            access = parse_access(doc.doc_id, doc.metadata)
            if access is not None:
                found[doc.doc_id] = access
        return found

    def add(self, found: Mapping[str, Access]) -> None:
        self._access.update(found)

    def clear(self) -> None:
        self._access.clear()

    def groups(self, principal: str | None) -> frozenset[str]:
        return groups_of(principal, self.principal_groups.get(principal or "", ()))

    def allows(self, doc_id: str, principal: str | None) -> bool:
        """Whether retrieval may return *doc_id* to *principal* under the filter."""
        if self.mode == "none":
            return True
        access = self._access.get(doc_id)
        if self.mode == "tenant":
            return same_tenant(access, self.groups(principal))
        return visible(access, principal, self.groups(principal))

    def relevant(self, principal: str | None) -> bool:
        """Whether an answer gets an access record: a principal asks, or some document is
        restricted (so the built-in packs without either keep their metadata as it was)."""
        return principal is not None or bool(self._access)

    def record(
        self,
        principal: str | None,
        retrieved: Sequence[str],
        denied: Sequence[str],
        simulated: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The ``access`` entry of ``metadata["simulated"]`` for one answer."""
        groups = self.groups(principal)

        def sees(doc_id: str) -> bool:
            return visible(self._access.get(doc_id), principal, groups)

        reached: dict[str, list[str]] = {}
        for doc_id, how in _content_used(simulated):
            if not sees(doc_id):
                paths = reached.setdefault(doc_id, [])
                if how not in paths:
                    paths.append(how)
        return {
            "principal": principal,
            "groups": sorted(groups),
            "filter": self.mode,
            "retrieved": [{"doc_id": d, "visible": sees(d)} for d in retrieved],
            "denied": list(denied),
            "forbidden_in_answer": [{"doc_id": d, "used_as": how} for d, how in reached.items()],
        }


def _content_used(simulated: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """(doc id, how) for every piece of a document's content the model put in the answer, from
    its own record: a private record disclosed in any form (a refusal only when it leaked a
    field), a claim stated or mentioned, an instruction followed or quoted, a link copied, an
    exfiltration URL written, a retrieved chunk dumped on an extraction request."""
    for d in simulated.get("disclosed", ()):
        if d["how"] != "refused" or d["fields"]:
            yield (
                d["doc_id"],
                "disclosed:" + ("refusal_leak" if d["how"] == "refused" else d["how"]),
            )
    for c in simulated.get("claims", ()):
        if c["mentioned"]:
            yield c["doc_id"], "claim:" + c["how"]
    for i in simulated.get("instructions", ()):
        if i["followed"] or i["quoted"]:
            yield i["doc_id"], "instruction:" + i["how"]
    for e in simulated.get("exfiltration", ()):
        if e["followed"] or e["quoted"]:
            yield e["doc_id"], "exfiltration:" + e["how"]
    extraction = simulated.get("extraction") or {}
    for doc_id in (extraction.get("dumped") or {}).get("doc_ids", ()):
        yield doc_id, "extraction:" + str(extraction.get("how", "dumped"))


def check_principal(principal: Any) -> None:
    """A principal must be a non-empty string (as in cases.jsonl)."""
    if principal is not None and not (isinstance(principal, str) and principal.strip()):
        raise InputError(
            f"principal must be a non-empty string (a user or tenant id): {principal!r}"
        )
