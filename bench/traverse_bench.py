"""Benchmark: typed, capped multi-hop expansion, kgbuild CSR index vs. rdflib ``triples()``.

Generates power-law graphs (Chung-Lu weights, so a few hubs hold tens of thousands of
edges) of 10k, 100k and 1M edges over six edge types with a fixed seed, then times the
same walk both ways for 1, 2 and 3 hops: follow ``e0:both`` and ``e1:in``, at most 50 edges
per node per hop chosen by the cap ranking, never walking back along the arriving edge.
The rdflib walk reads neighbours with ``triples()`` and ranks them with the same key from
plain dicts; both must reach the same nodes at every hop (checked for every seed).

Run: ``python bench/traverse_bench.py [--sizes 10000,100000,1000000] [--seeds 200]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from rdflib import Graph, URIRef

from kgbuild.retrieve.walk import Walker
from kgbuild.store.adjacency import AdjacencyIndex, csr_lists
from kgbuild.store.strings import Strings

EDGE_TYPES = [f"e{i}" for i in range(6)]
FOLLOW = [(0, 0), (0, 1), (1, 1)]  # e0 both ways, e1 inward
CAP = 50
NS = "http://bench.example/"


def generate(n_edges: int, seed: int = 20240607):
    """Edge arrays of a directed multi-type power-law graph (duplicates removed)."""
    rng = np.random.default_rng(seed)
    n = max(n_edges // 5, 10)
    rank = np.arange(1, n + 1, dtype=np.float64)
    heavy, light = rank ** -0.8, rank ** -0.45
    src = rng.permutation(n)[rng.choice(n, n_edges, p=light / light.sum())]
    dst = rng.permutation(n)[rng.choice(n, n_edges, p=heavy / heavy.sum())]
    et = rng.choice(len(EDGE_TYPES), n_edges, p=[0.3, 0.25, 0.15, 0.15, 0.1, 0.05])
    ok = src != dst
    key = np.unique((et[ok].astype(np.int64) * n + src[ok]) * n + dst[ok])
    et, rest = key // (n * n), key % (n * n)
    src, dst = rest // n, rest % n
    conf = rng.choice([1.0, 0.9, 0.7], len(key), p=[0.7, 0.2, 0.1])
    recency = rng.integers(0, 365, len(key))
    ids = [f"n{i:07d}" for i in range(n)]
    return ids, src, dst, et, conf, recency


def rdflib_graph(ids, src, dst, et) -> Graph:
    g = Graph()
    nodes = [URIRef(NS + i) for i in ids]
    preds = [URIRef(NS + p) for p in EDGE_TYPES]
    for s, t, o in zip(src.tolist(), et.tolist(), dst.tolist()):
        g.add((nodes[s], preds[t], nodes[o]))
    return g


class RdflibWalk:
    """The same semantics over rdflib: triples() lookups, ranking from dicts."""

    def __init__(self, g, ids, src, dst, et, conf, recency):
        self.g, self.ids = g, ids
        self.node = {URIRef(NS + i): k for k, i in enumerate(ids)}
        self.preds = [URIRef(NS + p) for p in EDGE_TYPES]
        deg = np.bincount(src, minlength=len(ids)) + np.bincount(dst, minlength=len(ids))
        self.deg = deg.tolist()
        self.edge = {(s, t, o): (-c, -r) for s, t, o, c, r in
                     zip(src.tolist(), et.tolist(), dst.tolist(), conf.tolist(), recency.tolist())}

    def run(self, seed: int, hops: int) -> list[set[int]]:
        g, node, uri = self.g, self.node, URIRef(NS + self.ids[seed])
        reached, layers = {seed}, [{seed}]
        frontier = [(seed, uri, None)]
        for _ in range(hops):
            best: dict[int, tuple] = {}
            for u, u_uri, back in frontier:
                cands = []
                for t, d in FOLLOW:
                    pattern = (u_uri, self.preds[t], None) if d == 0 else (None, self.preds[t], u_uri)
                    for s_, _, o_ in g.triples(pattern):
                        v = node[o_] if d == 0 else node[s_]
                        e = (u, t, v) if d == 0 else (v, t, u)
                        if e == back:
                            continue
                        c, r = self.edge[e]
                        cands.append(((c, r, self.deg[v], v, t, d, u), v, e, o_ if d == 0 else s_))
                cands.sort()
                for key, v, e, v_uri in cands[:CAP]:
                    if v not in reached and (v not in best or key < best[v][0]):
                        best[v] = (key, e, v_uri)
            reached.update(best)
            layers.append(set(best))
            frontier = [(v, v_uri, e) for v, (_, e, v_uri) in best.items()]
        return layers


def kgbuild_layers(walker: Walker, seed: int, hops: int) -> list[set[int]]:
    layers = walker.follow(np.array([seed]), FOLLOW, hops, CAP).layers
    return [set(x.tolist()) for x in layers] + [set()] * (hops + 1 - len(layers))


def timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--seeds", type=int, default=200)
    args = ap.parse_args()
    print(f"typed expansion {FOLLOW} (edge type code, 0 out / 1 in), cap {CAP}, "
          f"{args.seeds} seeds; times in ms")
    for size in (int(x) for x in args.sizes.split(",")):
        ids, src, dst, et, conf, rec = generate(size)
        t = time.perf_counter()
        src, dst, et = src.astype(np.int32), dst.astype(np.int32), et.astype(np.int16)
        lists = csr_lists(len(ids), len(EDGE_TYPES), src, dst, et, conf, rec)
        index = Walker(AdjacencyIndex(Strings.of(ids), np.zeros(len(ids), np.int16), ["Node"],
                                      EDGE_TYPES, src, dst, et, lists, conf, rec))
        build_s = time.perf_counter() - t
        nbytes = sum(a.nbytes for c in lists.values() for a in (c.indptr, c.nbr, c.eid, c.rank))
        t = time.perf_counter()
        index.merged(FOLLOW)
        merge_s = time.perf_counter() - t
        t = time.perf_counter()
        g = rdflib_graph(ids, src, dst, et)
        load_s = time.perf_counter() - t
        base = RdflibWalk(g, ids, src, dst, et, conf, rec)
        deg = np.bincount(src, minlength=len(ids)) + np.bincount(dst, minlength=len(ids))
        has = index.degree(np.arange(len(ids)), FOLLOW) > 0
        seeds = np.random.default_rng(1).choice(np.flatnonzero(has), args.seeds, replace=False)
        print(f"\n{len(src):,} edges, {len(ids):,} nodes, max degree {deg.max():,}: index build "
              f"{build_s:.2f} s ({nbytes / 1e6:.0f} MB) + merged list for the follow set "
              f"{merge_s:.2f} s; rdflib load {load_s:.1f} s")
        print(f"{'hops':>4} {'kg med':>8} {'kg p90':>8} {'rdf med':>9} {'rdf p90':>9} "
              f"{'ratio med':>9} {'nodes med':>9}")
        for hops in (1, 2, 3):
            for s in seeds[:5]:  # warm-up, and the equality check on every seed below
                kgbuild_layers(index, int(s), hops)
            kg_ms, rdf_ms, sizes = [], [], []
            for s in seeds.tolist():
                kg_ms.append(timed(index.follow, np.array([s]), FOLLOW, hops, CAP))
                rdf_ms.append(timed(base.run, s, hops))
                layers = kgbuild_layers(index, s, hops)
                if layers != base.run(s, hops):
                    raise SystemExit(f"mismatch at seed {s}, {hops} hops")
                sizes.append(sum(map(len, layers)))
            q = lambda xs, p: float(np.percentile(xs, p))  # noqa: E731
            print(f"{hops:>4} {q(kg_ms, 50):8.3f} {q(kg_ms, 90):8.3f} {q(rdf_ms, 50):9.3f} "
                  f"{q(rdf_ms, 90):9.3f} {q(rdf_ms, 50) / q(kg_ms, 50):8.1f}x "
                  f"{statistics.median(sizes):9.0f}")


if __name__ == "__main__":
    main()
