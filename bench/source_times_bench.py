"""The commit times of 10k tracked files (kgbuild.extract.discover.SourceTimes: one git pass
per work tree) against their mtimes (one stat each, the baseline), same run.

    python bench/source_times_bench.py [--files 10000] [--commits 200] [--seed 1]

A git repository of FILES small YAML files in 100 folders is made in a temporary folder with
COMMITS commits, each touching 1 % of the files (the first adds them all); then every file's
time is read both ways, and once more with one file modified (its mtime wins).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgbuild.extract.discover import SourceTimes  # noqa: E402


def git(repo: Path, *args: str, when: int = 1_700_000_000) -> None:
    stamp = f"@{when} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
           "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.org"}
    subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)


def make_repo(root: Path, files: int, commits: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    paths = [root / f"team{i % 100:02d}" / f"component-{i:05d}.yaml" for i in range(files)]
    for p in paths:
        p.parent.mkdir(exist_ok=True)
        p.write_text(f"kind: Component\nname: {p.stem}\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "all")
    for c in range(1, commits):
        for p in rng.sample(paths, max(1, files // 100)):
            p.write_text(p.read_text() + f"# {c}\n")
        git(root, "commit", "-qam", f"c{c}", when=1_700_000_000 + c * 60)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        paths = make_repo(root, args.files, args.commits, args.seed)
        print(f"repo: {args.files} files, {args.commits} commits, made in "
              f"{time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        mtimes = [os.stat(p).st_mtime for p in paths]
        base = time.perf_counter() - t
        t = time.perf_counter()
        times = SourceTimes(paths)
        commits = [times.epoch(p) for p in paths]
        took = time.perf_counter() - t
        assert len(set(commits)) > 1 and all(c >= 1_700_000_000 for c in commits)
        print(f"mtimes (baseline): {base:.3f} s; commit times: {took:.3f} s "
              f"({took / max(base, 1e-9):.0f}x, {took / len(paths) * 1e6:.0f} us a file)")
        paths[0].write_text("changed\n")
        t = time.perf_counter()
        times = SourceTimes(paths)
        again = [times.epoch(p) for p in paths]
        took = time.perf_counter() - t
        assert again[0] == os.stat(paths[0]).st_mtime and again[1:] == commits[1:]
        print(f"one file modified: {took:.3f} s (its mtime used; {len(mtimes)} files)")


if __name__ == "__main__":
    main()
