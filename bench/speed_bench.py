"""Store speed: traverse CLI calls, no-change rebuilds and exports, against baselines of the
same run.

Three parts (``--parts traverse,rebuild,export``), each on a catalog from catalog_gen.py
(~10 edges per component):

* traverse: the wall time of a ``kgbuild traverse`` CLI call on a store of ``--traverse``
  components (10,000: ~100k edges), warm, first after the full build and first after a
  one-file rebuild (the store's snapshot), against ``python -c "import kgbuild"`` (the bare
  start with kgbuild imported; target: within 3x), and the same walk through the whole graph
  (``--min-confidence 0``: what every call did before the snapshot).
* rebuild: a no-change ``kgbuild build -o graph.ttl`` of ``--rebuild`` components (1,000),
  default against ``--no-validate``. Target: under 2x.
* export: ``kgbuild export --format F -o FILE`` per format on the traverse store, against
  the same store's ``kgbuild query 'ASK { ?s ?p ?o }'`` (start, open, one lookup); peak RSS
  and file size too.

Every timing is the median of ``--repeat`` runs of a fresh process; the machine's load
average is printed, since other processes share its cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from catalog_gen import write_catalog  # noqa: E402

KGBUILD = [sys.executable, "-m", "kgbuild.cli"]


def run(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process; stops on exit code 2 or more."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code >= 2 or code < 0:
        raise SystemExit(f"{' '.join(args)} failed ({code}): {err.decode()[-500:]}")
    return wall, usage.ru_maxrss / 1024


def timed(args: list[str], cwd: Path, repeat: int) -> float:
    return statistics.median(run(args, cwd)[0] for _ in range(repeat))


def build(catalog: Path, store: Path, cwd: Path, *extra: str) -> float:
    return run([*KGBUILD, "build", str(catalog), "--store", str(store), "--timestamp", "0",
                "--no-resolve", *extra], cwd)[0]


def bench_traverse(work: Path, n: int, repeat: int) -> Path:
    catalog, store = work / f"cat{n}", work / f"store{n}"
    write_catalog(catalog, n)
    took = build(catalog, store, work, "--no-validate")
    print(f"traverse: built {n:,} components in {took:.1f} s (snapshot included)")
    walk = [*KGBUILD, "traverse", "--store", str(store), "--seed", "component:default/comp-00001",
            "--follow", "dependsOn", "--hops", "2", "--format", "json"]
    # the same walk through the whole graph (an assertion filter that keeps every edge)
    whole = [*walk, "--min-confidence", "0"]
    bare = timed([sys.executable, "-c", "import kgbuild"], work, repeat)
    first_new = run(walk, work)[0]  # the build made the snapshot
    warm = timed(walk, work, repeat)
    run(whole, work)  # reads the new generation into cache/ once
    whole_warm = timed(whole, work, repeat)
    edited = catalog / "components" / "comp-00002.yaml"
    times = []
    for i in range(repeat):
        edited.write_text(edited.read_text().replace("component number", f"component ({i}) number"))
        times.append(build(catalog, store, work, "--no-validate"))
        times.append(run(walk, work)[0])
    rebuild, after_edit = statistics.median(times[::2]), statistics.median(times[1::2])
    edited.write_text(edited.read_text().replace("component (", "component again ("))
    build(catalog, store, work, "--no-validate")
    whole_after = run(whole, work)[0]
    print(f"  bare `import kgbuild`            {bare:7.2f} s")
    print(f"  traverse, warm                   {warm:7.2f} s  {warm / bare:5.1f}x bare (target 3x)")
    print(f"  traverse, first after full build {first_new:7.2f} s  {first_new / bare:5.1f}x bare")
    print(f"  one-file rebuild (--no-validate) {rebuild:7.2f} s  (snapshot brought up to date)")
    print(f"  traverse, first after 1-file edit{after_edit:7.2f} s  {after_edit / bare:5.1f}x bare (target 3x)")
    print(f"  the same walk on the whole graph: warm {whole_warm:.2f} s ({whole_warm / bare:.1f}x), "
          f"first after a 1-file edit {whole_after:.2f} s ({whole_after / bare:.1f}x)")
    return store


def bench_rebuild(work: Path, n: int, repeat: int) -> None:
    catalog, store, out = work / f"rcat{n}", work / f"rstore{n}", work / "graph.ttl"
    write_catalog(catalog, n)
    took = build(catalog, store, work, "-o", str(out))
    print(f"rebuild: first build of {n:,} components (default) {took:.1f} s")
    default = statistics.median(build(catalog, store, work, "-o", str(out)) for _ in range(repeat))
    quick = statistics.median(build(catalog, store, work, "-o", str(out), "--no-validate")
                              for _ in range(repeat))
    print(f"  no-change rebuild --no-validate  {quick:7.2f} s")
    print(f"  no-change rebuild (default)      {default:7.2f} s  {default / quick:5.1f}x (target < 2x)")


def bench_export(work: Path, store: Path, repeat: int, formats: list[str]) -> None:
    ask = timed([*KGBUILD, "query", "ASK { ?s ?p ?o }", "--store", str(store)], work, repeat)
    print(f"export from {store.name}: baseline `kgbuild query ASK` {ask:.2f} s")
    for fmt in formats:
        out = work / f"export.{fmt}"
        runs = []
        for _ in range(repeat):
            out.unlink(missing_ok=True)  # a current file would be left alone
            runs.append(run([*KGBUILD, "export", "--store", str(store), "--format", fmt,
                             "-o", str(out)], work))
        wall = statistics.median(r[0] for r in runs)
        peak = max(r[1] for r in runs)
        size = out.stat().st_size / 2**20
        print(f"  {fmt:7s} {wall:7.2f} s  {wall / ask:5.1f}x baseline  file {size:6.1f} MB  "
              f"peak RSS {peak:6.0f} MB")
    again = run([*KGBUILD, "export", "--store", str(store), "-o", str(work / "export.turtle")], work)[0]
    print(f"  turtle, file already current {again:7.2f} s  {again / ask:5.1f}x baseline")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="traverse,rebuild,export")
    ap.add_argument("--traverse", type=int, default=10_000, help="components of the traverse/export store")
    ap.add_argument("--rebuild", type=int, default=1_000, help="components of the rebuild catalog")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", default="nt,nquads,trig,turtle,jsonld")
    ap.add_argument("--keep", type=Path, help="work in this folder (kept) instead of a temporary one")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    work = args.keep or Path(tempfile.mkdtemp(prefix="kgbuild-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; work in {work}")
    try:
        store = bench_traverse(work, args.traverse, args.repeat) if "traverse" in parts else None
        if "rebuild" in parts:
            bench_rebuild(work, args.rebuild, args.repeat)
        if "export" in parts:
            if store is None:  # a store --keep left is reused
                store = work / f"store{args.traverse}"
                if not store.is_dir():
                    write_catalog(work / f"cat{args.traverse}", args.traverse)
                    build(work / f"cat{args.traverse}", store, work, "--no-validate")
            bench_export(work, store, args.repeat, args.formats.split(","))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
