"""``kgbuild serve``: an HTTP JSON API for retrievers over a live, in-memory index of a store."""
