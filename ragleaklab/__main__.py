"""``python -m ragleaklab``: the ``ragleaklab`` command, for environments without its script."""

from ragleaklab_core.cli import main

main()
