"""The store's walkable read model, persisted beside it and memory-mapped.

A traversal by ID needs the adjacency index, each node's ID, label and type, and the
assertions of the edges it returns; it does not need the graph as Python objects. A
:class:`Snapshot` holds exactly that for one store revision, in ``<store>/snapshot/<name>/``:
the index's arrays and the node table as ``.npy`` files opened with ``mmap_mode="r"``
(a call reads the pages its walk touches), and one JSON record per edge (its assertions,
as traversal outputs them, and the passages they cite), read only for the edges returned,
with the documents those assertions come from (8-byte name digests) and the code of their
latest time among the distinct times.

**Freshness.** ``meta.json`` names the revision (database identity and generation), the
schema digest and the build settings it was made from. Each build that changes the store
calls :func:`refresh_snapshot` with its :class:`Change`, which it applies to the saved snapshot
(:func:`apply_changes`): the edges citing the changed documents are found in the digest array,
the changed documents' graphs and every quad about the nodes they touch (before or after) are
read from the store and merged into those edges' records, and the new files are the old ones
spliced, renumbered and re-ranked with numpy. A one-file rebuild costs that file, the nodes and
edges it touches, and C-speed array work linear in the graph (copying the files, sorting the
adjacency lists); no Python object per node, edge or record of the whole graph. Where there is
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
import functools
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
from .adjacency import AdjacencyIndex, Csr, code_names, csr_lists, node_ids

FORMAT = 2
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
    """Strings stored as one UTF-8 blob and end offsets (or byte strings, read with ``raw``);
    ``find`` needs them sorted."""

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

    def splice(self, take: np.ndarray, fresh: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Packed items: ``take[i]`` is the old item to copy, or -1 for the next of ``fresh``
        (each run of consecutive old items is copied as one slice of the blob)."""
        take = np.asarray(take, dtype=np.int64)
        ends = np.asarray(self.ends, dtype=np.int64)
        starts = ends - np.diff(ends, prepend=0)
        old = take >= 0
        size = np.zeros(len(take), dtype=np.int64)
        size[old] = ends[take[old]] - starts[take[old]]
        size[~old] = [len(x) for x in fresh]
        first = np.ones(len(take), dtype=bool)
        first[1:] = ~old[1:] | ~old[:-1] | (take[1:] != take[:-1] + 1)
        bounds = np.append(np.flatnonzero(first), len(take)).tolist()
        pieces, new = [np.zeros(0, dtype=np.uint8)], iter(fresh)
        for a, b in zip(bounds, bounds[1:]):
            i, j = int(take[a]), int(take[b - 1])
            pieces.append(np.frombuffer(next(new), dtype=np.uint8) if i < 0
                          else self.blob[int(starts[i]):int(ends[j])])
        return np.concatenate(pieces), np.cumsum(size)

    def find(self, text: str) -> int | None:
        """Position of ``text`` in these sorted strings, or None."""
        i = bisect.bisect_left(self, text)
        return i if i < len(self) and self[i] == text else None


@dataclass
class Tables:
    """Everything a snapshot holds, as plain Python values (:func:`snapshot_tables`,
    :func:`tables_of`)."""

    meta: dict  # revision, schema, settings, labelled graphs, documents, untyped count
    ids: list[str]  # sorted: nodes and edge endpoints
    labels: list[str]
    types: list[str]  # "" for nodes only known as edge endpoints
    info: list[str]  # JSON {"description", "docs"} or ""
    edges: list[tuple[str, str, str]]  # sorted
    records: list[bytes]  # JSON {"a": [[key, assertion]], "p": {passage: [text, doc, start, end]}}
    conf: list[float]  # per edge: its best assertion's confidence (-1: none)
    stamps: list[str]  # per edge: its latest assertion's time ("": none)
    sources: list[bytes]  # per edge: its assertions' documents (sorted 8-byte name digests)


def _record_of(found: list, passages: dict) -> tuple[bytes, float, str, bytes]:
    """An edge's record (``found``: ``[key, assertion dict]`` sorted by key), best confidence,
    latest time and sources."""
    return (json.dumps({"a": found, "p": passages}, sort_keys=True).encode(),
            max((a["confidence"] for _, a in found), default=-1.0),
            max((a["generated_at"] for _, a in found), default=""),
            b"".join(sorted({_digest(a["source"]) for _, a in found})))


@functools.lru_cache(maxsize=1 << 16)
def _digest(document: str) -> bytes:
    """A document's name as an edge's sources hold it."""
    return hashlib.blake2b(document.encode(), digest_size=8).digest()


def _cite(a, passages: dict, cited: dict) -> None:
    """Add the passage assertion ``a`` was read in (if any) to an edge record's ``cited``."""
    p = passages.get(a.chunk) if a.chunk else None
    if p is not None:
        cited[p.id] = [p.text, p.document, p.start, p.end]


def _graph_record(assertions, passages) -> tuple[bytes, float, str, bytes]:
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
                  *([list(x) for x in zip(*per_edge)] if per_edge else ([], [], [], [])))


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
    times: Strings  # the edges' distinct latest times, sorted
    recency: np.ndarray  # per edge: its latest time's position in ``times``
    sources: Strings
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
    """The files of tables ``t``."""
    type_names, edge_types = code_names(schema)
    tcode = {n: i for i, n in enumerate(type_names)}
    ecode = {n: i for i, n in enumerate(edge_types)}
    pos = {n: i for i, n in enumerate(t.ids)}
    m = len(t.edges)
    out = {"node_type": np.array([tcode[x] for x in t.types], dtype=np.int16),
           "src": np.fromiter((pos[s] for s, _, _ in t.edges), dtype=np.int32, count=m),
           "dst": np.fromiter((pos[o] for _, _, o in t.edges), dtype=np.int32, count=m),
           "etype": np.fromiter((ecode[p] for _, p, _ in t.edges), dtype=np.int16, count=m),
           "conf": np.asarray(t.conf, dtype=np.float64)}
    times, recency = np.unique(np.array(t.stamps, dtype=str), return_inverse=True)
    out["recency"] = recency.astype(np.int32)
    for name, items in (("ids", t.ids), ("labels", t.labels), ("info", t.info),
                        ("records", t.records), ("times", times.tolist()),
                        ("sources", t.sources)):
        out[f"{name}_blob"], out[f"{name}_ends"] = Strings.pack(items)
    return _with_lists(out, len(edge_types))


def _with_lists(out: dict[str, np.ndarray], edge_types: int) -> dict[str, np.ndarray]:
    """``out`` (the node and edge files) with the adjacency lists ranked from them."""
    lists = csr_lists(len(out["node_type"]), edge_types, out["src"], out["dst"], out["etype"],
                      out["conf"], out["recency"])
    for (ty, d), c in lists.items():
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
                    strings("times"), arr["recency"], strings("sources"), arr["conf"],
                    frozenset(meta["documents"]))
    if not (len(snap.labels) == len(snap.info) == index.size
            and len(snap.records) == len(snap.recency) == len(snap.sources) == len(snap.conf)
            == len(index.src) and len(snap.sources.blob) % 8 == 0
            and int(snap.recency.max(initial=-1)) < len(snap.times)):
        raise ValueError("inconsistent snapshot tables")
    return snap


def save(arrays: dict[str, np.ndarray], meta: dict, root: Path) -> Path:
    """Write the files ``arrays`` and ``meta`` as a new snapshot folder under ``root`` and make
    it the current one; earlier ones are removed. Returns the folder."""
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"s-{uuid.uuid4().hex[:16]}"
    tmp = root / f".tmp-{folder.name}"
    tmp.mkdir()
    try:
        for name, a in arrays.items():
            np.save(tmp / f"{name}.npy", a, allow_pickle=False)
        (tmp / "meta.json").write_text(json.dumps(meta, sort_keys=True))
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
    """A saved snapshot back as tables (to compare it with :func:`snapshot_tables`)."""
    ix = snap.index
    ids = list(ix.node_ids)
    names = ix.type_names
    edges = [(ids[s], ix.edge_types[p], ids[o]) for s, p, o in
             zip(ix.src.tolist(), ix.etype.tolist(), ix.dst.tolist())]
    times = list(snap.times)
    return Tables(dict(snap.meta), ids, list(snap.labels),
                  [names[t] for t in ix.node_type.tolist()], list(snap.info), edges,
                  list(snap.records.raws()), snap.conf.tolist(),
                  [times[c] for c in snap.recency.tolist()], list(snap.sources.raws()))


# -- keeping it current -----------------------------------------------------------------------
def _edge(ix: AdjacencyIndex, eid: int) -> tuple[str, str, str]:
    """Edge ``eid`` as (subject, type, object)."""
    return (ix.node_ids[int(ix.src[eid])], ix.edge_types[int(ix.etype[eid])],
            ix.node_ids[int(ix.dst[eid])])


def _edge_number(ix: AdjacencyIndex, edge: tuple[str, str, str]) -> int | None:
    """The number of ``edge`` (subject, type, object) in the index (edges sorted), or None."""
    s, o = ix.position(edge[0]), ix.position(edge[2])
    if s is None or o is None or edge[1] not in ix.edge_types:
        return None
    p = ix.edge_types.index(edge[1])
    lo, hi = (int(x) for x in np.searchsorted(ix.src, [s, s + 1]))
    keys = ix.etype[lo:hi].astype(np.int64) * ix.size + ix.dst[lo:hi]
    j = lo + int(np.searchsorted(keys, p * ix.size + o))
    return j if j < hi and ix.etype[j] == p and ix.dst[j] == o else None


def apply_changes(old: Snapshot, store, schema, documents: Iterable[str],
                  before: Iterable[str]) -> tuple[dict[str, np.ndarray], dict] | None:
    """The files and metadata of ``old`` (the saved snapshot of the revision before the change)
    brought to the store's current revision by re-reading only the changed ``documents`` and
    the nodes they touch; None when that cannot be exact (then rebuild). ``before``: the IRIs
    the changed documents' graphs used before the change, and the new content's
    (:func:`~kgbuild.validate.incremental.touched_terms`)."""
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
    ix = old.index
    digests = np.frombuffer(b"".join(_digest(d) for d in changed), dtype=np.uint8).view("<u8")
    cites = np.flatnonzero(np.isin(old.sources.blob.view("<u8"), digests)) * 8
    evidence: dict[tuple, tuple[list, dict]] = {}
    for i in np.unique(np.searchsorted(old.sources.ends, cites, side="right")).tolist():
        rec, edge = old.record(i), _edge(ix, i)
        touched.update((node_iri(edge[0]), node_iri(edge[2])))
        evidence[edge] = ([x for x in rec["a"] if x[1]["source"] not in changed], rec["p"])
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
            i = _edge_number(ix, a.edge)
            rec = old.record(i) if i is not None else {"a": [], "p": {}}
            evidence[a.edge] = (rec["a"], rec["p"])
        found, pas = evidence[a.edge]
        found.append([a.key, assertion_dict(a)])
        _cite(a, kg.passages, pas)
    fresh: dict[tuple, tuple | None] = {}
    for e, (found, pas) in evidence.items():
        if not found:
            if store.has_triple(node_iri(e[0]), schema.edge_types[e[1]].iri, node_iri(e[2])):
                return None  # now an edge without assertions: the whole-graph path reads those
            fresh[e] = None
            continue
        found.sort(key=lambda x: x[0])
        cited = {x[1].get("passage") for x in found}
        fresh[e] = _record_of(found, {k: v for k, v in pas.items() if k in cited})
    if any(fresh.get(e) is None and (e in fresh or _edge_number(ix, e) is None) for e in direct):
        return None  # a direct triple no assertion covers: an untyped edge
    nodes = {}
    for nid in {id_from_iri(t) for t in touched}:
        n = kg.nodes.get(nid)
        nodes[nid] = (n.label, n.type, _info(_known_docs(n, documents))) if n else (nid, "", "")
    labelled = (set(old.meta["labelled"]) - graphs - {NODES_GRAPH}) | _labelled(
        store, sorted(graphs | {NODES_GRAPH}))
    meta = {**meta, "labelled": sorted(labelled), "documents": sorted(documents), "untyped": 0}
    return _spliced(old, nodes, fresh), meta


def _spliced(old: Snapshot, nodes: dict[str, tuple[str, str, str]],
             edges: dict[tuple, tuple | None]) -> dict[str, np.ndarray]:
    """The files of ``old`` with ``nodes`` (ID: label, type, info) and ``edges`` (edge: record,
    confidence, time, sources; None: gone) replaced, added or removed; a node stays while it
    has a type or an edge. The unchanged rows are copied and renumbered with numpy."""
    ix = old.index
    n, blank = ix.size, ix.type_names.index("")
    number = {e: _edge_number(ix, e) for e in edges}
    gone = [i for e, i in number.items() if i is not None and edges[e] is None]
    redone = sorted((i, edges[e]) for e, i in number.items()
                    if i is not None and edges[e] is not None)
    added = sorted((e, v) for e, v in edges.items() if v is not None and number[e] is None)
    ends = {x for (s, _, o), _ in added for x in (s, o)}
    position = {x: ix.position(x) for x in nodes.keys() | ends}
    new_ids = sorted(x for x, i in position.items() if i is None)
    nodes = {**{x: (x, "", "") for x in new_ids}, **nodes}
    # the union of the old nodes and the new ones, in ID order
    at = np.array([bisect.bisect_left(ix.node_ids, x) for x in new_ids], dtype=np.int64)
    moved = np.arange(n) + np.searchsorted(at, np.arange(n), side="right")
    where = {x: int(moved[i]) for x, i in position.items() if i is not None}
    where.update(zip(new_ids, (at + np.arange(len(at))).tolist()))
    size = n + len(new_ids)
    types = {name: i for i, name in enumerate(ix.type_names)}
    node_type = np.full(size, blank, dtype=np.int16)
    node_type[moved] = ix.node_type
    take = np.full(size, -1, dtype=np.int64)
    take[moved] = np.arange(n)
    for x, (_, ty, _) in nodes.items():
        node_type[where[x]], take[where[x]] = types[ty], -1
    # the edges kept, in union numbers; the added ones; the nodes left without type or edge
    keep = np.ones(len(ix.src), dtype=bool)
    keep[gone] = False
    kept = np.flatnonzero(keep)
    src, dst, etype = moved[ix.src[kept]], moved[ix.dst[kept]], ix.etype[kept]
    codes = {name: i for i, name in enumerate(ix.edge_types)}
    add = np.array([(where[s], codes[p], where[o]) for (s, p, o), _ in added],
                   dtype=np.int64).reshape(-1, 3)
    linked = np.bincount(np.concatenate([src, dst, add[:, 0], add[:, 2]]), minlength=size) > 0
    alive = linked | (node_type != blank)
    final = np.cumsum(alive) - 1
    count = int(alive.sum())
    src, dst, add[:, 0], add[:, 2] = final[src], final[dst], final[add[:, 0]], final[add[:, 2]]
    # the added edges' places among the kept ones (sorted by subject, type, object numbers)
    t = len(ix.edge_types)
    at_e = np.searchsorted((src * t + etype) * count + dst,
                           (add[:, 0] * t + add[:, 1]) * count + add[:, 2])
    slots = np.searchsorted(kept, [i for i, _ in redone]).astype(np.int64)
    slots += np.searchsorted(at_e, slots, side="right")
    places = np.concatenate([slots, at_e + np.arange(len(at_e))])
    values = [v for _, v in redone] + [v for _, v in added]
    by_place = np.argsort(places)
    places, values = places[by_place], [values[k] for k in by_place]
    conf = np.insert(np.asarray(old.conf[kept], dtype=np.float64), at_e, 0.0)
    conf[places] = [v[1] for v in values]
    etake = np.insert(kept, at_e, -1)
    etake[places] = -1
    # the times' codes: past the new times (inserted), then without those no edge has now
    times = list(old.times)
    new_times = sorted({v[2] for v in values}.difference(times))
    shift = np.array([bisect.bisect_left(times, x) for x in new_times], dtype=np.int64)
    times = sorted(times + new_times)
    code = {x: i for i, x in enumerate(times)}
    recency = np.asarray(old.recency[kept], dtype=np.int64)
    recency = np.insert(recency + np.searchsorted(shift, recency, side="right"), at_e, 0)
    recency[places] = [code[v[2]] for v in values]
    used = np.bincount(recency, minlength=len(times)) > 0
    order = [x for x in sorted(nodes, key=where.get) if alive[where[x]]]
    ntake = take[alive]
    out = {"node_type": node_type[alive],
           "src": np.insert(src, at_e, add[:, 0]).astype(np.int32),
           "dst": np.insert(dst, at_e, add[:, 2]).astype(np.int32),
           "etype": np.insert(etype, at_e, add[:, 1]).astype(np.int16), "conf": conf,
           "recency": (np.cumsum(used) - 1)[recency].astype(np.int32)}
    for name, strings, rows, items in (
            ("ids", ix.node_ids, ntake, order),
            ("labels", old.labels, ntake, [nodes[x][0] for x in order]),
            ("info", old.info, ntake, [nodes[x][2] for x in order]),
            ("records", old.records, etake, [v[0] for v in values]),
            ("sources", old.sources, etake, [v[3] for v in values])):
        out[f"{name}_blob"], out[f"{name}_ends"] = strings.splice(
            rows, [x if isinstance(x, bytes) else x.encode() for x in items])
    out["times_blob"], out["times_ends"] = Strings.pack([x for x, u in zip(times, used) if u])
    return _with_lists(out, t)


def _is_current(snap: Snapshot | None, store) -> bool:
    return (snap is not None and snap.meta.get("revision") == store.revision()
            and snap.meta.get("schema") == store.schema.digest)


class Change(NamedTuple):
    """What a build changed: the store's revision before it, the documents it changed,
    added or deleted, and the IRIs their graphs used before it (and the new content's)."""

    revision: str
    documents: list[str]
    before: Iterable[str]


def _whole(tables: Tables, schema) -> tuple[dict[str, np.ndarray], dict]:
    return _arrays(tables, schema), tables.meta


def _made(store, previous: Snapshot | None, change: Change | None
          ) -> tuple[dict[str, np.ndarray], dict]:
    """The files and metadata of the store's revision: ``previous`` with ``change`` applied
    (only when ``previous`` is of the revision before it), or from the whole graph."""
    with gc_paused():
        made = None
        if previous is not None and change is not None and previous.meta["revision"] == change.revision:
            made = apply_changes(previous, store, store.schema, change.documents, change.before)
        return made or _whole(snapshot_tables(store.knowledge_graph(), store), store.schema)


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
    arrays, meta = _made(store, previous, change)
    try:
        save(arrays, meta, root)
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

    def view() -> tuple[dict[str, np.ndarray], dict]:
        tables = snapshot_tables(visible_graph(store.knowledge_graph(), principal), store)
        return _whole(replace(tables, meta={**tables.meta, "view": key}), store.schema)

    opened = _opened(root / VIEWS / key if root else None, store, view)
    if root is not None:
        _prune(root / VIEWS)
    return opened


VIEWS = "views"
MAX_VIEWS = 4  # label sets whose view snapshots are kept


def _opened(root: Path | None, store, make) -> Snapshot:
    """The current snapshot saved under ``root``, or ``make()``'s files saved there."""
    previous = _current(root, store.schema) if root else None
    if _is_current(previous, store):
        return previous
    arrays, meta = make()
    if root is not None:
        try:
            return load(save(arrays, meta, root), store.schema)
        except OSError:
            pass
    return _snapshot(arrays, meta, store.schema, None)


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
