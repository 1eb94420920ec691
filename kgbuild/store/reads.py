"""Reading the store, mixed into :class:`~kgbuild.store.graphstore.GraphStore`: documents and
their problems, quads and rows, counts, SPARQL, the graph in memory and the read model."""

from __future__ import annotations

import json
from typing import Iterator

import pyoxigraph as ox

from ..errors import Problem
from ..graph.model import A, KnowledgeGraph, Triple, node_iri
from ..graph.rdf import from_quads
from ..graph.sparqlcheck import refuse_service
from ..io.collector import gc_paused
from ..schema.model import Schema
from ..vocab import KG, NODES_GRAPH
from .guard import Guarded
from .manifest import COUNTS, INTERNAL, MANIFEST_GRAPH, PROBLEM
from .storemodel import open_model


def nt(term: ox.NamedNode | ox.Literal) -> str:
    """A term in N-Triples form."""
    return str(term)


def quad_row(q: ox.Quad) -> tuple[str, str, str, str]:
    """A quad as the plain values :func:`~kgbuild.graph.rdf.from_quads` reads (a blank node
    as ``_:label``, as a graph file's are read)."""
    s, o = q.subject, q.object
    return (f"_:{s.value}" if isinstance(s, ox.BlankNode) else s.value, q.predicate.value,
            f"_:{o.value}" if isinstance(o, ox.BlankNode) else o.value, q.graph_name.value)


class StoreReads:
    """What a store's database holds, read without changing it (with the manifest's
    :class:`~kgbuild.store.manifest.Manifest`)."""

    schema: Schema
    _db: Guarded
    _damage: str | None
    _graph: tuple[str, KnowledgeGraph] | None  # (revision, its graph)

    def documents(self) -> dict[str, str]:
        """Document ID → content hash of every document in the store."""
        return {doc: state.sha256 for doc, state in self.document_states().items()}

    def problems(self) -> list[Problem]:
        """Every problem recorded by the documents now in the store."""
        out = []
        for q in self._db.quads_for_pattern(None, ox.NamedNode(PROBLEM[1:-1]), None, None):
            out.append(Problem(**json.loads(q.object.value)))
        return sorted(out, key=lambda p: (p.file, p.line or 0, p.code, p.message))

    def node_type(self, node_id: str) -> str | None:
        """Resolved schema type of a node, or None."""
        for q in self._db.quads_for_pattern(ox.NamedNode(node_iri(node_id)), ox.NamedNode(A[1:-1]),
                                            None, ox.NamedNode(NODES_GRAPH)):
            return self.schema.type_by_iri.get(q.object.value)
        return None

    def quads(self) -> Iterator[ox.Quad]:
        """Every exported quad (graph = source document or the nodes graph), in store order."""
        for q in self._db.quads_for_pattern(None, None, None, None):
            if str(q.predicate) not in INTERNAL:
                yield q

    def graph_quads(self, graph: str) -> Iterator[ox.Quad]:
        """Every quad of the named graph ``graph`` (an IRI), bookkeeping included."""
        yield from self._db.quads_for_pattern(None, None, None, ox.NamedNode(graph))

    def rows_about(self, iri: str) -> Iterator[tuple[str, str, str, str]]:
        """Every quad with subject ``iri`` in any graph, as plain values (subject, predicate,
        object, graph: the form :func:`~kgbuild.graph.rdf.from_quads` reads)."""
        return map(quad_row, self._db.quads_for_pattern(ox.NamedNode(iri), None, None, None))

    def has_triple(self, s: str, p: str, o: str) -> bool:
        """Whether some graph holds the triple of three IRIs."""
        return any(True for _ in self._db.quads_for_pattern(ox.NamedNode(s), ox.NamedNode(p),
                                                            ox.NamedNode(o), None))

    def graph_names(self) -> list[str]:
        """The named graphs (every kgbuild quad is in one) as N-Triples terms, sorted."""
        return sorted(str(g) for g in self._db.named_graphs())

    def dump_graph(self, graph: str) -> bytes:
        """One named graph (an N-Triples term) as N-Triples, bookkeeping included, in store
        order (grouped by subject): the store's own serialisation, terms decoded in Rust with
        the GIL released, so several threads may dump at once (``store/export.py``)."""
        name = ox.NamedNode(graph[1:-1]) if graph.startswith("<") else ox.BlankNode(graph[2:])
        return self._db.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=name)

    def triples(self) -> Iterator[Triple]:
        """The exported graph: every graph's triples minus store-internal ones (may repeat)."""
        for q in self.quads():
            yield nt(q.subject), nt(q.predicate), nt(q.object)

    def knowledge_graph(self) -> KnowledgeGraph:
        """The store's graph as an in-memory :class:`KnowledgeGraph` (``defined_in`` holds the
        documents that define each node).

        Materialising walks every quad (about 10 s per million in pyoxigraph's Python API): what
        reads by ID, by name, browsing and serving need is the read model (:meth:`read_model`).
        The graph is kept in memory for the revision it was made of (one process's builds,
        validation and reports read it once); nothing is written."""
        if self._damage is not None:
            return self._materialise()
        revision = self.revision()
        if self._graph is None or self._graph[0] != revision:
            self._graph = (revision, self._materialise())
        return self._graph[1]

    def read_model(self, principal=None):
        """The read model that serves ``principal`` (default: the unrestricted one), made
        from the whole graph only when no commit kept it current (see
        :mod:`kgbuild.store.storemodel`)."""
        return open_model(self, principal)

    def _materialise(self) -> KnowledgeGraph:
        with gc_paused():
            return self._from_quads()

    def _from_quads(self) -> KnowledgeGraph:
        return from_quads(map(quad_row, self._db.quads_for_pattern(None, None, None, None)),
                          self.schema)

    def sparql(self, query: str, union: bool = False, prefixes: dict[str, str] | None = None):
        """pyoxigraph's own result of a SPARQL query (booleans, solutions or triples, read
        lazily); ``union``: patterns outside ``GRAPH`` match every graph; ``prefixes`` are
        declared for the query. See store/query.py. A ``SERVICE`` clause is refused
        (:func:`~kgbuild.graph.sparqlcheck.refuse_service`)."""
        return self._db.db.query(refuse_service(query), use_default_graph_as_union=union,
                                 prefixes=prefixes)

    def triple_count(self) -> int:
        """How many distinct triples :meth:`triples` yields (counted inside the store)."""
        internal = ", ".join(sorted(INTERNAL))
        [row] = list(self._db.query(
            f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?s ?p ?o WHERE {{ GRAPH ?g "
            f"{{ ?s ?p ?o }} FILTER(?p NOT IN ({internal})) }} }}"))
        return int(row["n"].value)

    def node_count(self) -> int:
        """How many nodes the graph has (cheap: one aggregate over the nodes graph)."""
        [row] = list(self._db.query(
            f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{NODES_GRAPH}> {{ ?s a ?t }} }}"))
        return int(row["n"].value)

    def counts(self) -> dict:
        """Nodes by type, distinct edges by type and assertions, as kept up to date by every
        update (see :meth:`recount` for the same figures computed from scratch)."""
        for q in self._db.quads_for_pattern(None, ox.NamedNode(COUNTS[1:-1]), None,
                                            ox.NamedNode(MANIFEST_GRAPH)):
            return json.loads(q.object.value)
        return self.recount()

    def recount(self) -> dict:
        """Nodes by type, distinct edges by type and assertions (aggregated inside the store)."""
        by_iri, by_edge = self.schema.type_by_iri, self.schema.edge_by_iri
        nodes = {by_iri[r["t"].value]: int(r["n"].value) for r in self._db.query(
            f"SELECT ?t (COUNT(*) AS ?n) WHERE {{ GRAPH <{NODES_GRAPH}> {{ ?s a ?t }} }} GROUP BY ?t")
            if r["t"].value in by_iri}
        values = " ".join(f"<{iri}>" for iri in by_edge)
        edges = {by_edge[r["p"].value]: int(r["n"].value) for r in self._db.query(
            f"SELECT ?p (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?s ?p ?o WHERE {{ "
            f"VALUES ?p {{ {values} }} GRAPH ?g {{ ?s ?p ?o }} }} }} GROUP BY ?p")}
        [row] = list(self._db.query(f"SELECT (COUNT(DISTINCT ?a) AS ?n) WHERE {{ GRAPH ?g {{ "
                                    f"?a a <{KG}Assertion> }} }}"))
        return {"nodes": dict(sorted(nodes.items())), "edges": dict(sorted(edges.items())),
                "assertions": int(row["n"].value)}
