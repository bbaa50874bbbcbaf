"""Attack packs as data: the ``pack.toml`` manifest, validating a pack, scaffolding a new one."""
