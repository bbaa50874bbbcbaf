"""Built-in judges (group ``ragleaklab.judges``): an LLM judge over any OpenAI-compatible
endpoint."""
