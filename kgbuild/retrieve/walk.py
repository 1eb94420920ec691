"""Walks over an adjacency index (:mod:`kgbuild.store.adjacency`), in numpy: expansion with
the hub cap, breadth-first follow walks, typed path walks and their enumeration.

**Hub cap K**: per hop, at most K edges leave any node: the best K by the index's cap
ranking, taken *after* the filters (edge type and direction, node types, and in path mode
the neighbour's having an edge for the next step). How many eligible edges each node lost
is reported. ``cap=None`` walks everything (exact).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..store.adjacency import AdjacencyIndex, Csr
from .spec import Step

GATHER_COST = 4  # an entry merged for a frontier costs about this many of a whole-list merge's


@dataclass
class Entries:
    """Edges walked from a frontier: owner, neighbour, edge number, rank (among the owner's
    entries), direction (0 out, 1 in)."""

    owner: np.ndarray
    nbr: np.ndarray
    eid: np.ndarray
    rank: np.ndarray
    dir: np.ndarray

    def take(self, keep: np.ndarray) -> Entries:
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


class Walker:
    """Walks over one index. Several edge types' lists are merged per walk for the
    frontier's entries only, and once that has cost as much as merging the whole lists
    (a served graph's walker), merged whole, kept, and read from then on."""

    def __init__(self, index: AdjacencyIndex):
        self.index = index
        self._mark: np.ndarray | None = None
        self._lock = threading.Lock()
        self._merged: dict = {}  # lists (sorted keys) -> their merged Csr
        self._spent: dict = {}  # lists -> entries merged for frontiers so far

    def scratch(self) -> tuple[np.ndarray, threading.Lock]:
        """A per-node int32 work array (all -1 between uses) and the lock guarding it."""
        if self._mark is None:
            self._mark = np.full(self.index.size, -1, dtype=np.int32)
        return self._mark, self._lock

    def lists(self, steps: Sequence[Step]) -> list[tuple[int, int]]:
        """The index lists (edge type code, direction) a set of steps walks."""
        code = {t: i for i, t in enumerate(self.index.edge_types)}
        return sorted({(code[s.edge], d) for s in steps for d in s.dirs if s.edge in code})

    def type_filter(self, types: np.ndarray | None):
        """A ``keep(nbr)`` callable admitting nodes whose type code is in ``types`` (None: all)."""
        if types is None:
            return None
        allowed = np.zeros(len(self.index.type_names), dtype=bool)
        allowed[types] = True
        return lambda nbr: allowed[self.index.node_type[nbr]]

    def degree(self, nodes: np.ndarray, lists: list[tuple[int, int]]) -> np.ndarray:
        """Number of entries each node has in ``lists``."""
        out = np.zeros(len(nodes), dtype=np.int64)
        for key in set(lists):
            c = self.index.lists.get(key)
            if c is not None:
                out += c.indptr[nodes + 1] - c.indptr[nodes]
        return out

    def merged(self, key: tuple[tuple[int, int], ...]) -> Csr:
        """One list holding the entries of the lists ``key`` (sorted), each node's still best
        first (cached)."""
        ix = self.index
        if len(key) == 1 and key[0] in ix.lists:
            return ix.lists[key[0]]
        if key not in self._merged:
            parts = [ix.lists[k] for k in key if k in ix.lists]
            n = ix.size
            owner = np.concatenate([np.repeat(np.arange(n, dtype=np.int64), np.diff(c.indptr))
                                    for c in parts] or [np.zeros(0, dtype=np.int64)])
            rank = np.concatenate([c.rank for c in parts] or [np.zeros(0, dtype=np.int32)])
            order = np.argsort(owner * (2 * len(ix.src) + 1) + rank, kind="stable")
            indptr = np.zeros(n + 1, dtype=np.int32)
            np.cumsum(np.bincount(owner, minlength=n), out=indptr[1:])

            def cat(name: str) -> np.ndarray:
                return np.concatenate([getattr(c, name) for c in parts])[order]

            self._merged[key] = Csr(indptr, cat("nbr"), cat("eid"), rank[order], cat("dir")) \
                if parts else Csr(indptr, *(np.zeros(0, dtype=t) for t in (np.int32, np.int32,
                                                                             np.int32, np.int8)))
        return self._merged[key]

    def gathered(self, frontier: np.ndarray, lists: list[tuple[int, int]],
                 first: int | None) -> tuple[Csr, np.ndarray]:
        """The entries of ``lists`` of each frontier node (numbered by its position), each
        node's best first (by rank; ties in list order), at most ``first`` from each list
        when given; and per node how many entries it has in all. Only the frontier's entries
        are read: a walk costs what it walks, not what the graph holds."""
        ix, n = self.index, len(frontier)
        parts = [ix.lists[k] for k in sorted(set(lists)) if k in ix.lists]
        total = np.zeros(n, dtype=np.int64)
        picked = []
        for c in parts:
            start = c.indptr[frontier].astype(np.int64)
            length = c.indptr[frontier + 1] - start
            total += length
            if first is not None:
                length = np.minimum(length, first)
            ends = np.cumsum(length)
            idx = np.arange(ends[-1] if n else 0) + np.repeat(start - ends + length, length)
            picked.append((c, idx, np.repeat(np.arange(n, dtype=np.int64), length)))
        owner = np.concatenate([o for _, _, o in picked] or [np.zeros(0, dtype=np.int64)])
        rank = np.concatenate([c.rank[i] for c, i, _ in picked] or [np.zeros(0, np.int32)])
        order = np.argsort(owner * (2 * len(ix.src) + 1) + rank, kind="stable")
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=n), out=indptr[1:])

        def cat(name: str, dtype) -> np.ndarray:
            return np.concatenate([getattr(c, name)[i] for c, i, _ in picked]
                                  or [np.zeros(0, dtype=dtype)])[order]

        return Csr(indptr, cat("nbr", np.int32), cat("eid", np.int32), rank[order],
                   cat("dir", np.int8)), total

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
        first = None
        if keep is None and cap is not None:  # an edge has <= 2 entries at a node (self-loop)
            first = cap + 2 * (exclude is not None)
        key = tuple(sorted(set(lists)))
        if key in self._merged or (len(key) == 1 and key[0] in self.index.lists):
            c = self.merged(key)
            start = c.indptr[frontier]
            length = c.indptr[frontier + 1] - start
            eligible = length.astype(np.int64)
        else:  # the frontier's entries merged, until that has cost what merging all would
            c, eligible = self.gathered(frontier, lists, first)
            start = c.indptr[:-1]
            length = c.indptr[1:] - start
            self._spent[key] = self._spent.get(key, 0) + GATHER_COST * len(c.nbr)
            if self._spent[key] >= sum(len(self.index.lists[k].nbr) for k in key
                                       if k in self.index.lists):
                self.merged(key)  # (a walker reused enough: the whole lists merged once)
        if first is not None:
            length = np.minimum(length, first)
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
                eligible -= self._incident(frontier, exclude, lists)
            if cap is not None and len(idx):
                pos = np.arange(len(idx)) - np.repeat(np.cumsum(length) - length, length)
                ok = pos < cap
                idx, which, nbr, trimmed = idx[ok], which[ok], nbr[ok], True
        walked = np.bincount(which, minlength=len(frontier)) if trimmed else length
        return (Entries(frontier[which], nbr, c.eid[idx], c.rank[idx], c.dir[idx]),
                eligible - walked)

    def _incident(self, frontier: np.ndarray, eid: np.ndarray,
                  lists: list[tuple[int, int]]) -> np.ndarray:
        """Per frontier node, how many of its entries in ``lists`` are edge ``eid`` (-1: none)."""
        ix = self.index
        table = np.zeros((len(ix.edge_types), 2), dtype=bool)
        for t, d in lists:
            table[t, d] = True
        e, has = np.maximum(eid, 0), eid >= 0
        t = ix.etype[e]
        return has * ((table[t, 0] & (ix.src[e] == frontier)).astype(np.int64)
                      + (table[t, 1] & (ix.dst[e] == frontier)))

    def follow(self, seeds, lists: list[tuple[int, int]], hops: int, cap: int | None,
               keep: Callable | None = None, max_nodes: int | None = None) -> Walk:
        """Breadth-first walk over ``lists``; a node enters once, via its best-ranked entry."""
        seeds = distinct(np.asarray(seeds, dtype=np.int32))
        walk = Walk([seeds], [], [])
        mark, lock = self.scratch()
        total = len(seeds)
        with lock:
            try:
                mark[seeds] = 0
                frontier, back = seeds, None
                for h in range(1, hops + 1):
                    if not len(frontier) or (max_nodes is not None and total >= max_nodes):
                        break
                    ent, cut = self.expand(frontier, lists, cap, keep, back)
                    walk.cuts.append((frontier[cut > 0], cut[cut > 0]))
                    new = np.flatnonzero(mark[ent.nbr] < 0)
                    new = new[self.index.order(ent.owner[new], ent.nbr[new], ent.eid[new],
                                               ent.dir[new])]
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

    def path(self, seeds, steps: list[list[tuple[int, int]]], cap: int | None,
             last_keep: Callable | None = None) -> Walk:
        """Every walk that matches ``steps`` (lists per step) from the seeds, pruned to complete
        ones. A neighbour is eligible at an inner step only when it has an edge for the next
        step (checked before the cap); ``last_keep`` filters the end nodes."""
        layer = distinct(np.asarray(seeds, dtype=np.int32))
        entries, cuts = [], []
        for i, lists in enumerate(steps):
            if i + 1 < len(steps):
                keep = lambda nbr, nxt=steps[i + 1]: self.degree(nbr, nxt) > 0  # noqa: E731
            else:
                keep = last_keep
            ent, cut = self.expand(layer, lists, cap, keep)
            entries.append(ent)
            cuts.append((layer, cut))
            layer = distinct(ent.nbr)
        layers = [layer]
        for i in range(len(steps) - 1, -1, -1):
            entries[i] = entries[i].take(np.isin(entries[i].nbr, layers[0]))
            layers.insert(0, distinct(entries[i].owner))
        kept = [(n[(c > 0) & np.isin(n, layers[i])], c[(c > 0) & np.isin(n, layers[i])])
                for i, (n, c) in enumerate(cuts)]
        return Walk(layers, entries, kept)


def distinct(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` of a 1-d array, without numpy's masked-array module (which
    ``np.unique`` imports on its first call)."""
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if len(a) else a


def enumerate_walks(walk: Walk, seeds: Sequence[int], limit: int) -> tuple[list, int]:
    """Up to ``limit`` complete walks of a path walk (seed order, then rank order), and how many
    there are in all. A walk is a list of steps ``(from node, edge number, direction)``."""
    nxt: list[dict[int, list[tuple[int, int, int]]]] = []
    for ent in walk.entries:
        table: dict[int, list[tuple[int, int, int]]] = {}
        for o, n, e, d in zip(ent.owner.tolist(), ent.nbr.tolist(), ent.eid.tolist(),
                              ent.dir.tolist()):
            table.setdefault(o, []).append((n, e, d))
        nxt.append(table)
    count: dict[int, int] = {}
    for i in range(len(nxt) - 1, -1, -1):
        count = {o: sum(count[n] if i + 1 < len(nxt) else 1 for n, _, _ in outs)
                 for o, outs in nxt[i].items()}
    out: list[list[tuple[int, int, int]]] = []

    def dfs(node: int, i: int, prefix: list[tuple[int, int, int]]) -> None:
        if i == len(nxt):
            out.append(list(prefix))
            return
        for n, e, d in nxt[i].get(node, ()):
            if len(out) >= limit:
                return
            prefix.append((node, e, d))
            dfs(n, i + 1, prefix)
            prefix.pop()

    for s in seeds:
        dfs(s, 0, [])
    return out, sum(count.get(s, 0) for s in seeds)


def end_of(index: AdjacencyIndex, step: tuple[int, int, int]) -> int:
    """The node a step ``(from, edge, direction)`` arrives at."""
    _, eid, d = step
    return int(index.dst[eid] if d == 0 else index.src[eid])
