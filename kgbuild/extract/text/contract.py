"""The output contract of relation extraction from text, and its tolerant parser.

A model (or any other extractor) is asked for exactly this shape, extra keys ignored::

    {"relations": [{"subject": str, "subject_type": str|null, "predicate": str,
                    "object": str, "object_type": str|null, "evidence": str}]}

``evidence`` is a verbatim quote from the text; ``object`` may be a literal value when the
predicate is an attribute. :func:`parse_relations` reads what models really answer: JSON in
a code fence or with prose around it, a bare list of relations, one relation object, numbers
where strings were asked for. It never raises on bad input: every item it cannot read is
reported as one message and the others are kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

__all__ = ["CONTRACT_FIELDS", "Relation", "parse_relations", "relation_from_dict",
           "relations_json_schema"]

CONTRACT_FIELDS = ("subject", "subject_type", "predicate", "object", "object_type", "evidence")

# names models use for the contract's keys instead of the asked-for ones (first wins)
_SYNONYMS = {
    "subject": ("subject", "head", "sub", "source"),
    "predicate": ("predicate", "relation", "property", "rel"),
    "object": ("object", "tail", "obj", "target", "value"),
    "evidence": ("evidence", "quote", "sentence"),
    "subject_type": ("subject_type", "subjectType", "head_type"),
    "object_type": ("object_type", "objectType", "tail_type"),
}
_REQUIRED = ("subject", "predicate", "object")
_MAX_TEXT = 100_000  # characters of one field; longer values are refused, not truncated
_MAX_STARTS = 64  # places in an answer where a JSON value is tried (prose around JSON)


@dataclass(frozen=True)
class Relation:
    """One extracted relation as the contract states it (nothing verified yet)."""

    subject: str
    subject_type: str | None
    predicate: str
    object: str
    object_type: str | None
    evidence: str

    def to_dict(self) -> dict:
        return asdict(self)


def relations_json_schema(predicates: list[str] | None = None,
                          types: list[str] | None = None) -> dict:
    """The JSON Schema of the contract; ``predicates`` and ``types`` become enums when given
    (the strict ``response_format`` a client sends)."""
    pred: dict = {"type": "string"}
    if predicates:
        pred = {"type": "string", "enum": sorted(set(predicates))}
    typ: dict = {"type": ["string", "null"]}
    if types:
        typ = {"anyOf": [{"type": "string", "enum": sorted(set(types))}, {"type": "null"}]}
    item = {
        "type": "object",
        "additionalProperties": False,
        "required": list(CONTRACT_FIELDS),
        "properties": {
            "subject": {"type": "string"},
            "subject_type": typ,
            "predicate": pred,
            "object": {"type": "string"},
            "object_type": typ,
            "evidence": {"type": "string", "description": "a verbatim quote from the text"},
        },
    }
    return {"type": "object", "additionalProperties": False, "required": ["relations"],
            "properties": {"relations": {"type": "array", "items": item}}}


def parse_relations(payload: str | bytes | dict | list | None) -> tuple[list[Relation], list[str]]:
    """The relations in a model's answer, and one message per part that could not be read.

    ``payload`` is the raw answer text (JSON, possibly fenced or wrapped in prose) or already
    parsed JSON. Never raises for bad input."""
    errors: list[str] = []
    data = payload
    if isinstance(payload, bytes):
        data = payload.decode("utf-8", "replace")
    if isinstance(data, str):
        data, err = _load_json(data)
        if err:
            return [], [err]
    items = _items(data, errors)
    relations: list[Relation] = []
    for i, item in enumerate(items):
        rel, err = relation_from_dict(item)
        if err:
            errors.append(f"relation {i}: {err}")
        else:
            relations.append(rel)
    return relations, errors


def relation_from_dict(item: object) -> tuple[Relation | None, str | None]:
    """One contract object as a :class:`Relation`, or why it is not one."""
    if not isinstance(item, dict):
        return None, f"expected an object, got {_kind(item)}"
    values: dict[str, str | None] = {}
    for name, keys in _SYNONYMS.items():
        key = next((k for k in keys if k in item), None)
        raw = item.get(key) if key else None
        value, err = _text(raw)
        if err:
            return None, f"{name!r} {err}"
        values[name] = value
    missing = [n for n in _REQUIRED if not values[n]]
    if missing:
        return None, "missing or empty " + ", ".join(repr(n) for n in missing)
    return Relation(values["subject"], values["subject_type"] or None, values["predicate"],
                    values["object"], values["object_type"] or None,
                    values["evidence"] or ""), None


def _text(raw: object) -> tuple[str | None, str | None]:
    if raw is None:
        return None, None
    if isinstance(raw, bool):
        return ("true" if raw else "false"), None
    if isinstance(raw, int | float):
        return (str(int(raw)) if isinstance(raw, float) and raw.is_integer() else str(raw)), None
    if isinstance(raw, str):
        if len(raw) > _MAX_TEXT:
            return None, f"is longer than {_MAX_TEXT} characters"
        return raw.strip(), None
    return None, f"must be a string, got {_kind(raw)}"


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


def _items(data: object, errors: list[str]) -> list:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("relations", "triples", "edges"):
            if key in data:
                found = data[key]
                if isinstance(found, list):
                    return found
                if isinstance(found, dict):
                    return [found]
                errors.append(f"{key!r} must be a list, got {_kind(found)}")
                return []
        if any(k in data for k in _SYNONYMS["predicate"]):
            return [data]
        errors.append("no 'relations' list in the answer")
        return []
    errors.append(f"expected a JSON object with 'relations', got {_kind(data)}")
    return []


_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.S)


def _load_json(text: str) -> tuple[object, str | None]:
    """The first JSON value in ``text``: the whole text, a fenced block, or the first object
    or list found inside prose."""
    text = text.strip().lstrip("\ufeff")
    if not text:
        return None, "empty answer"
    try:
        return json.loads(text), None
    except (ValueError, RecursionError):
        pass
    for block in _FENCE.findall(text)[:_MAX_STARTS]:
        try:
            return json.loads(block.strip()), None
        except (ValueError, RecursionError):
            continue
    decoder = json.JSONDecoder()
    best = None
    for tries, m in enumerate(re.finditer(r"[\[{]", text)):
        if tries >= _MAX_STARTS:  # garbage full of brackets: bounded work, not quadratic
            break
        try:
            value, _end = decoder.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) or (isinstance(value, list) and value):
            best = value
            break
        if best is None:
            best = value
    if best is not None:
        return best, None
    return None, f"no JSON in the answer: {text[:80]!r}"
