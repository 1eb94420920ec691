"""Store speed: traverse CLI calls, no-change rebuilds and exports, against baselines of the
same run.

Three parts (``--parts traverse,rebuild,export``), each on a catalog from catalog_gen.py
(~10 edges per component):

* traverse: the wall time of ``kgbuild`` CLI calls on a store of ``--traverse`` components
  (10,000: ~100k edges; 100,000: ~1M edges), against two baselines of the same run:
  ``python -c "import kgbuild"`` (the bare start; ``import kgbuild`` is lazy, it loads no
  part) and the same with every exported name loaded (what ``import kgbuild`` loaded before
  it was lazy). Timed: ``kgbuild --help``; a traverse by ID (warm, first after a one-file
  rebuild); a traverse by name (first after a one-file rebuild, warm); the walk by ID
  through an assertion filter (``--min-confidence 0``); the one-file rebuild itself. Every
  one reads the store's read model, kept current by the rebuild (targets: --help and by ID
  within 2x of the bare start; by name after a one-file rebuild of a 1M-edge store under
  3 s; the one-file rebuild under 2 s). ``--baseline REV`` times the same calls with a git
  worktree of ``REV`` on its own copy of the store (made by that code), alternated with
  this tree's. ``--keep DIR`` reuses the catalog and store a run left there.
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

ROOT = Path(__file__).resolve().parent.parent
KGBUILD = [sys.executable, "-m", "kgbuild.cli"]


def run(args: list[str], cwd: Path, tree: Path | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process (the kgbuild of ``tree``, default
    this one); stops on exit code 2 or more."""
    env = {**os.environ, "PYTHONPATH": str(tree)} if tree else None
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code >= 2 or code < 0:
        raise SystemExit(f"{' '.join(args)} failed ({code}): {err.decode()[-500:]}")
    return wall, usage.ru_maxrss / 1024


def timed(args: list[str], cwd: Path, repeat: int, tree: Path | None = None) -> float:
    return statistics.median(run(args, cwd, tree)[0] for _ in range(repeat))


def build(catalog: Path, store: Path, cwd: Path, *extra: str, tree: Path | None = None) -> float:
    return run([*KGBUILD, "build", str(catalog), "--store", str(store), "--timestamp", "0",
                "--no-resolve", *extra], cwd, tree)[0]


def traverse_store(work: Path, n: int) -> tuple[Path, Path]:
    """The catalog and store of ``n`` components under ``work`` (made unless left there)."""
    catalog, store = work / f"cat{n}", work / f"store{n}"
    if not (catalog / "apis.yaml").is_file():
        write_catalog(catalog, n)
    if not (store / "CURRENT").is_file():
        took = build(catalog, store, work, "--no-validate")
        print(f"traverse: built {n:,} components in {took:.1f} s (read model included)")
    return catalog, store


def traverse_calls(work: Path, catalog: Path, store: Path, tree: Path | None) -> dict[str, float]:
    """One round of the traverse part's calls with the kgbuild of ``tree`` (None: this one)."""
    walk = [*KGBUILD, "traverse", "--store", str(store), "--seed", "component:default/comp-00001",
            "--follow", "dependsOn", "--hops", "2", "--format", "json"]
    by_name = [*KGBUILD, "traverse", "--store", str(store), "--name", "comp-00001",
               "--follow", "dependsOn", "--hops", "2", "--format", "json"]
    filtered = [*walk, "--min-confidence", "0"]  # an assertion filter that keeps every edge

    def once(args: list[str]) -> float:
        return run(args, work, tree)[0]

    out = {"bare": once([sys.executable, "-c", "import kgbuild"]),
           "eager": once([sys.executable, "-c", "import kgbuild; [getattr(kgbuild, n) for n in "
                                                "kgbuild.__all__]"]),
           "help": once([*KGBUILD, "--help"])}
    once(walk)  # (the model of this store made, or checked, if it was not)
    out["warm"] = once(walk)
    edited = catalog / "components" / "comp-00002.yaml"
    for key, call in (("after_id", walk), ("after_name", by_name)):
        text = edited.read_text()
        edited.write_text(text.replace("component number", "component (edited) number"))
        out["rebuild" if key == "after_id" else "rebuild_2"] = build(
            catalog, store, work, "--no-validate", tree=tree)
        out[key] = once(call)
        edited.write_text(text)
        build(catalog, store, work, "--no-validate", tree=tree)  # the catalog as it was
    out["rebuild"] = statistics.mean([out["rebuild"], out.pop("rebuild_2")])
    once(by_name)
    out.update(name_warm=once(by_name), filtered=once(filtered))
    return out


LINES = [("bare", "bare `import kgbuild` (lazy)", ""),
         ("eager", "`import kgbuild` + every exported name",
          "(25 names since the front object; the eager start before loaded 81)"),
         ("help", "kgbuild --help", "(target 2x bare)"),
         ("warm", "traverse by ID, warm", "(target 2x bare)"),
         ("rebuild", "one-file rebuild (--no-validate)", "(target < 2 s)"),
         ("after_id", "traverse by ID, first after 1 file", ""),
         ("after_name", "traverse by name, first after 1 file", "(target < 3 s at 1M edges)"),
         ("name_warm", "traverse by name, warm", ""),
         ("filtered", "by ID through a filter, warm", "")]


def bench_traverse(work: Path, n: int, repeat: int, baseline: str | None) -> Path:
    catalog, store = traverse_store(work, n)
    trees: dict[str, tuple[Path | None, Path]] = {"this tree": (None, store)}
    old = None
    if baseline:
        old, copy = work / "baseline-tree", work / f"store{n}-baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old),
                        baseline], check=True, capture_output=True)
        if not copy.is_dir():  # its own store: another read model format may be made there
            shutil.copytree(store, copy, symlinks=True)
        trees[baseline] = (old, copy)
    try:  # the trees alternate, a round of every call each, so load swings hit both alike
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for _ in range(repeat):
            for name, (tree, st) in trees.items():
                rounds[name].append(traverse_calls(work, catalog, st, tree))
        results = {name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
                   for name, runs in rounds.items()}
    finally:
        if old is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           capture_output=True, check=False)
    mine = results["this tree"]
    print(f"traverse, {n:,} components ({', '.join(trees)}; median of {repeat}):")
    for key, what, note in LINES:
        row = "".join(f"  {r[key]:6.2f} s {r[key] / r['bare']:5.1f}x bare" for r in results.values())
        print(f"  {what:<38}{row}  {note}")
    if baseline:
        print("  this tree against " + baseline + ": " + ", ".join(
            f"{key} {mine[key] / results[baseline][key]:.2f}x" for key, _, _ in LINES[2:]))
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
    ap.add_argument("--keep", type=Path, help="work in this folder (kept, and its catalog and "
                    "store reused) instead of a temporary one")
    ap.add_argument("--baseline", metavar="REV", help="also time the traverse part with a git "
                    "worktree of this commit, on its own copy of the store")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    work = args.keep or Path(tempfile.mkdtemp(prefix="kgbuild-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; work in {work}")
    try:
        store = (bench_traverse(work, args.traverse, args.repeat, args.baseline)
                 if "traverse" in parts else None)
        if "rebuild" in parts:
            bench_rebuild(work, args.rebuild, args.repeat)
        if "export" in parts:
            if store is None:  # a store --keep left is reused
                store = traverse_store(work, args.traverse)[1]
            bench_export(work, store, args.repeat, args.formats.split(","))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
