"""Traversal of a graph hosted on a SPARQL server: the same walk, over what it can reach.

Per hop, a few SPARQL queries (``VALUES`` of the frontier's IRIs, in batches) fetch the
frontier's quads: its own triples, the edges pointing at it and the assertions about its
edges, from kgbuild's named graphs only (IRIs under https://kgbuild.dev/, what ``pull``
reads): never from a push's temporary upload graphs, which a failed push may leave, nor
from the server's other graphs. The frontier grows along the edge types the spec walks, for
as many hops as it walks, and one more ring of nodes is read for what decides the visibility
of the last hop's edges (their types, access labels, defining documents and mentions).
The source documents and passages those quads cite are fetched too. The result is the
same graph a store gives (:func:`~kgbuild.graph.rdf.from_quads`), handed to the walk as a read
model in memory (:class:`Endpoint`, a graph source): the one
:class:`~kgbuild.retrieve.traverse.Traverser` walks it, so access rules, the hub cap and its
ranking (whose neighbour degrees are complete for every node the walk can rank), budgets
and output are the ones of a local traversal, which the tests check result by result.

Seeds are stable IDs (``--seed``): resolving a name needs every name of the graph.
"""

from __future__ import annotations

from ..errors import KgbuildError
from ..graph.access import Principal, visible_graph
from ..graph.model import KnowledgeGraph, node_iri
from ..graph.rdf import from_quads
from ..remote.sparql import RemoteError, SparqlClient
from ..schema.model import Schema
from ..schema.namespaces import BASE, KG
from ..store.readmodel import GraphModel
from ..vocab import PROV_DERIVED_FROM, RDF_OBJECT, RDF_SUBJECT
from .spec import TraversalSpec, parse_path, parse_step

BATCH = 200  # IRIs in one VALUES block
MAX_ROWS = 2_000_000  # quads fetched for one traversal
_CHUNK = str(KG.chunk)


def _ours(var: str) -> str:
    """Keeps ``var`` to kgbuild's graphs."""
    return f'FILTER(STRSTARTS(STR(?{var}), "{BASE}"))'


def _value(term: dict) -> str:
    return "_:" + term["value"] if term["type"] == "bnode" else term["value"]


def _iris(items) -> str:
    return " ".join(f"<{i}>" for i in items)


class RemoteGraph:
    """Reads the parts of a server's kgbuild graphs around given nodes (see the module doc)."""

    def __init__(self, client: SparqlClient, schema: Schema, max_rows: int = MAX_ROWS):
        self.client = client
        self.schema = schema
        self.max_rows = max_rows
        self.rows: set[tuple[str, str, str, str]] = set()
        self.queries = 0
        edges = schema.edge_types.values()
        self._edge_iris = {e.iri: e.name for e in edges} | {
            e.inverse_iri: e.name for e in edges if e.inverse_iri}

    def _select(self, query: str, nodes_only: bool) -> list[tuple[str, str, str, str]]:
        self.queries += 1
        out = [(_value(r["s"]), _value(r["p"]), _value(r["o"]), _value(r["g"]))
               for r in self.client.select(query)]
        if nodes_only:
            out = [r for r in out if r[1] not in self._edge_iris]
        self.rows.update(out)
        if len(self.rows) > self.max_rows:
            raise RemoteError(f"the neighbourhood read from {self.client.query_url} holds more "
                              f"than {self.max_rows} quads: walk fewer hops or edge types")
        return out

    def _batched(self, template: str, iris, nodes_only: bool = False
                 ) -> list[tuple[str, str, str, str]]:
        iris = sorted(iris)
        out = []
        for i in range(0, len(iris), BATCH):
            out += self._select(template.replace("$IRIS", _iris(iris[i:i + BATCH])), nodes_only)
        return out

    def subjects(self, iris, nodes_only: bool = False) -> list[tuple[str, str, str, str]]:
        """Every quad whose subject is one of ``iris`` (``nodes_only``: but edge triples)."""
        return self._batched("SELECT ?s ?p ?o ?g WHERE { VALUES ?s { $IRIS } "
                             f"GRAPH ?g {{ ?s ?p ?o }} {_ours('g')} }}", iris, nodes_only)

    def incoming(self, iris) -> list[tuple[str, str, str, str]]:
        """Every edge triple (stored or inverse predicate) pointing at one of ``iris``."""
        preds = _iris(sorted(self._edge_iris))
        return self._batched(f"SELECT ?s ?p ?o ?g WHERE {{ VALUES ?o {{ $IRIS }} VALUES ?p "
                             f"{{ {preds} }} GRAPH ?g {{ ?s ?p ?o }} {_ours('g')} }}", iris)

    def assertions(self, iris) -> list[tuple[str, str, str, str]]:
        """Every quad of the assertions whose subject or object is one of ``iris``."""
        return self._batched(
            "SELECT ?s ?p ?o ?g WHERE { VALUES ?n { $IRIS } "
            f"{{ GRAPH ?h {{ ?s <{RDF_SUBJECT}> ?n }} }} UNION "
            f"{{ GRAPH ?h {{ ?s <{RDF_OBJECT}> ?n }} }} {_ours('h')} "
            f"GRAPH ?g {{ ?s ?p ?o }} {_ours('g')} }}", iris)

    def neighbourhood(self, seeds: list[str], edge_types: set[str], hops: int) -> KnowledgeGraph:
        """The model of everything a walk of ``hops`` hops along ``edge_types`` from the
        ``seeds`` (stable IDs) can reach or rank, with what decides its visibility."""
        walk_iris = {iri for iri, name in self._edge_iris.items() if name in edge_types}
        full: set[str] = set()
        frontier = {node_iri(s) for s in seeds}
        for _ in range(hops + 1):
            frontier -= full
            if not frontier:
                break
            full |= frontier
            got = self.subjects(frontier) + self.incoming(frontier) + self.assertions(frontier)
            frontier = {o if s in full else s for s, p, o, _ in got
                        if p in walk_iris and (s in full) != (o in full)}
        outer = self._endpoints() - full
        self.subjects(outer)
        self.assertions(outer)
        ring = self._endpoints() - full - outer
        self.subjects(ring, nodes_only=True)
        cited = {g for *_, g in self.rows} | {o for _, p, o, _ in self.rows
                                               if p in (PROV_DERIVED_FROM, _CHUNK)}
        self.subjects(cited - self._subjects())
        return from_quads(sorted(self.rows), self.schema)

    def _endpoints(self) -> set[str]:
        """Nodes the fetched edges and assertions name."""
        out = set()
        for s, p, o, _ in self.rows:
            if p in self._edge_iris:
                out.update((s, o))
            elif p in (RDF_SUBJECT, RDF_OBJECT) and not o.startswith("_:"):
                out.add(o)
        return {i for i in out if i.startswith("http")}

    def _subjects(self) -> set[str]:
        return {s for s, *_ in self.rows}


def walked_edge_types(spec: TraversalSpec, schema: Schema) -> set[str]:
    """The stored edge types a spec walks (every one when it names none)."""
    steps = parse_path(spec.path, schema) if spec.path else [parse_step(f, schema)
                                                              for f in spec.follow]
    return {s.edge for s in steps} or set(schema.edge_types)


class Endpoint:
    """A SPARQL endpoint as a graph source (:mod:`kgbuild.retrieve.sources`): per spec, the
    neighbourhood its walk can reach or rank, fetched and made a read model in memory."""

    per_spec = True

    def __init__(self, client: SparqlClient, schema: Schema):
        self.client, self.schema = client, schema

    def model(self, principal: Principal, spec: TraversalSpec) -> GraphModel:
        if spec.names or spec.question:
            raise KgbuildError("a remote traversal is seeded by --seed ID only (resolving a "
                               "name needs every name of the graph: kgbuild pull it and "
                               "traverse the file)", code="usage")
        hops = len(parse_path(spec.path, self.schema)) if spec.path else spec.hops
        kg = RemoteGraph(self.client, self.schema).neighbourhood(
            list(spec.seeds), walked_edge_types(spec, self.schema), hops)
        return GraphModel.of_graph(visible_graph(kg, principal))
