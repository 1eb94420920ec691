"""The part of a store a compiled plan reads to validate some focus nodes.

What each constraint the fast engine compiles (:mod:`kgbuild.validate.compiler`) reads for a
focus node ``f``:

- targets, value, cardinality and ``sh:or`` constraints: ``f``'s own triples, and the
  triples into ``f`` (``sh:targetObjectsOf``);
- ``sh:class`` (also inside ``sh:qualifiedValueShape``): the types of ``f``'s values;
- edge coverage: the assertions about ``f`` (``?a rdf:subject f``) with their
  ``rdf:predicate`` and ``rdf:object``; assertion counts: the assertions derived from ``f``
  with their type;
- "describes an existing triple": the triple an assertion ``f`` describes;
- across the whole graph: ``rdfs:subClassOf`` and ``owl:ObjectProperty`` declarations.

So those quads give every focus node exactly the results the whole store gives it; other
nodes' results in that part are incomplete and must be dropped.
"""

from __future__ import annotations

from typing import Iterable

import pyoxigraph as ox
from rdflib.namespace import OWL, PROV, RDF, RDFS

_TYPE, _SUBJECT = ox.NamedNode(str(RDF.type)), ox.NamedNode(str(RDF.subject))
_PREDICATE, _OBJECT = ox.NamedNode(str(RDF.predicate)), ox.NamedNode(str(RDF.object))
_DERIVED = ox.NamedNode(str(PROV.wasDerivedFrom))
_STATEMENT = (_TYPE, _SUBJECT, _PREDICATE, _OBJECT)
_NODE = (ox.NamedNode, ox.BlankNode)
_GLOBAL = ((None, ox.NamedNode(str(RDFS.subClassOf)), None),
           (None, _TYPE, ox.NamedNode(str(OWL.ObjectProperty))))


def neighbourhood(db: ox.Store, focus: Iterable[str]) -> ox.Store:
    """An in-memory store holding the quads of ``db`` the fast engine reads for ``focus``
    (IRIs), graph names kept."""
    out = ox.Store()
    pointing: set = set()
    for iri in focus:
        node = ox.NamedNode(iri)
        own = list(db.quads_for_pattern(node, None, None))
        out.extend(own)
        into = list(db.quads_for_pattern(None, None, node))
        out.extend(into)
        pointing.update(q.subject for q in into if q.predicate in (_SUBJECT, _DERIVED))
        for value in {q.object for q in own if isinstance(q.object, _NODE)}:
            out.extend(db.quads_for_pattern(value, _TYPE, None))
        out.extend(_described(db, own))
    for node in pointing:
        for p in _STATEMENT:
            out.extend(db.quads_for_pattern(node, p, None))
    for pattern in _GLOBAL:
        out.extend(db.quads_for_pattern(*pattern))
    return out


def _described(db: ox.Store, own: list) -> Iterable[ox.Quad]:
    """The triples an assertion describes, from its subject, predicate and object quads."""
    parts = {p: {q.object for q in own if q.predicate == p} for p in (_SUBJECT, _PREDICATE, _OBJECT)}
    for s in parts[_SUBJECT]:
        if not isinstance(s, _NODE):
            continue
        for p in parts[_PREDICATE]:
            if not isinstance(p, ox.NamedNode):
                continue
            for o in parts[_OBJECT]:
                if not isinstance(o, ox.Triple):
                    yield from db.quads_for_pattern(s, p, o)
