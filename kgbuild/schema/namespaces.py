"""kgbuild's namespaces and IRI bases as rdflib namespaces, and the one prefix table every
serialisation uses (the IRIs themselves are :mod:`kgbuild.vocab`'s)."""

from __future__ import annotations

from rdflib import Graph, Namespace

from .. import vocab
from ..vocab import ASSERTION_BASE, BASE, ID_BASE, NODES_GRAPH, PASSAGE_BASE, SOURCE_BASE
from .model import Schema

__all__ = ["ASSERTION_BASE", "BASE", "ID_BASE", "KG", "NODES_GRAPH", "PASSAGE_BASE", "SOURCE_BASE",
           "bind_prefixes", "prefixes"]

KG = Namespace(vocab.KG)


def prefixes(schema: Schema) -> dict[str, str]:
    """The fixed prefix set of every serialisation: prefix -> namespace."""
    return {schema.prefix: schema.namespace, "kg": vocab.KG, "prov": vocab.PROV,
            "dcterms": vocab.DCTERMS, "rdf": vocab.RDF, "rdfs": vocab.RDFS, "owl": vocab.OWL,
            "skos": vocab.SKOS, "xsd": vocab.XSD, "id": ID_BASE, "assertion": ASSERTION_BASE,
            "src": SOURCE_BASE}


def bind_prefixes(g: Graph, schema: Schema) -> None:
    """Bind :func:`prefixes` on an rdflib graph."""
    for prefix, ns in prefixes(schema).items():
        g.bind(prefix, Namespace(ns), override=True, replace=True)
