"""Push a store's named graphs to a SPARQL server, incrementally, and pull them back.

A push sends each document's named graph as the store holds it (its facts, edges,
assertions and the claims saying which document defines a node, so a remote traversal
applies access exactly as a local one) and the resolved-nodes graph; the store's own
bookkeeping (manifest, counts, problems) stays home. Which graphs a server already has is
remembered per endpoint in ``<store>/remote/push-<hash>.json`` (with the store revision the
server is complete for: an unchanged store is not even read): a document's digest is its
recorded state (content hash, file stat, dependencies, labels) with the database identity
and build settings, the nodes graph's the SHA-256 of its triples. Only changed graphs are
sent, graphs of removed documents are dropped; a second push sends nothing.

A graph is replaced atomically: its triples go to a fresh temporary graph (graph store
``POST`` of N-Quads, else ``INSERT DATA``; small graphs share a request of at most
``batch_bytes``), then one update of ``MOVE GRAPH <tmp> TO <g>`` operations swaps up to 500
graphs in, so readers see the old or the new graph, never part of one.
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
BATCH_BYTES = 4 << 20  # bytes of quads per upload request
MOVES = 500  # graphs swapped in by one update
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
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()


def graph_digests(store: GraphStore) -> dict[str, str]:
    """Graph IRI -> digest of its content, for every graph a push sends."""
    ident = repr((store.store_id(), json.dumps(store.settings(), sort_keys=True)))
    out = {source_iri(doc): _digest(ident, tuple(state))
           for doc, state in store.document_states().items()}
    out[NODES_GRAPH] = hashlib.sha256(b"\n".join(_graph_lines(store, NODES_GRAPH))).hexdigest()
    return out


def _state_path(store_path: Path, endpoint: str, graph_iri: str | None) -> Path:
    key = hashlib.sha256(f"{endpoint}\n{graph_iri or ''}".encode()).hexdigest()[:16]
    return store_path / "remote" / f"push-{key}.json"


def _read_state(path: Path, endpoint: str) -> tuple[dict[str, str], str]:
    """Graph -> digest the server was last sent, and the store revision it was then complete
    for ("" when it was not)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, ""
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION \
            or data.get("endpoint") != endpoint or not isinstance(data.get("graphs"), dict):
        return {}, ""
    return {str(k): str(v) for k, v in data["graphs"].items()}, str(data.get("revision", ""))


class Uploader:
    """Replaces graphs on a server, several per request (at most ``batch_bytes`` of N-Quads:
    graph store ``POST``, else ``INSERT DATA``).

    A graph the server may hold (``fresh=False``) goes to a temporary graph, and one update of
    up to ``moves`` ``MOVE GRAPH <tmp> TO <g>`` swaps the uploaded ones in: readers see the
    old or the new graph. A graph the server does not hold is written in place when it fits
    in one request (which is one transaction): it appears whole, and costs the server no
    move. ``done`` lists the graphs complete on the server so far."""

    def __init__(self, client: SparqlClient, batch_bytes: int = BATCH_BYTES, moves: int = MOVES):
        self.client, self.batch_bytes, self.moves = client, batch_bytes, moves
        self.data: list[tuple[str, list[bytes]]] = []  # (graph written, lines) not sent yet
        self.size = 0
        self.direct: list[str] = []  # graphs written in place by the pending request
        self.swaps: list[tuple[str | None, str]] = []  # (tmp or None: drop, graph)
        self.done: list[str] = []

    def add(self, graph: str, lines: list[bytes], fresh: bool = False) -> None:
        """Queue ``graph``'s new content (its N-Triples lines; none: drop the graph)."""
        extra = len(graph) + 3  # an N-Quads line names its graph: " <g>"
        total = sum(len(line) + 1 + extra for line in lines)
        if fresh and lines and total <= self.batch_bytes:
            if self.size + total > self.batch_bytes:
                self._send_data()
            self.data.append((graph, list(lines)))
            self.size += total
            self.direct.append(graph)
            return
        tmp = f"urn:kgbuild:upload:{uuid.uuid4().hex}" if lines else None
        self.swaps.append((tmp, graph))
        extra = len(tmp or "") + 3
        for line in lines:
            cost = len(line) + 1 + extra
            if self.size and self.size + cost > self.batch_bytes:
                self._send_data()
            if not self.data or self.data[-1][0] != tmp:
                self.data.append((tmp, []))
            self.data[-1][1].append(line)
            self.size += cost
        if len(self.swaps) >= self.moves:
            self.flush()

    def _send_data(self) -> None:
        if not self.data:
            return
        if self.client.store_url:
            self.client.post_quads(b"".join(line[:-1] + f"<{tmp}> .\n".encode()
                                            for tmp, lines in self.data for line in lines))
        else:
            self.client.update("INSERT DATA {\n" + "".join(
                f"GRAPH <{tmp}> {{\n" + b"\n".join(lines).decode("utf-8") + "\n}\n"
                for tmp, lines in self.data) + "}")
        self.data, self.size = [], 0
        self.done += self.direct
        self.direct = []

    def flush(self) -> None:
        """Send what is pending and swap every uploaded graph in."""
        self._send_data()
        if self.swaps:
            self.client.update(" ;\n".join(f"MOVE GRAPH <{tmp}> TO <{g}>" if tmp else
                                           f"DROP SILENT GRAPH <{g}>" for tmp, g in self.swaps))
            self.done += [g for _, g in self.swaps]
            self.swaps = []

    def abandon(self) -> None:
        """After a failure: drop the temporary graphs not swapped in (best effort)."""
        tmps = [t for t, _ in self.swaps if t]
        self.data, self.swaps, self.direct = [], [], []
        if tmps:
            try:
                self.client.update(" ;\n".join(f"DROP SILENT GRAPH <{t}>" for t in tmps))
            except RemoteError:
                pass


def push_store(store_path: str | Path, schema: Schema, client: SparqlClient, *,
               graph_iri: str | None = None, full: bool = False,
               batch_bytes: int = BATCH_BYTES) -> PushReport:
    """Send the store's changed named graphs to ``client``'s server (see the module doc).

    ``graph_iri``: send the whole exported graph as that one named graph instead (replaced
    as a whole when anything changed). ``full``: forget what the server was sent before,
    send every graph and drop the server's other kgbuild graphs (IRIs under
    https://kgbuild.dev/), so that they equal the store's."""
    store_path = Path(store_path)
    report = PushReport(client.query_url)
    state_file = _state_path(store_path, client.query_url, graph_iri)
    before, pushed_revision = ({}, "") if full else _read_state(state_file, client.query_url)
    with GraphStore(store_path, schema, write=False) as store:
        revision = f"{store.store_id()}:{store.generation()}"
        if before and pushed_revision == revision:  # nothing committed since: nothing to read
            report.unchanged = len(before)
            return report
        digests = graph_digests(store)
        if graph_iri is not None:
            digests = {graph_iri: _digest(sorted(digests.items()))}
        sent_before, requests_before = client.sent, client.requests
        done = {g: d for g, d in before.items() if digests.get(g) == d}
        report.unchanged = len(done)
        try:
            known = set(kgbuild_graphs(client)) if full and graph_iri is None else set(before)
            gone = sorted(known - set(digests))
            if gone:
                client.update(" ;\n".join(f"DROP SILENT GRAPH <{g}>" for g in gone))
                report.deleted = gone
            uploader = Uploader(client, batch_bytes)
            todo = sorted(g for g in digests if before.get(g) != digests[g])
            held = set(before) | existing_graphs(client, [g for g in todo if g not in before])
            try:
                for graph in todo:
                    lines = _merged_lines(store) if graph_iri else _graph_lines(store, graph)
                    uploader.add(graph, lines, fresh=graph not in held)
                    report.triples += len(lines)
                uploader.flush()
            except RemoteError:
                uploader.abandon()
                raise
            finally:
                done.update((g, digests[g]) for g in uploader.done)
                report.pushed = uploader.done
        finally:
            report.bytes_sent = client.sent - sent_before
            report.requests = client.requests - requests_before
            report.state = _save_state(state_file, client.query_url, done,
                                       revision if done == digests else "")
    return report


def _save_state(path: Path, endpoint: str, graphs: dict[str, str], revision: str) -> str:
    data = {"version": STATE_VERSION, "endpoint": endpoint, "revision": revision,
            "graphs": dict(sorted(graphs.items()))}
    try:
        atomic_write(path, json.dumps(data, indent=1) + "\n")
    except (OSError, KgbuildError) as exc:  # a read-only store: the push itself is done
        return (f"warning: cannot remember what was pushed ({exc}); the next push sends "
                f"these graphs again")
    return ""


def existing_graphs(client: SparqlClient, graphs: list[str], batch: int = 200) -> set[str]:
    """Which of ``graphs`` the server holds (has a triple in)."""
    out = set()
    for i in range(0, len(graphs), batch):
        values = " ".join(f"<{g}>" for g in graphs[i:i + batch])
        rows = client.select(f"SELECT ?g WHERE {{ VALUES ?g {{ {values} }} "
                             f"FILTER EXISTS {{ GRAPH ?g {{ ?s ?p ?o }} }} }}")
        out.update(r["g"]["value"] for r in rows if "g" in r)
    return out


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
