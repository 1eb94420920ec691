"""Passage retrieval: corpora ingested into the store, searched lexically, densely and through
entity links, fused, with abstention (``kgbuild ingest``, ``kgbuild retrieve``)."""
