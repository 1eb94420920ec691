"""kgbuild's namespaces and IRI bases, and the one prefix table every serialisation uses."""

from __future__ import annotations

from rdflib import Graph, Namespace
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SKOS, XSD

from .model import Schema

KG = Namespace("https://kgbuild.dev/ns#")


BASE = "https://kgbuild.dev/"


ID_BASE = BASE + "id/"


ASSERTION_BASE = BASE + "assertion/"


SOURCE_BASE = BASE + "source/"


NODES_GRAPH = BASE + "graph/nodes"


def prefixes(schema: Schema) -> dict[str, str]:
    """The fixed prefix set of every serialisation: prefix -> namespace."""
    return {schema.prefix: schema.namespace, "kg": str(KG), "prov": str(PROV),
            "dcterms": str(DCTERMS), "rdf": str(RDF), "rdfs": str(RDFS), "owl": str(OWL),
            "skos": str(SKOS), "xsd": str(XSD), "id": ID_BASE, "assertion": ASSERTION_BASE,
            "src": SOURCE_BASE}


def bind_prefixes(g: Graph, schema: Schema) -> None:
    """Bind :func:`prefixes` on an rdflib graph."""
    for prefix, ns in prefixes(schema).items():
        g.bind(prefix, Namespace(ns), override=True, replace=True)
