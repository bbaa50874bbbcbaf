"""Built-in threshold fitters (group ``ragleaklab.fitters``)."""
