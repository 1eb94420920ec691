"""Incremental validation: only the focus nodes a change to some documents can affect.

A document's named graph holds every triple it contributes, so the IRIs it mentions (as
subject or object, before and after the change) are the nodes whose own triples changed.
Every kgbuild shape reads a focus node's own triples, except three that look one step away:
an assertion's "describes an existing triple" check (the triple may be in a changed document),
edge coverage (the assertion may be), and a value's type (``sh:class`` on an edge's object).
So the focus set is the touched IRIs, the assertions whose subject or object is one of them,
and the nodes with an edge into one of them. Validating that set gives exactly the full run's
results for those nodes; every other node's results cannot have changed.
"""

from __future__ import annotations

from typing import Iterable

from rdflib import Graph
from rdflib.namespace import RDF

from ..graph.model import source_iri
from .hygiene import HygieneOptions
from .report import ValidationReport
from .validator import validate_store


def touched_terms(store, documents: Iterable[str]) -> set[str]:
    """IRIs used as subject or object in the documents' named graphs, the schema's own
    (classes, edge and attribute properties, as objects of ``rdf:type``, a declared type or
    ``rdf:predicate``) left out: every node points at those, so they would make the focus
    the whole graph (call before and after a change: a node a document stops mentioning is
    touched too)."""
    graphs = " ".join(f"<{source_iri(d)}>" for d in sorted(set(documents)))
    if not graphs:
        return set()
    out: set[str] = set()
    for row in store.sparql(
            f"SELECT DISTINCT ?t WHERE {{ VALUES ?g {{ {graphs} }} GRAPH ?g {{ "
            f"{{ ?t ?p ?o }} UNION {{ ?s ?p ?t FILTER(?p != <{RDF.type}>) }} }} FILTER(isIRI(?t)) }}"):
        out.add(row["t"].value)
    schema = store.schema
    own = {*schema.type_by_iri, *schema.edge_by_iri, *(a.iri for a in schema.attributes.values()),
           *(e.inverse_iri for e in schema.edge_types.values() if e.inverse_iri)}
    return out - own


def focus_nodes(store, terms: set[str]) -> set[str]:
    """``terms`` and every subject with a triple into one of them (assertions about them,
    nodes with an edge to them)."""
    out = set(terms)
    todo = sorted(terms)
    for i in range(0, len(todo), 500):
        values = " ".join(f"<{t}>" for t in todo[i:i + 500])
        for row in store.sparql(
                f"SELECT DISTINCT ?x WHERE {{ VALUES ?n {{ {values} }} "
                f"?x ?p ?n FILTER(isIRI(?x)) }}", union=True):
            out.add(row["x"].value)
    return out


def validate_changed(store, documents: Iterable[str], *, before: Iterable[str] = (),
                     engine: str = "fast", shapes: Graph | None = None,
                     hygiene: HygieneOptions | None = None) -> ValidationReport:
    """Validate only what a change to ``documents`` (IDs) can have affected in ``store``.

    ``before`` are :func:`touched_terms` of the same documents taken before the change (a
    deleted document's or a dropped mention's nodes); the result equals a full validation's
    results restricted to the focus nodes validated (``report.scope`` says how many)."""
    focus = focus_nodes(store, touched_terms(store, documents) | set(before))
    return validate_store(store, engine=engine, shapes=shapes, focus=focus, hygiene=hygiene)
