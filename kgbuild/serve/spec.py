"""The traverse request: a :class:`~kgbuild.retrieve.spec.TraversalSpec` from JSON, its
fields' kinds read from the dataclass itself (so a new spec field is served and described in
``/openapi.json`` without a change here); the ranges, defaults and rules are the spec's own
(:mod:`kgbuild.retrieve.spec`)."""

from __future__ import annotations

from ..retrieve.spec import BOUNDS, FIELDS, TraversalSpec, check_range, request_spec
from ..schema.model import Schema


class ApiError(Exception):
    """A request the server refuses: HTTP ``status``, one-line ``message``, machine ``code``."""

    def __init__(self, status: int, message: str, code: str):
        super().__init__(message)
        self.status, self.code = status, code


def field_kind(name: str) -> tuple[str, bool]:
    """A spec field's JSON kind (``texts``, ``text``, ``integer``, ``number``, ``boolean``) and
    whether it may be null: only where the CLI can say so too (``cap``: --no-cap; a setting
    whose default is null), never a budget, so every request stays bounded."""
    f = FIELDS[name]
    base = str(f.type).removesuffix(" | None")
    kind = {"Sequence[str]": "texts", "str": "text", "int": "integer", "float": "number",
            "bool": "boolean"}[base]
    return kind, name == "cap" or f.default is None


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
        if key not in FIELDS:
            raise ApiError(400, f"unknown field {key!r} (known: {', '.join(FIELDS)})", "usage")
        kind, nullable = field_kind(key)
        if not (_valid(kind, value) or (nullable and value is None)):
            name = {"texts": "a list of texts", "text": "a text", "integer": "an integer",
                    "number": "a number", "boolean": "true or false"}[kind]
            raise ApiError(400, f"{key} must be {name}" + (" or null" if nullable else ""),
                           "usage")
        if kind in ("integer", "number") and value is not None:
            check_range(key, value)
    if body.get("semantic") and not semantic:
        raise ApiError(400, "semantic seeds need an embeddings endpoint: this server has none "
                            "(the config's 'embeddings'); leave semantic at 0", "usage")
    spec = request_spec({k: tuple(v) if field_kind(k)[0] == "texts" else v
                         for k, v in body.items()})
    if not (spec.seeds or spec.names or spec.question):
        raise ApiError(400, "give at least one of seeds, names or question", "usage")
    spec.check(schema)
    return spec


_UNBOUNDED = {n for n in FIELDS if field_kind(n)[0] in ("integer", "number")} - set(BOUNDS)
if _UNBOUNDED:  # a new numeric spec field is never served without a range
    raise RuntimeError(f"no range in kgbuild.retrieve.spec.BOUNDS for {sorted(_UNBOUNDED)}")
