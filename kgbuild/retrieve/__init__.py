"""Retrieval: traversal specs, the adjacency index, walks, context packs, semantic seeds."""
