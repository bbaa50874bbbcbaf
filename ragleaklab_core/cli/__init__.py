"""The ``ragleaklab`` command line: the only code that prints, exits or configures logging."""

from ragleaklab_core.cli.commands import main

__all__ = ["main"]
