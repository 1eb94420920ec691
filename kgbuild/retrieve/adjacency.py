"""A CSR adjacency index per (edge type, direction), neighbours pre-sorted by the cap ranking.

Node ``i`` is the i-th stable ID in sorted order. For each stored edge type and direction
(``out``: subject to object, ``in``: object to subject) the index holds ``indptr`` (node ->
slice), ``nbr`` (neighbour), ``eid`` (edge number) and ``rank``. Within a node's slice the
entries are sorted by the **cap ranking**, a total order on a node's edges:

1. higher edge confidence (best assertion) first; edges without assertions last;
2. more recent edges (latest ``generatedAtTime``) first;
3. neighbours of lower degree first (a penalty on hubs; degree counts every edge);
4. neighbour ID, then edge type, direction and owner (so the order is total).

``rank`` is an entry's position in that order over the whole graph, so a node's entries
from several lists merge by comparing ranks. The index is built from whatever graph it is
given; traversal builds it from the principal's visible graph, so hidden items influence
neither reachability nor ranking. :func:`cached_index` stores it as ``.npz`` named by a
fingerprint of exactly the data it is built from.
"""

from __future__ import annotations

import hashlib
import io
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..graph.model import KnowledgeGraph
from ..io.atomic import atomic_write

DIRECTIONS = ("out", "in")


@dataclass
class Csr:
    """One (edge type, direction) list: ``nbr[indptr[i]:indptr[i+1]]`` are node i's entries."""

    indptr: np.ndarray
    nbr: np.ndarray
    eid: np.ndarray
    rank: np.ndarray
    dir: np.ndarray  # 0 out, 1 in


@dataclass
class Entries:
    """Edges walked from a frontier: owner, neighbour, edge number, rank, direction (0 out, 1 in)."""

    owner: np.ndarray
    nbr: np.ndarray
    eid: np.ndarray
    rank: np.ndarray
    dir: np.ndarray

    def take(self, keep: np.ndarray) -> "Entries":
        return Entries(self.owner[keep], self.nbr[keep], self.eid[keep], self.rank[keep],
                       self.dir[keep])


@dataclass
class Walk:
    """Raw result of a walk, all arrays of node / edge numbers.

    ``layers[h]``: nodes first reached at hop h (follow; seeds at 0, each layer best first)
    or the nodes after step h of some complete walk (path). ``entries[h-1]``: the edges
    walked at hop h, grouped by owner, best first. ``via[h-1]``: for follow walks, the entry
    that first reached each node of ``layers[h]``. ``cuts[h-1]``: (nodes, eligible edges the
    cap cut there) at hop h. ``dropped``: nodes reached but left out by ``max_nodes``.
    """

    layers: list[np.ndarray]
    entries: list[Entries]
    cuts: list[tuple[np.ndarray, np.ndarray]]
    via: list[Entries] = field(default_factory=list)
    dropped: int = 0


@dataclass
class AdjacencyIndex:
    node_ids: list[str]
    node_type: np.ndarray  # int16 code into type_names, per node
    type_names: list[str]  # "" is the type of nodes only known as edge endpoints
    edge_types: list[str]  # code -> stored edge type name
    src: np.ndarray  # per edge number
    dst: np.ndarray
    etype: np.ndarray
    lists: dict[tuple[int, int], Csr]  # (edge type code, 0 out / 1 in)
    fingerprint: str = ""
    _pos: dict[str, int] | None = field(default=None, repr=False)
    _mark: np.ndarray | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _merged: dict = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return len(self.node_ids)

    def position(self, node_id: str) -> int | None:
        """Index of a stable ID, or None when the node is not in the graph."""
        find = getattr(self.node_ids, "find", None)  # sorted IDs read from a snapshot
        if find is not None:
            return find(node_id)
        if self._pos is None:
            self._pos = {n: i for i, n in enumerate(self.node_ids)}
        return self._pos.get(node_id)

    def scratch(self) -> tuple[np.ndarray, threading.Lock]:
        """A per-node int32 work array (all -1 between uses) and the lock guarding it."""
        if self._mark is None:
            self._mark = np.full(self.size, -1, dtype=np.int32)
        return self._mark, self._lock

    def nbytes(self) -> int:
        arrays = [self.node_type, self.src, self.dst, self.etype]
        for c in self.lists.values():
            arrays += [c.indptr, c.nbr, c.eid, c.rank, c.dir]
        return sum(a.nbytes for a in arrays)

    # -- querying --------------------------------------------------------------------------
    def degree(self, nodes: np.ndarray, lists: list[tuple[int, int]]) -> np.ndarray:
        """Number of entries each node has in ``lists``."""
        indptr = self.merged(lists).indptr
        return indptr[nodes + 1] - indptr[nodes]

    def merged(self, lists: list[tuple[int, int]]) -> Csr:
        """One list holding the entries of ``lists``, each node's still best first (cached)."""
        key = tuple(sorted(set(lists)))
        if len(key) == 1 and key[0] in self.lists:
            return self.lists[key[0]]
        if key not in self._merged:
            parts = [self.lists[k] for k in key if k in self.lists]
            n = self.size
            owner = np.concatenate([np.repeat(np.arange(n, dtype=np.int64), np.diff(c.indptr))
                                    for c in parts] or [np.zeros(0, dtype=np.int64)])
            rank = np.concatenate([c.rank for c in parts] or [np.zeros(0, dtype=np.int32)])
            order = np.argsort(owner * (2 * len(self.src) + 1) + rank, kind="stable")
            indptr = np.zeros(n + 1, dtype=np.int32)
            np.cumsum(np.bincount(owner, minlength=n), out=indptr[1:])
            cat = lambda name: np.concatenate([getattr(c, name) for c in parts])[order]  # noqa: E731
            self._merged[key] = Csr(indptr, cat("nbr"), cat("eid"), rank[order], cat("dir")) \
                if parts else Csr(indptr, *(np.zeros(0, dtype=t) for t in (np.int32, np.int32,
                                                                             np.int32, np.int8)))
        return self._merged[key]

    def expand(self, frontier: np.ndarray, lists: list[tuple[int, int]], cap: int | None,
               keep: Callable[[np.ndarray], np.ndarray] | None = None,
               exclude: np.ndarray | None = None) -> tuple[Entries, np.ndarray]:
        """Walk ``lists`` from every frontier node; at most ``cap`` best-ranked entries each.

        ``keep(nbr) -> bool array`` filters neighbours *before* the cap (then every entry is
        read); ``exclude`` gives, per frontier node, an edge number not to walk back along
        (-1: none). Returns the walked entries, grouped by owner and best first, and per
        frontier node how many eligible entries the cap cut.
        """
        c = self.merged(lists)
        if exclude is not None and not (exclude >= 0).any():
            exclude = None
        start = c.indptr[frontier]
        length = c.indptr[frontier + 1] - start
        eligible = length.astype(np.int64)
        if keep is None and cap is not None:  # an edge has <= 2 entries at a node (self-loop)
            length = np.minimum(length, cap + 2 * (exclude is not None))
        ends = np.cumsum(length)
        idx = np.arange(ends[-1] if len(ends) else 0) + np.repeat(start - ends + length, length)
        which = np.repeat(np.arange(len(frontier)), length)
        nbr, trimmed = c.nbr[idx], False
        if exclude is not None or keep is not None:
            ok = c.eid[idx] != exclude[which] if exclude is not None else keep(nbr)
            if exclude is not None and keep is not None:
                ok &= keep(nbr)
            idx, which, nbr = idx[ok], which[ok], nbr[ok]
            length = np.bincount(which, minlength=len(frontier))
            if keep is not None:
                eligible = length.copy()
            elif exclude is not None:  # the edge walked back along is not eligible
                eligible -= self._incident(c, frontier, exclude, lists)
            if cap is not None and len(idx):
                pos = np.arange(len(idx)) - np.repeat(np.cumsum(length) - length, length)
                ok = pos < cap
                idx, which, nbr, trimmed = idx[ok], which[ok], nbr[ok], True
        walked = np.bincount(which, minlength=len(frontier)) if trimmed else length
        return (Entries(frontier[which], nbr, c.eid[idx], c.rank[idx], c.dir[idx]),
                eligible - walked)

    def _incident(self, c: Csr, frontier: np.ndarray, eid: np.ndarray,
                  lists: list[tuple[int, int]]) -> np.ndarray:
        """Per frontier node, how many of its entries in ``lists`` are edge ``eid`` (-1: none)."""
        table = np.zeros((len(self.edge_types), 2), dtype=bool)
        for t, d in lists:
            table[t, d] = True
        e, has = np.maximum(eid, 0), eid >= 0
        t = self.etype[e]
        return has * ((table[t, 0] & (self.src[e] == frontier)).astype(np.int64)
                      + (table[t, 1] & (self.dst[e] == frontier)))

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, node_ids: list[str], node_type: np.ndarray, type_names: list[str],
                    edge_types: list[str], src: np.ndarray, dst: np.ndarray, etype: np.ndarray,
                    confidence: np.ndarray, recency: np.ndarray,
                    fingerprint: str = "") -> "AdjacencyIndex":
        """Build from edge arrays; ``recency`` is any integer code that grows with time."""
        src, dst = np.asarray(src, dtype=np.int32), np.asarray(dst, dtype=np.int32)
        etype = np.asarray(etype, dtype=np.int16)
        lists = csr_lists(len(node_ids), len(edge_types), src, dst, etype, confidence, recency)
        return cls(list(node_ids), np.asarray(node_type, dtype=np.int16), list(type_names),
                   list(edge_types), src, dst, etype, lists, fingerprint)

    @classmethod
    def from_graph(cls, kg: KnowledgeGraph) -> "AdjacencyIndex":
        """Build from a graph's nodes, assertion-backed edges and ``untyped_edges``."""
        return cls.from_arrays(*graph_arrays(kg))

    # -- storing ----------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        arrays = {"node_type": self.node_type, "src": self.src, "dst": self.dst,
                  "etype": self.etype, **_pack_strings(self.node_ids),
                  "type_names": np.array(self.type_names), "edge_types": np.array(self.edge_types),
                  "fingerprint": np.array(self.fingerprint)}
        for (t, d), c in self.lists.items():
            for name in ("indptr", "nbr", "eid", "rank"):
                arrays[f"{t}_{d}_{name}"] = getattr(c, name)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        atomic_write(path, buf.getvalue())  # a unique temporary file: concurrent readers may save

    @classmethod
    def load(cls, path: str | Path) -> "AdjacencyIndex":
        """Read a saved index; raises ValueError (or what reading raises) when the file is not a
        complete, consistent index (:func:`cached_index` then rebuilds it)."""
        with np.load(path, allow_pickle=False) as z:
            lists = {}
            for name in z.files:
                if name.endswith("_indptr"):
                    t, d = (int(x) for x in name.split("_")[:2])
                    if d not in (0, 1):
                        raise ValueError(f"bad list name {name!r}")
                    lists[(t, d)] = Csr(*(z[f"{t}_{d}_{k}"] for k in ("indptr", "nbr", "eid", "rank")),
                                        np.full(len(z[f"{t}_{d}_nbr"]), d, dtype=np.int8))
            index = cls(_unpack_strings(z), z["node_type"], [str(x) for x in z["type_names"]],
                        [str(x) for x in z["edge_types"]], z["src"], z["dst"], z["etype"], lists,
                        str(z["fingerprint"]))
        index.check()
        return index

    def check(self) -> None:
        """Raise ValueError unless the arrays fit together (sizes, ranges, dtypes): a cache
        file is only used when walking it cannot index out of bounds."""
        n, e = self.size, len(self.src)

        def ok(a: np.ndarray, length: int, high: int, kind: str = "i") -> bool:
            return (a.ndim == 1 and a.dtype.kind == kind and len(a) == length and
                    (length == 0 or (int(a.min()) >= 0 and int(a.max()) < high)))

        if not (ok(self.node_type, n, max(len(self.type_names), 1)) and ok(self.src, e, max(n, 1))
                and ok(self.dst, e, max(n, 1)) and ok(self.etype, e, max(len(self.edge_types), 1))):
            raise ValueError("inconsistent node or edge arrays")
        for (t, _), c in self.lists.items():
            m = len(c.nbr)
            if not (0 <= t < len(self.edge_types) and ok(c.indptr, n + 1, m + 1)
                    and (n == 0 or int(c.indptr[0]) == 0 and int(c.indptr[-1]) == m)
                    and bool(np.all(np.diff(c.indptr) >= 0)) and ok(c.nbr, m, max(n, 1))
                    and ok(c.eid, m, max(e, 1)) and ok(c.rank, m, max(2 * e, 1))):
                raise ValueError(f"inconsistent adjacency list {t}")


def csr_lists(n: int, edge_types: int, src: np.ndarray, dst: np.ndarray, etype: np.ndarray,
              confidence: np.ndarray, recency: np.ndarray) -> dict[tuple[int, int], Csr]:
    """The ranked lists (see the module's text) of ``n`` nodes' edges: ``src``/``dst`` int32,
    ``etype`` int16 codes below ``edge_types``, ``recency`` any integer code growing with time."""
    e = len(src)
    degree = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    owner = np.concatenate([src, dst])
    nbr = np.concatenate([dst, src])
    eid = np.tile(np.arange(e, dtype=np.int32), 2)
    dirs = np.repeat(np.array([0, 1], dtype=np.int8), e)
    et = np.tile(etype, 2)
    conf_code = np.unique(-np.asarray(confidence, dtype=np.float64), return_inverse=True)[1]
    rec_code = np.unique(-np.asarray(recency, dtype=np.int64), return_inverse=True)[1]
    n64 = np.int64(max(n, 1))
    by_rank = np.lexsort(((et.astype(np.int64) * 2 + dirs) * n64 + owner,
                          degree[nbr].astype(np.int64) * n64 + nbr,
                          np.tile(conf_code.astype(np.int64) * (rec_code.max(initial=0) + 1)
                                  + rec_code, 2)))
    rank = np.empty(2 * e, dtype=np.int32)
    rank[by_rank] = np.arange(2 * e, dtype=np.int32)
    list_key = (et.astype(np.int64) * 2 + dirs) * n + owner
    order = by_rank[np.argsort(list_key[by_rank], kind="stable")]
    lists: dict[tuple[int, int], Csr] = {}
    key_sorted = list_key[order]
    for t in range(edge_types):
        for d in (0, 1):
            lo, hi = np.searchsorted(key_sorted, [(t * 2 + d) * n, (t * 2 + d + 1) * n])
            if lo == hi:
                continue
            sel = order[lo:hi]
            counts = np.bincount(owner[sel], minlength=n)
            indptr = np.zeros(n + 1, dtype=np.int32)
            np.cumsum(counts, out=indptr[1:])
            lists[(t, d)] = Csr(indptr, nbr[sel], eid[sel], rank[sel],
                                np.full(len(sel), d, dtype=np.int8))
    return lists


def _pack_strings(items: list[str]) -> dict[str, np.ndarray]:
    data = [x.encode() for x in items]
    ends = np.cumsum([len(x) for x in data], dtype=np.int64)
    return {"ids_blob": np.frombuffer(b"".join(data), dtype=np.uint8), "ids_end": ends}


def _unpack_strings(z) -> list[str]:
    blob, ends = z["ids_blob"].tobytes(), z["ids_end"].tolist()
    if any(b < a for a, b in zip([0, *ends[:-1]], ends)) or (ends and ends[-1] != len(blob)):
        raise ValueError("inconsistent node IDs")
    return [blob[a:b].decode() for a, b in zip([0, *ends[:-1]], ends)]


def code_names(schema) -> tuple[list[str], list[str]]:
    """The index's type codes (node types by name, then "" for nodes only known as edge
    endpoints) and edge type codes (by name)."""
    return sorted(schema.node_types) + [""], sorted(schema.edge_types)


def node_ids(kg: KnowledgeGraph, edges: dict) -> list[str]:
    """The index's node numbering: the IDs of the graph's nodes and edge endpoints, sorted."""
    return sorted(set(kg.nodes).union(*((s, o) for s, _, o in edges)))


def graph_arrays(kg: KnowledgeGraph, edges: dict | None = None) -> tuple:
    """The arguments of :meth:`AdjacencyIndex.from_arrays` for a graph, fingerprint last.

    ``edges`` is ``kg.edges()`` when the caller already has it; edge numbers follow its order.
    """
    edges = kg.edges() if edges is None else edges
    ids = node_ids(kg, edges)
    pos = {n: i for i, n in enumerate(ids)}
    type_names, edge_types = code_names(kg.schema)
    tcode = {t: i for i, t in enumerate(type_names)}
    node_type = np.array([tcode[kg.nodes[n].type] if n in kg.nodes else tcode[""] for n in ids],
                         dtype=np.int16)
    ecode = {t: i for i, t in enumerate(edge_types)}
    m = len(edges)
    src, dst = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
    etype, conf = np.empty(m, dtype=np.int16), np.empty(m, dtype=np.float64)
    stamps: list[str] = []
    for i, ((s, p, o), assertions) in enumerate(edges.items()):
        src[i], dst[i], etype[i] = pos[s], pos[o], ecode[p]
        conf[i] = max((a.confidence for a in assertions), default=-1.0)
        stamps.append(max((a.generated_at for a in assertions), default=""))
    times, recency = np.unique(np.array(stamps, dtype=str), return_inverse=True) if m else ([], np.zeros(0))
    h = hashlib.sha256()
    for part in ("\x1f".join(ids), "\x1f".join(type_names), "\x1f".join(edge_types),
                 "\x1f".join(map(str, times))):
        h.update(part.encode() + b"\x1e")
    for a in (node_type, src, dst, etype, conf, np.asarray(recency, dtype=np.int64)):
        h.update(np.ascontiguousarray(a).tobytes())
    return (ids, node_type, type_names, edge_types, src, dst, etype, conf,
            np.asarray(recency, dtype=np.int64), h.hexdigest())


def cached_index(kg: KnowledgeGraph, cache_dir: str | Path | None,
                 edges: dict | None = None) -> AdjacencyIndex:
    """The index of ``kg``, read from / written to ``cache_dir/adjacency-<fingerprint>.npz``.

    The file is used only when it is a complete, consistent index whose fingerprint (of exactly
    the data it is built from) is this graph's; anything else (truncated, garbage, another
    graph's, not a regular file) is rebuilt. Where the folder cannot be written the index is
    just not cached."""
    args = graph_arrays(kg, edges)
    if cache_dir is None:
        return AdjacencyIndex.from_arrays(*args)
    path = Path(cache_dir) / f"adjacency-{args[-1][:32]}.npz"
    index = _load_cached(path, args[-1])
    if index is not None:
        return index
    index = AdjacencyIndex.from_arrays(*args)
    try:
        index.save(path)
    except Exception:  # noqa: BLE001 - a read-only store, a file in the folder's place, a full disk
        pass
    return index


def _load_cached(path: Path, fingerprint: str) -> AdjacencyIndex | None:
    try:
        if not path.is_file():  # follows symlinks; a FIFO or device is never opened
            return None
        index = AdjacencyIndex.load(path)
    except Exception:  # noqa: BLE001 - BadZipFile, EOFError, zlib errors, ValueError, KeyError, ...
        return None
    return index if index.fingerprint == fingerprint else None


def follow_walk(index: AdjacencyIndex, seeds, lists: list[tuple[int, int]], hops: int,
                cap: int | None, keep: Callable | None = None,
                max_nodes: int | None = None) -> Walk:
    """Breadth-first walk over ``lists``; a node enters once, via its best-ranked entry."""
    seeds = np.unique(np.asarray(seeds, dtype=np.int32))
    walk = Walk([seeds], [], [])
    mark, lock = index.scratch()
    total = len(seeds)
    with lock:
        try:
            mark[seeds] = 0
            frontier, back = seeds, None
            for h in range(1, hops + 1):
                if not len(frontier) or (max_nodes is not None and total >= max_nodes):
                    break
                ent, cut = index.expand(frontier, lists, cap, keep, back)
                walk.cuts.append((frontier[cut > 0], cut[cut > 0]))
                new = np.flatnonzero(mark[ent.nbr] < 0)
                new = new[np.argsort(ent.rank[new])]
                first = new[np.sort(np.unique(ent.nbr[new], return_index=True)[1])]
                room = len(first) if max_nodes is None else max_nodes - total
                if len(first) > room:
                    walk.dropped += len(first) - room
                    first = first[:room]
                via = ent.take(first)
                walk.layers.append(via.nbr)
                mark[via.nbr] = h
                if walk.dropped:
                    ent = ent.take(mark[ent.nbr] >= 0)
                walk.entries.append(ent)
                walk.via.append(via)
                total += len(via.nbr)
                frontier, back = via.nbr, via.eid
        finally:
            mark[np.concatenate(walk.layers)] = -1
    return walk


def path_walk(index: AdjacencyIndex, seeds, steps: list[list[tuple[int, int]]], cap: int | None,
              last_keep: Callable | None = None) -> Walk:
    """Every walk that matches ``steps`` (lists per step) from the seeds, pruned to complete ones.

    A neighbour is eligible at an inner step only when it has an edge for the next step
    (checked before the cap); ``last_keep`` filters the end nodes.
    """
    layer = np.unique(np.asarray(seeds, dtype=np.int32))
    entries, cuts = [], []
    for i, lists in enumerate(steps):
        if i + 1 < len(steps):
            keep = lambda nbr, nxt=steps[i + 1]: index.degree(nbr, nxt) > 0  # noqa: E731
        else:
            keep = last_keep
        ent, cut = index.expand(layer, lists, cap, keep)
        entries.append(ent)
        cuts.append((layer, cut))
        layer = np.unique(ent.nbr)
    layers = [layer]
    for i in range(len(steps) - 1, -1, -1):
        entries[i] = entries[i].take(np.isin(entries[i].nbr, layers[0]))
        layers.insert(0, np.unique(entries[i].owner))
    kept = [(n[(c > 0) & np.isin(n, layers[i])], c[(c > 0) & np.isin(n, layers[i])])
            for i, (n, c) in enumerate(cuts)]
    return Walk(layers, entries, kept)
