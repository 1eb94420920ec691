"""The store's walkable read model, persisted beside it and memory-mapped.

A traversal by ID needs the adjacency index, each node's ID, label and type, and the
assertions of the edges it returns; it does not need the graph as Python objects. A
:class:`Snapshot` holds exactly that for one store revision, in ``<store>/snapshot/<name>/``:
the index's arrays and the node table as ``.npy`` files opened with ``mmap_mode="r"``
(a call reads the pages its walk touches), and one JSON record per edge (its assertions,
as traversal outputs them, and the passages they cite), read only for the edges returned.

**Freshness.** ``meta.json`` names the revision (database identity and generation), the
schema digest and the build settings it was made from. Each build that changes the store
calls :func:`refresh_snapshot` with its :class:`Change`, which it applies to the saved snapshot
(:func:`apply_changes`): the changed documents' graphs and every quad about the nodes they
touch (before or after) are read from the store and merged in, so a one-file rebuild costs
that file plus array work linear in the graph (no Python object per quad). Where there is
no snapshot, or the merge cannot be exact (a new database, another schema or settings,
edges without assertions, a catch-all node type, many changed documents), one is made from
the whole graph. The result equals :func:`snapshot_tables` of the store's
:meth:`~kgbuild.store.graphstore.GraphStore.knowledge_graph` (tested after random edits of
real catalogs). Readers call :func:`open_snapshot`, which makes one from the whole graph
when the store was changed by something other than a build.

**Access.** The snapshot is the unrestricted graph. It serves a principal who may see
everything, or anyone when nothing in the store carries an access label (then every view
is the whole graph). Any other principal gets a snapshot of their view
(:func:`~kgbuild.graph.access.visible_graph`: hidden documents, nodes and assertions absent,
evidence naming hidden entities withheld), saved per label set in
``<store>/snapshot/views/<key>/``: made from the whole graph on the first call after each
change (a build removes the stale ones), memory-mapped on the calls after it; at most
:data:`MAX_VIEWS` label sets are kept.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, NamedTuple

import numpy as np
import pyoxigraph as ox

from ..graph.access import visible_graph
from ..graph.model import KnowledgeGraph, id_from_iri, node_iri, source_iri
from ..io.collector import gc_paused
from ..schema.namespaces import ASSERTION_BASE, KG, NODES_GRAPH, SOURCE_BASE
from .adjacency import AdjacencyIndex, Csr, code_names, node_ids

FORMAT = 1
MAX_CHANGED = 200  # more changed documents than this (or a twentieth of all): rebuild whole
_ACCESS = str(KG.accessLabel)
_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_ENDS = (f"{_RDF}subject", f"{_RDF}object")
_LISTS = ("indptr", "nbr", "eid", "rank")


def assertion_dict(a) -> dict:
    """An assertion as traversal outputs it (``passage``: the text chunk an LLM read it in)."""
    out = {"source": a.source, "location": a.location, "evidence": a.evidence,
           "extractor": a.extractor, "confidence": a.confidence, "generated_at": a.generated_at,
           "qualifiers": sorted(a.qualifiers)}
    if a.chunk:
        out["passage"] = a.chunk
    return out


class Strings(Sequence):
    """Strings stored as one UTF-8 blob and end offsets; ``find`` needs them sorted."""

    def __init__(self, blob: np.ndarray, ends: np.ndarray):
        self.blob, self.ends = blob, ends

    @staticmethod
    def pack(items: Sequence[str | bytes]) -> tuple[np.ndarray, np.ndarray]:
        data = [x if isinstance(x, bytes) else x.encode() for x in items]
        ends = np.cumsum([len(x) for x in data], dtype=np.int64) if data else np.zeros(0, np.int64)
        return np.frombuffer(b"".join(data), dtype=np.uint8), ends

    def __len__(self) -> int:
        return len(self.ends)

    def raw(self, i: int) -> bytes:
        start = int(self.ends[i - 1]) if i else 0
        return self.blob[start:int(self.ends[i])].tobytes()

    def __getitem__(self, i: int) -> str:
        if i < 0:
            i += len(self)
        return self.raw(int(i)).decode()

    def raws(self):
        """Every item as bytes, in order."""
        data, start = self.blob.tobytes(), 0
        for end in self.ends.tolist():
            yield data[start:end]
            start = end

    def __iter__(self):
        return (x.decode() for x in self.raws())

    def find(self, text: str) -> int | None:
        """Position of ``text`` in these sorted strings, or None."""
        i = bisect.bisect_left(self, text)
        return i if i < len(self) and self[i] == text else None


@dataclass
class Tables:
    """Everything a snapshot holds, as plain Python values (what :func:`save` writes)."""

    meta: dict  # revision, schema, settings, labelled graphs, documents, untyped count
    ids: list[str]  # sorted: nodes and edge endpoints
    labels: list[str]
    types: list[str]  # "" for nodes only known as edge endpoints
    info: list[str]  # JSON {"description", "docs"} or ""
    edges: list[tuple[str, str, str]]  # sorted
    records: list[bytes]  # JSON {"a": [[key, assertion]], "p": {passage: [text, doc, start, end]}}
    conf: list[float]  # per edge: its best assertion's confidence (-1: none)
    stamps: list[str]  # per edge: its latest assertion's time ("": none)


def _record_of(found: list, passages: dict) -> tuple[bytes, float, str]:
    """An edge's record (``found``: ``[key, assertion dict]`` sorted by key), best confidence
    and latest time."""
    return (json.dumps({"a": found, "p": passages}, sort_keys=True).encode(),
            max((a["confidence"] for _, a in found), default=-1.0),
            max((a["generated_at"] for _, a in found), default=""))


def _cite(a, passages: dict, cited: dict) -> None:
    """Add the passage assertion ``a`` was read in (if any) to an edge record's ``cited``."""
    p = passages.get(a.chunk) if a.chunk else None
    if p is not None:
        cited[p.id] = [p.text, p.document, p.start, p.end]


def _graph_record(assertions, passages) -> tuple[bytes, float, str]:
    cited: dict = {}
    for a in assertions:
        _cite(a, passages, cited)
    return _record_of([[a.key, assertion_dict(a)] for a in assertions], cited)


def _info(node) -> str:
    if node is None:
        return ""
    return json.dumps({"description": sorted(node.attributes.get("description", ())),
                       "docs": sorted(node.defined_in)}, sort_keys=True)


def _labelled(store, graphs: Sequence[str] | None = None) -> set[str]:
    """The graphs (of ``graphs``, or all) with an access label in them."""
    values = f"VALUES ?g {{ {' '.join(f'<{g}>' for g in graphs)} }} " if graphs is not None else ""
    return {row["g"].value for row in store.sparql(
        f"SELECT DISTINCT ?g WHERE {{ {values}GRAPH ?g {{ ?s <{_ACCESS}> ?o }} }}")}


def _meta(store) -> dict:
    return {"format": FORMAT, "revision": store.revision(), "schema": store.schema.digest,
            "settings": store.settings()}


def _known_docs(node, docs: set[str]):
    """The node with ``defined_in`` cut to the documents the graph has (what a seed cites)."""
    if node is None or node.defined_in <= docs:
        return node
    return replace(node, defined_in={d for d in node.defined_in if d in docs})


def snapshot_tables(kg: KnowledgeGraph, store) -> Tables:
    """The tables of the store's whole graph ``kg`` (its :meth:`knowledge_graph`)."""
    edges = kg.edges()
    ids = node_ids(kg, edges)
    nodes, docs = kg.nodes, set(kg.documents)
    per_edge = [_graph_record(assertions, kg.passages) for assertions in edges.values()]
    meta = {**_meta(store), "labelled": sorted(_labelled(store)), "documents": sorted(docs),
            "untyped": len(kg.untyped_edges)}
    return Tables(meta, ids,
                  [nodes[i].label if i in nodes else i for i in ids],
                  [nodes[i].type if i in nodes else "" for i in ids],
                  [_info(_known_docs(nodes.get(i), docs)) for i in ids], list(edges),
                  *([list(x) for x in zip(*per_edge)] if per_edge else ([], [], [])))


# -- the files --------------------------------------------------------------------------------
@dataclass
class Snapshot:
    """One snapshot, saved (``folder``) or in memory: metadata, index, node and edge tables."""

    folder: Path | None
    meta: dict
    index: AdjacencyIndex
    labels: Strings
    info: Strings
    records: Strings
    stamps: Strings
    conf: np.ndarray
    documents: frozenset[str]

    @property
    def labelled(self) -> bool:
        """Whether anything in the store carries an access label."""
        return bool(self.meta["labelled"])

    def serves(self, principal) -> bool:
        """Whether this snapshot is what ``principal`` may see: the unrestricted one, when
        they may see everything or nothing is labelled; a view, when they hold its labels."""
        view = self.meta.get("view")
        if view is None:
            return principal.everyone or not self.labelled
        return not principal.everyone and view == view_key(principal)


    def record(self, eid: int) -> dict:
        """Edge ``eid``'s assertions (``a``: ``[key, assertion]``) and cited passages (``p``)."""
        return json.loads(self.records.raw(eid))


def view_key(principal) -> str:
    """The name of the view snapshot of a principal's label set."""
    return hashlib.sha256("\n".join(sorted(principal.labels)).encode()).hexdigest()[:16]



def _arrays(t: Tables, schema) -> dict[str, np.ndarray]:
    type_names, edge_types = code_names(schema)
    tcode = {n: i for i, n in enumerate(type_names)}
    ecode = {n: i for i, n in enumerate(edge_types)}
    pos = {n: i for i, n in enumerate(t.ids)}
    m = len(t.edges)
    src = np.fromiter((pos[s] for s, _, _ in t.edges), dtype=np.int32, count=m)
    dst = np.fromiter((pos[o] for _, _, o in t.edges), dtype=np.int32, count=m)
    etype = np.fromiter((ecode[p] for _, p, _ in t.edges), dtype=np.int16, count=m)
    conf = np.asarray(t.conf, dtype=np.float64)
    recency = np.unique(np.array(t.stamps, dtype=str), return_inverse=True)[1] if m else np.zeros(0)
    node_type = np.array([tcode[x] for x in t.types], dtype=np.int16)
    index = AdjacencyIndex.from_arrays(t.ids, node_type, type_names, edge_types, src, dst, etype,
                                       conf, np.asarray(recency, dtype=np.int64))
    out = {"node_type": index.node_type, "src": index.src, "dst": index.dst, "etype": index.etype,
           "conf": conf}
    for name, items in (("ids", t.ids), ("labels", t.labels), ("info", t.info),
                        ("records", t.records), ("stamps", t.stamps)):
        out[f"{name}_blob"], out[f"{name}_ends"] = Strings.pack(items)
    for (ty, d), c in index.lists.items():
        for name in _LISTS:
            out[f"l{ty}_{d}_{name}"] = getattr(c, name)
    return out


def _snapshot(arr: dict[str, np.ndarray], meta: dict, schema, folder: Path | None) -> Snapshot:
    def strings(name: str) -> Strings:
        return Strings(arr[f"{name}_blob"], arr[f"{name}_ends"])

    lists = {}
    for name in arr:
        if name.startswith("l") and name.endswith("_indptr"):
            ty, d = (int(x) for x in name[1:].split("_")[:2])
            if d not in (0, 1):
                raise ValueError(f"bad list name {name!r}")
            parts = [arr[f"l{ty}_{d}_{k}"] for k in _LISTS]
            lists[(ty, d)] = Csr(*parts, np.full(len(parts[1]), d, dtype=np.int8))
    index = AdjacencyIndex(strings("ids"), arr["node_type"], *code_names(schema), arr["src"],
                           arr["dst"], arr["etype"], lists)
    index.check()
    snap = Snapshot(folder, meta, index, strings("labels"), strings("info"), strings("records"),
                    strings("stamps"), arr["conf"], frozenset(meta["documents"]))
    if not (len(snap.labels) == len(snap.info) == index.size
            and len(snap.records) == len(snap.stamps) == len(snap.conf) == len(index.src)):
        raise ValueError("inconsistent snapshot tables")
    return snap


def save(tables: Tables, root: Path, schema) -> Path:
    """Write ``tables`` as a new snapshot folder under ``root`` and make it the current one;
    earlier ones are removed. Returns the folder."""
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"s-{uuid.uuid4().hex[:16]}"
    tmp = root / f".tmp-{folder.name}"
    tmp.mkdir()
    try:
        for name, a in _arrays(tables, schema).items():
            np.save(tmp / f"{name}.npy", a, allow_pickle=False)
        (tmp / "meta.json").write_text(json.dumps(tables.meta, sort_keys=True))
        os.replace(tmp, folder)
        pointer = root / f".current-{folder.name}"
        pointer.write_text(folder.name)
        os.replace(pointer, root / "current")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for old in root.iterdir():
        if old.name.startswith("s-") and old.name != folder.name:
            shutil.rmtree(old, ignore_errors=True)
    return folder


def load(folder: Path, schema) -> Snapshot:
    """Open a saved snapshot (arrays memory-mapped); raises on anything incomplete."""
    files = sorted(folder.glob("*.npy")) + [folder / "meta.json"]
    if not all(p.is_file() for p in files):
        raise ValueError("not a snapshot's regular files")
    meta = json.loads((folder / "meta.json").read_text())
    if meta.get("format") != FORMAT:
        raise ValueError("another snapshot format")
    arr = {p.stem: np.load(p, mmap_mode="r", allow_pickle=False) for p in files[:-1]}
    return _snapshot(arr, meta, schema, folder)


def tables_of(snap: Snapshot) -> Tables:
    """A saved snapshot back as tables (for :func:`apply_changes`)."""
    ix = snap.index
    ids = list(ix.node_ids)
    names = ix.type_names
    edges = [(ids[s], ix.edge_types[p], ids[o]) for s, p, o in
             zip(ix.src.tolist(), ix.etype.tolist(), ix.dst.tolist())]
    return Tables(dict(snap.meta), ids, list(snap.labels),
                  [names[t] for t in ix.node_type.tolist()], list(snap.info), edges,
                  list(snap.records.raws()), snap.conf.tolist(), list(snap.stamps))


# -- keeping it current -----------------------------------------------------------------------
def apply_changes(old: Tables, store, schema, documents: Iterable[str],
                  before: Iterable[str]) -> Tables | None:
    """``old`` (the revision before the change) brought to the store's current revision by
    re-reading only the changed ``documents`` and the nodes they touch; None when that
    cannot be exact (then rebuild). ``before``: the IRIs the changed documents' graphs used
    before the change, and the new content's (:func:`~kgbuild.validate.incremental.touched_terms`)."""
    from ..graph.rdf import from_quads
    from ..schema.importer import CATCH_ALL

    meta = _meta(store)
    same_database = old.meta.get("revision", "").split(":")[0] == store.store_id()
    if (not same_database or old.meta.get("schema") != meta["schema"]  # (a full rebuild may
            or old.meta.get("settings") != meta["settings"]  # change unchanged documents' times)
            or old.meta.get("untyped") or CATCH_ALL in schema.type_by_iri):
        return None
    changed = set(documents)
    if len(changed) > min(MAX_CHANGED, max(10, len(old.meta["documents"]) // 20)):
        return None
    graphs = {source_iri(d) for d in changed}
    inverse = {e.inverse_iri for e in schema.edge_types.values() if e.inverse_iri}
    touched = set(before)
    needles = [b'"source": ' + json.dumps(d).encode() for d in changed]
    hit = [i for i, rec in enumerate(old.records) if any(n in rec for n in needles)]
    evidence: dict[tuple, tuple[list, dict]] = {}
    for i in hit:
        rec = json.loads(old.records[i])
        s, _, o = old.edges[i]
        touched.update((node_iri(s), node_iri(o)))
        kept = [x for x in rec["a"] if x[1]["source"] not in changed]
        evidence[old.edges[i]] = (kept, rec["p"])
    rows, direct = [], []
    for g in sorted(graphs):
        for q in store.graph_quads(g):
            s, p, o = q.subject.value, q.predicate.value, q.object.value
            rows.append((s, p, o, g))
            if isinstance(q.subject, ox.NamedNode):
                touched.add(s)
            if isinstance(q.object, ox.NamedNode) and (p in schema.edge_by_iri or p in _ENDS):
                touched.add(o)
                if p in schema.edge_by_iri:
                    direct.append((id_from_iri(s), schema.edge_by_iri[p], id_from_iri(o)))
            elif p in inverse:
                return None  # (inverse-named triples: rare, read by the whole-graph path)
    touched = {t for t in touched if not t.startswith((ASSERTION_BASE, SOURCE_BASE))}
    for iri in sorted(touched):
        rows.extend(r for r in store.rows_about(iri) if r[3] not in graphs)
    kg = from_quads(rows, schema)
    documents = (set(old.meta["documents"]) - changed) | (kg.documents.keys() & changed)
    for a in sorted((a for a in kg.assertions.values() if a.source in changed),
                    key=lambda a: a.key):
        if a.edge not in evidence:  # an edge only unchanged documents stated before, if any
            i = bisect.bisect_left(old.edges, a.edge)
            rec = json.loads(old.records[i]) if i < len(old.edges) and old.edges[i] == a.edge \
                else {"a": [], "p": {}}
            evidence[a.edge] = (rec["a"], rec["p"])
        found, pas = evidence[a.edge]
        found.append([a.key, assertion_dict(a)])
        _cite(a, kg.passages, pas)
    records = {e: (r, c, t) for e, r, c, t in zip(old.edges, old.records, old.conf, old.stamps)}
    for e, (found, pas) in evidence.items():
        if not found:
            if store.has_triple(node_iri(e[0]), schema.edge_types[e[1]].iri, node_iri(e[2])):
                return None  # now an edge without assertions: the whole-graph path reads those
            records.pop(e, None)
            continue
        found.sort(key=lambda x: x[0])
        cited = {x[1].get("passage") for x in found}
        records[e] = _record_of(found, {k: v for k, v in pas.items() if k in cited})
    if any(e not in records for e in direct):
        return None  # a direct triple no assertion covers: an untyped edge
    endpoints = {x for s, _, o in records for x in (s, o)}
    nodes = {i: (lab, ty, inf) for i, lab, ty, inf in zip(old.ids, old.labels, old.types, old.info)}
    for nid in {id_from_iri(t) for t in touched}:
        n = kg.nodes.get(nid)
        if n is not None:
            nodes[nid] = (n.label, n.type, _info(_known_docs(n, documents)))
        else:
            nodes.pop(nid, None)
    for x in endpoints:
        nodes.setdefault(x, (x, "", ""))
    ids = sorted(i for i in nodes if i in endpoints or nodes[i][1])
    edges = sorted(records)
    labelled = (set(old.meta["labelled"]) - graphs - {NODES_GRAPH}) | _labelled(
        store, sorted(graphs | {NODES_GRAPH}))
    meta = {**meta, "labelled": sorted(labelled), "documents": sorted(documents), "untyped": 0}
    return Tables(meta, ids, [nodes[i][0] for i in ids],
                  [nodes[i][1] for i in ids], [nodes[i][2] for i in ids], edges,
                  *map(list, zip(*(records[e] for e in edges))) if edges else ([], [], []))


def _is_current(snap: Snapshot | None, store) -> bool:
    return (snap is not None and snap.meta.get("revision") == store.revision()
            and snap.meta.get("schema") == store.schema.digest)


class Change(NamedTuple):
    """What a build changed: the store's revision before it, the documents it changed,
    added or deleted, and the IRIs their graphs used before it (and the new content's)."""

    revision: str
    documents: list[str]
    before: Iterable[str]


def _made(store, previous: Snapshot | None, change: Change | None) -> Tables:
    """The tables of the store's revision: ``previous`` with ``change`` applied (only when
    ``previous`` is of the revision before it), or from the whole graph."""
    with gc_paused():
        tables = None
        if previous is not None and change is not None and previous.meta["revision"] == change.revision:
            tables = apply_changes(tables_of(previous), store, store.schema, change.documents,
                                   change.before)
        return tables if tables is not None else snapshot_tables(store.knowledge_graph(), store)


def refresh_snapshot(store, change: Change | None = None, starting=None) -> bool:
    """After a change to a saved store: make its snapshot current (``starting()`` is called
    first, when there is anything to do), applying ``change`` to the saved snapshot where
    that is exact. Returns whether there was anything to do."""
    if store.path is None:
        return False
    root = Path(store.path) / "snapshot"
    previous = _current(root, store.schema)
    if _is_current(previous, store):
        return False
    if starting:
        starting()
    shutil.rmtree(root / VIEWS, ignore_errors=True)  # every view is stale now
    tables = _made(store, previous, change)
    try:
        save(tables, root, store.schema)
    except OSError:  # a read-only folder or a full disk: the next reader makes it again
        shutil.rmtree(root, ignore_errors=True)
    return True


def open_snapshot(store, principal=None) -> Snapshot:
    """The snapshot of ``store``'s current revision that serves ``principal`` (default: the
    unrestricted one): the saved one, or (when something other than a build changed the
    store, or for a view, after any change) one made from the whole graph and saved in
    ``<store>/snapshot`` (kept in memory only where that cannot be written)."""
    root = Path(store.path) / "snapshot" if store.path else None
    snap = _opened(root, store, lambda: _made(store, None, None))
    if principal is None or snap.serves(principal):
        return snap
    key = view_key(principal)

    def view() -> Tables:
        tables = snapshot_tables(visible_graph(store.knowledge_graph(), principal), store)
        return replace(tables, meta={**tables.meta, "view": key})

    opened = _opened(root / VIEWS / key if root else None, store, view)
    if root is not None:
        _prune(root / VIEWS)
    return opened


VIEWS = "views"
MAX_VIEWS = 4  # label sets whose view snapshots are kept


def _opened(root: Path | None, store, make) -> Snapshot:
    """The current snapshot saved under ``root``, or ``make()``'s tables saved there."""
    previous = _current(root, store.schema) if root else None
    if _is_current(previous, store):
        return previous
    tables = make()
    if root is not None:
        try:
            return load(save(tables, root, store.schema), store.schema)
        except OSError:
            pass
    return _in_memory(tables, store.schema)


def _prune(views: Path) -> None:
    """Keep the :data:`MAX_VIEWS` most recently made views."""
    try:
        made = sorted(views.iterdir(), key=lambda p: (p / "current").stat().st_mtime
                      if (p / "current").is_file() else 0, reverse=True)
    except OSError:
        return
    for old in made[MAX_VIEWS:]:
        shutil.rmtree(old, ignore_errors=True)


def _current(root: Path, schema) -> Snapshot | None:
    """The saved snapshot ``root/current`` names, or None (missing, partial or damaged)."""
    try:
        if not (root / "current").is_file():  # (a FIFO or device is never opened)
            return None
        name = (root / "current").read_text()[:100].strip()
        if not name.startswith("s-") or "/" in name:
            return None
        return load(root / name, schema)
    except Exception:  # noqa: BLE001 - missing, partial or damaged: made again
        return None


def _in_memory(tables: Tables, schema) -> Snapshot:
    return _snapshot(_arrays(tables, schema), tables.meta, schema, None)
