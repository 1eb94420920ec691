"""A CSR adjacency index per (edge type, direction), neighbours pre-sorted by the cap ranking.

Node ``i`` is the i-th stable ID in sorted order. For each stored edge type and direction
(``out``: subject to object, ``in``: object to subject) the index holds ``indptr`` (node ->
slice), ``nbr`` (neighbour), ``eid`` (edge number) and ``rank``. Within a node's slice the
entries are sorted by the **cap ranking**, a total order on a node's edges:

1. higher edge confidence (best assertion) first; edges without assertions last;
2. more recent edges (latest ``generatedAtTime``) first;
3. neighbours of lower degree first (a penalty on hubs; degree counts every edge);
4. neighbour ID, then edge type, then direction.

``rank`` is an entry's position in that order over the whole graph, so a node's entries
from several lists merge by comparing ranks. The index is built from whatever graph it is
given; traversal builds it from the principal's visible graph, so hidden items influence
neither reachability nor ranking. :func:`cached_index` stores it as ``.npz`` named by a
fingerprint of exactly the data it is built from.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .model import KnowledgeGraph

DIRECTIONS = ("out", "in")


@dataclass
class Csr:
    """One (edge type, direction) list: ``nbr[indptr[i]:indptr[i+1]]`` are node i's entries."""

    indptr: np.ndarray
    nbr: np.ndarray
    eid: np.ndarray
    rank: np.ndarray


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

    @property
    def size(self) -> int:
        return len(self.node_ids)

    def position(self, node_id: str) -> int | None:
        """Index of a stable ID, or None when the node is not in the graph."""
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
            arrays += [c.indptr, c.nbr, c.eid, c.rank]
        return sum(a.nbytes for a in arrays)

    # -- querying --------------------------------------------------------------------------
    def degree(self, nodes: np.ndarray, lists: list[tuple[int, int]]) -> np.ndarray:
        """Number of entries each node has in ``lists``."""
        out = np.zeros(len(nodes), dtype=np.int64)
        for key in lists:
            c = self.lists.get(key)
            if c is not None:
                out += c.indptr[nodes + 1] - c.indptr[nodes]
        return out

    def expand(self, frontier: np.ndarray, lists: list[tuple[int, int]], cap: int | None,
               keep: Callable[[np.ndarray], np.ndarray] | None = None,
               exclude: np.ndarray | None = None) -> tuple[Entries, np.ndarray]:
        """Walk ``lists`` from every frontier node; at most ``cap`` best-ranked entries each.

        ``keep(nbr) -> bool array`` filters neighbours *before* the cap (then every entry is
        read); ``exclude`` gives, per frontier node, an edge number not to walk back along
        (-1: none). Returns the walked entries, grouped by owner and best first, and per
        frontier node how many eligible entries the cap cut.
        """
        if exclude is not None and not (exclude >= 0).any():
            exclude = None
        window = None if keep is not None or cap is None else cap + (exclude is not None)
        parts, eligible = [], np.zeros(len(frontier), dtype=np.int64)
        for key in lists:
            c = self.lists.get(key)
            if c is None:
                continue
            start = c.indptr[frontier]
            length = c.indptr[frontier + 1] - start
            if keep is None:
                eligible += length
            if window is not None:
                length = np.minimum(length, window)
            total = int(length.sum())
            if total == 0:
                continue
            idx = np.arange(total) + np.repeat(start - np.cumsum(length) + length, length)
            which = np.repeat(np.arange(len(frontier)), length)
            ok = None if exclude is None else c.eid[idx] != exclude[which]
            if keep is not None:
                ok = keep(c.nbr[idx]) if ok is None else ok & keep(c.nbr[idx])
            if ok is not None:
                idx, which = idx[ok], which[ok]
            if keep is not None:
                eligible += np.bincount(which, minlength=len(frontier))
            parts.append((which, c.nbr[idx], c.eid[idx], c.rank[idx],
                          np.full(len(idx), key[1], dtype=np.int8)))
        if exclude is not None and keep is None:  # the excluded edge is not eligible either
            e, has = np.maximum(exclude, 0), exclude >= 0
            for t, d in lists:
                eligible -= has & (self.etype[e] == t) & ((self.src, self.dst)[d][e] == frontier)
        if not parts:
            empty = np.zeros(0, dtype=np.int32)
            return Entries(empty, empty, empty, empty, np.zeros(0, dtype=np.int8)), eligible
        which, nbr, eid, rank, dirs = (np.concatenate(x) for x in zip(*parts))
        if len(parts) > 1:
            order = np.lexsort((rank, which))
            which, nbr, eid, rank, dirs = which[order], nbr[order], eid[order], rank[order], dirs[order]
        if cap is not None and (len(parts) > 1 or window != cap):
            first = np.flatnonzero(np.r_[True, which[1:] != which[:-1]])
            pos = np.arange(len(which)) - np.repeat(first, np.diff(np.r_[first, len(which)]))
            ok = pos < cap
            which, nbr, eid, rank, dirs = which[ok], nbr[ok], eid[ok], rank[ok], dirs[ok]
        eligible -= np.bincount(which, minlength=len(frontier))
        return Entries(frontier[which], nbr, eid, rank, dirs), eligible

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, node_ids: list[str], node_type: np.ndarray, type_names: list[str],
                    edge_types: list[str], src: np.ndarray, dst: np.ndarray, etype: np.ndarray,
                    confidence: np.ndarray, recency: np.ndarray,
                    fingerprint: str = "") -> "AdjacencyIndex":
        """Build from edge arrays; ``recency`` is any integer code that grows with time."""
        n, e = len(node_ids), len(src)
        src, dst = np.asarray(src, dtype=np.int32), np.asarray(dst, dtype=np.int32)
        etype = np.asarray(etype, dtype=np.int16)
        degree = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
        owner = np.concatenate([src, dst])
        nbr = np.concatenate([dst, src])
        eid = np.tile(np.arange(e, dtype=np.int32), 2)
        dirs = np.repeat(np.array([0, 1], dtype=np.int8), e)
        et = np.tile(etype, 2)
        conf_code = np.unique(-np.asarray(confidence, dtype=np.float64), return_inverse=True)[1]
        rec_code = np.unique(-np.asarray(recency, dtype=np.int64), return_inverse=True)[1]
        by_rank = np.lexsort((dirs, et, nbr, degree[nbr], np.tile(rec_code, 2),
                              np.tile(conf_code, 2)))
        rank = np.empty(2 * e, dtype=np.int32)
        rank[by_rank] = np.arange(2 * e, dtype=np.int32)
        list_key = (et.astype(np.int64) * 2 + dirs) * n + owner
        order = by_rank[np.argsort(list_key[by_rank], kind="stable")]
        lists: dict[tuple[int, int], Csr] = {}
        key_sorted = list_key[order]
        for t in range(len(edge_types)):
            for d in (0, 1):
                lo, hi = np.searchsorted(key_sorted, [(t * 2 + d) * n, (t * 2 + d + 1) * n])
                if lo == hi:
                    continue
                sel = order[lo:hi]
                counts = np.bincount(owner[sel], minlength=n)
                indptr = np.zeros(n + 1, dtype=np.int32)
                np.cumsum(counts, out=indptr[1:])
                lists[(t, d)] = Csr(indptr, nbr[sel], eid[sel], rank[sel])
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
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> "AdjacencyIndex":
        with np.load(path) as z:
            lists = {}
            for name in z.files:
                if name.endswith("_indptr"):
                    t, d = (int(x) for x in name.split("_")[:2])
                    lists[(t, d)] = Csr(*(z[f"{t}_{d}_{k}"] for k in ("indptr", "nbr", "eid", "rank")))
            return cls(_unpack_strings(z), z["node_type"], [str(x) for x in z["type_names"]],
                       [str(x) for x in z["edge_types"]], z["src"], z["dst"], z["etype"], lists,
                       str(z["fingerprint"]))


def _pack_strings(items: list[str]) -> dict[str, np.ndarray]:
    data = [x.encode() for x in items]
    ends = np.cumsum([len(x) for x in data], dtype=np.int64)
    return {"ids_blob": np.frombuffer(b"".join(data), dtype=np.uint8), "ids_end": ends}


def _unpack_strings(z) -> list[str]:
    blob, ends = z["ids_blob"].tobytes(), z["ids_end"].tolist()
    return [blob[a:b].decode() for a, b in zip([0, *ends[:-1]], ends)]


def graph_arrays(kg: KnowledgeGraph, edges: dict | None = None) -> tuple:
    """The arguments of :meth:`AdjacencyIndex.from_arrays` for a graph, fingerprint last.

    ``edges`` is ``kg.edges()`` when the caller already has it; edge numbers follow its order.
    """
    edges = kg.edges() if edges is None else edges
    ids = sorted(set(kg.nodes).union(*((s, o) for s, _, o in edges)))
    pos = {n: i for i, n in enumerate(ids)}
    type_names = sorted(kg.schema.node_types) + [""]
    tcode = {t: i for i, t in enumerate(type_names)}
    node_type = np.array([tcode[kg.nodes[n].type] if n in kg.nodes else tcode[""] for n in ids],
                         dtype=np.int16)
    edge_types = sorted(kg.schema.edge_types)
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
    """The index of ``kg``, read from / written to ``cache_dir/adjacency-<fingerprint>.npz``."""
    args = graph_arrays(kg, edges)
    if cache_dir is None:
        return AdjacencyIndex.from_arrays(*args)
    path = Path(cache_dir) / f"adjacency-{args[-1][:32]}.npz"
    if path.is_file():
        try:
            index = AdjacencyIndex.load(path)
            if index.fingerprint == args[-1]:
                return index
        except (OSError, ValueError, KeyError):
            pass
    index = AdjacencyIndex.from_arrays(*args)
    index.save(path)
    return index
