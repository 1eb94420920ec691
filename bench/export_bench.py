"""Export speed: `kgbuild export --format F -o FILE` per format on a generated estate, against
the same export by an older kgbuild and against pyoxigraph's own dump of the store, same run.

The estate is catalog_gen.py's (``--components``, 10,000 by default: ~1.46M quads in the
store), built once with ``kgbuild build --no-validate --no-resolve`` (or ``--store DIR``, a
store already built). For each format, in fresh processes, interleaved so the machine's load
falls on both alike:

* ``new``: this tree's ``kgbuild export`` (the output removed first, else it is current and
  left alone);
* ``old``: the same command from a git worktree of ``--baseline`` (a commit; by default the
  one before the streamed export), on the same store; its file is compared with the new one
  byte for byte;
* the floor, once: ``Store.dump`` of the whole store as N-Quads and as TriG into a file, in
  one call (unsorted, store-internal quads included: what pyoxigraph writes with no grouping,
  sorting or filtering), from a process that imports only pyoxigraph.

Each is the median wall time of ``--repeat`` runs with the child's CPU time (user + system)
and peak RSS; the load average is printed before and after, since the 2-core machine is
shared (CPU seconds are the steadier figure under load). Target: every format < 10 s.

Run: ``python bench/export_bench.py [--components 10000] [--store DIR] [--repeat 3]
[--formats nt,nquads,trig,turtle,jsonld] [--baseline REV] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from catalog_gen import write_catalog  # noqa: E402

BASELINE = "eede2c9^"  # the commit before the streamed export
FLOOR = """
import sys, pyoxigraph as ox
db = ox.Store.read_only(sys.argv[1])
db.dump(sys.argv[2], format={"nquads": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG}[sys.argv[3]])
"""


def run(args: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed: {err.decode()[-800:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def export(tree: Path, store: Path, fmt: str, out: Path) -> tuple[float, float, float]:
    out.unlink(missing_ok=True)  # a current file would be left alone
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return run([sys.executable, "-m", "kgbuild.cli", "export", "--store", str(store),
                "--format", fmt, "-o", str(out)], tree, env)


def database(store: Path) -> Path:
    return store / (store / "CURRENT").read_text().split()[0]


def median(runs: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
            max(r[2] for r in runs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--components", type=int, default=10_000)
    ap.add_argument("--store", type=Path, help="a built store to export (else one is built)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", default="nt,nquads,trig,turtle,jsonld")
    ap.add_argument("--baseline", default=BASELINE, help="git commit of the old export ('' : none)")
    ap.add_argument("--keep", type=Path, help="work in this folder (kept) instead of a temporary one")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="kgbuild-export-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    old = work / "baseline-tree"
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; work in {work}")
    try:
        store = args.store
        if store is None:
            store = work / f"store{args.components}"
            if not (store / "CURRENT").is_file():
                write_catalog(work / f"cat{args.components}", args.components)
                took = run([sys.executable, "-m", "kgbuild.cli", "build",
                            str(work / f"cat{args.components}"), "--store", str(store),
                            "--timestamp", "0", "--no-validate", "--no-resolve"], ROOT)[0]
                print(f"built {args.components:,} components in {took:.1f} s")
        if args.baseline and not old.is_dir():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old),
                            args.baseline], check=True, capture_output=True)
        db = database(store)
        floors = {}
        for fmt in ("nquads", "trig"):
            out = work / f"floor.{fmt}"
            floors[fmt] = median([run([sys.executable, "-c", FLOOR, str(db), str(out), fmt], work)
                                  for _ in range(args.repeat)])
            out.unlink()
        print(f"floor: pyoxigraph Store.dump of the whole store (one call, unsorted, bookkeeping "
              f"included), wall / CPU / peak RSS:")
        for fmt, (wall, cpu, rss) in floors.items():
            print(f"  {fmt:7s} {wall:6.2f} s  {cpu:6.2f} s CPU  {rss:6.0f} MB")
        print(f"{'format':7s} {'new s':>7s} {'CPU s':>6s} {'RSS MB':>7s}   {'old s':>7s} "
              f"{'CPU s':>6s} {'RSS MB':>7s}   {'new/old':>7s} {'new/floor':>9s}  same bytes")
        for fmt in args.formats.split(","):
            new_runs, old_runs = [], []
            for _ in range(args.repeat):
                new_runs.append(export(ROOT, store, fmt, work / f"new.{fmt}"))
                if args.baseline:
                    old_runs.append(export(old, store, fmt, work / f"old.{fmt}"))
            n = median(new_runs)
            line = f"{fmt:7s} {n[0]:7.2f} {n[1]:6.2f} {n[2]:7.0f}"
            if old_runs:
                o = median(old_runs)
                same = filecmp.cmp(work / f"new.{fmt}", work / f"old.{fmt}", shallow=False)
                line += f"   {o[0]:7.2f} {o[1]:6.2f} {o[2]:7.0f}   {n[0] / o[0]:7.2f}"
            else:
                same = None
                line += " " * 34
            floor = floors["trig" if fmt == "trig" else "nquads"][0]
            size = (work / f"new.{fmt}").stat().st_size / 2**20
            print(f"{line} {n[0] / floor:9.2f}  {'' if same is None else same}  ({size:.0f} MB)")
            for f in work.glob(f"*.{fmt}"):
                f.unlink()
    finally:
        if old.is_dir():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           capture_output=True)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
