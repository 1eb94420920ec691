"""Incremental push benchmark: one changed document vs a full push, to a local Oxigraph server.

    python bench/remote_push_bench.py [--components 10000] [--edits 3]

Builds the synthetic catalog of ``catalog_gen.py`` (10k components: about 1M triples) into a
fresh store, starts ``oxigraph serve`` on a free 127.0.0.1 port, pushes everything (the
baseline, measured in the same run), then edits one component file at a time (its
description), rebuilds and pushes again; finally pushes with nothing changed. Prints bytes
sent, graphs pushed and wall time of each, and the incremental/full ratios.
Targets (issue 13): a one-document push sends only that document's graph, in under 2 s.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalog_gen import write_catalog  # noqa: E402

from kgbuild.project.pipeline import build_graph  # noqa: E402
from kgbuild.remote.push import push_store  # noqa: E402
from kgbuild.remote.sparql import SparqlClient  # noqa: E402
from kgbuild.schema.loader import load_schema  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--components", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=3)
    args = ap.parse_args()
    exe = shutil.which("oxigraph")
    if exe is None:
        sys.exit("needs the Oxigraph server: pip install oxigraph")
    schema = load_schema("software")
    with tempfile.TemporaryDirectory() as tmp:
        root, store = Path(tmp) / "catalog", Path(tmp) / "store"
        files = write_catalog(root, args.components)

        def build():
            result = build_graph([root], store=store, validate=False, resolve=False, timestamp=0)
            triples = sum(1 for _ in result.store.quads())
            result.store.close()
            return triples

        build_s, triples = timed(build)
        print(f"store: {args.components:,} components, {triples:,} quads, built in {build_s:.1f} s")
        port = free_port()
        server = subprocess.Popen([exe, "serve", "--location", str(Path(tmp) / "ox"), "--bind",
                                   f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/query?query=ASK%7B%7D", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            with SparqlClient(f"http://127.0.0.1:{port}/query", timeout=600) as client:
                full_s, full = timed(lambda: push_store(store, schema, client))
                print(f"full push (baseline): {len(full.pushed):,} graphs, {full.triples:,} "
                      f"triples, {full.bytes_sent / 1e6:.1f} MB in {full.requests:,} requests, "
                      f"{full_s:.2f} s")
                times, sent = [], []
                for k in range(args.edits):
                    f = files[k * 37 % len(files)]
                    f.write_text(f.read_text().replace("description: Synthetic",
                                                       f"description: Edited {k} synthetic"))
                    build()
                    t, one = timed(lambda: push_store(store, schema, client))
                    assert len(one.pushed) == 1, one.pushed
                    times.append(t)
                    sent.append(one.bytes_sent)
                    print(f"  one changed document: {one.pushed[0].rsplit('/', 1)[-1]}, "
                          f"{one.triples} triples, {one.bytes_sent:,} bytes, {t:.3f} s")
                none_s, none = timed(lambda: push_store(store, schema, client))
                med = statistics.median(times)
                print(f"incremental push: median {med:.3f} s ({med / full_s:.2%} of the full push), "
                      f"{statistics.median(sent):,.0f} bytes ({statistics.median(sent) / full.bytes_sent:.4%} "
                      f"of the full push's bytes); target < 2 s: {'met' if med < 2 else 'NOT met'}")
                print(f"nothing changed: {none.bytes_sent} bytes, {none.requests} requests, "
                      f"{none_s:.3f} s")
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
