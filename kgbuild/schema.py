"""The typed schema: node types, edge types, attributes, loaded from ``schema/*.yaml``.

The schema is the single source of truth. Everything else (RDF vocabulary, SHACL shapes,
traversal's allowed edges, the JSON schema for LLM extraction, the resolver's type gates)
is derived from a :class:`Schema` and never declared twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .errors import SchemaError

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"
DEFAULT_SCHEMA = "software"
DATATYPES = {"string", "integer", "decimal", "boolean", "date", "dateTime", "anyURI"}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


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


@dataclass(frozen=True)
class Attribute:
    name: str
    iri: str
    datatype: str = "string"
    multiple: bool = False
    description: str = ""


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
        raise SchemaError(f"unknown node type {name!r} in schema {self.name!r}")

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
            raise SchemaError(f"unknown edge type {name!r} in schema {self.name!r}") from None

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

    def extraction_json_schema(self) -> dict:
        """The JSON Schema an LLM's extraction output must follow: typed entities and
        relations named as the schema names them (either direction of a pair), each relation
        with the verbatim evidence sentence it was read from."""
        types = sorted(self.node_types)
        relations = sorted({e.name for e in self.edge_types.values()} |
                           {e.inverse for e in self.edge_types.values() if e.inverse})
        described = "; ".join(f"{e.name}: {'|'.join(e.domain)} -> {'|'.join(e.range)}"
                              for e in sorted(self.edge_types.values(), key=lambda e: e.name))
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"kgbuild extraction ({self.name} schema v{self.version})",
            "type": "object",
            "additionalProperties": False,
            "required": ["entities", "relations"],
            "properties": {
                "entities": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False, "required": ["name", "type"],
                    "properties": {"name": {"type": "string", "minLength": 1},
                                   "type": {"enum": types},
                                   "aliases": {"type": "array", "items": {"type": "string"}}}}},
                "relations": {"type": "array", "description": described, "items": {
                    "type": "object", "additionalProperties": False,
                    "required": ["subject", "predicate", "object", "evidence"],
                    "properties": {"subject": {"type": "string", "minLength": 1},
                                   "predicate": {"enum": relations},
                                   "object": {"type": "string", "minLength": 1},
                                   "evidence": {"type": "string", "minLength": 1,
                                                "description": "the sentence, quoted verbatim"}}}},
            },
        }

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
                               "description": e.description, "iri": e.iri}
                           for n, e in sorted(self.edge_types.items())},
            "attributes": {n: {"datatype": a.datatype, "multiple": a.multiple,
                               "description": a.description, "iri": a.iri}
                           for n, a in sorted(self.attributes.items())},
        }


def schema_path(name_or_path: str | Path) -> Path:
    """Resolve a bundled schema name (``software``) or a path to a YAML file."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        if not p.is_file():
            raise SchemaError(f"schema file not found: {p}")
        return p
    candidate = SCHEMA_DIR / f"{name_or_path}.yaml"
    if not candidate.is_file():
        known = ", ".join(sorted(x.stem for x in SCHEMA_DIR.glob("*.yaml"))) or "none"
        raise SchemaError(f"unknown schema {str(name_or_path)!r} (bundled: {known})")
    return candidate


def load_schema(name_or_path: str | Path = DEFAULT_SCHEMA) -> Schema:
    """Load and check a schema by bundled name or file path; raises :class:`SchemaError`."""
    path = schema_path(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
        raw = yaml.safe_load(text)
    except UnicodeDecodeError as exc:
        raise SchemaError(f"not UTF-8: {exc.reason}", str(path)) from None
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise SchemaError(f"YAML syntax error: {getattr(exc, 'problem', exc)}", str(path),
                          line + 1 if line is not None else None) from None
    return parse_schema(raw, source=str(path), text=text)


def _key_lines(text: str) -> dict[str, int]:
    """Line (1-based) of every top-level key and every key one level below it."""
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return {}
    lines: dict[str, int] = {}
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            lines.setdefault(str(k.value), k.start_mark.line + 1)
            if isinstance(v, yaml.MappingNode):
                for k2, _ in v.value:
                    lines.setdefault(str(k2.value), k2.start_mark.line + 1)
    return lines


def parse_schema(raw: object, source: str = "<schema>", text: str = "") -> Schema:
    """Build a :class:`Schema` from already-parsed YAML, checking it thoroughly."""

    key_lines = _key_lines(text) if text else {}

    def fail(msg: str, key: str | None = None) -> SchemaError:
        return SchemaError(msg, source, key_lines.get(key) if key else None)

    if not isinstance(raw, dict):
        raise fail("a schema must be a mapping with node_types and edge_types")
    for key in ("name", "namespace", "node_types", "edge_types"):
        if key not in raw:
            raise fail(f"missing required key {key!r}")
    unknown = set(raw) - {"name", "version", "namespace", "prefix", "description",
                          "node_types", "edge_types", "attributes"}
    if unknown:
        raise fail(f"unknown top-level key {sorted(unknown)[0]!r}", sorted(unknown)[0])
    ns = str(raw["namespace"])
    if not re.match(r"^[a-z][a-z0-9+.-]*:\S+[#/]$", ns):
        raise fail(f"namespace must be an absolute IRI ending in '#' or '/': {ns!r}", "namespace")
    prefix = str(raw.get("prefix") or raw["name"])
    if not _NAME.match(prefix):
        raise fail(f"prefix {prefix!r} is not a valid name", "prefix")

    seen: dict[str, str] = {}

    def claim(name: object, what: str) -> str:
        if not isinstance(name, str) or not _NAME.match(name):
            raise fail(f"{what} name {name!r} must match [A-Za-z][A-Za-z0-9_]*")
        if name.lower() in seen:
            raise fail(f"duplicate name {name!r}: already used by {seen[name.lower()]}", name)
        seen[name.lower()] = f"{what} {name!r}"
        return name

    def mapping(key: str) -> dict:
        val = raw.get(key) or {}
        if not isinstance(val, dict):
            raise fail(f"{key} must be a mapping of name to definition", key)
        for name, spec in val.items():
            if spec is not None and not isinstance(spec, dict):
                raise fail(f"{key}.{name} must be a mapping", str(name))
        return val

    node_types: dict[str, NodeType] = {}
    for name, spec in mapping("node_types").items():
        spec = spec or {}
        _only(spec, {"parent", "description"}, f"node type {name!r}", fail, str(name))
        node_types[claim(name, "node type")] = NodeType(
            name, ns + name, spec.get("parent"), str(spec.get("description", "")).strip())
    if not node_types:
        raise fail("node_types is empty", "node_types")
    for t in node_types.values():
        if t.parent is not None and t.parent not in node_types:
            raise fail(f"node type {t.name!r} has unknown parent {t.parent!r}", t.name)
        seen_chain, cur = {t.name}, t.parent
        while cur is not None:
            if cur in seen_chain:
                raise fail(f"node type {t.name!r} is part of a parent cycle", t.name)
            seen_chain.add(cur)
            cur = node_types[cur].parent

    edge_types: dict[str, EdgeType] = {}
    inverse_of: dict[str, str] = {}
    for name, spec in mapping("edge_types").items():
        spec = spec or {}
        _only(spec, {"domain", "range", "inverse", "transitive", "description"},
              f"edge type {name!r}", fail, str(name))
        claim(name, "edge type")
        dom, rng = _types(spec, "domain", name, node_types, fail), _types(spec, "range", name, node_types, fail)
        inv = spec.get("inverse")
        if inv is not None:
            if inv in edge_types or inv in mapping("edge_types"):
                raise fail(f"edge type {name!r}: inverse {inv!r} is declared as an edge type of its "
                           f"own; declare each pair once, in its stored direction", str(name))
            claim(inv, f"inverse of {name!r}")
            inverse_of[inv] = name
        transitive = spec.get("transitive", False)
        if not isinstance(transitive, bool):
            raise fail(f"edge type {name!r}: transitive must be true or false", str(name))
        edge_types[name] = EdgeType(name, ns + name, dom, rng, inv, ns + inv if inv else None,
                                    transitive, str(spec.get("description", "")).strip())
    if not edge_types:
        raise fail("edge_types is empty", "edge_types")

    attributes: dict[str, Attribute] = {}
    for name, spec in mapping("attributes").items():
        spec = spec or {}
        _only(spec, {"datatype", "multiple", "description"}, f"attribute {name!r}", fail, str(name))
        dt = spec.get("datatype", "string")
        if dt not in DATATYPES:
            raise fail(f"attribute {name!r}: unknown datatype {dt!r} "
                       f"(one of {', '.join(sorted(DATATYPES))})", str(name))
        attributes[claim(name, "attribute")] = Attribute(
            name, ns + name, dt, bool(spec.get("multiple", False)),
            str(spec.get("description", "")).strip())

    version = raw.get("version", 1)
    if not isinstance(version, int):
        raise fail("version must be an integer", "version")
    return Schema(str(raw["name"]), ns, prefix, node_types, edge_types, attributes,
                  str(raw.get("description", "")).strip(), version, source)


def _only(spec: dict, allowed: set[str], what: str, fail, key: str) -> None:
    extra = sorted(set(spec) - allowed)
    if extra:
        raise fail(f"{what}: unknown key {extra[0]!r} (allowed: {', '.join(sorted(allowed))})", key)


def _types(spec: dict, key: str, edge: str, node_types: dict, fail) -> tuple[str, ...]:
    val = spec.get(key)
    if val is None:
        raise fail(f"edge type {edge!r} has no {key}", edge)
    vals = [val] if isinstance(val, str) else val
    if not isinstance(vals, list) or not vals:
        raise fail(f"edge type {edge!r}: {key} must be a type name or a non-empty list", edge)
    for v in vals:
        if v not in node_types:
            raise fail(f"edge type {edge!r}: unknown type {v!r} in {key}", edge)
    return tuple(vals)
