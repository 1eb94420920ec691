"""A full rebuild streamed into a fresh database (:meth:`~kgbuild.store.writes.StoreWrites.
full_build`): each document's quads go to the bulk loader as the document is added, and to
the sorted runs its read model is made from (:mod:`kgbuild.store.sortedmodel`), and are
dropped, so memory holds what the commit needs (the nodes' claims, the documents' states,
problems), not the documents' triples. The commit adds the nodes and manifest graphs; the
counts of distinct edges and assertions are read from the loaded database, where equal
triples of several graphs lie side by side in the predicate-first index."""

from __future__ import annotations

import queue
import threading
import uuid
from operator import itemgetter

import pyoxigraph as ox

from ..errors import InvalidValue, Problem
from ..graph.model import CLAIMS, A, id_from_iri, iri_value, node_triples, source_iri
from ..vocab import KG, NODES_GRAPH
from .guard import Guarded
from .manifest import (
    MANIFEST_GRAPH,
    NODES_MARK,
    SETTINGS,
    SHARDS,
    STORE_ID,
    DocumentState,
    counts_triple,
    generation_triple,
    json_triple,
    manifest_triples,
)
from .sortedmodel import QuadRuns

LOAD_BATCH = 50_000  # N-Quads lines per bulk load (about 10 MB)


class FullBuild:
    """A full rebuild under way: :meth:`add` each document once, then :meth:`commit` (or
    leave it uncommitted: a persistent store keeps its previous database, the new one is
    removed as an unfinished build when the store is next opened for writing)."""

    def __init__(self, store, settings: dict | None, index: bool = True):
        self.store, self.settings = store, settings
        # (what a saved store's read model is made from, sorted by subject)
        self.quads = QuadRuns(store.path) if index and store.path is not None else None
        self.store_id = uuid.uuid4().hex
        if store.path is None:
            store._db.clear()
            self.name, self.target = None, store._db
        else:
            self.name, self.target = store._next_database()
        self.states: dict[str, DocumentState] = {}
        self.claims: dict[str, list[tuple[str, str, str]]] = {}
        self.problems: list[Problem] = []  # (the commit's)
        self.lines: list[str] = []
        self.loader = _Loader(self.target)
        self.loader.__enter__()

    def add(self, doc_id: str, upd) -> None:
        """Load document ``doc_id``'s new graph (a :class:`~kgbuild.store.writes.
        DocumentUpdate`); only its state and node claims are kept."""
        from .writes import with_meta

        if doc_id in self.states:
            raise InvalidValue(f"document {doc_id!r} added twice to a full build", doc_id)
        self.states[doc_id] = upd.state()
        self._graph(list(dict.fromkeys(with_meta(doc_id, upd))), source_iri(doc_id))

    def _graph(self, triples: list, g: str) -> None:
        """Load ``triples`` (N-Triples terms) into graph ``g``, keeping their claims."""
        self.lines.extend(f"{s} {p} {o} <{g}> ." for s, p, o in triples)
        if self.quads is not None:
            self.quads.add(triples, g)
        claims = self.claims
        for s, p, o in triples:
            if p in CLAIMS:
                claims.setdefault(s, []).append((g, p, o))
        if len(self.lines) >= LOAD_BATCH:
            self._flush()

    def _flush(self) -> None:
        if self.lines:
            self.loader.put("\n".join(self.lines).encode("utf-8"))
            self.lines.clear()

    def abandon(self) -> None:
        """Stop loading (after a failure): the new database is never switched to."""
        self.lines.clear()
        self.close()
        self.loader.__exit__(RuntimeError, None, None)

    def close(self) -> None:
        """Drop the sorted quads (their files are unnamed: a crash leaves none)."""
        if self.quads is not None:
            self.quads.close()

    def commit(self) -> list[Problem]:
        """Add each claimed node's resolved typing and the manifest; the node conflicts."""
        store, problems = self.store, []
        node_counts: dict[str, int] = {}
        claims, self.claims = self.claims, {}
        for s in sorted(claims):
            node_id = id_from_iri(iri_value(s))
            # (each document's claims in its own order, the documents by ID: as a whole load)
            resolved = store._resolve(node_id, sorted(claims.pop(s), key=itemgetter(0)), problems)
            if resolved is not None:
                self._graph(list(node_triples(node_id, resolved[0], resolved[1], store.schema)),
                            NODES_GRAPH)
                node_counts[resolved[0]] = node_counts.get(resolved[0], 0) + 1
        self._flush()
        self.loader.__exit__(None, None, None)
        counts = {"nodes": dict(sorted(node_counts.items())),
                  **distinct_counts(self.target, store.schema, ordered=self.name is not None)}
        meta = [*manifest_triples(self.states, set(range(SHARDS))),
                generation_triple(store.generation()), json_triple(STORE_ID, self.store_id),
                json_triple(NODES_MARK, uuid.uuid4().hex), counts_triple(counts)]
        if self.settings is not None:
            meta.append(json_triple(SETTINGS, self.settings))
        self.target.bulk_load("\n".join(f"{t[:-2]} <{MANIFEST_GRAPH}> ." for t in meta).encode(),
                              format=ox.RdfFormat.N_QUADS)
        return problems


def distinct_counts(db: Guarded, schema, ordered: bool = True) -> dict:
    """Distinct edges by type and distinct assertions of every graph. A saved database
    (``ordered``) gives a predicate's quads sorted by object, subject and graph, so the same
    triple in several graphs comes out consecutively: counted in constant memory. (An
    in-memory one gives them in no order: counted in a set.)"""
    count = _distinct if ordered else (lambda quads, key: len({key(q) for q in quads}))
    edges: dict[str, int] = {}
    for iri, name in sorted(schema.edge_by_iri.items(), key=itemgetter(1)):
        n = count(db.quads_for_pattern(None, ox.NamedNode(iri), None, None),
                  lambda q: (q.object, q.subject))
        if n:
            edges[name] = edges.get(name, 0) + n
    assertions = count(db.quads_for_pattern(None, ox.NamedNode(A[1:-1]),
                                            ox.NamedNode(KG + "Assertion"), None),
                       lambda q: q.subject)
    return {"edges": dict(sorted(edges.items())), "assertions": assertions}


def _distinct(quads, key) -> int:
    n, last = 0, None
    for q in quads:
        k = key(q)
        if k != last:
            n, last = n + 1, k
    return n


class _Loader:
    """Bulk loads into a database in a thread, at most two batches waiting; what the load
    raised is raised again by :meth:`put` or on leaving the block. (One load reading a pipe
    instead left a database 15-50 % smaller on disk, but its loader held about 1 GB more at
    10k components, growing with the load: memory is what bounds an estate here.)"""

    def __init__(self, target: Guarded):
        self.target, self.error = target, None
        self.waiting: queue.Queue = queue.Queue(maxsize=2)
        self.thread = threading.Thread(target=self._run, name="kgbuild-bulk-load", daemon=True)

    def __enter__(self) -> _Loader:
        self.thread.start()
        return self

    def put(self, data: bytes) -> None:
        if self.error is not None:
            raise self.error
        self.waiting.put(data)

    def _run(self) -> None:
        while (data := self.waiting.get()) is not None:
            if self.error is None:
                try:
                    self.target.bulk_load(data, format=ox.RdfFormat.N_QUADS)
                except BaseException as exc:  # (raised again in the building thread)
                    self.error = exc

    def __exit__(self, kind, exc, tb) -> None:
        self.waiting.put(None)
        self.thread.join()
        if kind is None and self.error is not None:
            raise self.error
