"""Extraction: discovering sources, one extractor per format, assembling per-document graphs."""
