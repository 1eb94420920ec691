"""Store speed: traverse CLI calls, no-change rebuilds and exports, against baselines of the
same run.

Three parts (``--parts traverse,rebuild,export``), each on a catalog from catalog_gen.py
(~10 edges per component):

* traverse: the wall time of ``kgbuild`` CLI calls on a store of ``--traverse`` components
  (10,000: ~100k edges; 100,000: ~1M edges), against two baselines of the same run:
  ``python -c "import kgbuild"`` (the bare start; ``import kgbuild`` is lazy, it loads no
  part) and the same with every exported name loaded (what ``import kgbuild`` loaded before
  it was lazy). Timed: ``kgbuild --help``; a traverse by ID (warm, first after the full
  build, first after a one-file rebuild); a traverse by name (first after a one-file
  rebuild, warm); the walk by ID through an assertion filter (``--min-confidence 0``: a
  model made from the edge records). Every one reads the store's read model, kept current by
  the rebuild (targets: --help and by ID within 2x of the bare start; by name after a
  one-file rebuild of a 1M-edge store under 3 s).
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
    print(f"traverse: built {n:,} components in {took:.1f} s (read model included)")
    walk = [*KGBUILD, "traverse", "--store", str(store), "--seed", "component:default/comp-00001",
            "--follow", "dependsOn", "--hops", "2", "--format", "json"]
    by_name = [*KGBUILD, "traverse", "--store", str(store), "--name", "comp-00001",
               "--follow", "dependsOn", "--hops", "2", "--format", "json"]
    filtered = [*walk, "--min-confidence", "0"]  # an assertion filter that keeps every edge
    bare = timed([sys.executable, "-c", "import kgbuild"], work, repeat)
    eager = timed([sys.executable, "-c", "import kgbuild; [getattr(kgbuild, n) for n in "
                                         "kgbuild.__all__]"], work, repeat)
    helped = timed([*KGBUILD, "--help"], work, repeat)
    first_new = run(walk, work)[0]  # the build made the read model
    warm = timed(walk, work, repeat)
    edited = catalog / "components" / "comp-00002.yaml"
    rebuilds, after_id, after_name = [], [], []
    for i in range(repeat):
        for times, call in ((after_id, walk), (after_name, by_name)):
            edited.write_text(edited.read_text().replace("component number",
                                                         f"component ({i}) number"))
            rebuilds.append(build(catalog, store, work, "--no-validate"))
            times.append(run(call, work)[0])
            edited.write_text(edited.read_text().replace(f"component ({i}) number",
                                                         "component number"))
    name_warm = timed(by_name, work, repeat)
    filtered_warm = timed(filtered, work, repeat)
    med = statistics.median

    def line(what: str, t: float, note: str = "") -> None:
        print(f"  {what:<38}{t:7.2f} s  {t / bare:5.1f}x bare, {t / eager:4.2f}x eager {note}")

    print(f"  {'bare `import kgbuild` (lazy)':<38}{bare:7.2f} s")
    print(f"  {'`import kgbuild` + every name':<38}{eager:7.2f} s  (the bare start before lazy)")
    line("kgbuild --help", helped, "(target 2x)")
    line("traverse by ID, warm", warm, "(target 2x)")
    line("traverse by ID, first after the build", first_new)
    print(f"  {'one-file rebuild (--no-validate)':<38}{med(rebuilds):7.2f} s  (read model kept)")
    line("traverse by ID, first after 1 file", med(after_id))
    line("traverse by name, first after 1 file", med(after_name), "(target < 3 s at 1M edges)")
    line("traverse by name, warm", name_warm)
    line("by ID through a filter, warm", filtered_warm)
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
