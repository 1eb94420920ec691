"""Loading a schema from YAML, with every check located at file and line."""

from __future__ import annotations

import re
from pathlib import Path

import pyoxigraph

from ..errors import InputError, SchemaError
from ..io.suggest import did_you_mean
from ..io.yamlfile import YMap, load_yaml, load_yaml_file
from ..vocab import (
    ASSERTION_BASE,
    DCTERMS,
    ID_BASE,
    KG,
    OWL,
    PROV,
    RDF,
    RDFS,
    SH,
    SKOS,
    SOURCE_BASE,
    XSD,
)
from .bundled import bundled
from .model import DATATYPES, Attribute, EdgeType, NodeType, Schema

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # also a valid Turtle PN_PREFIX and PN_LOCAL
# no character N-Triples' IRIREF excludes (controls, space, <>"{}|^`\), '#' only at the end
NAMESPACE = re.compile(r"^[a-z][a-z0-9+.-]*:[^\x00-\x20<>\"{}|^`\\#]+[#/]$")
_IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20<>\"{}|^`\\]+$")
MAX_VERSION = 2**31 - 1
# prefixes every serialisation binds itself (namespaces.prefixes, the shapes' "sh"/"shape")
FIXED_PREFIXES = {"kg": KG, "prov": PROV, "dcterms": DCTERMS, "rdf": RDF,
                  "rdfs": RDFS, "owl": OWL, "skos": SKOS, "xsd": XSD,
                  "id": ID_BASE, "assertion": ASSERTION_BASE, "src": SOURCE_BASE,
                  "sh": SH, "shape": None}
# predicates kgbuild's graph layout gives a meaning of its own: no edge or attribute may be one
RESERVED_PREDICATES = {RDF + "type", RDFS + "label", DCTERMS + "identifier", SKOS + "altLabel",
             RDF + "subject", RDF + "predicate", RDF + "object", PROV + "wasDerivedFrom",
             PROV + "generatedAtTime"}
OWN_IRIS = (KG, ID_BASE, ASSERTION_BASE, SOURCE_BASE)  # IRIs kgbuild mints for itself

SCHEMA_DIR = bundled("schema")
DEFAULT_SCHEMA = "software"


def schema_path(name_or_path: str | Path) -> Path:
    """Resolve a bundled schema name (``software``) or a path to a YAML file."""
    if not str(name_or_path).strip():
        raise SchemaError("the schema name is empty: give a bundled name or a YAML file")
    p = Path(name_or_path)
    try:
        if p.suffix in (".yaml", ".yml") or p.exists():
            if not p.exists():
                raise SchemaError(f"schema file not found: {p}")
            if not p.is_file():
                raise SchemaError(f"schema {str(p)!r} is not a regular file")
            return p
        candidate = SCHEMA_DIR / f"{name_or_path}.yaml"
        found = candidate.is_file()
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte
        raise SchemaError(f"schema {str(name_or_path)[:200]!r}: "
                          f"{getattr(exc, 'strerror', None) or exc}") from None
    if not found:
        known = ", ".join(sorted(x.stem for x in SCHEMA_DIR.glob("*.yaml"))) or "none"
        raise SchemaError(f"unknown schema {str(name_or_path)!r} (bundled: {known})"
                          + did_you_mean(str(name_or_path), known.split(", ")))
    return candidate


MAX_EXTENDS = 8  # schemas one extends chain may hold


def load_schema(name_or_path: str | Path = DEFAULT_SCHEMA) -> Schema:
    """Load and check a schema by bundled name or file path; raises :class:`SchemaError`."""
    return _load(schema_path(name_or_path), ())


def _load(path: Path, chain: tuple[Path, ...]) -> Schema:
    try:  # bounded, alias bombs and duplicate keys refused, errors at file:line
        doc = load_yaml_file(path)
    except InputError as exc:
        raise SchemaError(exc.message, exc.file, exc.line) from None
    return parse_schema(doc.data, source=str(path), text=doc.text, _chain=(*chain, path))


def _base_schema(value: object, source: str, chain: tuple[Path, ...], fail) -> Schema:
    """The schema ``extends:`` names: a bundled name (``software``) or a YAML file, relative
    to the extending schema's folder; a cycle or a chain over :data:`MAX_EXTENDS` is refused."""
    if not isinstance(value, str) or not value.strip():
        raise fail(f"extends must be a bundled schema name or a YAML file, got {_kind(value)}",
                   "extends")
    value = value.strip()
    is_file = value.endswith((".yaml", ".yml")) or "/" in value or "\\" in value
    base_dir = Path(source).parent if source and not source.startswith("<") else Path(".")
    try:
        path = schema_path(base_dir / value if is_file else value)
    except SchemaError as exc:
        raise fail(f"extends: {exc.message}", "extends") from None
    if any(path.resolve() == p.resolve() for p in chain):
        raise fail(f"extends {value!r}: a schema extends itself (through "
                   f"{' -> '.join(p.name for p in chain)})", "extends")
    if len(chain) >= MAX_EXTENDS:
        raise fail(f"extends {value!r}: more than {MAX_EXTENDS} schemas in one extends chain",
                   "extends")
    return _load(path, chain)


def is_iri(text: object) -> bool:
    """Whether ``text`` is an absolute IRI every RDF tool here accepts (RFC 3987, as the store
    parses it, and none of the characters N-Triples excludes)."""
    if not isinstance(text, str) or not _IRI.match(text):
        return False
    try:
        pyoxigraph.NamedNode(text)
    except ValueError:
        return False
    return True


def _key_lines(text: str) -> dict[str, int]:
    """Line (1-based) of every top-level key and every key one level below it."""
    try:
        docs = load_yaml(text, "<schema>")
    except InputError:
        return {}
    root = docs[0].data if docs else None
    lines: dict[str, int] = {}
    if isinstance(root, YMap):
        for k, v in root.items():
            lines.setdefault(str(k), root.line_of(k))
            if isinstance(v, YMap):
                for k2 in v:
                    lines.setdefault(str(k2), v.line_of(k2))
    return lines


def parse_schema(raw: object, source: str = "<schema>", text: str = "",
                 _chain: tuple[Path, ...] = ()) -> Schema:
    """Build a :class:`Schema` from already-parsed YAML, checking it thoroughly.

    A schema with ``extends: <bundled name or file>`` holds every term of that schema (IRIs
    unchanged) and adds its own: new node types (whose parent may be a base type), edge types
    and attributes; redeclaring a base term is a duplicate. ``namespace`` and ``prefix``
    default to the base's."""

    key_lines = _key_lines(text) if text else {}

    def fail(msg: str, key: str | None = None) -> SchemaError:
        return SchemaError(msg, source, key_lines.get(key) if key else None)

    if not isinstance(raw, dict):
        raise fail("a schema must be a mapping with node_types and edge_types")
    _keys_are_text(raw, "the schema", fail)
    base = _base_schema(raw["extends"], source, _chain, fail) if "extends" in raw else None
    if base is not None:  # the base's namespace and prefix unless the extension names its own
        raw = dict(raw)
        raw.setdefault("namespace", base.namespace)
        if raw["namespace"] == base.namespace:
            raw.setdefault("prefix", base.prefix)
    for key in ("name", "namespace") if base else ("name", "namespace", "node_types", "edge_types"):
        if key not in raw:
            raise fail(f"missing required key {key!r}")
    unknown = set(raw) - {"name", "version", "namespace", "prefix", "description",
                          "node_types", "edge_types", "attributes", "extends"}
    if unknown:
        raise fail(f"unknown top-level key {sorted(unknown)[0]!r}", sorted(unknown)[0])
    schema_name = raw["name"]
    if (not isinstance(schema_name, str) or not schema_name.strip() or not schema_name.isprintable()
            or len(schema_name) > 200):
        raise fail(f"name must be a one-line text of at most 200 characters: {schema_name!r}",
                   "name")
    ns = raw["namespace"]
    if (not isinstance(ns, str) or not NAMESPACE.match(ns) or not is_iri(ns + "X")
            or not is_iri(ns.rstrip("#/") + "/shapes#X")):
        raise fail(f"namespace must be an absolute IRI ending in '#' or '/' (no other '#', none "
                   f"of the characters space <>\"{{}}|^`\\): {ns!r}", "namespace")
    prefix = raw.get("prefix")
    if prefix is None:
        prefix = schema_name
        if not NAME.match(prefix):
            raise fail(f"the name {schema_name!r} is no Turtle prefix: give a prefix matching "
                       f"[A-Za-z][A-Za-z0-9_]*", "name")
    elif not isinstance(prefix, str) or not NAME.match(prefix):
        raise fail(f"prefix {prefix!r} is not a valid name", "prefix")
    if prefix in FIXED_PREFIXES and FIXED_PREFIXES[prefix] != ns:
        raise fail(f"prefix {prefix!r} is one kgbuild binds itself"
                   + (f" (to <{FIXED_PREFIXES[prefix]}>)" if FIXED_PREFIXES[prefix] else "")
                   + ": choose another", "prefix")

    seen: dict[str, str] = {}
    iris: dict[str, str] = {}
    node_types: dict[str, NodeType] = {}
    edge_types: dict[str, EdgeType] = {}
    attributes: dict[str, Attribute] = {}
    if base is not None:  # the base's terms first: an extension adds, never redeclares
        origin = f"(from schema {base.name!r})"
        node_types.update(base.node_types)
        edge_types.update(base.edge_types)
        attributes.update(base.attributes)
        for what, terms in (("node type", base.node_types), ("edge type", base.edge_types),
                            ("attribute", base.attributes)):
            for t in terms.values():
                seen[t.name.lower()] = iris[t.iri] = f"{what} {t.name!r} {origin}"
        for e in base.edge_types.values():
            if e.inverse:
                seen[e.inverse.lower()] = f"inverse of {e.name!r} {origin}"
                iris[e.inverse_iri or base.namespace + e.inverse] = \
                    f"inverse of {e.name!r} {origin}"

    def term_iri(spec: dict, key: str, name: str, what: str, predicate: bool) -> str:
        """The IRI of a term: ``namespace + name`` unless the spec names one (``iri:``)."""
        iri = spec.get(key)
        if iri is None:
            iri = ns + name
        elif not is_iri(iri):
            raise fail(f"{what} {name!r}: {key} must be an absolute IRI: {iri!r}", name)
        if iri.startswith(OWN_IRIS) or (predicate and iri in RESERVED_PREDICATES):
            raise fail(f"{what} {name!r}: {key} <{iri}> is reserved by kgbuild's graph layout",
                       name)
        if iri in iris:
            raise fail(f"{what} {name!r}: IRI <{iri}> is already used by {iris[iri]}", name)
        iris[iri] = f"{what} {name!r}"
        return iri

    def claim(name: object, what: str) -> str:
        if not isinstance(name, str) or not NAME.match(name):
            raise fail(f"{what} name {name!r} must match [A-Za-z][A-Za-z0-9_]*")
        if name.lower() in seen:
            raise fail(f"duplicate name {name!r}: already used by {seen[name.lower()]}", name)
        seen[name.lower()] = f"{what} {name!r}"
        return name

    def mapping(key: str) -> dict:
        val = raw.get(key) or {}
        if not isinstance(val, dict):
            raise fail(f"{key} must be a mapping of name to definition", key)
        _keys_are_text(val, key, fail)
        for name, spec in val.items():
            if spec is not None and not isinstance(spec, dict):
                raise fail(f"{key}.{name} must be a mapping", str(name))
            _keys_are_text(spec or {}, f"{key}.{name}", fail, name)
        return val

    def text_field(spec: dict, key: str, what: str, name: str) -> str:
        """An optional one-value text field (a number is taken as its text)."""
        val = spec.get(key)
        if val is None:
            return ""
        if isinstance(val, bool) or not isinstance(val, (str, int, float)):
            raise fail(f"{what} {name!r}: {key} must be text, got {_kind(val)}", name)
        return str(val).strip()

    def type_name(val: object, what: str, field: str, name: str) -> str:
        if not isinstance(val, str):
            raise fail(f"{what}: {field} must be a type name, got {_kind(val)} {val!r}", name)
        return val

    for name, spec in mapping("node_types").items():
        spec = spec or {}
        _only(spec, {"parent", "description", "iri"}, f"node type {name!r}", fail, str(name))
        parent = spec.get("parent")
        if parent is not None:
            type_name(parent, f"node type {name!r}", "parent", str(name))
        node_types[claim(name, "node type")] = NodeType(
            name, term_iri(spec, "iri", name, "node type", False), parent,
            text_field(spec, "description", "node type", name))
    if not node_types:
        raise fail("node_types is empty", "node_types")
    acyclic: set[str] = set()  # types whose parent chain is walked already: each is walked once
    for t in node_types.values():
        if t.parent is not None and t.parent not in node_types:
            raise fail(f"node type {t.name!r} has unknown parent {t.parent!r}", t.name)
        chain, cur = set(), t.name
        while cur in node_types and cur not in acyclic:  # an unknown parent: reported at its turn
            if cur in chain:
                raise fail(f"node type {t.name!r} is part of a parent cycle", t.name)
            chain.add(cur)
            cur = node_types[cur].parent
        acyclic |= chain

    inverse_of: dict[str, str] = {}
    for name, spec in mapping("edge_types").items():
        spec = spec or {}
        _only(spec, {"domain", "range", "inverse", "transitive", "description", "iri",
                     "inverse_iri", "cues"}, f"edge type {name!r}", fail, str(name))
        claim(name, "edge type")
        dom, rng = _types(spec, "domain", name, node_types, fail), _types(spec, "range", name, node_types, fail)
        inv = spec.get("inverse")
        if inv is not None:
            if not isinstance(inv, str):
                raise fail(f"edge type {name!r}: inverse must be a name, got {_kind(inv)}", name)
            if inv in edge_types or inv in mapping("edge_types"):
                raise fail(f"edge type {name!r}: inverse {inv!r} is declared as an edge type of its "
                           f"own; declare each pair once, in its stored direction", str(name))
            claim(inv, f"inverse of {name!r}")
            inverse_of[inv] = name
        elif "inverse_iri" in spec:
            raise fail(f"edge type {name!r}: inverse_iri without an inverse", str(name))
        transitive = spec.get("transitive", False)
        if not isinstance(transitive, bool):
            raise fail(f"edge type {name!r}: transitive must be true or false", str(name))
        iri = term_iri(spec, "iri", name, "edge type", True)
        inv_iri = term_iri(spec, "inverse_iri", inv, f"inverse of {name!r},", True) if inv else None
        edge_types[name] = EdgeType(name, iri, dom, rng, inv, inv_iri,
                                    transitive, text_field(spec, "description", "edge type", name),
                                    _cues(spec, f"edge type {name!r}", fail, str(name)))
    if not edge_types:
        raise fail("edge_types is empty", "edge_types")

    for name, spec in mapping("attributes").items():
        spec = spec or {}
        _only(spec, {"datatype", "multiple", "description", "iri", "cues"}, f"attribute {name!r}",
              fail, str(name))
        dt = spec.get("datatype", "string")
        if not isinstance(dt, str) or dt not in DATATYPES:
            raise fail(f"attribute {name!r}: unknown datatype {dt!r} "
                       f"(one of {', '.join(sorted(DATATYPES))})", str(name))
        multiple = spec.get("multiple", False)
        if not isinstance(multiple, bool):
            raise fail(f"attribute {name!r}: multiple must be true or false", str(name))
        attributes[claim(name, "attribute")] = Attribute(
            name, term_iri(spec, "iri", name, "attribute", True), dt, multiple,
            text_field(spec, "description", "attribute", name),
            _cues(spec, f"attribute {name!r}", fail, str(name)))

    version = raw.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= MAX_VERSION:
        raise fail(f"version must be an integer from 0 to {MAX_VERSION}", "version")
    return Schema(schema_name, ns, prefix, node_types, edge_types, attributes,
                  text_field(raw, "description", "schema", schema_name), version, source)


def _kind(value: object) -> str:
    """What a YAML value is, for messages."""
    for kind, name in ((bool, "true/false"), (dict, "a mapping"), (list, "a list"),
                       ((int, float), "a number"), (str, "text"), (type(None), "null")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _keys_are_text(mapping: dict, where: str, fail, line_key: object = None) -> None:
    """Every key of a schema mapping is a name, never a number, a date, true/false or null."""
    for key in mapping:
        if not isinstance(key, str):
            raise fail(f"{where}: key {key!r} must be a name, not {_kind(key)} (quote it)",
                       str(key) if line_key is None else str(line_key))


MAX_CUES = 100


def _cues(spec: dict, what: str, fail, key: str) -> tuple[str, ...]:
    """An optional ``cues:`` list: words or short phrases that state the relation in text
    (``directed by``, ``starring``), used by relation verification; one text is a list of one."""
    val = spec.get("cues")
    if val is None:
        return ()
    vals = [val] if isinstance(val, str) else val
    if not isinstance(vals, list) or len(vals) > MAX_CUES or any(
            isinstance(v, bool) or not isinstance(v, (str, int, float)) or not str(v).strip()
            or len(str(v)) > 200 or not str(v).isprintable() for v in vals):
        raise fail(f"{what}: cues must be a list of at most {MAX_CUES} one-line texts of at "
                   "most 200 characters", key)
    return tuple(dict.fromkeys(" ".join(str(v).split()) for v in vals))


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
        if not isinstance(v, str) or v not in node_types:
            raise fail(f"edge type {edge!r}: unknown type {v!r} in {key}", edge)
    return tuple(vals)
