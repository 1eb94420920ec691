"""Reading RDF (rdflib graphs, store quads) into a :class:`KnowledgeGraph`, and back to rdflib."""

from __future__ import annotations

from typing import Iterable

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SKOS, XSD

from ..schema.model import Schema
from ..schema.namespaces import ASSERTION_BASE, KG, SOURCE_BASE, bind_prefixes
from .model import (
    Assertion,
    KnowledgeGraph,
    Node,
    SourceDocument,
    Triple,
    doc_from_iri,
    id_from_iri,
    lit,
)


def triples_to_rdflib(triples: Iterable[Triple], schema: Schema) -> Graph:
    """Parse N-Triples term tuples into an rdflib graph."""
    g = Graph()
    bind_prefixes(g, schema)
    g.parse(data="\n".join(f"{s} {p} {o} ." for s, p, o in triples), format="nt")
    return g


def from_rdf(g: Graph, schema: Schema) -> KnowledgeGraph:
    """Read an rdflib graph written in this layout (e.g. a Turtle export) into a model."""
    return from_quads(((str(s), str(p), str(o), "") for s, p, o in g), schema)


def rdflib_term(term) -> str:
    """An rdflib term as an N-Triples term string (blank nodes keep rdflib's ``_:`` form)."""
    if isinstance(term, Literal):
        if term.language:
            return f"{lit(str(term))}@{term.language}"
        dt = str(term.datatype) if term.datatype and term.datatype != XSD.string else None
        return lit(str(term), dt)
    if isinstance(term, URIRef):
        return f"<{term}>"
    return term.n3()


def from_quads(rows: Iterable[tuple[str, str, str, str]], schema: Schema) -> KnowledgeGraph:
    """Build a model from quads as plain values ``(subject, predicate, object, graph)``: IRIs
    without brackets, literals as their lexical form (the predicate says which). Each quad is
    looked at once, with no term parsing.

    ``defined_in`` comes from the documents' label claims (a store's graphs; a file has none).
    Edges between typed nodes that have no assertion are kept in ``untyped_edges``: they can
    be walked but carry no evidence.
    """
    types, preds = schema.type_by_iri, schema.edge_by_iri
    attrs = {a.iri: a.name for a in schema.attributes.values()}
    rdf_type, label, ident, alt, access = (str(RDF.type), str(RDFS.label), str(DCTERMS.identifier),
                                           str(SKOS.altLabel), str(KG.accessLabel))
    declared, qualifier = str(KG.declaredLabel), str(KG.qualifier)
    node_rows: dict[str, dict] = {}
    assertion_rows: dict[str, dict] = {}
    doc_rows: dict[str, dict] = {}
    for s, p, o, g in rows:
        if s.startswith(ASSERTION_BASE):
            rec = assertion_rows.setdefault(s, {})
            if p in (access, qualifier):
                rec.setdefault(p, set()).add(o)
            else:
                rec[p] = o
        elif s.startswith(SOURCE_BASE):
            rec = doc_rows.setdefault(s, {})
            if p == access:
                rec.setdefault("access", set()).add(o)
            else:
                rec[p] = o
        else:  # a node (any IRI typed with a schema type counts, foreign ones included)
            rec = node_rows.setdefault(s, {})
            if p == rdf_type:
                if o in types:
                    rec.setdefault("type", types[o])
            elif p == label:
                rec["label"] = o
            elif p == ident:
                rec["id"] = o
            elif p in attrs:
                rec.setdefault("attrs", {}).setdefault(attrs[p], set()).add(o)
            elif p == alt:
                rec.setdefault("aliases", set()).add(o)
            elif p == access:
                rec.setdefault("access", set()).add(o)
            elif p == declared:
                rec.setdefault("defined_in", set()).add(doc_from_iri(g))
            elif p in preds:
                rec.setdefault("edges", []).append((preds[p], o))
    kg = KnowledgeGraph(schema)
    for iri, rec in node_rows.items():
        if rec.get("type") is None:
            continue
        nid = rec.get("id") or id_from_iri(iri)
        kg.nodes[nid] = Node(nid, rec["type"], rec.get("label", nid), rec.get("attrs", {}),
                             rec.get("access", set()), rec.get("defined_in", set()),
                             rec.get("aliases", set()))
    for iri, rec in doc_rows.items():
        if rec.get(rdf_type) == str(KG.SourceDocument):
            count = rec.get(str(KG.assertionCount))
            kg.add_document(SourceDocument(doc_from_iri(iri), rec.get(str(KG.path), ""),
                                           rec.get(str(KG.sha256), ""), frozenset(rec.get("access", ())),
                                           int(count) if count is not None else None))
    for rec in assertion_rows.values():
        pred = preds.get(rec.get(str(RDF.predicate), ""))
        if pred is None:
            continue
        line, start, end = rec.get(str(KG.line)), rec.get(str(KG.spanStart)), rec.get(str(KG.spanEnd))
        a = Assertion(id_from_iri(rec[str(RDF.subject)]), pred, id_from_iri(rec[str(RDF.object)]),
                      doc_from_iri(rec.get(str(PROV.wasDerivedFrom), "")), rec.get(str(KG.extractor), ""),
                      rec.get(str(PROV.generatedAtTime), ""), float(rec.get(str(KG.confidence), 1.0)),
                      int(line) if line is not None else None, rec.get(str(KG.jsonPointer)),
                      rec.get(str(KG.evidence)),
                      (int(start), int(end)) if start is not None and end is not None else None,
                      frozenset(rec.get(access, ())), frozenset(rec.get(qualifier, ())))
        kg.assertions[a.key] = a
    covered = {a.edge for a in kg.assertions.values()}
    for iri, rec in node_rows.items():
        nid = rec.get("id") or id_from_iri(iri)
        for pred, obj in rec.get("edges", ()):
            edge = (nid, pred, id_from_iri(obj))
            if nid in kg.nodes and edge[2] in kg.nodes and edge not in covered:
                kg.untyped_edges.add(edge)
    return kg


def to_rdflib(kg: KnowledgeGraph) -> Graph:
    """An rdflib :class:`Graph` holding ``kg.triples()``, with the standard prefixes bound."""
    return triples_to_rdflib(kg.triples(), kg.schema)
