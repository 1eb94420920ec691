"""The traverse request: a :class:`~kgbuild.retrieve.traverse.TraversalSpec` from JSON, its
fields' kinds read from the dataclass itself (so a new spec field is served and described in
``/openapi.json`` without a change here)."""

from __future__ import annotations

import math
from dataclasses import fields

from ..errors import KgbuildError
from ..retrieve.traverse import MAX_COUNT, MAX_HOPS, TraversalSpec
from ..schema.model import Schema


class ApiError(Exception):
    """A request the server refuses: HTTP ``status``, one-line ``message``, machine ``code``."""

    def __init__(self, status: int, message: str, code: str):
        super().__init__(message)
        self.status, self.code = status, code


_SPEC = {f.name: f for f in fields(TraversalSpec)}
# the range of every numeric field (the CLI's options have the same); checked here in one
# place, for every field alike, before any work, and stated in /openapi.json
BOUNDS: dict[str, tuple[float, float]] = {
    "hops": (1, MAX_HOPS), "cap": (0, MAX_COUNT), "max_nodes": (0, MAX_COUNT),
    "max_edges": (0, MAX_COUNT), "max_paths": (0, MAX_COUNT), "max_chars": (0, MAX_COUNT),
    "semantic": (0, MAX_COUNT), "semantic_min": (-1.0, 1.0), "min_confidence": (0.0, 1.0)}


def field_kind(name: str) -> tuple[str, bool]:
    """A spec field's JSON kind (``texts``, ``text``, ``integer``, ``number``, ``boolean``) and
    whether it may be null: only where the CLI can say so too (``cap``: --no-cap; a setting
    whose default is null), never a budget, so every request stays bounded."""
    f = _SPEC[name]
    base = str(f.type).removesuffix(" | None")
    kind = {"Sequence[str]": "texts", "str": "text", "int": "integer", "float": "number",
            "bool": "boolean"}[base]
    return kind, name == "cap" or f.default is None


def _in_range(name: str, value: float) -> None:
    low, high = BOUNDS[name]
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        kind = "an integer" if isinstance(low, int) else "a number"
        raise KgbuildError(f"{name} must be {kind} from {low} to {high}, got {value!r}")


def _valid(kind: str, value: object) -> bool:
    if kind == "texts":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "text":
        return isinstance(value, str)
    if kind == "boolean" or isinstance(value, bool):
        return isinstance(value, bool) and kind == "boolean"
    return isinstance(value, int) or (kind == "number" and isinstance(value, float))


def parse_spec(body: object, schema: Schema, semantic: bool = False) -> TraversalSpec:
    """A :class:`TraversalSpec` from a request's JSON, checked as ``kgbuild traverse`` checks
    its options (types, bounds, path and follow syntax, type names) before any work.

    As in the CLI, ``cap`` 0 means no cap, and ``shortest_path`` (when not given) is on for a
    question with ``types`` and neither ``path`` nor ``follow``. ``semantic`` seeds are refused
    unless the server has an embeddings endpoint (``semantic=True``)."""
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object with TraversalSpec fields", "usage")
    for key, value in body.items():
        if key not in _SPEC:
            raise ApiError(400, f"unknown field {key!r} (known: {', '.join(_SPEC)})", "usage")
        kind, nullable = field_kind(key)
        if not (_valid(kind, value) or (nullable and value is None)):
            name = {"texts": "a list of texts", "text": "a text", "integer": "an integer",
                    "number": "a number", "boolean": "true or false"}[kind]
            raise ApiError(400, f"{key} must be {name}" + (" or null" if nullable else ""),
                           "usage")
        if kind in ("integer", "number") and value is not None:
            _in_range(key, value)
    if body.get("semantic") and not semantic:
        raise ApiError(400, "semantic seeds need an embeddings endpoint: this server has none "
                            "(the config's 'embeddings'); leave semantic at 0", "usage")
    values = {k: tuple(v) if field_kind(k)[0] == "texts" else v for k, v in body.items()}
    if "shortest_path" in _SPEC and "shortest_path" not in values:
        values["shortest_path"] = bool(values.get("question") and values.get("types")
                                       and not (values.get("path") or values.get("follow")))
    spec = TraversalSpec(**values)
    if spec.cap == 0:
        spec.cap = None
    if not (spec.seeds or spec.names or spec.question):
        raise ApiError(400, "give at least one of seeds, names or question", "usage")
    spec.check(schema)
    return spec


_UNBOUNDED = {n for n in _SPEC if field_kind(n)[0] in ("integer", "number")} - set(BOUNDS)
if _UNBOUNDED:  # a new numeric spec field is never served without a range
    raise RuntimeError(f"no range in kgbuild.serve.spec.BOUNDS for {sorted(_UNBOUNDED)}")
