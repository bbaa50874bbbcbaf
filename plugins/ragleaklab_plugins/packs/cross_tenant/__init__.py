"""Cross-tenant: can a user of one tenant get another tenant's documents into the answer?

Six tenants share one assistant and one index. Their customer records, incident reports,
workspace settings and salary letters carry ``metadata["access"]`` (a tenant group, or the one
employee a letter is addressed to), and every case is asked as a principal ``<tenant>:<user>``.
A case is positive when content of a document the asker may not see reached the answer. Scored
by the ``access`` metric; primary value ``forbidden_words``."""

from typing import ClassVar

from attrs import frozen

from ragleaklab_core import ManifestPack


@frozen
class CrossTenantPack(ManifestPack):
    """The ``cross-tenant`` pack (type ``access``), read from its ``pack.toml``."""

    data_package: ClassVar[str] = __name__
