"""Evaluation: retrieval cases scored by the evidence their context packs hold."""
