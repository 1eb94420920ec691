"""``kgbuild serve``: an HTTP JSON API for retrievers, a SPARQL 1.1 endpoint and browsable
pages over a live, in-memory index of a store."""
