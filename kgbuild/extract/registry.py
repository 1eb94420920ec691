"""The one place where extractors are registered, in the order they are tried."""

from __future__ import annotations

from .records import Extractor

TEXT_EXTRACTOR_PREFIX = "llm:"  # an LLM text extractor's name: this and the model's
EXTRACTORS: list[Extractor] = []
_BY_NAME: dict[str, Extractor] = {}


def register(extractor: Extractor) -> Extractor:
    """Add an extractor instance to the registry (module import time), checking that it
    declares what :class:`~kgbuild.extract.records.Extractor` asks for. A failed check is a
    bug in the extractor's code, met when it is imported: Python's TypeError or ValueError."""
    name = getattr(extractor, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{extractor!r}: an extractor needs a non-empty string name")
    if name in _BY_NAME:
        raise ValueError(f"an extractor named {name!r} is already registered")
    version = getattr(extractor, "version", None)
    if isinstance(version, bool) or not isinstance(version, (int, str)) or version in ("", None):
        raise TypeError(f"extractor {name!r}: version must be an int or a non-empty string")
    emits = getattr(extractor, "emits", None)
    if not isinstance(emits, frozenset) or not all(isinstance(e, str) for e in emits):
        raise TypeError(f"extractor {name!r}: emits must be a frozenset of type and edge names")
    if not isinstance(getattr(extractor, "ownable", None), bool):
        raise TypeError(f"extractor {name!r}: ownable must be True or False")
    EXTRACTORS.append(extractor)
    _BY_NAME[name] = extractor
    return extractor


def get(name: str) -> Extractor | None:
    """The registered extractor called ``name`` (names are unique), or None."""
    return _BY_NAME.get(name)
