"""Push a store's named graphs to a SPARQL server, incrementally, and pull them back.

A push sends each document's named graph as the store holds it (its facts, edges,
assertions and the claims saying which document defines a node, so a remote traversal
applies access exactly as a local one) and the resolved-nodes graph; the store's own
bookkeeping (manifest, counts, problems) stays home. Which graphs a server already has is
remembered per endpoint in ``<store>/remote/push-<hash>.json``: a document's digest is its
recorded state (content hash, file stat, dependencies, labels) with the database identity
and build settings, the nodes graph's the SHA-256 of its triples. Only changed graphs are
sent, graphs of removed documents are dropped; a second push sends nothing.

A graph is replaced atomically: its triples go to a fresh temporary graph (graph store
``PUT``/``POST``, else ``INSERT DATA``) in requests of at most ``batch_bytes``, then one
update ``MOVE GRAPH <tmp> TO <g>`` swaps it in, so readers see the old or the new graph.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyoxigraph as ox

from ..errors import KgbuildError
from ..graph.model import CLAIMS, source_iri
from ..io.atomic import atomic_write
from ..schema.model import Schema
from ..schema.namespaces import BASE, NODES_GRAPH
from ..store.graphstore import INTERNAL, GraphStore
from .sparql import RemoteError, SparqlClient

BOOKKEEPING = INTERNAL - CLAIMS  # predicates a push never sends
BATCH_BYTES = 4 << 20  # N-Triples bytes per upload request
STATE_VERSION = 1


@dataclass
class PushReport:
    """What a push did: graphs sent, dropped and left alone, bytes and requests sent."""

    endpoint: str
    pushed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    triples: int = 0
    bytes_sent: int = 0
    requests: int = 0
    state: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def render(self) -> str:
        lines = [f"pushed {len(self.pushed)} graph(s) ({self.triples} triples), deleted "
                 f"{len(self.deleted)}, {self.unchanged} unchanged; sent {self.bytes_sent} bytes "
                 f"in {self.requests} request(s) to {self.endpoint}"]
        if self.state:
            lines.append(self.state)
        return "\n".join(lines)


def _graph_lines(store: GraphStore, graph: str) -> list[bytes]:
    """The graph's N-Triples lines (bookkeeping left out), sorted."""
    triples = [ox.Triple(q.subject, q.predicate, q.object) for q in store.graph_quads(graph)
               if str(q.predicate) not in BOOKKEEPING]
    return sorted(ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES).splitlines())


def _merged_lines(store: GraphStore) -> list[bytes]:
    """Every exported triple once (``--graph-iri``: the graph ``kgbuild export`` writes)."""
    triples = {ox.Triple(q.subject, q.predicate, q.object) for q in store.quads()}
    return sorted(ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES).splitlines())


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=list).encode()).hexdigest()


def graph_digests(store: GraphStore) -> dict[str, str]:
    """Graph IRI -> digest of its content, for every graph a push sends."""
    ident = (store.store_id(), store.settings())
    out = {source_iri(doc): _digest(ident, state)
           for doc, state in store.document_states().items()}
    out[NODES_GRAPH] = hashlib.sha256(b"\n".join(_graph_lines(store, NODES_GRAPH))).hexdigest()
    return out


def _state_path(store_path: Path, endpoint: str, graph_iri: str | None) -> Path:
    key = hashlib.sha256(f"{endpoint}\n{graph_iri or ''}".encode()).hexdigest()[:16]
    return store_path / "remote" / f"push-{key}.json"


def _read_state(path: Path, endpoint: str) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION \
            or data.get("endpoint") != endpoint or not isinstance(data.get("graphs"), dict):
        return {}
    return {str(k): str(v) for k, v in data["graphs"].items()}


def _batches(lines: list[bytes], limit: int):
    batch, size = [], 0
    for line in lines:
        if batch and size + len(line) + 1 > limit:
            yield b"\n".join(batch) + b"\n"
            batch, size = [], 0
        batch.append(line)
        size += len(line) + 1
    if batch:
        yield b"\n".join(batch) + b"\n"


def replace_graph(client: SparqlClient, graph: str, lines: list[bytes],
                  batch_bytes: int = BATCH_BYTES) -> None:
    """Replace ``graph`` on the server with these N-Triples lines, atomically (upload to a
    temporary graph, then ``MOVE``)."""
    if not lines:
        client.update(f"DROP SILENT GRAPH <{graph}>")
        return
    tmp = f"urn:kgbuild:upload:{uuid.uuid4().hex}"
    try:
        for i, body in enumerate(_batches(lines, batch_bytes)):
            if client.store_url:
                (client.put if i == 0 else client.post)(tmp, body)
            else:
                client.update(f"INSERT DATA {{ GRAPH <{tmp}> {{\n{body.decode('utf-8')}}} }}")
        client.update(f"MOVE GRAPH <{tmp}> TO <{graph}>")
    except RemoteError:
        try:
            client.update(f"DROP SILENT GRAPH <{tmp}>")
        except RemoteError:
            pass
        raise


def push_store(store_path: str | Path, schema: Schema, client: SparqlClient, *,
               graph_iri: str | None = None, full: bool = False,
               batch_bytes: int = BATCH_BYTES) -> PushReport:
    """Send the store's changed named graphs to ``client``'s server (see the module doc).

    ``graph_iri``: send the whole exported graph as that one named graph instead (replaced
    as a whole when anything changed). ``full``: forget what the server was sent before."""
    store_path = Path(store_path)
    report = PushReport(client.query_url)
    state_file = _state_path(store_path, client.query_url, graph_iri)
    before = {} if full else _read_state(state_file, client.query_url)
    with GraphStore(store_path, schema, write=False) as store:
        digests = graph_digests(store)
        if graph_iri is not None:
            digests = {graph_iri: _digest(sorted(digests.items()))}
        sent_before, requests_before = client.sent, client.requests
        done = {g: d for g, d in before.items() if digests.get(g) == d}
        report.unchanged = len(done)
        try:
            gone = sorted(set(before) - set(digests))
            if gone:
                client.update(" ;\n".join(f"DROP SILENT GRAPH <{g}>" for g in gone))
                report.deleted = gone
            for graph in sorted(g for g in digests if before.get(g) != digests[g]):
                lines = _merged_lines(store) if graph_iri else _graph_lines(store, graph)
                replace_graph(client, graph, lines, batch_bytes)
                done[graph] = digests[graph]
                report.pushed.append(graph)
                report.triples += len(lines)
        finally:
            report.bytes_sent = client.sent - sent_before
            report.requests = client.requests - requests_before
            report.state = _save_state(state_file, client.query_url, done)
    return report


def _save_state(path: Path, endpoint: str, graphs: dict[str, str]) -> str:
    data = {"version": STATE_VERSION, "endpoint": endpoint, "graphs": dict(sorted(graphs.items()))}
    try:
        atomic_write(path, json.dumps(data, indent=1) + "\n")
    except (OSError, KgbuildError) as exc:  # a read-only store: the push itself is done
        return (f"warning: cannot remember what was pushed ({exc}); the next push sends "
                f"these graphs again")
    return ""


def kgbuild_graphs(client: SparqlClient) -> list[str]:
    """The server's named graphs that kgbuild writes (IRIs under https://kgbuild.dev/)."""
    rows = client.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } "
                         f"FILTER(STRSTARTS(STR(?g), \"{BASE}\")) }}")
    return sorted(r["g"]["value"] for r in rows if r.get("g", {}).get("type") == "uri")


_FORMATS = {"n-triples": ox.RdfFormat.N_TRIPLES, "text/plain": ox.RdfFormat.N_TRIPLES,
            "ntriples": ox.RdfFormat.N_TRIPLES, "turtle": ox.RdfFormat.TURTLE}


def graph_triples(client: SparqlClient, graph: str) -> list[ox.Triple]:
    """The triples of one named graph on the server (a CONSTRUCT query)."""
    body, ctype = client.construct(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH <{graph}> "
                                   f"{{ ?s ?p ?o }} }}")
    fmt = next((f for k, f in _FORMATS.items() if k in ctype.lower()), None)
    if fmt is None:
        raise RemoteError(f"pull: {client.query_url} answered a CONSTRUCT query with "
                          f"{ctype or 'no content type'}, not N-Triples or Turtle")
    try:
        return list(ox.parse(body, format=fmt))
    except SyntaxError as exc:
        raise RemoteError(f"pull: cannot read the triples of <{graph}> from "
                          f"{client.query_url}: {exc}") from None


PULL_FORMATS = {"nquads": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG,
                "nt": ox.RdfFormat.N_TRIPLES}


def pull_store(client: SparqlClient, output: str | Path, *, graph_iri: str | None = None,
               fmt: str | None = None) -> dict:
    """Write the server's kgbuild graphs (or only ``graph_iri``) to ``output``, sorted:
    N-Quads (``.nq``), TriG (``.trig``) or, with the graph names dropped, N-Triples (``.nt``);
    ``fmt`` overrides the suffix."""
    output = Path(output)
    fmt = fmt or {".trig": "trig", ".nt": "nt"}.get(output.suffix.lower(), "nquads")
    graphs = [graph_iri] if graph_iri else kgbuild_graphs(client)
    quads = set()
    for g in graphs:
        name = ox.NamedNode(g)
        quads.update(ox.Quad(t.subject, t.predicate, t.object, name)
                     for t in graph_triples(client, g))
    ordered = sorted(quads, key=lambda q: (str(q.graph_name), str(q.subject), str(q.predicate),
                                           str(q.object)))
    if fmt == "nt":
        data = b"".join(sorted({ox.serialize([ox.Triple(q.subject, q.predicate, q.object)],
                                             format=ox.RdfFormat.N_TRIPLES) for q in ordered}))
    else:
        data = ox.serialize(ordered, format=PULL_FORMATS[fmt])
    atomic_write(output, data)
    return {"endpoint": client.query_url, "output": str(output), "format": fmt,
            "graphs": len(graphs), "quads": len(ordered)}
