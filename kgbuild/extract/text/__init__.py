"""Relations from prose: the LLM output contract, edge verification against the source text,
chunking and prompts."""
