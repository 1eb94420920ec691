"""The one place where extractors are registered, in the order they are tried."""

from __future__ import annotations

from .records import Extractor

EXTRACTORS: list[Extractor] = []


def register(extractor: Extractor) -> Extractor:
    """Add an extractor instance to the registry (module import time)."""
    EXTRACTORS.append(extractor)
    return extractor
