"""Graph files loaded into a store (``kgbuild load``): each file one document of the store.

A file is the document named by its resolved path; its quads, whatever their vocabulary,
are kept in the document's graph (a TriG or N-Quads file's named graphs merged into it, as
``--graph`` reads them), and the store's read model is made from the whole graph as a
build's is, so a walk of the store answers what a walk of the files answers. A file whose
content (SHA-256) the store already holds is not read again; any other is parsed by
pyoxigraph (an XML file passes the entity check first) straight into a new database beside
the current one, with every other document's graph copied over in the engine's own format,
and the store switches to it only when it is complete: a file that cannot be read leaves the
store as it was.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import pyoxigraph as ox

from ..errors import InputError
from ..graph.model import source_iri
from ..graph.rdf import from_quads
from ..io.collector import gc_paused
from ..io.rdffile import OXIGRAPH, file_format, open_regular, read_quads, triple_term_error
from .graphstore import GraphStore
from .manifest import (
    MANIFEST_GRAPH,
    SETTINGS,
    SHARDS,
    STORE_ID,
    DocumentState,
    generation_triple,
    json_triple,
    manifest_triples,
)
from .reads import quad_row
from .storemodel import checked_model, refresh_model, saved_model

EXTRACTOR = "load"  # the extractor a loaded document's state names


@dataclass
class LoadResult:
    """What :func:`load_files` did: per file its document, status (``added``, ``changed`` or
    ``unchanged``) and quads read (None: not read), and the store's graph afterwards."""

    store: str
    files: list[dict] = field(default_factory=list)
    nodes: int = 0
    edges: int = 0

    @property
    def changed(self) -> bool:
        return any(f["status"] != "unchanged" for f in self.files)

    def to_dict(self) -> dict:
        return {"store": self.store, "files": self.files, "nodes": self.nodes,
                "edges": self.edges}

    def render(self) -> str:
        lines = [f"{f['status']:9} {f['file']}" + (f" ({f['quads']:,} quads)"
                                                   if f["quads"] is not None else "")
                 for f in self.files]
        lines.append(f"store: {self.store}: {self.nodes:,} nodes, {self.edges:,} edges")
        return "\n".join(lines)


def load_files(store_path: str | Path, schema, files: Sequence[str | Path], *,
               indexing: Callable[[], None] | None = None) -> LoadResult:
    """Load the graph files ``files`` into the store at ``store_path`` (made if need be; see
    the module's text); ``indexing()`` is called when the read model is made."""
    plan: dict[str, tuple[Path, str, str]] = {}  # document -> (file, digest, stat)
    for f in files:
        path = Path(f)
        if file_format(path) not in OXIGRAPH:  # refused before anything is written
            raise InputError("kgbuild load reads the formats pyoxigraph parses (not N3): "
                             "convert the file first", str(path))
        doc = str(path.resolve())
        if doc not in plan:
            plan[doc] = (path, *_fingerprint(path))
    result = LoadResult(str(store_path))
    todo, states = _changed(store_path, schema, plan)
    if todo:  # (the same content everywhere: the store is not even opened for writing)
        with GraphStore(store_path, schema, write=True) as store, gc_paused():
            todo, states = _changed(store, schema, plan)  # (again: under the write lock)
            counts = _replace(store, states, todo) if todo else {}
            refresh_model(store, None, indexing)  # (nothing to do when the model is current)
    for doc, (path, _, _) in plan.items():
        status = "unchanged" if doc not in todo else "changed" if doc in states else "added"
        result.files.append({"file": str(path), "document": doc, "status": status,
                             "quads": counts.get(doc) if todo else None})
    # a walk opens the model alone once a reader found it current (recorded here)
    model = saved_model(store_path, schema) or checked_model(store_path, schema)
    ix = model.index
    result.nodes = int((ix.node_type != ix.type_names.index("")).sum())
    result.edges = len(ix.src)
    return result


def _changed(store, schema, plan: dict) -> tuple[dict, dict]:
    """The documents of ``plan`` whose content the store (an open :class:`GraphStore`, or a
    store's folder, then opened read-only when it holds a database) does not hold, and the
    store's document states."""
    if not isinstance(store, GraphStore):
        if not (Path(store) / "CURRENT").is_file():
            return plan, {}
        with GraphStore(store, schema, write=False) as opened:
            return _changed(opened, schema, plan)
    states = store.document_states()
    return {doc: p for doc, p in plan.items()
            if doc not in states or states[doc].sha256 != p[1]}, states


def _fingerprint(path: Path) -> tuple[str, str]:
    """The file's SHA-256 and stat (size, mtime), read through :class:`open_regular`."""
    digest = hashlib.sha256()
    with open_regular(path) as fh:
        st = os.fstat(fh.fileno())
        try:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    return digest.hexdigest(), f"{st.st_size}:{st.st_mtime_ns}"


def _replace(store: GraphStore, states: dict[str, DocumentState],
             todo: dict[str, tuple[Path, str, str]]) -> dict[str, int]:
    """Switch ``store`` to a new database holding its other documents' graphs as they are and
    the files of ``todo`` (document -> file, digest, stat) as their documents' graphs; the
    quads read per document. Nothing is switched when a file cannot be read. The store's
    graph in memory is made on the way (the files' quads as they are parsed, the others'
    as they were copied), so the read model is made without reading the database again."""
    name, target = store._next_database()
    committed = False
    try:
        rows: list[tuple[str, str, str, str]] = []
        loaded = {source_iri(doc) for doc in todo}
        counts = {doc: _load_file(target.db, path, ox.NamedNode(source_iri(doc)), rows)
                  for doc, (path, _, _) in sorted(todo.items())}
        for graph in store._db.named_graphs():
            if isinstance(graph, ox.NamedNode) and graph.value not in loaded | {MANIFEST_GRAPH}:
                target.bulk_load(store._db.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=graph),
                                 format=ox.RdfFormat.N_TRIPLES, to_graph=graph)
        default = store._db.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
        if default:
            target.bulk_load(default, format=ox.RdfFormat.N_TRIPLES)
        new_states = {**states, **{doc: DocumentState(sha, st, path=str(path.resolve()),
                                                      root=str(path.resolve().parent),
                                                      base=str(path.resolve().parent),
                                                      extractor=EXTRACTOR)
                                   for doc, (path, sha, st) in todo.items()}}
        store_id = os.urandom(16).hex()
        lines = [*manifest_triples(new_states, set(range(SHARDS))),
                 generation_triple(store.generation()), json_triple(STORE_ID, store_id)]
        if store.settings() is not None:
            lines.append(json_triple(SETTINGS, store.settings()))
        target.bulk_load("\n".join(lines).encode("utf-8"), format=ox.RdfFormat.N_TRIPLES,
                         to_graph=ox.NamedNode(MANIFEST_GRAPH))
        for graph in [ox.DefaultGraph(), *target.named_graphs()]:
            if getattr(graph, "value", None) not in loaded:  # (copies: blank nodes relabelled)
                rows.extend(map(quad_row, target.quads_for_pattern(None, None, None, graph)))
        store._switch(name, target, store_id)
        committed = True
    finally:
        if not committed:
            target.db = None
            store._collect_garbage(store._current_name)
    store._graph = (store.revision(), from_quads(rows, store.schema))  # what it reads now
    return counts


def _load_file(db: ox.Store, path: Path, graph: ox.NamedNode, rows: list) -> int:
    """Add the quads of the graph file ``path`` to ``db`` in ``graph``, and to ``rows`` as
    :func:`~kgbuild.store.reads.quad_row` reads them; how many. Its blank nodes are the
    file's own: their labels get the graph's digest in front."""
    n = 0
    tag = hashlib.sha256(graph.value.encode()).hexdigest()[:12]

    def own(term):
        if isinstance(term, ox.Triple):
            raise triple_term_error(term)
        return ox.BlankNode(tag + term.value) if isinstance(term, ox.BlankNode) else term

    def into(quads) -> None:
        def moved():
            nonlocal n
            for q in quads:
                n += 1
                quad = ox.Quad(own(q.subject), q.predicate, own(q.object), graph)
                rows.append(quad_row(quad))
                yield quad
        db.bulk_extend(moved())

    read_quads(path, into)
    return n
