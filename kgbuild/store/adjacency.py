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
from several lists merge by comparing ranks. The index is part of a graph's read model
(:mod:`kgbuild.store.readmodel`), made from whatever graph that is: a principal's view has
its own, so hidden items influence neither reachability nor ranking. Walking it is
:mod:`kgbuild.retrieve.walk`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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
class AdjacencyIndex:
    node_ids: Sequence[str]  # sorted
    node_type: np.ndarray  # int16 code into type_names, per node
    type_names: list[str]  # "" is the type of nodes only known as edge endpoints
    edge_types: list[str]  # code -> stored edge type name
    src: np.ndarray  # per edge number (edges sorted by subject, type, object)
    dst: np.ndarray
    etype: np.ndarray
    lists: dict[tuple[int, int], Csr]  # (edge type code, 0 out / 1 in)

    @property
    def size(self) -> int:
        return len(self.node_ids)

    def position(self, node_id: str) -> int | None:
        """Index of a stable ID, or None when the node is not in the graph."""
        return self.node_ids.find(node_id)

    def check(self) -> None:
        """Raise ValueError unless the arrays fit together (sizes, ranges, dtypes): saved files
        are only used when walking them cannot index out of bounds."""
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


def code_names(schema) -> tuple[list[str], list[str]]:
    """The index's type codes (node types by name, then "" for nodes only known as edge
    endpoints) and edge type codes (by name)."""
    return sorted(schema.node_types) + [""], sorted(schema.edge_types)
