"""Built-in metrics (group ``ragleaklab.metrics``): retrieval, sentinel, claim and verbatim."""
