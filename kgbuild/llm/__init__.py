"""Talking to LLMs: an OpenAI-compatible chat client with bounded concurrency, structured
output with capability fallback, an on-disk response cache, token usage and cost."""
