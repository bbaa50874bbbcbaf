"""Importing the pack generator from a test, whether or not the checkout is installed.

The generator (``ragleaklab_packgen``) is a tool of this checkout that the wheel leaves out, and
``tox -e dist`` runs the tests against the installed wheel, without the checkout on
``sys.path``. :func:`packgen` puts the checkout there for one import only. The modules imported
this way must load nothing of ragleaklab's that is not imported already (the core and the
reference target are imported here first), so no installed module is shadowed.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import ragleaklab_plugins.targets.reference  # noqa: F401

# Imported from the installation before the checkout is ever on the path: the generator's
# modules import the core and the reference target, which must be the installed ones.
import ragleaklab_core  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def packgen(name: str) -> ModuleType:
    """``ragleaklab_packgen.<name>``, imported from the checkout."""
    sys.path.insert(0, str(ROOT))
    try:
        return importlib.import_module(f"ragleaklab_packgen.{name}")
    finally:
        sys.path.remove(str(ROOT))
