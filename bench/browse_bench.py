"""Benchmark: looking around a large graph (``kgbuild show``, ``ls``, ``stats``, pictures).

Builds a power-law software graph in memory (fixed seed): Services and Libraries depending on
Libraries (a few libraries are hubs with thousands of dependants), each owned by one of 200
Groups, every edge with one assertion; 5 % of the documents are labelled ``secret``. Then
times, for a public principal:

* ``Browser(kg)`` (the read model of the visible graph, node degrees), against the baseline
  ``Traverser(kg)``, what any traversal of the graph builds first (a Browser is one plus
  the degree of every node);
* ``node()`` of the biggest hub (100 edges listed each way, counts complete), against the
  baseline of a scan of every edge for that node;
* ``stats()``, against the baseline ``kg.counts()`` (counts by type only, which sorts every
  edge again);
* the HTML picture of the hub's neighbourhood (``neighbourhood`` with the default cap of 20,
  then ``render_html``): its size stays bounded however big the hub is.

Run: ``python bench/browse_bench.py [--nodes 20000] [--edges 100000]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from kgbuild import Assertion, KnowledgeGraph, load_schema
from kgbuild.graph.model import SourceDocument
from kgbuild.render.html import render_html
from kgbuild.retrieve.browse import Browser
from kgbuild.retrieve.traverse import Traverser


def generate(n_nodes: int, n_edges: int, seed: int = 20261201) -> KnowledgeGraph:
    rng = np.random.default_rng(seed)
    kg = KnowledgeGraph(load_schema("software"))
    groups = [f"group:default/team-{i:03d}" for i in range(200)]
    comps = [f"component:default/c{i:06d}" for i in range(n_nodes)]
    libs = n_nodes // 3  # the first third are libraries, the rest services
    for i, g in enumerate(groups):
        doc = f"org/team-{i:03d}.yaml"
        kg.add_document(SourceDocument(doc, doc, f"{i:064x}"))
        kg.add_node(g, "Group", f"Team {i}", source=doc)
    for i, c in enumerate(comps):
        doc = f"components/c{i:06d}.yaml"
        secret = frozenset({"secret"}) if rng.random() < 0.05 else frozenset()
        kg.add_document(SourceDocument(doc, doc, f"{i:064x}", secret))
        kg.add_node(c, "Library" if i < libs else "Service", f"Component {i}", source=doc)
        kg.nodes[c].access = set(secret)
        kg.add_assertion(Assertion(c, "ownedBy", groups[int(rng.integers(200))], doc, "backstage",
                                   "2026-01-01T00:00:00Z", line=5, evidence="owner: team",
                                   access=secret))
    weight = np.arange(1, libs + 1, dtype=np.float64) ** -0.9
    targets = rng.choice(libs, n_edges, p=weight / weight.sum())
    sources = rng.integers(0, n_nodes, n_edges)
    for s, o in zip(sources.tolist(), targets.tolist()):
        if s != o:
            doc = f"components/c{s:06d}.yaml"
            kg.add_assertion(Assertion(comps[s], "dependsOn", comps[o], doc, "backstage",
                                       "2026-01-01T00:00:00Z", line=12, evidence=f"- c{o:06d}",
                                       access=kg.documents[doc].access))
    return kg


def timed(fn, repeat: int = 5) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--edges", type=int, default=100_000)
    args = parser.parse_args()
    kg = generate(args.nodes, args.edges)
    print(f"graph: {len(kg.nodes):,} nodes, {len(kg.assertions):,} assertions")
    base, _ = timed(lambda: Traverser(kg), 3)
    t_browser, browser = timed(lambda: Browser(kg), 3)
    model = browser.model
    edges = [model.edge(e) for e in range(len(model.index.src))]
    hub = max(browser.ids(), key=lambda i: (browser.degree(i), i))
    print(f"Browser(kg) {t_browser:.3f} s vs Traverser(kg) {base:.3f} s: "
          f"{t_browser / base:.2f}x  ({len(edges):,} visible edges)")
    t_node, summary = timed(lambda: browser.node(hub))
    t_scan, _ = timed(lambda: [e for e in edges if hub in (e[0], e[2])])
    print(f"node(hub, degree {browser.degree(hub):,}) {t_node * 1000:.1f} ms vs a scan of every "
          f"edge {t_scan * 1000:.1f} ms: {t_scan / t_node:.1f}x faster; listed "
          f"{len(summary['in'])} of {sum(summary['in_counts'].values()):,} incoming")
    t_stats, _ = timed(browser.stats, 3)
    t_counts, _ = timed(kg.counts, 3)
    print(f"stats() {t_stats:.3f} s vs kg.counts() {t_counts:.3f} s: {t_stats / t_counts:.2f}x")
    t_pic, page = timed(lambda: render_html(browser.neighbourhood(hub), kg.schema.node_types), 3)
    print(f"neighbourhood(hub) + render_html {t_pic * 1000:.0f} ms, {len(page):,} bytes "
          f"(cap 20 of {browser.degree(hub):,} edges, hub marked cut: {'hub: +' in page})")


if __name__ == "__main__":
    main()
