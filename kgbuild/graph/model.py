"""Nodes, edges and assertions, and their one RDF layout.

This is the only module that knows how the graph looks in RDF:

* node ``<base>id/{ID}``: ``rdf:type`` (exactly one schema type), ``rdfs:label``,
  ``dcterms:identifier`` (the stable ID), ``skos:altLabel`` aliases, attributes, ``kg:accessLabel``;
* edge: the direct triple ``<s> <schema#edge> <o>`` in the schema's stored direction (an
  attribute value read from prose is asserted the same way: ``<s> <schema#attr> "value"``
  and an assertion whose ``rdf:object`` is the literal, ``Assertion.literal``);
* assertion ``<base>assertion/{hash}`` (``kg:Assertion``): ``rdf:subject/predicate/object``,
  ``prov:wasDerivedFrom`` (the source document), ``kg:line`` or ``kg:jsonPointer``,
  ``kg:extractor``, ``kg:confidence``, ``prov:generatedAtTime``, optional ``kg:evidence``
  and character span ``kg:spanStart``/``kg:spanEnd``, ``kg:accessLabel``, ``kg:qualifier``
  (how the source qualifies the relation: ``dev``, ``optional:docs``, ``build``, ``indirect``);
* source document ``<base>source/{path}`` (``kg:SourceDocument``): ``kg:path``, ``kg:sha256``;
* passage ``<base>passage/{doc}#c{n}`` (``kg:Passage``, a text unit an LLM read): ``kg:chunkId``,
  ``prov:wasDerivedFrom`` (its document), ``kg:spanStart``/``kg:spanEnd``, ``kg:text``,
  ``kg:title``, ``kg:section``; an assertion read from it points at it with ``kg:chunk``.

Triples are produced as N-Triples term strings (``<iri>``, ``"literal"^^<datatype>``): they feed
the embedded store, rdflib and the Turtle writer without per-term object conversion. In the
store, each document's named graph also carries *claims* about the nodes it defines or mentions
(``kg:declaredType``, ``kg:declaredLabel``, ``kg:mentionLabel``); the resolved type and label
of each node are derived from all claims (:func:`resolve_node`), so a document can be replaced
without re-reading the others.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from typing import Iterable, Iterator, Sequence
from urllib.parse import quote, unquote

from ..errors import KgbuildError
from ..io.text import safe_text
from ..schema.model import Schema
from ..vocab import (
    ASSERTION_BASE,
    DCTERMS,
    ID_BASE,
    KG,
    PASSAGE_BASE,
    PROV,
    RDF,
    RDFS,
    SKOS,
    SOURCE_BASE,
    XSD,
)

_SAFE = "/:@-._~+!$'()*,;="

Triple = tuple[str, str, str]


def _i(iri: str) -> str:
    return f"<{iri}>"


A = _i(RDF + "type")
LABEL = _i(RDFS + "label")
IDENT = _i(DCTERMS + "identifier")
ALT = _i(SKOS + "altLabel")
ACCESS = _i(KG + "accessLabel")
DECLARED_TYPE = _i(KG + "declaredType")
DECLARED_LABEL = _i(KG + "declaredLabel")
MENTION_LABEL = _i(KG + "mentionLabel")
CLAIMS = frozenset({DECLARED_TYPE, DECLARED_LABEL, MENTION_LABEL})
_ASSERTION, _SUBJECT, _PREDICATE, _OBJECT = (_i(KG + "Assertion"), _i(RDF + "subject"),
                                             _i(RDF + "predicate"), _i(RDF + "object"))
_DERIVED, _EXTRACTOR, _CONFIDENCE, _GENERATED = (_i(PROV + "wasDerivedFrom"), _i(KG + "extractor"),
                                                 _i(KG + "confidence"), _i(PROV + "generatedAtTime"))
_LINE, _POINTER, _EVIDENCE = _i(KG + "line"), _i(KG + "jsonPointer"), _i(KG + "evidence")
_SPAN_START, _SPAN_END = _i(KG + "spanStart"), _i(KG + "spanEnd")
_QUALIFIER = _i(KG + "qualifier")
_CHUNK = _i(KG + "chunk")
_DOUBLE, _DATETIME, _INTEGER = XSD + "double", XSD + "dateTime", XSD + "integer"
_LITERAL = re.compile(r'^"((?:[^"\\]|\\.)*)"(?:\^\^<([^>]*)>|@([A-Za-z0-9-]+))?$', re.S)
_UNESCAPE = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\", "'": "'", "b": "\b", "f": "\f"}


def node_iri(node_id: str) -> str:
    """IRI of the node with stable ID ``node_id``."""
    return ID_BASE + quote(safe_text(node_id), safe=_SAFE)


def source_iri(doc_id: str) -> str:
    """IRI of a source document."""
    return SOURCE_BASE + quote(safe_text(doc_id), safe=_SAFE)


def passage_iri(chunk_id: str) -> str:
    """IRI of a passage (a text chunk ``<doc_id>#c<n>``)."""
    return PASSAGE_BASE + quote(safe_text(chunk_id), safe=_SAFE)


def id_from_iri(iri: str) -> str:
    """Inverse of :func:`node_iri` (falls back to the IRI itself for foreign nodes)."""
    return unquote(iri[len(ID_BASE):]) if iri.startswith(ID_BASE) else str(iri)


def doc_from_iri(iri: str) -> str:
    """Inverse of :func:`source_iri`."""
    return unquote(iri[len(SOURCE_BASE):]) if iri.startswith(SOURCE_BASE) else str(iri)


def utc_timestamp(epoch: float) -> str:
    """Seconds since the epoch as an ``xsd:dateTime`` string in UTC."""
    return datetime.fromtimestamp(int(epoch), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def lit(value: object, datatype: str | None = None) -> str:
    """An N-Triples literal."""
    s = safe_text(str(value)).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{s}"^^<{datatype}>' if datatype else f'"{s}"'


def parse_literal(term: str) -> tuple[str, str | None, str | None]:
    """``(lexical value, datatype IRI, language)`` of an N-Triples literal."""
    m = _LITERAL.match(term)
    if not m:
        raise ValueError(f"not an N-Triples literal: {term[:80]}")
    raw = m.group(1)
    value = re.sub(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)",
                   lambda x: chr(int(x.group(1)[1:], 16)) if x.group(1)[0] in "uU" and len(x.group(1)) > 1
                   else _UNESCAPE.get(x.group(1), x.group(1)), raw) if "\\" in raw else raw
    return value, m.group(2), m.group(3)


def iri_value(term: str) -> str:
    """The IRI inside ``<...>``."""
    return term[1:-1]


def iri_values(iris: Sequence[str], size: int = 500) -> Iterator[str]:
    """``<iri> <iri> ...`` texts for SPARQL VALUES blocks, ``size`` IRIs each (the blocks of
    one query stay small)."""
    for i in range(0, len(iris), size):
        yield " ".join(f"<{x}>" for x in iris[i:i + size])


@dataclass
class Node:
    """An entity with a stable ID and exactly one schema type."""

    id: str
    type: str
    label: str
    attributes: dict[str, set[str]] = field(default_factory=dict)
    access: set[str] = field(default_factory=set)
    defined_in: set[str] = field(default_factory=set)
    aliases: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Assertion:
    """One source's claim that ``subject --predicate--> object`` holds (stored direction)."""

    subject: str
    predicate: str
    object: str
    source: str
    extractor: str
    generated_at: str
    confidence: float = 1.0
    line: int | None = None
    pointer: str | None = None
    evidence: str | None = None
    span: tuple[int, int] | None = None
    access: frozenset[str] = frozenset()
    qualifiers: frozenset[str] = frozenset()
    chunk: str | None = None  # the passage (text chunk ID) it was read from, for LLM extraction
    literal: bool = False  # an attribute value: ``predicate`` is an attribute, ``object`` its value

    def __post_init__(self) -> None:
        for name in ("subject", "object", "source", "extractor", "generated_at", "pointer",
                     "evidence"):
            value = getattr(self, name)
            if isinstance(value, str) and not value.isascii():
                object.__setattr__(self, name, safe_text(value))
        for name in ("access", "qualifiers"):
            values = getattr(self, name)
            if any(not v.isascii() for v in values):
                object.__setattr__(self, name, frozenset(safe_text(v) for v in values))

    @property
    def edge(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)

    @cached_property
    def key(self) -> str:
        """Deterministic content hash naming this assertion."""
        parts = [self.subject, self.predicate, self.object, self.source, self.extractor,
                 str(self.line), str(self.pointer), str(self.span)] + (["literal"] if self.literal else [])
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]

    @property
    def location(self) -> str:
        """Human-readable location inside the source (``line 12`` or a JSON pointer)."""
        if self.pointer is not None:
            return self.pointer
        if self.span is not None:
            return f"chars {self.span[0]}-{self.span[1]}"
        return f"line {self.line}" if self.line else ""


@dataclass(frozen=True)
class SourceDocument:
    """A file a graph was built from; ``assertions`` counts the assertions it is the source of
    (so that losing any of them is detectable), when known."""

    id: str
    path: str
    sha256: str
    access: frozenset[str] = frozenset()
    assertions: int | None = None


@dataclass(frozen=True)
class Passage:
    """A text unit of a document: the chunk an LLM read, cited by the assertions read in it."""

    id: str  # <doc_id>#c<n>
    document: str
    start: int
    end: int
    text: str
    title: str = ""
    section: tuple[str, ...] = ()
    access: frozenset[str] = frozenset()


# -- triples ------------------------------------------------------------------------------------
def source_triples(doc: SourceDocument) -> Iterator[Triple]:
    s = _i(source_iri(doc.id))
    yield s, A, _i(KG + "SourceDocument")
    yield s, _i(KG + "path"), lit(doc.path)
    yield s, _i(KG + "sha256"), lit(doc.sha256)
    if doc.assertions is not None:
        yield s, _i(KG + "assertionCount"), lit(doc.assertions, _INTEGER)
    for label in sorted(doc.access):
        yield s, ACCESS, lit(label)


def node_triples(node_id: str, type_name: str, label: str, schema: Schema) -> Iterator[Triple]:
    """The resolved typing of a node: exactly one type, one label, the ID."""
    s = _i(node_iri(node_id))
    yield s, A, _i(schema.node_types[type_name].iri)
    yield s, LABEL, lit(label)
    yield s, IDENT, lit(node_id)


def node_fact_triples(node: Node, schema: Schema) -> Iterator[Triple]:
    """What a source states about a node besides its type and label."""
    s = _i(node_iri(node.id))
    for name in sorted(node.attributes):
        attr = schema.attributes[name]
        for v in sorted(node.attributes[name]):
            yield s, _i(attr.iri), lit(v, value_datatype(attr.datatype, v))
    for alias in sorted(node.aliases):
        yield s, ALT, lit(alias)
    for label in sorted(node.access):
        yield s, ACCESS, lit(label)


def claim_triples(node_id: str, type_name: str, label: str | None, defined: bool,
                  schema: Schema) -> Iterator[Triple]:
    """A document's claim about a node's type and label (store-internal, never exported)."""
    s = _i(node_iri(node_id))
    yield s, DECLARED_TYPE, _i(schema.node_types[type_name].iri)
    if label:
        yield s, DECLARED_LABEL if defined else MENTION_LABEL, lit(label)


def attribute_term(schema: Schema, name: str, value: str) -> tuple[str, str]:
    """(``<attribute IRI>``, the value as a typed literal) of an attribute value."""
    attr = schema.attributes[name]
    return _i(attr.iri), lit(value, value_datatype(attr.datatype, value))


_BARE_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?INF|NaN")


def value_datatype(datatype: str, value: str) -> str | None:
    """The XSD datatype IRI of an attribute value (None for a plain string). A date stated
    with less precision keeps it: ``1949`` is an ``xsd:gYear``, ``1949-05`` an
    ``xsd:gYearMonth``, never a day the source did not give; a number stated with a unit or
    scale (``120 km``, ``3.5 million``) is a plain string, as written."""
    if datatype == "string":
        return None
    if datatype in ("integer", "decimal") and not _BARE_NUMBER.fullmatch(value):
        return None  # a number stated with its unit ("120 km", "$4 billion"): kept as written
    if datatype == "date":
        if re.fullmatch(r"-?\d{4}", value):
            return XSD + "gYear"
        if re.fullmatch(r"-?\d{4}-\d{2}", value):
            return XSD + "gYearMonth"
    return XSD + datatype  # XSD local names


def assertion_triples(a: Assertion, schema: Schema) -> Iterator[Triple]:
    """The direct triple (an edge, or an attribute value for a ``literal`` assertion) and its
    reified, provenance-carrying assertion (``rdf:object`` the literal itself for a value)."""
    subj = _i(node_iri(a.subject))
    if a.literal:
        p, obj = attribute_term(schema, a.predicate, a.object)
    else:
        p, obj = _i(schema.edge_types[a.predicate].iri), _i(node_iri(a.object))
    yield subj, p, obj
    s = _i(ASSERTION_BASE + a.key)
    yield s, A, _ASSERTION
    yield s, _SUBJECT, subj
    yield s, _PREDICATE, p
    yield s, _OBJECT, obj
    yield s, _DERIVED, _i(source_iri(a.source))
    yield s, _EXTRACTOR, lit(a.extractor)
    yield s, _CONFIDENCE, lit(repr(float(a.confidence)), _DOUBLE)
    yield s, _GENERATED, lit(a.generated_at, _DATETIME)
    if a.line is not None:
        yield s, _LINE, lit(a.line, _INTEGER)
    if a.pointer is not None:
        yield s, _POINTER, lit(a.pointer)
    if a.evidence:
        yield s, _EVIDENCE, lit(a.evidence)
    if a.span is not None:
        yield s, _SPAN_START, lit(a.span[0], _INTEGER)
        yield s, _SPAN_END, lit(a.span[1], _INTEGER)
    for label in sorted(a.access):
        yield s, ACCESS, lit(label)
    for qualifier in sorted(a.qualifiers):
        yield s, _QUALIFIER, lit(qualifier)
    if a.chunk:
        yield s, _CHUNK, _i(passage_iri(a.chunk))


SECTION_SEPARATOR = " > "


def passage_triples(p: Passage) -> Iterator[Triple]:
    """A passage: its ID, document, span, text, title and section path."""
    s = _i(passage_iri(p.id))
    yield s, A, _i(KG + "Passage")
    yield s, _i(KG + "chunkId"), lit(p.id)
    yield s, _DERIVED, _i(source_iri(p.document))
    yield s, _SPAN_START, lit(p.start, _INTEGER)
    yield s, _SPAN_END, lit(p.end, _INTEGER)
    yield s, _i(KG + "text"), lit(p.text)
    if p.title:
        yield s, _i(KG + "title"), lit(p.title)
    if p.section:
        yield s, _i(KG + "section"), lit(SECTION_SEPARATOR.join(p.section))
    for label in sorted(p.access):
        yield s, ACCESS, lit(label)


def resolve_node(node_id: str, claims: Iterable[tuple[str, str, str]], schema: Schema
                 ) -> tuple[str, str] | None:
    """Type and label of a node from ``(graph, predicate, object)`` claims of every document.

    The most specific declared type wins; a label declared by a defining document (the first
    by document ID) beats one from a mere mention. Raises :class:`KgbuildError` when two
    claimed types are on different branches; returns None when nothing claims the node.
    """
    types: set[str] = set()
    defined: list[tuple[str, str]] = []
    mentioned: list[tuple[str, str]] = []
    for graph, pred, obj in claims:
        if pred == DECLARED_TYPE:
            types.add(schema.type_by_iri[iri_value(obj)])
        elif pred == DECLARED_LABEL:
            defined.append((graph, parse_literal(obj)[0]))
        elif pred == MENTION_LABEL:
            mentioned.append((graph, parse_literal(obj)[0]))
    if not types:
        return None
    ordered = sorted(types)
    best = ordered[0]
    for t in ordered[1:]:
        merged = schema.more_specific(best, t)
        if merged is None:
            raise KgbuildError(f"node {node_id!r} is claimed as both {best} and {t}")
        best = merged
    label = min(defined)[1] if defined else (min(mentioned)[1] if mentioned else node_id)
    return best, label


# -- the in-memory graph ------------------------------------------------------------------------
class KnowledgeGraph:
    """In-memory typed graph: nodes, assertions (edges are what assertions support), documents."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self.nodes: dict[str, Node] = {}
        self.assertions: dict[str, Assertion] = {}
        self.documents: dict[str, SourceDocument] = {}
        self.untyped_edges: set[tuple[str, str, str]] = set()
        self.passages: dict[str, Passage] = {}  # chunk ID -> the text unit
        # key -> the assertion of an attribute value (an LLM read it in prose), not an edge
        self.attribute_assertions: dict[str, Assertion] = {}

    def __setstate__(self, state: dict) -> None:  # a graph pickled before these existed
        self.__dict__.update({"passages": {}, "attribute_assertions": {}, **state})

    def add_node(self, node_id: str, type_name: str, label: str | None = None, *,
                 source: str | None = None, **attributes: Iterable[str] | str | None) -> Node:
        """Add or merge a node; a more specific type wins, conflicting types raise."""
        type_name = self.schema.node_type(type_name).name
        node_id, label = safe_text(node_id), label and safe_text(label)
        node = self.nodes.get(node_id)
        if node is None:
            node = self.nodes[node_id] = Node(node_id, type_name, label or node_id)
        else:
            merged = self.schema.more_specific(node.type, type_name)
            if merged is None:
                raise KgbuildError(f"node {node_id!r} is typed both {node.type} and {type_name}")
            node.type = merged
        if source:
            if label and (not node.defined_in or source < min(node.defined_in)):
                node.label = label
            node.defined_in.add(source)
        for name, values in attributes.items():
            if values is None:
                continue
            if name not in self.schema.attributes:
                raise KgbuildError(f"unknown attribute {name!r} for schema {self.schema.name!r}")
            vals = [values] if isinstance(values, str) else list(values)
            node.attributes.setdefault(name, set()).update(safe_text(str(v)) for v in vals
                                                           if v is not None)
        return node

    def add_assertion(self, assertion: Assertion) -> Assertion:
        """Record an assertion (already in stored direction) and the edge it supports; an
        attribute value's assertion (``literal``) goes to :attr:`attribute_assertions`."""
        if assertion.literal:
            if assertion.predicate not in self.schema.attributes:
                raise KgbuildError(f"{assertion.predicate!r} is not an attribute")
            self.attribute_assertions[assertion.key] = assertion
            return assertion
        if assertion.predicate not in self.schema.edge_types:
            raise KgbuildError(f"{assertion.predicate!r} is not a stored edge type; "
                               f"use schema.canonical() first")
        if not 0.0 <= assertion.confidence <= 1.0:
            raise KgbuildError(f"confidence {assertion.confidence} outside [0, 1]")
        self.assertions[assertion.key] = assertion
        return assertion

    def add_document(self, doc: SourceDocument) -> None:
        self.documents[doc.id] = doc

    def edges(self) -> dict[tuple[str, str, str], list[Assertion]]:
        """Every edge with the assertions supporting it, sorted for determinism."""
        out: dict[tuple[str, str, str], list[Assertion]] = {}
        for _, a in sorted(self.assertions.items()):
            out.setdefault((a.subject, a.predicate, a.object), []).append(a)
        for e in self.untyped_edges:
            out.setdefault(e, [])
        return dict(sorted(out.items()))

    def counts(self) -> dict:
        """Entities by type and edges by type."""
        nodes: dict[str, int] = {}
        for n in self.nodes.values():
            nodes[n.type] = nodes.get(n.type, 0) + 1
        edges: dict[str, int] = {}
        for (_, p, _) in {a.edge for a in self.assertions.values()} | self.untyped_edges:
            edges[p] = edges.get(p, 0) + 1
        return {"nodes": dict(sorted(nodes.items())), "edges": dict(sorted(edges.items())),
                "assertions": len(self.assertions), "documents": len(self.documents)}

    def triples(self) -> Iterator[Triple]:
        """The graph as N-Triples term strings, in the layout described in this module."""
        for doc in self.documents.values():
            yield from source_triples(doc)
        for node in self.nodes.values():
            yield from node_triples(node.id, node.type, node.label, self.schema)
            yield from node_fact_triples(node, self.schema)
        for (s, p, o), assertions in self.edges().items():
            if not assertions:
                yield _i(node_iri(s)), _i(self.schema.edge_types[p].iri), _i(node_iri(o))
            for a in assertions:
                yield from assertion_triples(a, self.schema)
        for a in self.attribute_assertions.values():
            yield from assertion_triples(a, self.schema)
        for p in self.passages.values():
            yield from passage_triples(p)



