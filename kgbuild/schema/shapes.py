"""SHACL shapes: generated from the schema, plus the hand-written ones in ``shapes/``."""

from __future__ import annotations

from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.namespace import DCTERMS, RDF, RDFS, SH, XSD

from .bundled import bundled
from .model import Schema
from .namespaces import bind_prefixes

SHAPES_DIR = bundled("shapes")


def schema_shapes(schema: Schema) -> Graph:
    """Node typing, label and ID shapes, and a domain and a range shape per edge type."""
    g = Graph()
    bind_prefixes(g, schema)
    S = Namespace(schema.namespace.rstrip("#/") + "/shapes#")
    g.bind("shape", S)
    g.bind("sh", SH)
    types = [URIRef(t.iri) for t in sorted(schema.node_types.values(), key=lambda t: t.name)]
    names = ", ".join(t.name for t in sorted(schema.node_types.values(), key=lambda t: t.name))

    node = S.Node
    g.add((node, RDF.type, SH.NodeShape))
    g.add((node, RDFS.comment, Literal("Every node has one stable ID, one label and exactly one schema type.")))
    g.add((node, SH.targetSubjectsOf, DCTERMS.identifier))
    _prop(g, node, DCTERMS.identifier, 1, 1, XSD.string, "a node has exactly one dcterms:identifier")
    _prop(g, node, RDFS.label, 1, 1, None, "a node has exactly one rdfs:label")
    typing = BNode()
    g.add((node, SH.property, typing))
    g.add((typing, SH.path, RDF.type))
    in_shape = BNode()
    g.add((typing, SH.qualifiedValueShape, in_shape))
    lst = BNode()
    Collection(g, lst, types)
    g.add((in_shape, SH["in"], lst))
    g.add((typing, SH.qualifiedMinCount, Literal(1)))
    g.add((typing, SH.qualifiedMaxCount, Literal(1)))
    g.add((typing, SH.message, Literal(f"a node has exactly one schema type (one of {names})")))

    typed = S.TypedNode
    g.add((typed, RDF.type, SH.NodeShape))
    g.add((typed, RDFS.comment, Literal("Every instance of a schema type carries a stable ID.")))
    for t in types:
        g.add((typed, SH.targetClass, t))
    _prop(g, typed, DCTERMS.identifier, 1, None, None, "a typed node needs a dcterms:identifier")

    for e in sorted(schema.edge_types.values(), key=lambda e: e.name):
        for side, target, allowed in (("domain", SH.targetSubjectsOf, e.domain),
                                      ("range", SH.targetObjectsOf, e.range)):
            shape = S[f"{e.name}-{side}"]
            g.add((shape, RDF.type, SH.NodeShape))
            g.add((shape, target, URIRef(e.iri)))
            role = "subject" if side == "domain" else "object"
            g.add((shape, SH.message, Literal(
                f"{side} of {schema.prefix}:{e.name}: the {role} must be a "
                f"{' or '.join(allowed)}")))
            if len(allowed) == 1:
                g.add((shape, SH["class"], URIRef(schema.node_types[allowed[0]].iri)))
            else:
                options = []
                for t in allowed:
                    opt = BNode()
                    g.add((opt, SH["class"], URIRef(schema.node_types[t].iri)))
                    options.append(opt)
                lst = BNode()
                Collection(g, lst, options)
                g.add((shape, SH["or"], lst))
    return g


def _prop(g: Graph, shape: URIRef, path: URIRef, min_count: int | None, max_count: int | None,
          datatype: URIRef | None, message: str) -> None:
    p = BNode()
    g.add((shape, SH.property, p))
    g.add((p, SH.path, path))
    if min_count is not None:
        g.add((p, SH.minCount, Literal(min_count)))
    if max_count is not None:
        g.add((p, SH.maxCount, Literal(max_count)))
    if datatype is not None:
        g.add((p, SH.datatype, datatype))
    g.add((p, SH.message, Literal(message)))


def handwritten_shapes() -> Graph:
    """The shapes in ``shapes/*.ttl`` (provenance rules that do not depend on the schema)."""
    g = Graph()
    for path in sorted(SHAPES_DIR.glob("*.ttl")):
        g.parse(path, format="turtle")
    return g


def all_shapes(schema: Schema) -> Graph:
    """Schema-derived and hand-written shapes in one graph."""
    g = schema_shapes(schema)
    for t in handwritten_shapes():
        g.add(t)
    return g
