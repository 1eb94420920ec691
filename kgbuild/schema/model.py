"""The typed schema: node types, edge types, attributes, loaded from ``schema/*.yaml``.

The schema is the single source of truth. Everything else (RDF vocabulary, SHACL shapes,
traversal's allowed edges, the JSON schema for LLM extraction, the resolver's type gates)
is derived from a :class:`Schema` and never declared twice.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property

from ..errors import SchemaError
from ..io.suggest import did_you_mean

DATATYPES = {"string", "integer", "decimal", "boolean", "date", "dateTime", "anyURI"}


@dataclass(frozen=True)
class NodeType:
    name: str
    iri: str
    parent: str | None = None
    description: str = ""


@dataclass(frozen=True)
class EdgeType:
    name: str
    iri: str
    domain: tuple[str, ...]
    range: tuple[str, ...]
    inverse: str | None = None
    inverse_iri: str | None = None
    transitive: bool = False
    description: str = ""
    cues: tuple[str, ...] = ()  # words or phrases that state the relation in text


@dataclass(frozen=True)
class Attribute:
    name: str
    iri: str
    datatype: str = "string"
    multiple: bool = False
    description: str = ""
    cues: tuple[str, ...] = ()  # words or phrases that state the value's relation in text


@dataclass
class Schema:
    """A loaded, checked schema. Use :func:`load_schema` to get one."""

    name: str
    namespace: str
    prefix: str
    node_types: dict[str, NodeType]
    edge_types: dict[str, EdgeType]
    attributes: dict[str, Attribute]
    description: str = ""
    version: int = 1
    source: str = ""
    _predicates: dict[str, tuple[EdgeType, bool]] = field(default_factory=dict, repr=False)
    type_by_iri: dict[str, str] = field(default_factory=dict, repr=False, init=False)
    edge_by_iri: dict[str, str] = field(default_factory=dict, repr=False, init=False)

    def __post_init__(self) -> None:
        self.type_by_iri = {t.iri: t.name for t in self.node_types.values()}
        self.edge_by_iri = {e.iri: e.name for e in self.edge_types.values()}
        for et in self.edge_types.values():
            self._predicates[et.name] = (et, False)
            if et.inverse:
                self._predicates[et.inverse] = (et, True)

    # -- types -------------------------------------------------------------
    def ancestors(self, type_name: str) -> list[str]:
        """``type_name`` and its parents, most specific first."""
        out = []
        t: str | None = type_name
        while t is not None:
            out.append(t)
            t = self.node_types[t].parent
        return out

    def is_a(self, type_name: str, ancestor: str) -> bool:
        """True when ``type_name`` is ``ancestor`` or one of its subtypes."""
        return type_name in self.node_types and ancestor in self.ancestors(type_name)

    def descendants(self, type_name: str) -> list[str]:
        """``type_name`` and every type below it, sorted by name after itself."""
        below = sorted(t for t in self.node_types if t != type_name and self.is_a(t, type_name))
        return [type_name, *below]

    def compatible_types(self, type_name: str) -> set[str]:
        """Types a mention of ``type_name`` may resolve to: itself, its ancestors, its descendants."""
        return set(self.ancestors(type_name)) | set(self.descendants(type_name))

    def node_type(self, name: str) -> NodeType:
        """The node type called ``name`` (case-insensitive)."""
        if name in self.node_types:
            return self.node_types[name]
        for t in self.node_types.values():
            if t.name.lower() == name.lower():
                return t
        raise SchemaError(f"unknown node type {name!r} in schema {self.name!r}"
                          + did_you_mean(name, self.node_types))

    def more_specific(self, a: str, b: str) -> str | None:
        """The more specific of two types on one branch, or None when they conflict."""
        if self.is_a(a, b):
            return a
        if self.is_a(b, a):
            return b
        return None

    # -- edges ---------------------------------------------------------------
    def predicate(self, name: str) -> tuple[EdgeType, bool]:
        """Edge type for a stored or inverse name, and whether ``name`` is the inverse."""
        try:
            return self._predicates[name]
        except KeyError:
            raise SchemaError(f"unknown edge type {name!r} in schema {self.name!r}"
                              + did_you_mean(name, self._predicates)) from None

    def canonical(self, subject: str, name: str, obj: str) -> tuple[str, str, str]:
        """Rewrite ``(s, name, o)`` into the stored direction of its edge type."""
        et, inverted = self.predicate(name)
        return (obj, et.name, subject) if inverted else (subject, et.name, obj)

    def allows(self, edge: str, subject_type: str, object_type: str) -> bool:
        """Whether the stored edge type ``edge`` may link these node types."""
        et = self.edge_types[edge]
        return any(self.is_a(subject_type, d) for d in et.domain) and any(
            self.is_a(object_type, r) for r in et.range
        )

    def allowed_edges(self) -> list[dict]:
        """Every walkable edge name with its direction, for traversal and help texts."""
        out = []
        for et in sorted(self.edge_types.values(), key=lambda e: e.name):
            out.append({"name": et.name, "stored": et.name, "direction": "out",
                        "from": list(et.domain), "to": list(et.range), "transitive": et.transitive})
            if et.inverse:
                out.append({"name": et.inverse, "stored": et.name, "direction": "in",
                            "from": list(et.range), "to": list(et.domain),
                            "transitive": et.transitive})
        return out

    def describe(self) -> str:
        """A readable summary: type tree, edges with direction and inverse, attributes."""
        lines = [f"schema {self.name} (v{self.version})  {self.prefix}: <{self.namespace}>"]
        if self.description:
            lines.append(self.description)
        lines.append("\nnode types:")

        def tree(parent: str | None, depth: int) -> None:
            for t in sorted(self.node_types.values(), key=lambda t: t.name):
                if t.parent == parent:
                    lines.append(f"  {'  ' * depth}{t.name:<{14 - 2 * depth}} {t.description}")
                    tree(t.name, depth + 1)
        tree(None, 0)
        lines.append("\nedge types (stored direction; inverse derived, never stored):")
        for e in sorted(self.edge_types.values(), key=lambda e: e.name):
            flag = "  [transitive]" if e.transitive else ""
            lines.append(f"  {'|'.join(e.domain)} --{e.name}--> {'|'.join(e.range)}"
                         f"   inverse: {e.inverse or '-'}{flag}")
        if self.attributes:
            lines.append("\nattributes:")
            for a in sorted(self.attributes.values(), key=lambda a: a.name):
                many = ", multiple" if a.multiple else ""
                lines.append(f"  {a.name} ({a.datatype}{many})  {a.description}")
        return "\n".join(lines)

    @cached_property
    def digest(self) -> str:
        """SHA-256 of everything the schema declares: equal digests build equal graphs."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()

    def to_dict(self) -> dict:
        """A plain, JSON-ready description of the schema."""
        return {
            "name": self.name,
            "version": self.version,
            "namespace": self.namespace,
            "prefix": self.prefix,
            "description": self.description,
            "node_types": {n: {"parent": t.parent, "description": t.description, "iri": t.iri}
                           for n, t in sorted(self.node_types.items())},
            "edge_types": {n: {"inverse": e.inverse, "domain": list(e.domain),
                               "range": list(e.range), "transitive": e.transitive,
                               "description": e.description, "iri": e.iri,
                               **({"cues": list(e.cues)} if e.cues else {})}
                           for n, e in sorted(self.edge_types.items())},
            "attributes": {n: {"datatype": a.datatype, "multiple": a.multiple,
                               "description": a.description, "iri": a.iri,
                               **({"cues": list(a.cues)} if a.cues else {})}
                           for n, a in sorted(self.attributes.items())},
        }


