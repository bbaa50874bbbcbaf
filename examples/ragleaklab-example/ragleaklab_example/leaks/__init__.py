"""``example-leaks``: a data-only pack, shipped as files inside this package."""

from typing import ClassVar

from attrs import frozen

from ragleaklab_core import ManifestPack


@frozen
class ExampleLeaksPack(ManifestPack):
    """The ``example-leaks`` pack, read from the ``pack.toml`` next to this module."""

    # The package that holds pack.toml: this one.
    data_package: ClassVar[str] = __name__
