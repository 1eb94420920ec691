"""A CSR adjacency index per (edge type, direction), neighbours pre-sorted by the cap ranking.

Node ``i`` is the i-th stable ID in sorted order. For each stored edge type and direction
(``out``: subject to object, ``in``: object to subject) the index holds ``indptr`` (node ->
slice), ``nbr`` (neighbour), ``eid`` (edge number) and ``rank``. Within a node's slice the
entries are sorted by the **cap ranking**, a total order on a node's edges:

1. higher edge confidence (best assertion) first; edges without assertions last;
2. more recent edges (latest ``generatedAtTime``) first;
3. neighbours of lower degree first (a penalty on hubs; degree counts every edge);
4. neighbour ID, then edge type, direction and owner (so the order is total).

``rank`` is an entry's position in that order among its owner's entries in every list, so
a node's entries from several lists merge by comparing ranks, and a change to a few edges
re-ranks only the nodes it touches (:func:`relisted`); entries of different owners are
compared by the ranking's fields themselves (:meth:`AdjacencyIndex.order`). The index is
part of a graph's read model
(:mod:`kgbuild.store.readmodel`), made from whatever graph that is: a principal's view has
its own, so hidden items influence neither reachability nor ranking. Walking it is
:mod:`kgbuild.retrieve.walk`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

DIRECTIONS = ("out", "in")
PATCH_MAX = 1 << 12  # positions a column's patch holds at most; past it, written whole
Patch = tuple[np.ndarray, np.ndarray]  # sorted positions (int64), the values there


@dataclass
class Csr:
    """One (edge type, direction) list: ``nbr[indptr[i]:indptr[i+1]]`` are node i's entries."""

    indptr: np.ndarray
    nbr: np.ndarray
    eid: np.ndarray
    rank: np.ndarray
    dir: np.ndarray  # 0 out, 1 in
    patches: dict[str, Patch] = field(default_factory=dict)  # nbr, eid, rank (see patched)


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
    conf: np.ndarray  # per edge: what the ranking reads (its best confidence, -1: none)
    recency: np.ndarray  # per edge: a code growing with its latest time
    patches: dict[str, Patch] = field(default_factory=dict)  # conf, recency (see patched)

    @property
    def size(self) -> int:
        return len(self.node_ids)

    def position(self, node_id: str) -> int | None:
        """Index of a stable ID, or None when the node is not in the graph."""
        return self.node_ids.find(node_id)

    def degree(self, nodes: np.ndarray) -> np.ndarray:
        """Each node's number of entries in every list (its edges; a self-loop twice)."""
        out = np.zeros(len(nodes), dtype=np.int64)
        for c in self.lists.values():
            out += c.indptr[nodes + 1] - c.indptr[nodes]
        return out

    def order(self, owner: np.ndarray, nbr: np.ndarray, eid: np.ndarray,
              dirs: np.ndarray) -> np.ndarray:
        """The indices that sort these entries in the cap ranking over the whole graph (see
        the module's text): what comparing ranks cannot tell across owners."""
        n = np.int64(max(self.size, 1))
        tdir = self.etype[eid].astype(np.int64) * 2 + dirs
        return np.lexsort((tdir * n + owner, self.degree(nbr) * n + nbr,
                           -np.asarray(self.recency[eid], dtype=np.int64),
                           -np.asarray(self.conf[eid], dtype=np.float64)))

    def check(self, values: bool = True) -> None:
        """Raise ValueError unless the arrays fit together (sizes, dtypes, and with ``values``
        every number's range, which reads them all): saved files are only used when walking
        them cannot index out of bounds."""
        n, e = self.size, len(self.src)

        def ok(a: np.ndarray, length: int, high: int, kind: str = "i") -> bool:
            return (a.ndim == 1 and a.dtype.kind == kind and len(a) == length and
                    (length == 0 or not values or (int(a.min()) >= 0 and int(a.max()) < high)))

        if not (ok(self.node_type, n, max(len(self.type_names), 1)) and ok(self.src, e, max(n, 1))
                and ok(self.dst, e, max(n, 1)) and ok(self.etype, e, max(len(self.edge_types), 1))
                and len(self.conf) == len(self.recency) == e):
            raise ValueError("inconsistent node or edge arrays")
        for name, (pos, val) in self.patches.items():
            check_patch(name, pos, val, getattr(self, name))
        for (t, _), c in self.lists.items():
            for name, (pos, val) in c.patches.items():
                check_patch(name, pos, val, getattr(c, name))
            m = len(c.nbr)
            if not (0 <= t < len(self.edge_types) and ok(c.indptr, n + 1, m + 1)
                    and (n == 0 or int(c.indptr[0]) == 0 and int(c.indptr[-1]) == m)
                    and (not values or bool(np.all(np.diff(c.indptr) >= 0)))
                    and ok(c.nbr, m, max(n, 1))
                    and ok(c.eid, m, max(e, 1)) and ok(c.rank, m, max(2 * e, 1))):
                raise ValueError(f"inconsistent adjacency list {t}")


def check_patch(name: str, pos: np.ndarray, val: np.ndarray, column: np.ndarray) -> None:
    """Raise ValueError unless ``pos`` and ``val`` are a patch of ``column`` (:func:`patched`):
    at most :data:`PATCH_MAX` ascending positions in it, values of its type."""
    if not (pos.ndim == val.ndim == 1 and len(pos) == len(val) <= PATCH_MAX
            and pos.dtype.kind == "i" and val.dtype == column.dtype
            and (not len(pos) or (int(pos[0]) >= 0 and int(pos[-1]) < len(column)
                                  and bool(np.all(pos[1:] > pos[:-1]))))):
        raise ValueError(f"inconsistent patch of column {name}")


def patched(column: np.ndarray, patch: Patch | None, at: np.ndarray,
            values: np.ndarray) -> tuple[np.ndarray, Patch | None]:
    """``column`` with ``values`` at positions ``at``, and the patch that, applied to its
    saved file, gives it. A column mapped copy-on-write from a model's file (its ``patch``
    applied, see :func:`~kgbuild.store.modelfiles.load`) is written over in memory and keeps
    its file: the patch is the old one and these positions, while it holds at most
    :data:`PATCH_MAX`; any other column is copied (a new file, no patch)."""
    at = np.asarray(at, dtype=np.int64)
    if not len(at) or np.array_equal(column[at], values):
        return column, patch
    mapped = column.base if isinstance(column.base, np.memmap) else None
    if mapped is not None and mapped.mode == "c":
        pos, val = patch if patch is not None else (np.zeros(0, np.int64), column[:0])
        keep = ~np.isin(pos, at)
        merged = np.concatenate([pos[keep], at])
        if len(merged) <= PATCH_MAX:
            column[at] = values
            order = np.argsort(merged, kind="stable")
            return column, (merged[order], np.concatenate([val[keep], values])[order]
                            .astype(column.dtype))
    column = np.array(column)
    column[at] = values
    return column, None


def _strength(conf: np.ndarray, recency: np.ndarray) -> np.ndarray:
    """Per edge a dense code of (confidence, recency), lower for the better ranked."""
    conf_code = np.unique(-np.asarray(conf, dtype=np.float64), return_inverse=True)[1]
    rec_code = np.unique(-np.asarray(recency, dtype=np.int64), return_inverse=True)[1]
    return np.unique(conf_code.astype(np.int64) * (int(rec_code.max(initial=0)) + 1)
                     + rec_code, return_inverse=True)[1].astype(np.int64)


def _by_owner(owner: np.ndarray, nbr: np.ndarray, tdir: np.ndarray, degree: np.ndarray,
              strength: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order of these entries grouped by owner (ascending), each owner's in the cap
    ranking (``tdir``: edge type code * 2 + direction; ``degree``: the neighbour's;
    ``strength``: :func:`_strength` of the entry's edge), and each entry's rank among its
    owner's."""
    n = np.int64(int(nbr.max(initial=0)) + 1)
    order = np.lexsort((tdir, degree.astype(np.int64) * n + nbr,
                        owner.astype(np.int64) * (int(strength.max(initial=0)) + 1) + strength))
    grouped = owner[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = grouped[1:] != grouped[:-1]
    at = np.arange(len(order), dtype=np.int64)
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = at - np.maximum.accumulate(np.where(first, at, 0))
    return order, rank


def _split(edge_types: int, order: np.ndarray, owner: np.ndarray, nbr: np.ndarray,
           eid: np.ndarray, rank: np.ndarray, tdir: np.ndarray) -> dict[tuple[int, int], tuple]:
    """Entries in ``order`` (grouped by owner, ranked) split into their lists: per (edge
    type, direction) the owners, neighbours, edge numbers and ranks, in that order."""
    order = order[np.argsort(tdir[order].astype(np.int16), kind="stable")]
    keys = tdir[order]
    out = {}
    for t in range(edge_types):
        for d in (0, 1):
            lo, hi = np.searchsorted(keys, [t * 2 + d, t * 2 + d + 1])
            if lo < hi:
                sel = order[lo:hi]
                out[(t, d)] = (owner[sel], nbr[sel], eid[sel], rank[sel])
    return out


def directions(m: int, d: int) -> np.ndarray:
    """A list's ``dir`` column: ``m`` times ``d``, one byte shown ``m`` times (read only)."""
    return np.broadcast_to(np.int8(d), (m,))


def _csr(n: int, d: int, owner, nbr, eid, rank) -> Csr:
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(owner, minlength=n), out=indptr[1:])
    return Csr(indptr, nbr.astype(np.int32), eid.astype(np.int32), rank.astype(np.int32),
               directions(len(nbr), d))


def _entries(src: np.ndarray, dst: np.ndarray, etype: np.ndarray, edges: np.ndarray,
             ins: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """The out entries of ``edges`` and the in entries of ``ins`` (default: the same):
    owners, neighbours, edge numbers, directions and type-directions."""
    ins = edges if ins is None else ins
    owner = np.concatenate([src[edges], dst[ins]])
    nbr = np.concatenate([dst[edges], src[ins]])
    eid = np.concatenate([edges, ins]).astype(np.int32)
    dirs = np.repeat(np.array([0, 1], dtype=np.int8), [len(edges), len(ins)])
    return owner, nbr, eid, dirs, etype[eid].astype(np.int64) * 2 + dirs


def csr_lists(n: int, edge_types: int, src: np.ndarray, dst: np.ndarray, etype: np.ndarray,
              confidence: np.ndarray, recency: np.ndarray) -> dict[tuple[int, int], Csr]:
    """The ranked lists (see the module's text) of ``n`` nodes' edges: ``src``/``dst`` int32,
    ``etype`` int16 codes below ``edge_types``, ``recency`` any integer code growing with time."""
    every = np.arange(len(src), dtype=np.int64)
    owner, nbr, eid, _, tdir = _entries(src, dst, etype, every)
    degree = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    order, rank = _by_owner(owner, nbr, tdir, degree[nbr], _strength(confidence, recency)[eid])
    return {(t, d): _csr(n, d, *parts)
            for (t, d), parts in _split(edge_types, order, owner, nbr, eid, rank,
                                        tdir).items()}


def relisted(old: AdjacencyIndex, n: int, src: np.ndarray, dst: np.ndarray, etype: np.ndarray,
             confidence: np.ndarray, recency: np.ndarray, added: np.ndarray,
             redone: np.ndarray, cut: np.ndarray, nodes: np.ndarray | None = None,
             edges: Callable[[np.ndarray], np.ndarray] | None = None
             ) -> dict[tuple[int, int], Csr]:
    """:func:`csr_lists` of a changed graph (``n`` nodes, the edges' new columns) from the
    ``old`` index's lists, given what changed: the edges ``added`` and those whose
    confidence or time may have changed (``redone``), by new numbers, and the nodes that
    lost an edge (``cut``, new numbers, one per edge lost). The entries of the nodes these
    touch (and of the neighbours of those whose degree changed) are ranked again, read from
    the old lists' slices and the added edges, never from every edge; every other node's are
    kept in their order, renumbered with ``nodes`` (old number -> new, -1: gone) and
    ``edges`` (old edge numbers -> new ones, -1: gone; a function, as a few insertions are
    counted faster than a whole column is looked up): None for both when the change added or
    removed no node or edge (then a list none of the touched nodes is in is the old one
    itself)."""
    changed = np.concatenate([added, redone]).astype(np.int64)
    ends = np.concatenate([src[changed], dst[changed], cut]).astype(np.int64)
    if nodes is None and edges is None:
        return _rerank(old, np.unique(ends), confidence, recency)
    # new -> old node numbers; the nodes whose degree changed, and their old neighbours
    alive = nodes >= 0
    back = np.full(n, -1, dtype=np.int64)
    back[nodes[alive]] = np.flatnonzero(alive)
    grew = np.concatenate([src[added], dst[added], cut]).astype(np.int64)
    was = back[np.unique(grew)]
    was = was[was >= 0]
    mark = np.zeros(n, dtype=bool)
    mark[ends] = True
    for c in old.lists.values():
        near = nodes[c.nbr[_slices(c, was)[0]]]
        mark[near[near >= 0]] = True
    # the entries of the marked nodes now: their old ones renumbered (less the edges gone),
    # and the added edges'
    marked = back[np.flatnonzero(mark)]
    marked = marked[marked >= 0]
    found = {0: [added[mark[src[added]]]], 1: [added[mark[dst[added]]]]}
    for (_, d), c in old.lists.items():
        now = edges(c.eid[_slices(c, marked)[0]])
        found[d].append(now[now >= 0])
    outs, ins = (np.concatenate(found[d]).astype(np.int64) for d in (0, 1))
    owner, nbr, eid, _, tdir = _entries(src, dst, etype, outs, ins)
    degree = np.zeros(len(nbr), dtype=np.int64)  # (the neighbours' degrees now)
    known = back[nbr] >= 0
    degree[known] = old.degree(back[nbr][known])
    shift = np.bincount(np.concatenate([src[added], dst[added]]).astype(np.int64), minlength=n) \
        - np.bincount(cut.astype(np.int64), minlength=n)
    order, rank = _by_owner(owner, nbr, tdir, degree + shift[nbr],
                            _strength(np.asarray(confidence)[eid], np.asarray(recency)[eid]))
    fresh = _split(len(old.edge_types), order, owner, nbr, eid, rank, tdir)
    same = len(nodes) == n and bool(np.all(nodes == np.arange(n)))
    gone = np.union1d(np.flatnonzero(nodes < 0), marked)  # old owners whose entries go
    lists = {}
    for key in sorted(fresh.keys() | old.lists.keys()):
        c, new = old.lists.get(key), fresh.get(key)
        if c is None:
            lists[key] = _csr(n, key[1], *new)
            continue
        drop = _slices(c, gone)[0]
        if same and new is None and not len(drop):  # (its entries as they were, renumbered)
            eid = edges(c.eid)
            lists[key] = c if np.array_equal(eid, c.eid) else Csr(
                c.indptr, c.nbr, eid.astype(np.int32, copy=False), c.rank, c.dir,
                {k: v for k, v in c.patches.items() if k != "eid"})
            continue
        keep = np.ones(len(c.nbr), dtype=bool)
        keep[drop] = False
        parts = [c.nbr[keep] if same else nodes[c.nbr[keep]], edges(c.eid[keep]), c.rank[keep]]
        counts = np.diff(c.indptr).astype(np.int64)
        counts[gone] = 0
        per = np.zeros(n, dtype=np.int64)  # entries per owner, new numbers
        per[nodes[alive]] = counts[alive]
        if new is not None:
            at = np.concatenate([[0], np.cumsum(per)])[new[0]]
            parts = [np.insert(x, at, y) for x, y in zip(parts, new[1:])]
            per += np.bincount(new[0], minlength=n)
        if len(parts[0]):  # (a list left empty is none, as in csr_lists)
            indptr = np.zeros(n + 1, dtype=np.int32)
            np.cumsum(per, out=indptr[1:])
            lists[key] = Csr(indptr, *(x.astype(np.int32, copy=False) for x in parts),
                             directions(len(parts[0]), key[1]))
    return lists


def _slices(c: Csr, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``owners``' entries in list ``c`` (owner by owner), and their owners."""
    start = c.indptr[owners].astype(np.int64)
    length = c.indptr[owners + 1] - start
    ends = np.cumsum(length)
    return (np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(start - ends + length, length),
            np.repeat(owners, length))


def _rerank(old: AdjacencyIndex, dirty: np.ndarray, confidence: np.ndarray,
            recency: np.ndarray) -> dict[tuple[int, int], Csr]:
    """The lists of ``old``'s graph with the entries of the ``dirty`` nodes ranked again by
    the edges' new ``confidence`` and ``recency``, in their slices: the same nodes and edges,
    so only those slices are read, and a list none of them is in (a column whose slices
    stay as they were) is the old one itself."""
    found = {key: _slices(c, dirty) for key, c in old.lists.items()}
    found = {key: f for key, f in found.items() if len(f[0])}
    if not found:
        return dict(old.lists)
    owner = np.concatenate([o for _, o in found.values()])
    parts = [(old.lists[key], key) for key in found]
    nbr = np.concatenate([c.nbr[found[key][0]] for c, key in parts])
    eid = np.concatenate([c.eid[found[key][0]] for c, key in parts]).astype(np.int64)
    tdir = np.repeat([t * 2 + d for _, (t, d) in parts], [len(found[k][0]) for _, k in parts])
    order, rank = _by_owner(owner, nbr, tdir.astype(np.int64), old.degree(nbr),
                            _strength(np.asarray(confidence)[eid], np.asarray(recency)[eid]))
    fresh = _split(len(old.edge_types), order, owner, nbr, eid, rank, tdir)
    lists = dict(old.lists)
    for key, (at, _) in found.items():  # (a column whose slices stay as they were: the old)
        c = old.lists[key]
        columns, patches = [], {}
        for name, f in zip(("nbr", "eid", "rank"), fresh[key][1:]):
            a, patch = patched(getattr(c, name), c.patches.get(name), at, f)
            columns.append(a)
            if patch is not None:
                patches[name] = patch
        lists[key] = Csr(c.indptr, *columns, c.dir, patches)
    return lists


def code_names(schema) -> tuple[list[str], list[str]]:
    """The index's type codes (node types by name, then "" for nodes only known as edge
    endpoints) and edge type codes (by name)."""
    return sorted(schema.node_types) + [""], sorted(schema.edge_types)
