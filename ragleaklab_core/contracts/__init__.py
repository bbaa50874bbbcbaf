"""The plugin contract, one module per plugin group: its protocol, its members and its traits.

Each group's module holds the methods every plugin of the group must have (a small protocol
that plugins need not inherit from), the optional members the core reads when a plugin defines
them (a table of :class:`~ragleaklab_core.contracts.members.Member`), and the frozen traits
record those members are read into once, when the plugin is loaded:

- :mod:`.packs`, :mod:`.metrics`, :mod:`.fitters`, :mod:`.targets`, :mod:`.reporters`,
  :mod:`.judges`: one group each;
- :mod:`.members`: what every group's table is made of, and how a member is read;
- :mod:`.groups`: every group by its entry-point name (protocols, tables, traits readers);
- :mod:`.spelling`: the attributes that look like a member a plugin lacks (refused at load).

Plugin authors import these names from :mod:`ragleaklab_core.interfaces` (or the public API),
which re-exports them; the modules here may move.
"""
