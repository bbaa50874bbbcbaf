"""Built-in targets (group ``ragleaklab.targets``)."""
