"""Benchmark: walks of a foreign graph file (`kgbuild traverse --graph FILE`), first and later,
and the same file loaded into a store (`kgbuild load`).

Generates a MetaQA-like movie graph in N-Triples (``--movies`` movies, each directed, written,
starring two people and a genre; about 8 triples a movie: 32,000 movies give 256k triples),
infers its schema (`kgbuild schema infer`, against an rdflib parse of the file: what
inference read the file into before it read pyoxigraph's quads as plain rows), then times, in the same run, each in a fresh
process, CPU (user + system) and wall time:

* the baseline: a bare ``python -c "import kgbuild"``, and the floor of a walk: the
  libraries its start-up imports (numpy for the columns, click, yaml for the schema,
  pyoxigraph for its IRI check), alone and together;
* the first walk of the file (parsed, its read model made and cached per content);
* later walks (the cached read model; the file's stat says it is unchanged, so it is not
  even hashed again), and a later ``show`` of the seed;
* a later walk after the file was touched (same content, new mtime: hashed, model reused);
* ``kgbuild load FILE`` into a new store (bulk-loaded, read model made), against
  pyoxigraph's own ``Store.bulk_load`` of the file into a new store; a second ``load`` of
  the same file (nothing to do); walks of the loaded store (``traverse --store``).

The cache goes to a temporary ``$XDG_CACHE_HOME``. The target (issue 27): a later walk within
3x of the bare import.

Run: ``python bench/graphfile_bench.py [--movies 32000] [--runs 5]``
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

E, V = "http://example.org/movie/", "http://example.org/vocab#"
TYPE, LABEL = ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
               "http://www.w3.org/2000/01/rdf-schema#label")


def movie_graph(path: Path, movies: int, seed: int = 7) -> int:
    """Write the graph; the number of triples."""
    rng = random.Random(seed)
    people = [f"person{i}" for i in range(movies // 2)]
    lines = []
    for p in people:
        lines += [f"<{E}{p}> <{TYPE}> <{V}Person> .", f'<{E}{p}> <{LABEL}> "Person {p[6:]}" .']
    for g in range(30):
        lines += [f"<{E}genre{g}> <{TYPE}> <{V}Genre> .", f'<{E}genre{g}> <{LABEL}> "Genre {g}" .']
    for i in range(movies):
        m = f"<{E}movie{i}>"
        lines += [f"{m} <{TYPE}> <{V}Movie> .", f'{m} <{LABEL}> "Movie {i}" .',
                  f"{m} <{V}directedBy> <{E}{rng.choice(people)}> .",
                  f"{m} <{V}writtenBy> <{E}{rng.choice(people)}> ."]
        lines += [f"{m} <{V}starring> <{E}{a}> ." for a in rng.sample(people, 2)]
        lines.append(f"{m} <{V}hasGenre> <{E}genre{rng.randrange(30)}> .")
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def timed(argv: list[str], env: dict) -> tuple[float, float]:
    """(CPU seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--movies", type=int, default=32000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        graph, schema = tmp / "movies.nt", tmp / "movies.yaml"
        triples = movie_graph(graph, args.movies)
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # (start-up with bytecode, as installed)
        floor_env = {"OPENBLAS_NUM_THREADS": "1", **env}  # (as a walk imports numpy)
        py, kgbuild = [sys.executable], [sys.executable, "-m", "kgbuild"]
        infer = [timed([*kgbuild, "schema", "infer", str(graph), "-o", str(schema)], env)]
        rdflib_parse = [timed([*py, "-c", "import rdflib, sys; rdflib.Graph().parse(sys.argv[1])",
                               str(graph)], env)]
        seed = ["--schema", str(schema), "--seed", f"{E}movie1"]
        walk = [*kgbuild, "traverse", "--graph", str(graph), *seed, "--hops", "2", "--format",
                "json"]
        show = [*kgbuild, "show", f"{E}movie1", "--graph", str(graph), "--schema", str(schema)]
        store, ox_store = tmp / "store", tmp / "ox-store"
        load = [*kgbuild, "load", str(graph), "--schema", str(schema), "--store", str(store)]
        bulk = [*py, "-c", "import pyoxigraph as ox, sys; s = ox.Store(sys.argv[1]); "
                "s.bulk_load(path=sys.argv[2], format=ox.RdfFormat.N_TRIPLES); s.flush()",
                str(ox_store), str(graph)]
        stored = [*kgbuild, "traverse", "--store", str(store), *seed, "--hops", "2", "--format",
                  "json"]
        past = time.time() - 3600  # (an hour old: out of the racy window)
        os.utime(graph, (past, past))
        runs = range(args.runs)
        rows = {"bare import kgbuild": [timed([*py, "-c", "import kgbuild"], env) for _ in runs],
                "floor: import numpy": [timed([*py, "-c", "import numpy"], floor_env)
                                        for _ in runs],
                "floor: import click numpy yaml pyoxigraph": [
                    timed([*py, "-c", "import click, numpy, yaml, pyoxigraph"], floor_env)
                    for _ in runs],
                "first walk": [timed(walk, env)]}
        rows["later walk"] = [timed(walk, env) for _ in runs]
        rows["later show"] = [timed(show, env) for _ in runs]
        touched = []
        for _ in runs:
            past += 1
            os.utime(graph, (past, past))
            touched.append(timed(walk, env))
        rows["later walk, file touched (hashed)"] = touched
        rows["kgbuild schema infer"] = infer
        rows["rdflib parse (what infer read before)"] = rdflib_parse
        rows["pyoxigraph bulk_load of the file"] = [timed(bulk, env)]
        rows["kgbuild load (new store)"] = [timed(load, env)]
        rows["kgbuild load again (no change)"] = [timed(load, env) for _ in runs]
        rows["walk of the loaded store"] = [timed(stored, env) for _ in runs]
        base = statistics.median(c for c, _ in rows["bare import kgbuild"])
        print(f"{graph.name}: {triples:,} triples, {graph.stat().st_size / 2**20:.1f} MiB; "
              f"median of {args.runs} runs each (first walk, loads into a new store: one); "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'':42} {'CPU s':>7} {'wall s':>7} {'CPU / bare import':>18}")
        for name, samples in rows.items():
            cpu = statistics.median(c for c, _ in samples)
            wall = statistics.median(w for _, w in samples)
            print(f"{name:42} {cpu:7.3f} {wall:7.3f} {cpu / base:17.1f}x")


if __name__ == "__main__":
    main()
