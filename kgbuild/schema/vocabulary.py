"""The RDF vocabulary derived from a schema: OWL classes, properties and inverses."""

from __future__ import annotations

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from .model import Schema
from .namespaces import KG, bind_prefixes


def vocabulary(schema: Schema) -> Graph:
    """Classes (``rdfs:subClassOf`` from parents), object properties with domain, range,
    ``owl:inverseOf`` and ``owl:TransitiveProperty``, datatype properties for attributes."""
    g = Graph()
    bind_prefixes(g, schema)
    onto = URIRef(schema.namespace.rstrip("#/"))
    g.add((onto, RDF.type, OWL.Ontology))
    g.add((onto, RDFS.label, Literal(f"kgbuild schema {schema.name}")))
    if schema.description:
        g.add((onto, RDFS.comment, Literal(schema.description)))
    for t in schema.node_types.values():
        c = _term(g, t.iri, OWL.Class, t.name, t.description)
        if t.parent:
            g.add((c, RDFS.subClassOf, URIRef(schema.node_types[t.parent].iri)))
    for e in schema.edge_types.values():
        p = _term(g, e.iri, OWL.ObjectProperty, e.name, e.description)
        if e.transitive:
            g.add((p, RDF.type, OWL.TransitiveProperty))
        _domain_range(g, p, RDFS.domain, e.domain, schema)
        _domain_range(g, p, RDFS.range, e.range, schema)
        if e.inverse:
            inv = URIRef(e.inverse_iri)
            g.add((inv, RDF.type, OWL.ObjectProperty))
            g.add((inv, RDFS.label, Literal(e.inverse)))
            g.add((inv, OWL.inverseOf, p))
            g.add((p, OWL.inverseOf, inv))
            if e.transitive:
                g.add((inv, RDF.type, OWL.TransitiveProperty))
            _domain_range(g, inv, RDFS.domain, e.range, schema)
            _domain_range(g, inv, RDFS.range, e.domain, schema)
    for a in schema.attributes.values():
        p = _term(g, a.iri, OWL.DatatypeProperty, a.name, a.description)
        g.add((p, RDFS.range, XSD[a.datatype]))  # schema datatypes are XSD local names
    g.add((KG.Assertion, RDF.type, OWL.Class))
    g.add((KG.Assertion, RDFS.subClassOf, RDF.Statement))
    g.add((KG.SourceDocument, RDF.type, OWL.Class))
    return g


def _term(g: Graph, iri: str, kind: URIRef, label: str, comment: str) -> URIRef:
    """Declare a class or property with its label and, when there is one, its comment."""
    term = URIRef(iri)
    g.add((term, RDF.type, kind))
    g.add((term, RDFS.label, Literal(label)))
    if comment:
        g.add((term, RDFS.comment, Literal(comment)))
    return term


def _domain_range(g: Graph, p: URIRef, rel: URIRef, types: tuple[str, ...], schema: Schema) -> None:
    """A single type is stated directly; a union gets one named class per property and side."""
    if len(types) == 1:
        g.add((p, rel, URIRef(schema.node_types[types[0]].iri)))
        return
    side = "Domain" if rel == RDFS.domain else "Range"
    union = URIRef(f"{p}{side}")
    g.add((p, rel, union))
    g.add((union, RDF.type, OWL.Class))
    for t in types:
        g.add((URIRef(schema.node_types[t].iri), RDFS.subClassOf, union))
