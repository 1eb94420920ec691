"""Nodes, edges and assertions, and their one RDF layout.

This is the only module that knows how the graph looks in RDF:

* node ``<base>id/{ID}``: ``rdf:type`` (exactly one schema type), ``rdfs:label``,
  ``dcterms:identifier`` (the stable ID), attributes, ``kg:accessLabel``;
* edge: the direct triple ``<s> <schema#edge> <o>`` in the schema's stored direction;
* assertion ``<base>assertion/{hash}`` (``kg:Assertion``): ``rdf:subject/predicate/object``,
  ``prov:wasDerivedFrom`` (the source document), ``kg:line`` or ``kg:jsonPointer``,
  ``kg:extractor``, ``kg:confidence``, ``prov:generatedAtTime``, optional ``kg:evidence``
  and character span ``kg:spanStart``/``kg:spanEnd``, ``kg:accessLabel``;
* source document ``<base>source/{path}`` (``kg:SourceDocument``): ``kg:path``, ``kg:sha256``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable, Iterator
from urllib.parse import quote, unquote

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SKOS, XSD

from .errors import KgbuildError
from .schema import Schema

KG = Namespace("https://kgbuild.dev/ns#")
BASE = "https://kgbuild.dev/"
ID_BASE = BASE + "id/"
ASSERTION_BASE = BASE + "assertion/"
SOURCE_BASE = BASE + "source/"
_SAFE = "/:@-._~+!$'()*,;="
_XSD = {"string": XSD.string, "integer": XSD.integer, "decimal": XSD.decimal,
        "boolean": XSD.boolean, "date": XSD.date, "dateTime": XSD.dateTime, "anyURI": XSD.anyURI}


def node_iri(node_id: str) -> URIRef:
    """IRI of the node with stable ID ``node_id``."""
    return URIRef(ID_BASE + quote(node_id, safe=_SAFE))


def source_iri(doc_id: str) -> URIRef:
    """IRI of a source document."""
    return URIRef(SOURCE_BASE + quote(doc_id, safe=_SAFE))


def id_from_iri(iri: str) -> str:
    """Inverse of :func:`node_iri` (falls back to the IRI itself for foreign nodes)."""
    return unquote(iri[len(ID_BASE):]) if iri.startswith(ID_BASE) else str(iri)


def utc_timestamp(epoch: float) -> str:
    """Seconds since the epoch as an ``xsd:dateTime`` string in UTC."""
    return datetime.fromtimestamp(int(epoch), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


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

    @property
    def edge(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)

    @property
    def key(self) -> str:
        """Deterministic content hash naming this assertion."""
        parts = [self.subject, self.predicate, self.object, self.source, self.extractor,
                 str(self.line), str(self.pointer), str(self.span)]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]

    @property
    def location(self) -> str:
        """Human-readable location inside the source (``line 12`` or a JSON pointer)."""
        if self.pointer is not None:
            return self.pointer
        return f"line {self.line}" if self.line else ""


@dataclass(frozen=True)
class SourceDocument:
    id: str
    path: str
    sha256: str
    access: frozenset[str] = frozenset()


class KnowledgeGraph:
    """In-memory typed graph: nodes, assertions (edges are what assertions support), documents."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self.nodes: dict[str, Node] = {}
        self.assertions: dict[str, Assertion] = {}
        self.documents: dict[str, SourceDocument] = {}
        self.untyped_edges: set[tuple[str, str, str]] = set()

    # -- building ---------------------------------------------------------------
    def add_node(self, node_id: str, type_name: str, label: str | None = None, *,
                 source: str | None = None, **attributes: Iterable[str] | str | None) -> Node:
        """Add or merge a node; a later, more specific type wins, conflicting types raise."""
        type_name = self.schema.node_type(type_name).name
        node = self.nodes.get(node_id)
        if node is None:
            node = self.nodes[node_id] = Node(node_id, type_name, label or node_id)
        else:
            merged = self.schema.more_specific(node.type, type_name)
            if merged is None:
                raise KgbuildError(f"node {node_id!r} is typed both {node.type} and {type_name}")
            node.type = merged
            if label and (source or not node.defined_in) and node.label == node.id:
                node.label = label
        if source:
            if label and not node.defined_in:
                node.label = label
            node.defined_in.add(source)
        for name, values in attributes.items():
            if values is None:
                continue
            if name not in self.schema.attributes:
                raise KgbuildError(f"unknown attribute {name!r} for schema {self.schema.name!r}")
            vals = [values] if isinstance(values, str) else list(values)
            node.attributes.setdefault(name, set()).update(str(v) for v in vals if v is not None)
        return node

    def add_assertion(self, assertion: Assertion) -> Assertion:
        """Record an assertion (already in stored direction) and the edge it supports."""
        et = self.schema.edge_types.get(assertion.predicate)
        if et is None:
            raise KgbuildError(f"{assertion.predicate!r} is not a stored edge type; "
                               f"use schema.canonical() first")
        if not 0.0 <= assertion.confidence <= 1.0:
            raise KgbuildError(f"confidence {assertion.confidence} outside [0, 1]")
        self.assertions[assertion.key] = assertion
        return assertion

    def add_document(self, doc: SourceDocument) -> None:
        self.documents[doc.id] = doc

    # -- reading ----------------------------------------------------------------
    def edges(self) -> dict[tuple[str, str, str], list[Assertion]]:
        """Every edge with the assertions supporting it, sorted for determinism."""
        out: dict[tuple[str, str, str], list[Assertion]] = {}
        for a in sorted(self.assertions.values(), key=lambda a: a.key):
            out.setdefault(a.edge, []).append(a)
        for e in self.untyped_edges:
            out.setdefault(e, [])
        return dict(sorted(out.items()))

    def counts(self) -> dict:
        """Entities by type and edges by type."""
        nodes: dict[str, int] = {}
        for n in self.nodes.values():
            nodes[n.type] = nodes.get(n.type, 0) + 1
        edges: dict[str, int] = {}
        for (_, p, _) in self.edges():
            edges[p] = edges.get(p, 0) + 1
        return {"nodes": dict(sorted(nodes.items())), "edges": dict(sorted(edges.items())),
                "assertions": len(self.assertions), "documents": len(self.documents)}

    # -- RDF ----------------------------------------------------------------------
    def triples(self) -> Iterator[tuple]:
        """The graph as rdflib triples, in the layout described in this module."""
        schema = self.schema
        for doc in self.documents.values():
            s = source_iri(doc.id)
            yield s, RDF.type, KG.SourceDocument
            yield s, KG.path, Literal(doc.path)
            yield s, KG.sha256, Literal(doc.sha256)
            for label in doc.access:
                yield s, KG.accessLabel, Literal(label)
        for node in self.nodes.values():
            s = node_iri(node.id)
            yield s, RDF.type, URIRef(schema.node_types[node.type].iri)
            yield s, RDFS.label, Literal(node.label)
            yield s, DCTERMS.identifier, Literal(node.id)
            for name, values in node.attributes.items():
                attr = schema.attributes[name]
                dt = None if attr.datatype == "string" else _XSD[attr.datatype]
                for v in values:
                    yield s, URIRef(attr.iri), Literal(v, datatype=dt)
            for alias in node.aliases:
                yield s, SKOS.altLabel, Literal(alias)
            for label in node.access:
                yield s, KG.accessLabel, Literal(label)
        for (subj, pred, obj), assertions in self.edges().items():
            p = URIRef(schema.edge_types[pred].iri)
            yield node_iri(subj), p, node_iri(obj)
            for a in assertions:
                yield from _assertion_triples(a, p)

    def to_rdf(self) -> Graph:
        """An rdflib :class:`Graph` holding :meth:`triples`, with the standard prefixes bound."""
        g = Graph()
        bind_prefixes(g, self.schema)
        for t in self.triples():
            g.add(t)
        return g


def _assertion_triples(a: Assertion, p: URIRef) -> Iterator[tuple]:
    s = URIRef(ASSERTION_BASE + a.key)
    yield s, RDF.type, KG.Assertion
    yield s, RDF.subject, node_iri(a.subject)
    yield s, RDF.predicate, p
    yield s, RDF.object, node_iri(a.object)
    yield s, PROV.wasDerivedFrom, source_iri(a.source)
    yield s, KG.extractor, Literal(a.extractor)
    yield s, KG.confidence, Literal(repr(float(a.confidence)), datatype=XSD.double)
    yield s, PROV.generatedAtTime, Literal(a.generated_at, datatype=XSD.dateTime)
    if a.line is not None:
        yield s, KG.line, Literal(a.line, datatype=XSD.integer)
    if a.pointer is not None:
        yield s, KG.jsonPointer, Literal(a.pointer)
    if a.evidence:
        yield s, KG.evidence, Literal(a.evidence)
    if a.span is not None:
        yield s, KG.spanStart, Literal(a.span[0], datatype=XSD.integer)
        yield s, KG.spanEnd, Literal(a.span[1], datatype=XSD.integer)
    for label in a.access:
        yield s, KG.accessLabel, Literal(label)


def bind_prefixes(g: Graph, schema: Schema) -> None:
    """Bind the fixed prefix set used by every serialisation."""
    g.bind(schema.prefix, Namespace(schema.namespace), override=True, replace=True)
    for prefix, ns in (("kg", KG), ("prov", PROV), ("dcterms", DCTERMS), ("rdfs", RDFS),
                       ("owl", OWL), ("skos", SKOS), ("xsd", XSD), ("id", Namespace(ID_BASE)),
                       ("assertion", Namespace(ASSERTION_BASE)), ("src", Namespace(SOURCE_BASE))):
        g.bind(prefix, ns, override=True, replace=True)


def from_rdf(g: Graph, schema: Schema) -> KnowledgeGraph:
    """Read a graph written in this layout (e.g. a Turtle export) back into a model.

    Edges between typed nodes that have no assertion are kept in ``untyped_edges``: they
    can be walked but carry no evidence.
    """
    kg = KnowledgeGraph(schema)
    types = {URIRef(t.iri): t.name for t in schema.node_types.values()}
    preds = {URIRef(e.iri): e.name for e in schema.edge_types.values()}
    attrs = {URIRef(a.iri): a.name for a in schema.attributes.values()}
    for s, _, t in g.triples((None, RDF.type, None)):
        if t in types:
            nid = str(g.value(s, DCTERMS.identifier) or id_from_iri(str(s)))
            node = kg.add_node(nid, types[t], str(g.value(s, RDFS.label) or nid))
            node.defined_in.add("rdf")
            for p, o in g.predicate_objects(s):
                if p in attrs:
                    node.attributes.setdefault(attrs[p], set()).add(str(o))
                elif p == KG.accessLabel:
                    node.access.add(str(o))
                elif p == SKOS.altLabel:
                    node.aliases.add(str(o))
    for s in g.subjects(RDF.type, KG.SourceDocument):
        kg.add_document(SourceDocument(
            str(s)[len(SOURCE_BASE):] if str(s).startswith(SOURCE_BASE) else str(s),
            str(g.value(s, KG.path) or ""), str(g.value(s, KG.sha256) or ""),
            frozenset(str(x) for x in g.objects(s, KG.accessLabel))))
    covered = set()
    for a in g.subjects(RDF.type, KG.Assertion):
        p = g.value(a, RDF.predicate)
        if p not in preds:
            continue
        src = str(g.value(a, PROV.wasDerivedFrom) or "")
        line, ptr = g.value(a, KG.line), g.value(a, KG.jsonPointer)
        start, end = g.value(a, KG.spanStart), g.value(a, KG.spanEnd)
        assertion = Assertion(
            id_from_iri(str(g.value(a, RDF.subject))), preds[p], id_from_iri(str(g.value(a, RDF.object))),
            src[len(SOURCE_BASE):] if src.startswith(SOURCE_BASE) else src,
            str(g.value(a, KG.extractor) or ""), str(g.value(a, PROV.generatedAtTime) or ""),
            float(g.value(a, KG.confidence) or 1.0),
            int(line) if line is not None else None, str(ptr) if ptr is not None else None,
            str(g.value(a, KG.evidence)) if g.value(a, KG.evidence) is not None else None,
            (int(start), int(end)) if start is not None and end is not None else None,
            frozenset(str(x) for x in g.objects(a, KG.accessLabel)))
        kg.assertions[assertion.key] = assertion
        covered.add(assertion.edge)
    for p, name in preds.items():
        for s, o in g.subject_objects(p):
            edge = (id_from_iri(str(s)), name, id_from_iri(str(o)))
            if edge not in covered:
                kg.untyped_edges.add(edge)
    return kg
