"""Validation benchmark: kgbuild's fast engine against pyshacl on the same data and shapes.

    python bench/validate_bench.py [--sizes 10000,100000,1000000] [--pyshacl-cap 300]
                                   [--errors 0.01] [--no-incremental] [--incremental-size N]
    python bench/validate_bench.py --stores DIR[,DIR...] [--previous TREE] [--rounds 1]

For each size, generates the synthetic Backstage catalog (bench/catalog_gen.py) with enough
components for about that many triples, builds it (provenance-carrying: every edge has its
assertion), exports N-Triples and injects errors of every kind into about ``--errors`` of the
assertions and nodes (wrong type at an edge's range, a second type, a missing label, a bare
edge without assertion, a missing source, an ill-typed / out-of-range confidence, an empty
extractor, a literal subject, a missing location, a moved object, a wrong assertion count).
Then validates the file with both engines, each in a forked child (wall time and the child's
peak RSS), pyshacl stopped after ``--pyshacl-cap`` seconds ("> cap"), and prints the ratio
and whether the violation sets are identical. Incremental: builds the largest size (or
``--incremental-size``) into a store, changes one component file and times ``validate_changed`` for that one document
against a full ``validate_store`` of the same store, in the same run.

``--stores``: instead, ``kgbuild validate --store DIR --no-hygiene`` of each built store (a
``catalog_gen`` estate: ``kgbuild build --no-validate``) as a fresh process: wall time, CPU
time and peak RSS, with this tree and, alternated with it (previous first), with the kgbuild
of ``--previous`` (another checkout, e.g. ``git worktree add /tmp/base HEAD~1``).
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing as mp
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pyoxigraph as ox  # noqa: E402
from catalog_gen import write_catalog  # noqa: E402

from kgbuild.project.pipeline import build_graph  # noqa: E402
from kgbuild.schema.loader import load_schema  # noqa: E402
from kgbuild.validate.incremental import validate_changed  # noqa: E402
from kgbuild.validate.validator import validate_file, validate_store  # noqa: E402

TRIPLES_PER_COMPONENT = 125  # measured on catalog_gen's output: ~10 edges with assertions


def inject(nt: Path, out: Path, rate: float, seed: int, schema) -> int:
    """Copy ``nt`` to ``out`` with errors of every kind; how many were injected."""
    db = ox.Store()
    db.bulk_load(path=str(nt), format=ox.RdfFormat.N_TRIPLES)
    rng = random.Random(seed)
    sw, kg = schema.namespace, "https://kgbuild.dev/ns#"
    rdf, prov = "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/ns/prov#"
    assertions = sorted(r["a"].value for r in db.query(f"SELECT ?a WHERE {{ ?a a <{kg}Assertion> }}"))
    nodes = sorted(r["n"].value for r in db.query(
        "SELECT ?n WHERE { ?n <http://purl.org/dc/terms/identifier> ?i }"))
    docs = sorted(r["d"].value for r in db.query(f"SELECT ?d WHERE {{ ?d a <{kg}SourceDocument> }}"))
    def drop(s: str, p: str) -> str:
        return f"DELETE WHERE {{ <{s}> <{p}> ?x }}"

    def swap(s: str, p: str, value: str, into: str | None = None) -> str:
        """``s``'s value of ``p`` dropped, ``value`` given to ``into`` (by default ``s``)."""
        return f"{drop(s, p)} ; INSERT DATA {{ <{into or s}> <{p}> {value} }}"

    ops = [
        lambda a, n: swap(n, rdf + "type", f"<{sw}API>"),
        lambda a, n: f"INSERT DATA {{ <{n}> a <{sw}Group> }}",
        lambda a, n: drop(n, "http://www.w3.org/2000/01/rdf-schema#label"),
        lambda a, n: f"INSERT DATA {{ <{n}> <{sw}dependsOn> <{rng.choice(nodes)}> }}",
        lambda a, n: drop(a, prov + "wasDerivedFrom"),
        lambda a, n: swap(a, kg + "confidence", '"high"^^<http://www.w3.org/2001/XMLSchema#double>'),
        lambda a, n: swap(a, kg + "confidence", "1.5e0"),
        lambda a, n: swap(a, kg + "extractor", '""'),
        lambda a, n: swap(a, rdf + "subject", '"x"'),
        lambda a, n: drop(a, kg + "line"),
        lambda a, n: swap(a, rdf + "object", f"<{rng.choice(nodes)}>"),
        lambda a, n: swap(rng.choice(docs), kg + "assertionCount", "999", rng.choice(docs)),
    ]
    count = max(len(ops), int(len(assertions) * rate))
    for i in range(count):
        db.update(ops[i % len(ops)](rng.choice(assertions), rng.choice(nodes)))
    db.dump(str(out), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    return count


def _child(conn, path: str, engine: str) -> None:
    logging.getLogger("rdflib").setLevel(logging.CRITICAL)  # ill-typed injected literals
    start = time.perf_counter()
    report = validate_file(path, load_schema(), engine=engine)
    took = time.perf_counter() - start
    keys = sorted((r.focus, r.path, r.component, r.value, r.severity, str(r.message)) for r in report.results)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    conn.send((took, peak, report.engine, [tuple(map(str, k)) for k in keys]))


def measure(path: Path, engine: str, cap: float | None):
    """(seconds, peak MB, engine used, result keys) in a forked child, or None past ``cap``."""
    parent, child = mp.Pipe(duplex=False)
    proc = mp.get_context("fork").Process(target=_child, args=(child, str(path), engine))
    proc.start()
    got = parent.recv() if parent.poll(cap) else None
    if got is None:
        proc.kill()
    proc.join()
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000",
                    help="target triple counts, comma-separated")
    ap.add_argument("--pyshacl-cap", type=float, default=300.0, help="seconds before pyshacl is stopped")
    ap.add_argument("--errors", type=float, default=0.01, help="share of assertions damaged")
    ap.add_argument("--no-incremental", action="store_true")
    ap.add_argument("--incremental-size", type=int, default=None,
                    help="triples in the incremental part's store (default: the largest size)")
    ap.add_argument("--stores", help="built stores to validate whole, comma-separated")
    ap.add_argument("--previous", type=Path, help="with --stores: a kgbuild checkout to compare")
    ap.add_argument("--rounds", type=int, default=1, help="with --stores: runs of each tree")
    args = ap.parse_args()
    if args.stores:
        stores([Path(s) for s in args.stores.split(",")], args.previous, args.rounds)
        return
    schema = load_schema()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'triples':>10} {'errors':>7} {'fast s':>8} {'fast MB':>8} {'pyshacl s':>10} "
          f"{'pyshacl MB':>10} {'ratio':>7}  identical")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            n = max(20, size // TRIPLES_PER_COMPONENT)
            root, clean, data = Path(tmp) / f"cat{n}", Path(tmp) / f"clean{n}.nt", Path(tmp) / f"data{n}.nt"
            write_catalog(root, n)
            result = build_graph([root], validate=False, timestamp=0)
            _export(result, clean)
            errors = inject(clean, data, args.errors, size, schema)
            triples = sum(1 for _ in open(data, "rb"))
            fast = measure(data, "fast", None)
            ref = measure(data, "pyshacl", args.pyshacl_cap)
            ref_s = f"{ref[0]:10.2f}" if ref else f"{'> ' + str(int(args.pyshacl_cap)):>10}"
            ref_mb = f"{ref[1]:10.0f}" if ref else f"{'-':>10}"
            ratio = f"{ref[0] / fast[0]:6.1f}x" if ref else f"{'> ' + str(int(args.pyshacl_cap / fast[0])):>6}x"
            same = ("yes" if ref[3] == fast[3] else "NO") if ref else "n/a"
            print(f"{triples:>10,} {errors:>7,} {fast[0]:8.2f} {fast[1]:8.0f} {ref_s} {ref_mb} {ratio}  "
                  f"{same} ({len(fast[3]):,} results, engine {fast[2]})", flush=True)
        if not args.no_incremental:
            incremental(Path(tmp), args.incremental_size or max(sizes), schema)


def stores(paths: list[Path], previous: Path | None, rounds: int) -> None:
    """Whole-store validation of each store, this tree against ``previous``, alternated."""
    trees = [("previous", previous.resolve())] if previous else []
    trees.append(("this tree", Path(__file__).resolve().parent.parent))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'store':<28} {'tree':<10} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9} {'load':>5}")
    for path in paths:
        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in trees}
        for _ in range(rounds):
            for name, tree in trees:
                runs[name].append(_validate_child(path, tree))
                wall, cpu, peak = runs[name][-1]
                print(f"{path.name:<28} {name:<10} {wall:8.1f} {cpu:8.1f} {peak:9,.0f} "
                      f"{os.getloadavg()[0]:5.1f}", flush=True)
        if previous:
            old, new = (min(runs[name]) for name, _ in trees)
            print(f"{path.name:<28} previous / this tree (best of {rounds}): wall "
                  f"{old[0] / new[0]:.2f}x, CPU {old[1] / new[1]:.2f}x, "
                  f"peak {old[2] / new[2]:.2f}x")


def _validate_child(store: Path, tree: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of ``kgbuild validate --store`` run from
    ``tree``; exit code 1 (violations) is an answer, anything above is an error."""
    start = time.perf_counter()
    args = ["validate", "--store", str(store.resolve()), "--no-hygiene"]
    proc = subprocess.Popen([sys.executable, "-m", "kgbuild.cli", *args], cwd=tree,
                            env={**os.environ, "PYTHONPATH": str(tree)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"validate of {store} from {tree} failed: "
                         f"{err[-500:].decode(errors='replace')}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _export(result, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for s, p, o in set(result.store.triples()):
            fh.write(f"{s} {p} {o} .\n")


def incremental(tmp: Path, size: int, schema) -> None:
    """One changed component file in a store of ``size`` triples: validate_changed vs full."""
    n = max(20, size // TRIPLES_PER_COMPONENT)
    root, store = tmp / f"inc{n}", tmp / f"store{n}"
    files = write_catalog(root, n)
    build_graph([root], store=store, validate=False, timestamp=0).store.close()
    text = files[n // 2].read_text().replace("lifecycle: production", "lifecycle: experimental")
    files[n // 2].write_text(text.replace("    - component:", "    - component:x", 1))
    result = build_graph([root], store=store, validate=False, timestamp=0)
    changed = result.changes["changed"]
    start = time.perf_counter()
    part = validate_changed(result.store, changed, before=result.touched)
    inc_s = time.perf_counter() - start
    start = time.perf_counter()
    full = validate_store(result.store)
    full_s = time.perf_counter() - start
    triples = result.store.counts().get("triples") or sum(1 for _ in result.store.quads())
    print(f"\nincremental: {triples:,} quads, {len(changed)} changed document(s): "
          f"validate_changed {inc_s:.3f} s ({part.scope}; {len(part.violations)} violation(s)) vs full "
          f"validate_store {full_s:.2f} s ({len(full.violations)} violation(s)); "
          f"incremental / full {inc_s / full_s:.2f}")
    result.store.close()


if __name__ == "__main__":
    main()
