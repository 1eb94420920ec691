"""Talking to model servers, all of it here: the one place their clients are made (bounds,
retries, redaction), chat with bounded concurrency and structured output with capability
fallback, an on-disk response cache, token usage and cost, embeddings, rerank."""
