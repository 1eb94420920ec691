"""Load test of ``kgbuild serve``: a traverse mix at several concurrency levels over loopback.

    python bench/serve_bench.py [--components 10000] [--requests 500] [--seconds 30]
                                [--concurrency 1,4,16] [--cli-runs 3] [--store DIR]

Builds a synthetic catalog (bench/catalog_gen.py; 10k components give ~100k edges) into a
fresh store (or uses ``--store``), starts ``kgbuild serve`` on 127.0.0.1 as its own process,
and fires a fixed mix of traversals (follow 1 and 2 hops, capped and exact paths, a question,
a name) from ``c`` client threads, each with its own keep-alive connection, until
``--requests`` answers or ``--seconds`` have passed per level. Prints p50/p99 latency and
throughput per level. Baselines from the same run: the in-process library call
(``Traverser.run``, the index already built) for the same mix, and ``kgbuild traverse --format
json`` as a fresh process (what a retriever pays per question without the server). Every
server answer is checked against the library's, and the CLI's against the server's: the
script fails if one differs. Target: p50 under 10 ms at concurrency 1 on the 100k-edge store.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalog_gen import write_catalog  # noqa: E402

from kgbuild.project.pipeline import build_graph  # noqa: E402
from kgbuild.graph.access import Principal  # noqa: E402
from kgbuild.retrieve.traverse import TraversalSpec, open_traverser  # noqa: E402
from kgbuild.schema.loader import load_schema  # noqa: E402


def mix(components: int, size: int = 24, seed: int = 7) -> list[dict]:
    """A fixed traverse mix over the synthetic catalog (request bodies)."""
    rng = random.Random(seed)

    def comp() -> str:
        return f"component:default/comp-{rng.randrange(components):05d}"

    kinds = [
        lambda: {"seeds": [comp()], "follow": ["dependsOn"], "hops": 1},
        lambda: {"seeds": [comp()], "follow": ["dependsOn", "ownedBy"], "hops": 2, "cap": 20},
        lambda: {"seeds": [comp()], "path": "ownedBy/ownerOf", "cap": 20},
        lambda: {"seeds": [comp()], "path": "dependsOn/dependsOn:in", "cap": 10,
                 "max_paths": 20},
        lambda: {"question": f"Who owns comp-{rng.randrange(components):05d}?",
                 "path": "ownedBy"},
        lambda: {"names": [f"comp-{rng.randrange(components):05d}"], "follow": ["consumesApi"],
                 "hops": 1},
    ]
    return [kinds[i % len(kinds)]() for i in range(size)]


def spec_of(body: dict) -> TraversalSpec:
    return TraversalSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in body.items()})


def cli_args(body: dict) -> list[str]:
    flags = {"seeds": "--seed", "names": "--name", "question": "-q", "follow": "--follow",
             "hops": "--hops", "path": "--path", "cap": "--hub-cap", "max_paths": "--max-paths"}
    out = []
    for key, value in body.items():
        for v in value if isinstance(value, list) else [value]:
            out += [flags[key], str(v)]
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def start_server(store: Path, port: int, log: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "kgbuild.cli", "serve", "--store", str(store),
                             "--port", str(port)], stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                proc.port = port
                return proc
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"the server did not start: {log.read_text()[-2000:]}")
        time.sleep(0.2)


def load(base: str, bodies: list[dict], concurrency: int, requests: int, seconds: float,
         expected: list[dict]) -> dict:
    """Fire ``bodies`` round robin from ``concurrency`` threads; latencies and mismatches."""
    latencies: list[float] = []
    server: list[float] = []  # the server's own time (Server-Timing: the walk and rendering)
    wrong: list[int] = []
    lock, counter = threading.Lock(), iter(range(requests))
    stop = time.monotonic() + seconds

    def worker() -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            while time.monotonic() < stop:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                body = bodies[i % len(bodies)]
                t = time.perf_counter()
                r = client.post("/traverse", json=body)
                dt = time.perf_counter() - t
                with lock:
                    latencies.append(dt)
                    server.append(float(r.headers["server-timing"].split("dur=")[1]) / 1000)
                    if r.status_code != 200 or r.json() != expected[i % len(bodies)]:
                        wrong.append(i)

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return {"concurrency": concurrency, "requests": len(latencies), "wrong": len(wrong),
            "p50_ms": 1000 * percentile(latencies, 0.5), "p99_ms": 1000 * percentile(latencies, 0.99),
            "server_p50_ms": 1000 * percentile(server, 0.5),
            "throughput": len(latencies) / wall}


def run(components: int, requests: int, seconds: float, levels: list[int], cli_runs: int,
        store: Path | None = None, port: int | None = None, out=print) -> dict:
    """The whole benchmark; returns the measurements and whether every answer was equal."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        schema = load_schema()
        if store is None:
            store = tmp / "store"
            write_catalog(tmp / "catalog", components)
            t = time.perf_counter()
            build_graph([tmp / "catalog"], schema, store=store, validate=False,
                        timestamp=0).store.close()
            out(f"built {components:,} components in {time.perf_counter() - t:.1f} s")
        traverser = open_traverser(store, schema, Principal())
        ix = traverser.model.index
        nodes = int((ix.node_type != ix.type_names.index("")).sum())
        out(f"store: {nodes:,} nodes, {len(ix.src):,} edges")
        bodies = mix(components)
        expected = [json.loads(json.dumps(traverser.run(spec_of(b)).to_dict())) for b in bodies]
        lib = []
        for _ in range(5):
            for b in bodies:
                t = time.perf_counter()
                traverser.run(spec_of(b)).to_dict()
                lib.append(time.perf_counter() - t)
        out(f"baseline, library call in process (Traverser.run): p50 "
            f"{1000 * percentile(lib, 0.5):.2f} ms, p99 {1000 * percentile(lib, 0.99):.2f} ms")
        proc = start_server(store, port or free_port(), tmp / "server.log")
        base = f"http://127.0.0.1:{proc.port}"
        try:
            results = [load(base, bodies, c, requests, seconds, expected) for c in levels]
            for r in results:
                out(f"serve, concurrency {r['concurrency']:>2}: {r['requests']:>5} requests, "
                    f"p50 {r['p50_ms']:7.2f} ms, p99 {r['p99_ms']:7.2f} ms, "
                    f"{r['throughput']:7.1f} req/s (server's own time p50 {r['server_p50_ms']:.2f} "
                    f"ms), {r['wrong']} answers differing")
            cli_times, cli_wrong = [], 0
            for k in range(cli_runs):
                body = bodies[k % len(bodies)]
                t = time.perf_counter()
                r = subprocess.run([sys.executable, "-m", "kgbuild.cli", "traverse", "--store",
                                    str(store), *cli_args(body), "--format", "json"],
                                   capture_output=True, text=True)
                cli_times.append(time.perf_counter() - t)
                if r.returncode != 0:
                    raise RuntimeError(f"kgbuild traverse exited {r.returncode}: "
                                       f"{r.stderr.strip()[-500:]}")
                served = httpx.post(f"{base}/traverse", json=body, timeout=60).json()
                cli_wrong += json.loads(r.stdout) != served
            if cli_runs:
                cli = statistics.median(cli_times)
                out(f"baseline, kgbuild traverse --format json as a process: median {cli:.3f} s "
                    f"({cli_runs} runs), {cli_wrong} answers differing from the server's")
                out(f"server p50 at concurrency 1 vs the CLI process: "
                    f"{cli / (results[0]['p50_ms'] / 1000):.0f}x faster; vs the library call: "
                    f"{results[0]['p50_ms'] / (1000 * percentile(lib, 0.5)):.1f}x its time "
                    f"(target: p50 < 10 ms)")
        finally:
            proc.terminate()
            proc.wait(30)
        equal = cli_wrong == 0 and all(r["wrong"] == 0 for r in results)
        return {"levels": results, "library_p50_ms": 1000 * percentile(lib, 0.5),
                "cli_s": statistics.median(cli_times) if cli_times else None, "equal": equal}


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--components", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=500, help="per concurrency level")
    ap.add_argument("--seconds", type=float, default=30.0, help="at most, per level")
    ap.add_argument("--concurrency", default="1,4,16")
    ap.add_argument("--cli-runs", type=int, default=3)
    ap.add_argument("--store", type=Path, help="an existing store to serve instead of building")
    args = ap.parse_args()
    result = run(args.components, args.requests, args.seconds,
                 [int(c) for c in args.concurrency.split(",")], args.cli_runs, args.store)
    if not result["equal"]:
        raise SystemExit("some answers differed")


if __name__ == "__main__":
    main()
