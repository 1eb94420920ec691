"""Benchmark: `kgbuild schema import` on deep subclass hierarchies with two parents per class.

Writes Turtle ontologies of n classes (plus one object property) in three shapes, then times
reading the file alone (the baseline: rdflib's Turtle parse, linear in the file) and the
whole import (read, name, pick parents, check the draft with the loader, write the YAML):

* ``chain``: ``C_i rdfs:subClassOf C_{i-1}, C_{i-2}`` (the second parent is redundant);
* ``ladder``: two chains, ``X_i`` and ``Y_i`` each a subclass of ``X_{i-1}`` and ``Y_{i-1}``
  (a note per class: one parent kept);
* ``cycle``: the chain with ``C_0 rdfs:subClassOf C_{n-1}`` (every class in one cycle).

Each row prints the import's time over the parse's and the growth from the previous size:
about 2 per doubling is linear, 4 quadratic.

Run: ``python bench/schema_import_bench.py [--sizes 1000,2000,4000,8000] [--shapes chain,ladder,cycle]``
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rdflib import Graph

from kgbuild.schema.importer import import_ontology

HEAD = ("@prefix ex: <http://bench.example/o#> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\nex:p a owl:ObjectProperty .\n")


def ontology(shape: str, n: int) -> str:
    """The Turtle text of ``shape`` with ``n`` classes."""
    lines = [HEAD]
    if shape == "ladder":
        for i in range(n // 2):
            for c in "XY":
                sup = f" ; rdfs:subClassOf ex:X{i - 1}, ex:Y{i - 1}" if i else ""
                lines.append(f"ex:{c}{i} a owl:Class{sup} .\n")
        return "".join(lines)
    for i in range(n):
        sups = [f"ex:C{j}" for j in (i - 1, i - 2) if j >= 0]
        if shape == "cycle" and i == 0:
            sups = [f"ex:C{n - 1}"]
        lines.append(f"ex:C{i} a owl:Class" + (f" ; rdfs:subClassOf {', '.join(sups)}" if sups else "")
                     + " .\n")
    return "".join(lines)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,2000,4000,8000", help="class counts, comma-separated")
    ap.add_argument("--shapes", default="chain,ladder,cycle")
    args = ap.parse_args()
    print(f"{'shape':>7} {'classes':>8} {'parse s':>8} {'import s':>9} {'import/parse':>13} {'growth':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            before = None
            for n in (int(s) for s in args.sizes.split(",")):
                path = Path(tmp) / f"{shape}{n}.ttl"
                path.write_text(ontology(shape, n))
                parse = timed(lambda: Graph().parse(path, format="turtle"))
                full = timed(lambda: import_ontology(path).to_yaml())
                growth = f"{full / before:6.2f}x" if before else f"{'-':>7}"
                print(f"{shape:>7} {n:>8,} {parse:8.2f} {full:9.2f} {full / parse:12.1f}x {growth}",
                      flush=True)
                before = full


if __name__ == "__main__":
    main()
