"""Writing the command line's outputs: atomically, creating directories; a failure exits 2.

The functions live in :mod:`ragleaklab_core._atomic`, where the run session writes with them too.
"""

from __future__ import annotations

from ragleaklab_core._atomic import make_dir, write_file

__all__ = ["make_dir", "write_file"]
