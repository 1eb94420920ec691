"""One-file rebuilds told the file, this checkout against another, interleaved (same load).

    python bench/told_bench.py WORK N --baseline TREE [--runs 3] [--variants told,...]

``WORK`` holds ``estate_bench.py``'s ``catN/`` and ``storeN/``. Each checkout rebuilds its
own copy of the store (``storeN-told-new``, ``storeN-told-base``: the database's immutable
files hard-linked, every other file copied, so a copy costs seconds and little disk; the
read model's files are never changed once written), told component 2's file after three
edits (edited, as it was, edited; then built as it was again), variant by variant, this
checkout first, then ``--baseline`` (another checkout, e.g. ``git worktree add``): with
``--timestamp 0`` (``told``), with real times (``told, real time``: what a user runs) and
with a ``dependsOn`` line added (``told, an edge added``); with ``--walk``, then a walk
(``traverse --hops 2``, a fresh process) right after a told rebuild, and one after that.
Prints per variant and checkout the median wall time, its CPU and the peak RSS, and the
ratio of the two in the same run.
The copies are left for the next run (``--fresh`` makes them again); the first rebuild of a
copy may convert a model written by older code, so ``--warm`` rebuilds each copy once first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalog_gen import component_path  # noqa: E402
from estate_bench import Runner, depending, described, kgbuild, told_rebuilds  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
VARIANTS = {"told": (True, described), "real-time": (False, described),
            "edge-added": (True, depending)}


def linked_copy(store: Path, copy: Path) -> None:
    """``copy`` a store: the database's table files (``*.sst``, never changed once written)
    and the read model's column files hard-linked, every other file copied."""
    shutil.rmtree(copy, ignore_errors=True)
    for root, _, files in os.walk(store):
        rel = Path(root).relative_to(store)
        (copy / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            src = Path(root) / name
            if name.endswith(".sst") or (rel.parts[:1] == ("model",) and name.endswith(".npy")):
                os.link(src, copy / rel / name)
            elif not name.endswith(".lock"):
                shutil.copy2(src, copy / rel / name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("n", type=int, help="the estate's components (its catN and storeN)")
    ap.add_argument("--baseline", type=Path, required=True, help="the other checkout")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--fresh", action="store_true", help="copy the store again")
    ap.add_argument("--warm", action="store_true", help="rebuild each copy once first")
    ap.add_argument("--walk", action="store_true", help="also walks after a told rebuild")
    args = ap.parse_args()
    work = args.work.resolve()
    catalog, store = work / f"cat{args.n}", work / f"store{args.n}"
    edited = component_path(catalog, 2, 1000)
    sides = {"this": (REPO, work / f"store{args.n}-told-new"),
             "baseline": (args.baseline.resolve(), work / f"store{args.n}-told-base")}
    for _, copy in sides.values():
        if args.fresh or not copy.is_dir():
            linked_copy(store, copy)
    text = edited.read_text()
    try:
        for name in args.variants.split(","):
            zero, edit = VARIANTS[name]
            got = {}
            for side, (tree, copy) in sides.items():
                runner = Runner(work, tree, 20 * 1024, 3600)
                build = kgbuild("build", str(catalog), "--store", str(copy), "--no-resolve",
                                "--no-validate", *(["--timestamp", "0"] if zero else []))
                if args.warm:
                    runner.run([*build, "--changed", str(edited)])
                load = os.getloadavg()[0]
                wall, peak = told_rebuilds(runner, build, edited, args.runs, edit)
                got[side] = wall
                runs = " ".join(f"{w:.2f}" for w in runner.walls)
                print(f"{name:20s} {side:8s}: {wall:6.2f} s, {runner.cpu:6.2f} s CPU, "
                      f"{peak:6,.0f} MiB (load {load:.1f}; runs {runs})", flush=True)
                runner.run([*build, "--changed", str(edited)])  # (the file as it was)
            print(f"{name:20s} this / baseline: {got['this'] / got['baseline']:.2f}x",
                  flush=True)
        if args.walk:
            walks(sides, catalog, edited, text)
    finally:
        edited.write_text(text)


def walks(sides: dict, catalog: Path, edited: Path, text: str) -> None:
    """Per checkout, a walk right after a told rebuild and the walk after it (fresh
    processes), and the ratios of the two checkouts' first walks."""
    first = {}
    for side, (tree, copy) in sides.items():
        runner = Runner(copy.parent, tree, 20 * 1024, 3600)
        build = kgbuild("build", str(catalog), "--store", str(copy), "--no-resolve",
                        "--no-validate", "--timestamp", "0", "--changed", str(edited))
        walk = kgbuild("traverse", "--store", str(copy), "--name", "comp-00001", "--follow",
                       "dependsOn", "--hops", "2", "--format", "json")
        edited.write_text(described(text, 9))
        runner.run(build)
        for label in ("first walk", "next walk"):
            wall, peak = runner.run(walk)
            first.setdefault(side, wall)
            print(f"{label:20s} {side:8s}: {wall:6.2f} s, {runner.cpu:6.2f} s CPU, "
                  f"{peak:6,.0f} MiB", flush=True)
        edited.write_text(text)
        runner.run(build)
    print(f"{'first walk':20s} this / baseline: {first['this'] / first['baseline']:.2f}x",
          flush=True)


if __name__ == "__main__":
    main()
