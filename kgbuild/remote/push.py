"""Push a store's named graphs to a SPARQL server, incrementally, and pull them back.

A push sends each document's named graph as the store holds it (its facts, edges,
assertions and the claims saying which document defines a node, so a remote traversal
applies access exactly as a local one) and the resolved-nodes graph; the store's own
bookkeeping (manifest, counts, problems) stays home. Which graphs a server already has is
remembered per endpoint in ``<store>/remote/push-<hash>.json`` (with the store revision the
server is complete for: an unchanged store is not even read): a document's digest is its
recorded state (content hash, file stat, dependencies, labels) with the database identity
and build settings, the nodes graph's the mark each commit that changes it records (or,
in a store without one, the SHA-256 of its triples). Only changed graphs are
sent, graphs of removed documents are dropped; a second push sends nothing.

Graphs are replaced atomically: their triples go to fresh temporary graphs (graph store
``POST`` of N-Quads, else ``INSERT DATA``; small graphs share a request of at most
``batch_bytes``), then one update of ``MOVE GRAPH <tmp> TO <g>`` (and ``DROP`` for removed
documents) swaps up to 500 graphs in, so readers see the old or the new graph, never part of
one, and a push (of up to 500 graphs) that fails before its swap leaves the server's graphs
as they were. Only a push that replaces and drops nothing (the first) writes its graphs in
place instead, each that fits in one request (one transaction) in one.

With a :class:`~kgbuild.remote.virtuoso.BulkLoader` (``kgbuild push --bulk-dir``), the
graphs the server lacks go through Virtuoso's bulk loader instead (many times faster than
SPARQL Update, not atomic: see :mod:`kgbuild.remote.virtuoso`); the rest as above.

Temporary graphs are named ``urn:kgbuild:upload:<key>:<uuid>``, the key naming the store and
target (kept in the state file). A failed push drops its own (best effort). From before its
first write until it ends cleanly, the state file says that uploads of the key may be left
on the server (a failed cleanup, a killed push): the next push to the target then looks for
them (one query, which reads every quad) and drops them before anything else; ``--full``
always does, and also drops those named before uploads had keys
(``urn:kgbuild:upload:<uuid>``). So a push that finds the store unchanged since a clean
push sends nothing. A push holds ``push-<hash>.lock`` beside the state file: one push of a
store to a target at a time, since each removes what an earlier one left. Nothing reads
temporary graphs: ``pull`` and ``traverse --endpoint`` read only graphs under
https://kgbuild.dev/.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import uuid
from contextlib import ExitStack, closing, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import pyoxigraph as ox

from ..errors import KgbuildError
from ..graph.model import CLAIMS, source_iri
from ..io.atomic import atomic_write
from ..schema.model import Schema
from ..schema.namespaces import BASE, NODES_GRAPH
from ..store.export import graph_dumps
from ..store.graphstore import INTERNAL, GraphStore
from .sparql import RemoteError, SparqlClient
from .virtuoso import BulkLoader

BOOKKEEPING = INTERNAL - CLAIMS  # predicates a push never sends
BATCH_BYTES = 4 << 20  # bytes of quads per upload request
MOVES = 500  # graphs swapped in by one update
BLOCK = 1000  # triples per GRAPH block of an INSERT DATA
INSERT_BYTES = 256 << 10  # bytes of triples per INSERT DATA request (about 1,800 triples)
STATE_VERSION = 1
UPLOAD = "urn:kgbuild:upload:"  # temporary graphs: UPLOAD + key + ":" + uuid
_UNKEYED = re.compile(r"urn:kgbuild:upload:[0-9a-f]{32}")  # named before uploads had keys


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
    bulk_graphs: int = 0  # of ``pushed``: loaded by Virtuoso's bulk loader
    bulk_bytes: int = 0  # N-Quads bytes the bulk loader read
    bulk_seconds: float = 0.0  # the loader's own time (the files written before it)
    bulk_batches: int = 0  # loads (each of at most the loader's batch_bytes, then removed)
    state: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def render(self) -> str:
        lines = [f"pushed {len(self.pushed)} graph(s) ({self.triples} triples), deleted "
                 f"{len(self.deleted)}, {self.unchanged} unchanged; sent {self.bytes_sent} bytes "
                 f"in {self.requests} request(s) to {self.endpoint}"]
        if self.bulk_graphs:
            lines[0] += (f"; {self.bulk_graphs} graph(s) ({self.bulk_bytes} bytes of N-Quads) "
                         f"by Virtuoso's bulk loader in {self.bulk_seconds:.1f} s "
                         f"({self.bulk_batches} load(s))")
        if self.state:
            lines.append(self.state)
        return "\n".join(lines)


_BOOKKEEPING_TERMS = {f"<{p}>".encode() for p in BOOKKEEPING}


def _graph_lines(store: GraphStore, graph: str) -> list[bytes]:
    """The graph's N-Triples lines (bookkeeping left out), sorted."""
    return _sent(store.dump_graph(f"<{graph}>"))


def _sent(dump: bytes) -> list[bytes]:
    """The lines of a graph's N-Triples dump a push sends (bookkeeping left out: a line's
    predicate is its second term, as an IRI or blank node subject holds no space), sorted."""
    return sorted(line for line in dump.splitlines()
                  if line.split(b" ", 2)[1] not in _BOOKKEEPING_TERMS)


def _merged_lines(store: GraphStore) -> list[bytes]:
    """Every exported triple once (``--graph-iri``: the graph ``kgbuild export`` writes)."""
    triples = {ox.Triple(q.subject, q.predicate, q.object) for q in store.quads()}
    return sorted(ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES).splitlines())


def _digest(*parts) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()


def graph_digests(store: GraphStore) -> dict[str, str]:
    """Graph IRI -> digest of its content, for every graph a push sends."""
    ident = repr((store.store_id(), json.dumps(store.settings(), sort_keys=True)))
    head = hashlib.sha256(f"({ident!r}, ".encode("utf-8", "surrogatepass"))

    def digest(state) -> str:  # (= _digest(ident, tuple(state)), the head hashed once)
        h = head.copy()
        h.update(f"{tuple(state)!r})".encode("utf-8", "surrogatepass"))
        return h.hexdigest()
    out = {source_iri(doc): digest(state) for doc, state in store.document_states().items()}
    mark = store.nodes_revision()  # (named anew by every commit that changes the graph)
    out[NODES_GRAPH] = _digest(ident, "nodes", mark) if mark else hashlib.sha256(
        b"\n".join(_graph_lines(store, NODES_GRAPH))).hexdigest()
    return out


def _state_path(store_path: Path, endpoint: str, graph_iri: str | None) -> Path:
    key = hashlib.sha256(f"{endpoint}\n{graph_iri or ''}".encode()).hexdigest()[:16]
    return store_path / "remote" / f"push-{key}.json"


class _State(NamedTuple):
    """What a push remembers of a target."""

    graphs: dict[str, str]  # graph -> digest of what the server holds ("": unknown content)
    revision: str  # the store revision the server is complete for ("": not complete)
    key: str  # names the target's temporary graphs ("": none chosen yet)
    clean: bool  # no temporary graph of the key can be left on the server


def _read_state(path: Path, endpoint: str) -> _State:
    """The target's state; one that is missing or unreadable knows nothing (and is not clean)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _State({}, "", "", False)
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION \
            or data.get("endpoint") != endpoint or not isinstance(data.get("graphs"), dict):
        return _State({}, "", "", False)
    key = data.get("upload", "")
    key = key if isinstance(key, str) and re.fullmatch(r"[0-9a-f]{16}", key) else ""
    # a state written before uploads had keys: no upload with a key can be left
    clean = data.get("clean", not key) is True
    return _State({str(k): str(v) for k, v in data["graphs"].items()},
                  str(data.get("revision", "")), key, clean)


@contextmanager
def _locked(path: Path):
    """Hold ``path`` locked (flock) for one push: one push of a store to a target at a time.
    A store where the lock file cannot be made (read-only) is not locked."""
    with ExitStack() as stack:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fh = stack.enter_context(path.open("a", encoding="utf-8"))
        except OSError:
            fh = None
        try:
            if fh is not None:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise KgbuildError("another kgbuild push of this store to the same endpoint is "
                               "running; wait for it to finish", code="push-locked") from None
        yield


class Uploader:
    """Replaces graphs on a server, several per request (at most ``batch_bytes`` of N-Quads:
    graph store ``POST``, else ``INSERT DATA`` of at most :data:`INSERT_BYTES`, in blocks of
    :data:`BLOCK` triples a graph: Virtuoso compiles an update into SQL and refuses one
    that makes more than 10,000 lines of it, or crashes).

    A graph the server may hold (``fresh=False``) goes to a temporary graph (``prefix`` and a
    UUID), and one update of up to ``moves`` ``MOVE GRAPH <tmp> TO <g>`` (or ``DROP``) swaps
    the uploaded ones in: readers see the old or the new graph. A ``fresh`` graph is written
    in place when it fits in one request (which is one transaction): it appears whole, and
    costs the server no move. ``done`` lists the graphs complete on the server so far."""

    def __init__(self, client: SparqlClient, batch_bytes: int = BATCH_BYTES, moves: int = MOVES,
                 prefix: str = UPLOAD):
        if not client.store_url:  # INSERT DATA: Virtuoso refuses (SP031) or crashes past a few
            batch_bytes = min(batch_bytes, INSERT_BYTES)  # thousand triples a request
        self.client, self.batch_bytes, self.moves, self.prefix = client, batch_bytes, moves, prefix
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
        tmp = f"{self.prefix}{uuid.uuid4().hex}" if lines else None
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
        else:  # a graph's triples in blocks: Virtuoso's parser runs out of stack past ~5,000
            self.client.update("INSERT DATA {\n" + "".join(
                f"GRAPH <{tmp}> {{\n" + b"\n".join(lines[i:i + BLOCK]).decode("utf-8") + "\n}\n"
                for tmp, lines in self.data for i in range(0, len(lines), BLOCK)) + "}")
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

    def abandon(self) -> bool:
        """After a failure: drop the temporary graphs not swapped in (best effort). False
        when some may be left."""
        tmps = [t for t, _ in self.swaps if t]
        self.data, self.swaps, self.direct = [], [], []
        if tmps:
            try:
                self.client.update(" ;\n".join(f"DROP SILENT GRAPH <{t}>" for t in tmps))
            except RemoteError:
                return False
        return True


def push_store(store_path: str | Path, schema: Schema, client: SparqlClient, *,
               graph_iri: str | None = None, full: bool = False,
               batch_bytes: int = BATCH_BYTES, bulk: BulkLoader | None = None) -> PushReport:
    """Send the store's changed named graphs to ``client``'s server (see the module doc).

    ``graph_iri``: send the whole exported graph as that one named graph instead (replaced
    as a whole when anything changed). ``full``: forget what the server was sent before,
    send every graph and drop the server's other kgbuild graphs (IRIs under
    https://kgbuild.dev/) and temporary graphs of pushes before keys, so that they equal the
    store's. ``bulk``: the graphs the server lacks go through Virtuoso's bulk loader
    (:mod:`kgbuild.remote.virtuoso`), the others over SPARQL as always."""
    store_path = Path(store_path)
    report = PushReport(client.query_url)
    state_file = _state_path(store_path, client.query_url, graph_iri)
    with GraphStore(store_path, schema, write=False) as store, \
            _locked(state_file.with_suffix(".lock")):
        state = _read_state(state_file, client.query_url)
        revision = f"{store.store_id()}:{store.generation()}"
        if not full and state.clean and state.graphs and state.revision == revision:
            report.unchanged = len(state.graphs)  # nothing committed since, nothing left over
            return report
        key = state.key or _digest(store.store_id(), state_file.name)[:16]
        if state.clean or state.key != key:  # from here on, uploads may be left
            report.state = _save_state(state_file, client.query_url,
                                       state._replace(revision="", key=key, clean=False))
        digests = graph_digests(store)
        if graph_iri is not None:
            digests = {graph_iri: _digest(sorted(digests.items()))}
        sent_before, requests_before = client.sent, client.requests
        server = {} if full else dict(state.graphs)
        uploader = Uploader(client, batch_bytes, prefix=f"{UPLOAD}{key}:")
        swept = clean = False
        try:
            if full or not state.clean:
                found = server_graphs(client, BASE, UPLOAD)
                left = [g for g in found if g.startswith(uploader.prefix)
                        or full and _UNKEYED.fullmatch(g)]
                if left:
                    client.update(" ;\n".join(f"DROP SILENT GRAPH <{g}>" for g in left))
                if full and graph_iri is None:
                    server = {g: "" for g in found if g.startswith(BASE)}
            swept = True
            gone = sorted(set(server) - set(digests))
            todo = sorted(g for g in digests if server.get(g) != digests[g])
            held = set(server) | existing_graphs(client, [g for g in todo if g not in server])
            in_place = not gone and held.isdisjoint(todo)  # nothing to replace or drop
            report.unchanged = len(digests) - len(todo)

            def content(graphs: list[str]):  # (each document's graph dumped by the engine)
                if graph_iri:
                    pairs = ((graph, _merged_lines(store)) for graph in graphs)
                else:
                    pairs = ((name[1:-1], _sent(dump)) for name, dump in
                             graph_dumps(store, [f"<{g}>" for g in graphs]))
                for graph, lines in pairs:
                    report.triples += len(lines)
                    yield graph, lines
            loaded = [g for g in todo if g not in held] if bulk is not None else []
            if loaded:  # (closed at once on an error: the engine's dump stopped with it)
                with closing(content(loaded)) as graphs:
                    report.bulk_bytes, report.bulk_seconds, report.bulk_batches = bulk.load(
                        graphs, uploader.done.extend)  # (a batch is sent once loaded)
                report.bulk_graphs = len(loaded)
            for graph in gone:
                uploader.add(graph, [])
            with closing(content(sorted(set(todo) - set(loaded)))) as graphs:
                for graph, lines in graphs:
                    uploader.add(graph, lines, fresh=in_place)
            uploader.flush()
            clean = True
        except RemoteError:
            clean = swept and uploader.abandon()
            raise
        finally:
            for graph in uploader.done:
                if graph in digests:
                    server[graph] = digests[graph]
                else:
                    server.pop(graph, None)
            report.pushed = [g for g in uploader.done if g in digests]
            report.deleted = [g for g in uploader.done if g not in digests]
            report.bytes_sent = client.sent - sent_before
            report.requests = client.requests - requests_before
            complete = revision if clean and server == digests else ""
            report.state = _save_state(state_file, client.query_url,
                                       _State(server, complete, key, clean))
    return report


def _save_state(path: Path, endpoint: str, state: _State) -> str:
    data = {"version": STATE_VERSION, "endpoint": endpoint, "revision": state.revision,
            "upload": state.key, "clean": state.clean, "graphs": dict(sorted(state.graphs.items()))}
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


def server_graphs(client: SparqlClient, *prefixes: str) -> list[str]:
    """The server's named graphs (holding a triple) whose IRI starts with one of ``prefixes``
    (one query, which reads every quad)."""
    test = " || ".join(f'STRSTARTS(STR(?g), "{p}")' for p in prefixes)
    rows = client.select(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }} FILTER({test}) }}")
    return sorted(r["g"]["value"] for r in rows if r.get("g", {}).get("type") == "uri")


def kgbuild_graphs(client: SparqlClient) -> list[str]:
    """The server's named graphs that kgbuild writes (IRIs under https://kgbuild.dev/)."""
    return server_graphs(client, BASE)


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
