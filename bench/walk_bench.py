"""Benchmark: what the walk helpers cost next to a plain traversal on the same graph.

Generates a package graph (``--packages`` components, each depending on 5 others chosen
with a fixed seed; one in three dependencies qualified ``dev`` or ``group:tests``), then
times, per query, against the baseline of a plain 2-hop ``dependsOn`` follow walk from the
same seeds in the same run:

* a walk with ``exclude_qualifiers=[dev, test]``: the first (builds the filtered view and its
  index) and later ones (reused);
* seeds written as versioned, differently cased purls (``pkg:npm/@scope/Name@1.2.3``): the
  first (builds the seed index) and later ones;
* a ``--path`` that matches nothing (the abstain is diagnosed) vs one that matches;
* the shortest typed path for a target type (``shortest_path``).

Run: ``python bench/walk_bench.py [--packages 20000] [--queries 50]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from kgbuild import Assertion, KnowledgeGraph, load_schema
from kgbuild.graph.access import Principal
from kgbuild.retrieve.traverse import TraversalSpec, Traverser


def package_graph(n: int, seed: int = 7) -> KnowledgeGraph:
    rng = np.random.default_rng(seed)
    kg = KnowledgeGraph(load_schema("software"))
    ids = [f"pkg:npm/%40s{i % 50}/p{i}" for i in range(n)]
    for i, node in enumerate(ids):
        kg.add_node(node, "Library" if i % 4 else "Service", f"P{i}")
    quals = [(), (), (), (), ("dev",), ("group:tests",)]
    for i, node in enumerate(ids):
        for j in rng.choice(n, 5, replace=False).tolist():
            if j != i:
                kg.add_assertion(Assertion(node, "dependsOn", ids[j], f"p{i}/package.json", "npm",
                                           "2024-01-01T00:00:00Z", 1.0, j % 90 + 1,
                                           evidence=f"p{j}: ^1", qualifiers=frozenset(quals[j % 6])))
    return kg


def per_query(t: Traverser, specs) -> float:
    start = time.perf_counter()
    for s in specs:
        t.run(s)
    return (time.perf_counter() - start) / len(specs) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", type=int, default=20000)
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    kg = package_graph(args.packages)
    t = Traverser(kg, Principal.all_access())
    rng = np.random.default_rng(1)
    picks = rng.choice(args.packages, args.queries + 1, replace=False).tolist()
    ids = [f"pkg:npm/%40s{i % 50}/p{i}" for i in picks]
    follow = dict(follow=["dependsOn"], hops=2)
    base = [TraversalSpec(seeds=[i], **follow) for i in ids]
    per_query(t, base[:3])  # warm up: numpy, merged lists
    baseline = per_query(t, base[1:])
    rows = [("plain 2-hop follow (baseline)", baseline)]
    loose = [f"pkg:npm/@S{i % 50}/P{i}@1.2.3" for i in picks]
    rows.append(("purl seed, first (seed index)", per_query(t, [TraversalSpec(seeds=[loose[0]], **follow)])))
    rows.append(("purl seed, later", per_query(t, [TraversalSpec(seeds=[s], **follow) for s in loose[1:]])))
    first = TraversalSpec(seeds=[ids[0]], exclude_qualifiers=["dev", "test"], **follow)
    rows.append(("filtered, first (view + index)", per_query(t, [first])))
    rows.append(("filtered, later (fewer edges)", per_query(t, [TraversalSpec(
        seeds=[i], exclude_qualifiers=["dev", "test"], **follow) for i in ids[1:]])))
    rows.append(("path that matches (1 step)", per_query(t, [TraversalSpec(seeds=[i], path="dependsOn")
                                                              for i in ids[1:]])))
    rows.append(("path that matches nothing, diagnosed", per_query(t, [TraversalSpec(
        seeds=[i], path="dependsOn/ownedBy") for i in ids[1:]])))
    rows.append(("shortest typed path to Service", per_query(t, [TraversalSpec(
        seeds=[i], types=["Service"], shortest_path=True) for i in ids[1:]])))
    again = per_query(t, base[1:])  # the baseline once more: the run's noise
    once, baseline = baseline, statistics.fmean([baseline, again])
    rows[0] = ("plain 2-hop follow (baseline, 2 rounds)", baseline)
    print(f"{args.packages:,} packages, {len(t.evidence):,} edges, {args.queries} queries each "
          f"(mean per query; ratio = time / baseline; baseline rounds {once:.2f}, "
          f"{again:.2f} ms)")
    for name, ms in rows:
        print(f"  {name:<40} {ms:9.2f} ms  x{ms / baseline:7.2f}")


if __name__ == "__main__":
    main()
