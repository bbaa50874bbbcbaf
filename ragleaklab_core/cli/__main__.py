"""``python -m ragleaklab_core.cli``: the ``ragleaklab`` command."""

from ragleaklab_core.cli.commands import main

main()
