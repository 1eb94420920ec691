"""Incremental rebuild benchmark: one changed file vs a full rebuild of a 10k-component catalog.

    python bench/incremental_bench.py [--components 10000] [--edits 5]

Generates a synthetic Backstage catalog (one file per component, ~10 edges each: owner,
system, 6 dependsOn, 2 consumesApis), builds it into a fresh store (the baseline, measured in
the same run), then edits one component file at a time (owner changed, one dependency
removed) and times the rebuild. Prints medians and the incremental/full ratio.
Targets: one-file rebuild under 1% of the full rebuild and under 0.5 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalog_gen import write_catalog  # noqa: E402

from kgbuild.project.pipeline import build_graph  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--components", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, store = Path(tmp) / "catalog", Path(tmp) / "store"
        files = write_catalog(root, args.components)

        summary_times = []

        def build():
            result = build_graph([root], store=store, validate=False, timestamp=0)
            t, summary = timed(result.summary)
            summary_times.append(t)
            result.store.close()
            return summary

        def rebuild_only():  # the store update alone, without the summary's counting queries
            result = build_graph([root], store=store, validate=False, timestamp=0)
            changed = result.changes["changed"]
            result.store.close()
            return changed

        full_s, summary = timed(build)
        print(f"catalog: {args.components:,} components, {summary['documents']:,} documents, "
              f"{summary['entities']:,} entities, {summary['edges']:,} edges, "
              f"{summary['assertions']:,} assertions")
        print(f"full build (fresh store):           {full_s:8.3f} s")
        noop_s, _ = timed(build)
        print(f"rebuild, nothing changed:           {noop_s:8.3f} s   ratio {noop_s / full_s:.4f}")
        times = []
        for k in range(args.edits):
            f = files[(k * 997) % len(files)]
            text = f.read_text()
            lines = text.splitlines(keepends=True)
            dep = next(i for i, line in enumerate(lines) if line.startswith("    - component:"))
            del lines[dep]
            f.write_text("".join(lines).replace("owner: team-", "owner: other-team-"))
            t, s = timed(build)
            assert s["documents_changed"]["changed"] == 1, s["documents_changed"]
            times.append(t)
        inc = statistics.median(times)
        print(f"rebuild + summary, one file changed (median of {args.edits}, min {min(times):.3f}, "
              f"max {max(times):.3f}): {inc:8.3f} s   "
              f"ratio {inc / full_s:.4f}  (target < 0.01 and < 0.5 s)")
        only = []
        for k in range(args.edits):
            f = files[(k * 991 + 13) % len(files)]
            f.write_text(f.read_text().replace("owner: team-", "owner: third-team-"))
            t, changed = timed(rebuild_only)
            assert len(changed) == 1
            only.append(t)
        inc_only = statistics.median(only)
        print(f"store update only, one file changed (median of {args.edits}, min {min(only):.3f}, "
              f"max {max(only):.3f}): {inc_only:8.3f} s   "
              f"ratio {inc_only / full_s:.4f}; summary counts alone: "
              f"{statistics.median(summary_times):.3f} s")
        f = files[1]
        f.write_text(f.read_text().replace("owner: team-", "owner: cli-team-"))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kgbuild.cli", "build", str(root), "--store", str(store),
                        "--timestamp", "0", "--no-validate", "--format", "json"],
                       check=True, capture_output=True)
        cli = time.perf_counter() - start
        print(f"same, as a fresh `kgbuild build` process (incl. interpreter start and imports): {cli:.3f} s")


if __name__ == "__main__":
    main()
