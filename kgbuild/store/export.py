"""Writing a store's graph in every supported RDF format."""

from __future__ import annotations

import pyoxigraph as ox

from ..graph.turtle import serialize
from ..schema.namespaces import prefixes
from .graphstore import GraphStore

EXPORT_FORMATS = ("turtle", "nt", "jsonld", "trig", "nquads")


def export_store(store: GraphStore, fmt: str = "turtle") -> str:
    """Serialise a store: triple formats merge the documents' graphs; ``trig`` and ``nquads``
    keep one named graph per source document (plus the resolved-nodes graph)."""
    if fmt in ("trig", "nquads"):
        quads = sorted(store.quads(), key=lambda q: (str(q.graph_name), str(q.subject),
                                                     str(q.predicate), str(q.object)))
        rdf_format = ox.RdfFormat.TRIG if fmt == "trig" else ox.RdfFormat.N_QUADS
        names = {p: ns for p, ns in sorted(prefixes(store.schema).items())
                 if p not in ("id", "owl")}  # data graphs use neither
        return ox.serialize(quads, format=rdf_format,
                            prefixes=names if fmt == "trig" else None).decode("utf-8")
    return serialize(store.triples(), store.schema, fmt)
