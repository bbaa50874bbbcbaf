"""``python -m ragleaklab_core``: the ``ragleaklab`` command, where its script is missing."""

from ragleaklab_core.cli import main

main()
