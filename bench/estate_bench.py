"""An estate at scale: every step of a store's life on catalogs of N components, time and peak
RSS each, the sizes side by side from one run.

    python bench/estate_bench.py [--sizes 10000,100000] [--work DIR] [--per-folder 1000]
                                 [--requests 200] [--tree DIR] [--baseline DIR] [--full-only]

Per size, a catalog from ``catalog_gen.py`` (~10 edges per component, ``--per-folder``
components a folder), then each step as a fresh process (its wall time and its peak RSS from
``os.wait4``):

* full build: ``build_graph`` of the catalog into a new store (``kgbuild build --no-validate
  --no-resolve``), run as a child that logs its progress (documents extracted, phases) with
  times to ``<work>/build-N.log``: a run cut short still gives the rate;
* no-change build and one-file rebuild (a component's description edited): ``kgbuild build``;
  the one-file rebuild again told the edited file (``--changed FILE``: no other file looked
  at), then with real times (no ``--timestamp``: the changed document's edges get a new
  latest time, which their records and ranking read), then with an edge added (a
  ``dependsOn`` line: new edge numbers, the adjacency lists renumbered);
* validate: ``kgbuild validate --store --no-hygiene`` (the whole store's SHACL check, fast
  engine; the hygiene checks' ``undefined`` query alone took longer at 2k components);
* export: ``kgbuild export --format nquads`` to its standard output, which is /dev/null
  (the million-component estate's N-Quads, ~30 GB, beside its ~45 GB store would not fit
  this machine's disk; every size is exported the same way);
* first walk (after the rebuild) and warm walk: ``kgbuild traverse --name ... --hops 2``;
* serve p50: ``kgbuild serve`` on the store, ``--requests`` traversals of
  ``serve_bench.py``'s mix over one keep-alive connection (concurrency 1).

Results are appended to ``<work>/results.jsonl`` as each step ends (with the load average),
and printed as a table at the end. A step whose child goes over ``--max-rss`` GiB or
``--step-timeout`` seconds is killed, recorded as such, and ends the run. ``--tree`` runs
the kgbuild of another checkout (its folder put first on ``PYTHONPATH``), so a long run is
not changed by edits meanwhile. ``--baseline`` runs each size's full build first with another
checkout's kgbuild (``full build (baseline)``), then with this one, and prints the ratios;
``--full-only`` stops each size after its full build.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalog_gen import component_path, write_catalog  # noqa: E402

BUILD_CHILD = """
import sys, time
from kgbuild.project.pipeline import build_graph
start = time.perf_counter()
log = open(sys.argv[3], "w", buffering=1)
def progress(doc, done, total):
    if done % 10000 == 0 or done == total:
        log.write(f"{time.perf_counter() - start:.1f} s extracted {done} of {total}\\n")
def phase(name):
    log.write(f"{time.perf_counter() - start:.1f} s {name}\\n")
r = build_graph([sys.argv[1]], store=sys.argv[2], timestamp=0, validate=False, resolve=False,
                progress=progress, phase=phase)
s = r.summary()
log.write(f"{time.perf_counter() - start:.1f} s done: {s['entities']} entities, "
          f"{s['edges']} edges, {s['assertions']} assertions, {s['problems']} problems\\n")
r.store.close()
"""


class Runner:
    """Child processes of one kgbuild (``tree``: that checkout's), results recorded."""

    def __init__(self, work: Path, tree: Path | None, max_rss: float, timeout: float):
        self.work, self.tree, self.max_rss, self.timeout = work, tree, max_rss, timeout
        self.env = _env(tree)
        self.results: dict[int, dict[str, tuple[float, float]]] = {}
        self.cpu = 0.0  # the last child's user and system seconds
        self.walls: list[float] = []  # the last told_rebuilds' wall times, in turn

    def run(self, args: list[str], ok: int = 1) -> tuple[float, float]:
        """Wall seconds and peak RSS (MiB) of a child (its CPU seconds in ``self.cpu``);
        stops on an exit code above ``ok``. A
        child over ``--max-rss`` or ``--step-timeout`` is killed (recorded, then the run stops):
        the machine is shared, running it out of memory is not an option."""
        start = time.perf_counter()
        err = self.work / "stderr.txt"
        with err.open("wb") as fh:
            proc = subprocess.Popen(args, cwd=self.work, env=self.env,
                                    stdout=subprocess.DEVNULL, stderr=fh)
        killed = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            rss = _rss_mib(proc.pid)
            late = time.perf_counter() - start > self.timeout
            if killed is None and (rss > self.max_rss or late):
                killed = f"killed at {rss:,.0f} MiB after {time.perf_counter() - start:.0f} s"
                proc.kill()
            time.sleep(min(0.5, 0.005 + (time.perf_counter() - start) / 200))  # (fine at first)
        wall, peak = time.perf_counter() - start, usage.ru_maxrss / 1024
        self.cpu = usage.ru_utime + usage.ru_stime
        code = os.waitstatus_to_exitcode(status)
        if killed or code > ok or code < 0:
            why = killed or f"exit {code}: {err.read_text(errors='replace')[-800:]}"
            with (self.work / "results.jsonl").open("a") as fh:
                fh.write(json.dumps({"failed": " ".join(args[:8]), "why": why,
                                     "seconds": round(wall, 1), "peak_mib": round(peak)}) + "\n")
            raise SystemExit(f"{' '.join(args[:8])} ... {why}")
        return wall, peak

    def record(self, n: int, step: str, figures: tuple[float, float]) -> None:
        self.results.setdefault(n, {})[step] = figures
        line = {"components": n, "step": step, "seconds": round(figures[0], 3),
                "peak_mib": round(figures[1], 1), "cpu_seconds": round(self.cpu, 1),
                "load": round(os.getloadavg()[0], 2),
                "at": time.strftime("%H:%M:%S", time.gmtime())}
        with (self.work / "results.jsonl").open("a") as fh:
            fh.write(json.dumps(line) + "\n")
        print(f"  {n:>9,} {step:<22} {figures[0]:9.3f} s {figures[1]:8.0f} MiB  "
              f"CPU {self.cpu:7.1f} s  load {line['load']:.1f}", flush=True)


def _env(tree: Path | None) -> dict:
    """The environment of a child running ``tree``'s kgbuild (None: this one's), its modules'
    compiled bytecode cached (under the temporary folder: no checkout written), as an
    installed wheel has it: an environment that forbids writing it
    (``PYTHONDONTWRITEBYTECODE``) would add the compiling of every module to every step."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "kgbuild-bench-pycache")
    return {**env, "PYTHONPATH": str(tree)} if tree else env


def _rss_mib(pid: int) -> float:
    """A running process's resident set (MiB; 0 when gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) / 1024 for line in fh if line.startswith("VmRSS")), 0)
    except OSError:
        return 0


def kgbuild(*args: str) -> list[str]:
    return [sys.executable, "-m", "kgbuild.cli", *args]


def serve_p50(runner: Runner, store: Path, n: int, requests: int) -> tuple[float, float]:
    """The median latency (as seconds) of ``requests`` traversals at concurrency 1, and the
    server's peak RSS."""
    import httpx
    from serve_bench import free_port, mix, percentile

    port = free_port()
    proc = subprocess.Popen(kgbuild("serve", "--store", str(store), "--port", str(port)),
                            cwd=runner.work, env=runner.env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 1800
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            time.sleep(0.5)
        bodies, latencies = mix(n), []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            for i in range(requests):
                t = time.perf_counter()
                r = client.post("/traverse", json=bodies[i % len(bodies)])
                latencies.append(time.perf_counter() - t)
                if r.status_code != 200:
                    raise SystemExit(f"serve answered {r.status_code}: {r.text[:300]}")
    finally:
        proc.terminate()
        _, _, usage = os.wait4(proc.pid, 0)
        runner.cpu = usage.ru_utime + usage.ru_stime
    return percentile(latencies, 0.5), usage.ru_maxrss / 1024


def full_build(runner: Runner, n: int, catalog: Path, store: Path, step: str = "full build",
               tree: Path | None = None) -> tuple[float, float]:
    """The full build of ``catalog`` into a new ``store`` (``tree``: another checkout's)."""
    shutil.rmtree(store, ignore_errors=True)
    env, runner.env = runner.env, _env(tree) if tree else runner.env
    try:
        figures = runner.run([sys.executable, "-c", BUILD_CHILD, str(catalog), str(store),
                              str(runner.work / f"build-{n}{'-base' if tree else ''}.log")])
    finally:
        runner.env = env
    runner.record(n, step, figures)
    return figures


def described(text: str, k: int) -> str:
    """A component's text with its description edited (the ``k``-th time)."""
    return text.replace("Synthetic", f"Synthetic (told {k})", 1)


def depending(text: str, k: int) -> str:
    """A component's text with one more dependency (an edge between nodes already there): on
    a component it does not name yet, so that the edge is new."""
    i = k + 7
    while f"component:comp-{i:05d}\n" in text:
        i += 1000
    return text.replace("  dependsOn:\n", f"  dependsOn:\n    - component:comp-{i:05d}\n", 1)


def told_rebuilds(runner: Runner, build: list[str], edited: Path, runs: int = 3,
                  edit=described) -> tuple[float, float]:
    """Median wall time and peak RSS of ``runs`` one-file rebuilds told the edited file
    (``--changed``), edited by ``edit`` and put back in turn; their CPU the median's, every
    run's wall time in ``runner.walls`` (in turn: edited, as it was, ...)."""
    text, figures = edited.read_text(), []
    for k in range(runs):
        edited.write_text(edit(text, k) if k % 2 == 0 else text)
        figures.append((*runner.run([*build, "--changed", str(edited)]), runner.cpu))
    edited.write_text(text)
    runner.walls = [f[0] for f in figures]
    wall, peak, runner.cpu = sorted(figures)[len(figures) // 2]
    return wall, max(f[1] for f in figures)


def estate(runner: Runner, n: int, per_folder: int, requests: int,
           baseline: Path | None = None, full_only: bool = False) -> None:
    work = runner.work
    catalog, store = work / f"cat{n}", work / f"store{n}"
    if not (catalog / "apis.yaml").is_file():
        t = time.perf_counter()
        write_catalog(catalog, n, per_folder=per_folder)
        print(f"  {n:>9,} catalog written in {time.perf_counter() - t:.1f} s", flush=True)
    build = kgbuild("build", str(catalog), "--store", str(store), "--timestamp", "0",
                    "--no-resolve", "--no-validate")
    if baseline is not None:
        old = full_build(runner, n, catalog, work / f"store{n}-base", "full build (baseline)",
                         baseline)
        shutil.rmtree(work / f"store{n}-base", ignore_errors=True)
    new = full_build(runner, n, catalog, store)
    if baseline is not None:
        print(f"  {n:>9,} full build against the baseline: time {new[0] / old[0]:.2f}x, "
              f"peak RSS {new[1] / old[1]:.2f}x", flush=True)
    if full_only:
        return
    runner.record(n, "no-change build", runner.run(build))
    edited = component_path(catalog, 2, per_folder)
    text = edited.read_text()
    rebuilds = []
    for k in range(3):  # edited, then as it was: three one-file rebuilds
        edited.write_text(text.replace("component number", f"component (edit {k}) number")
                          if k % 2 == 0 else text)
        rebuilds.append(runner.run(build))
    runner.record(n, "one-file rebuild", (statistics.median(r[0] for r in rebuilds),
                                          max(r[1] for r in rebuilds)))
    runner.record(n, "one-file rebuild, told", told_rebuilds(runner, build, edited))
    at = build.index("--timestamp")
    runner.record(n, "one-file rebuild, told, real time", told_rebuilds(
        runner, build[:at] + build[at + 2:], edited))
    runner.record(n, "one-file rebuild, told, an edge added", told_rebuilds(
        runner, build, edited, edit=depending))
    walk = kgbuild("traverse", "--store", str(store), "--name", "comp-00001", "--follow",
                   "dependsOn", "--hops", "2", "--format", "json")
    runner.record(n, "first walk", runner.run(walk))
    runner.record(n, "warm walk", runner.run(walk))
    runner.record(n, "validate", runner.run(kgbuild("validate", "--store", str(store),
                                                    "--no-hygiene")))
    runner.record(n, "export nquads", runner.run(
        kgbuild("export", "--store", str(store), "--format", "nquads")))
    runner.record(n, "serve p50", serve_p50(runner, store, n, requests))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="components, comma-separated")
    ap.add_argument("--work", type=Path, help="work folder (kept; its catalogs reused)")
    ap.add_argument("--per-folder", type=int, default=1000, help="components per folder")
    ap.add_argument("--requests", type=int, default=200, help="serve requests per size")
    ap.add_argument("--tree", type=Path, help="a kgbuild checkout to run instead of this one")
    ap.add_argument("--baseline", type=Path, help="a checkout whose full build runs first")
    ap.add_argument("--full-only", action="store_true", help="only the full build per size")
    ap.add_argument("--max-rss", type=float, default=12, help="GiB: a step over it is killed")
    ap.add_argument("--step-timeout", type=float, default=7200, help="seconds a step may take")
    args = ap.parse_args()
    work = (args.work or Path(f"/tmp/kgbuild-estate-{os.getpid()}")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    runner = Runner(work, args.tree.resolve() if args.tree else None, args.max_rss * 1024,
                    args.step_timeout)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; work in {work}")
    for n in sizes:
        estate(runner, n, args.per_folder, args.requests,
               args.baseline.resolve() if args.baseline else None, args.full_only)
    steps = list(next(iter(runner.results.values())))
    print("step" + "".join(f" | {n:,} components" for n in sizes))
    for step in steps:
        print(step + "".join(f" | {runner.results[n][step][0]:.3f} s, "
                             f"{runner.results[n][step][1]:,.0f} MiB" for n in sizes))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
