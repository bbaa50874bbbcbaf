"""Built-in metrics (group ``ragleaklab.metrics``): retrieval, sentinel, claim, verbatim and
exfiltration."""
