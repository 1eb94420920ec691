"""Incremental push benchmark: one changed document vs a full push, to a local SPARQL server.

    python bench/remote_push_bench.py [--components 10000] [--edits 3]
        [--server oxigraph|virtuoso] [--buffers N]

Builds the synthetic catalog of ``catalog_gen.py`` (10k components: about 1.46M quads) into a
fresh store, starts the server on a free 127.0.0.1 port (``oxigraph serve``, or Virtuoso with
its own database folder and a generated virtuoso.ini: ``--buffers`` 8 KiB pages of cache,
default 170,000 (about 1.3 GiB), as Virtuoso's own sizing table gives for 2 GB of memory;
updates through ``/sparql-auth`` as dba), pushes everything (the baseline, measured in the
same run), then edits one component file at a time (its description), rebuilds and pushes
again; finally pushes with nothing changed. Prints bytes sent, graphs pushed, wall time and
the server's peak RSS, and the incremental/full ratios.
Targets (issue 13): a one-document push sends only that document's graph, in under 2 s.

``--bulk`` (Virtuoso): after the baseline's full push over SPARQL Update, a second Virtuoso
with a new database gets the full push through its bulk loader (``push --bulk-dir``, a
folder in its database folder), and the one-document pushes go to that server; the triples
each server then holds are counted, and must be equal. ``--bulk-only`` skips the SPARQL
push (at 100k components it takes hours): only the bulk loader's full push, then the
one-document pushes. ``--store DIR --catalog DIR`` push a store already built from that
catalog (``bench/estate_bench.py``'s ``storeN`` and ``catN``) instead of building one; its
edits are rebuilt told the edited file (``changed=``).
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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from catalog_gen import write_catalog  # noqa: E402
from virtuoso_config import write_virtuoso_ini  # noqa: E402  (the tests' virtuoso.ini)

from kgbuild.project.pipeline import build_graph  # noqa: E402
from kgbuild.remote.push import push_store  # noqa: E402
from kgbuild.remote.sparql import Auth, RemoteError, SparqlClient  # noqa: E402
from kgbuild.remote.virtuoso import BulkLoader  # noqa: E402
from kgbuild.schema.loader import load_schema  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out




def start_server(kind: str, folder: Path, buffers: int
                 ) -> tuple[subprocess.Popen, str, Auth | None, str]:
    """The server process, its query/update URL, the credentials updates need and (Virtuoso)
    its SQL port's HOST:PORT."""
    port, sql = free_port(), free_port()
    if kind == "oxigraph":
        exe = shutil.which("oxigraph") or sys.exit("needs the Oxigraph server: pip install oxigraph")
        proc = subprocess.Popen([exe, "serve", "--location", str(folder), "--bind",
                                 f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        probe, url, auth = f"http://127.0.0.1:{port}/query?query=ASK%7B%7D", \
            f"http://127.0.0.1:{port}/query", None
    else:
        exe = shutil.which("virtuoso-t") or sys.exit("needs Virtuoso: apt-get install "
                                                      "virtuoso-opensource")
        folder.mkdir(parents=True)
        write_virtuoso_ini(folder, sql, port, buffers, seconds=600)
        proc = subprocess.Popen([exe, "+foreground", "+configfile", str(folder / "virtuoso.ini")],
                                cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe, url, auth = f"http://127.0.0.1:{port}/sparql?query=ASK%7B%7D", \
            f"http://127.0.0.1:{port}/sparql-auth", Auth("dba", "dba", digest=True)
    for _ in range(900):
        try:
            urllib.request.urlopen(probe, timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    return proc, url, auth, f"127.0.0.1:{sql}"


def held_triples(client: SparqlClient) -> int:
    """Triples in the server's kgbuild graphs; when the server times that count out (Virtuoso
    at 146M triples: the graph filter reads every quad), a negative number: minus the count
    of every graph's triples, its own few among them."""
    try:
        rows = client.select("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } "
                             "FILTER(STRSTARTS(STR(?g), 'https://kgbuild.dev/')) }")
        return int(rows[0]["n"]["value"])
    except RemoteError:
        rows = client.select("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }")
        return -int(rows[0]["n"]["value"])


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM), MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--components", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=3)
    ap.add_argument("--server", choices=("oxigraph", "virtuoso"), default="oxigraph")
    ap.add_argument("--buffers", type=int, default=170_000,
                    help="Virtuoso's NumberOfBuffers (8 KiB pages)")
    ap.add_argument("--bulk", action="store_true",
                    help="Virtuoso: also the full push through its bulk loader (see above)")
    ap.add_argument("--bulk-only", action="store_true",
                    help="Virtuoso: the full push through the bulk loader alone (no SPARQL one)")
    ap.add_argument("--store", type=Path, help="a store already built from --catalog")
    ap.add_argument("--catalog", type=Path, help="the catalog --store was built from")
    args = ap.parse_args()
    args.bulk = args.bulk or args.bulk_only
    if args.bulk and args.server != "virtuoso":
        ap.error("--bulk needs --server virtuoso")
    if (args.store is None) != (args.catalog is None):
        ap.error("--store and --catalog go together")
    schema = load_schema("software")
    with tempfile.TemporaryDirectory() as tmp:
        if args.store is not None:
            root, store = args.catalog.resolve(), args.store.resolve()
            files = sorted((root / "components").rglob("*.yaml"))
        else:
            root, store = Path(tmp) / "catalog", Path(tmp) / "store"
            files = write_catalog(root, args.components)

        def build(changed=None):
            result = build_graph([root], store=store, validate=False, resolve=False, timestamp=0,
                                 root=root.parent, changed=changed)
            counts = result.store.counts()
            result.store.close()
            return counts

        if args.store is None:
            build_s, counts = timed(build)
            print(f"store: {args.components:,} components, {counts['assertions']:,} "
                  f"assertions, built in {build_s:.1f} s")
        server, url, auth, sql = start_server(args.server, Path(tmp) / "server", args.buffers)
        full_s = baseline_held = None
        try:
            if not args.bulk_only:
                with SparqlClient(url, auth=auth, timeout=3600) as client:
                    full_s, full = timed(lambda: push_store(store, schema, client))
                    print(f"{args.server}: full push (baseline): {len(full.pushed):,} graphs, "
                          f"{full.triples:,} triples, {full.bytes_sent / 1e6:.1f} MB in "
                          f"{full.requests:,} requests, {full_s:.2f} s "
                          f"({full.triples / full_s:,.0f} triples/s); server peak RSS "
                          f"{peak_rss_mb(server.pid):,.0f} MB")
                    if args.bulk:
                        baseline_held = held_triples(client)
            if args.bulk:  # the same push into a new Virtuoso, through its bulk loader
                server.terminate()
                server.wait(60)
                folder = Path(tmp) / "server-bulk"
                server, url, auth, sql = start_server(args.server, folder, args.buffers)
                (folder / "load").mkdir()
                bulk = BulkLoader(folder / "load", "dba", "dba", sql)
                with SparqlClient(url, auth=auth, timeout=3600) as client:
                    bulk_s, loaded = timed(lambda: push_store(store, schema, client, bulk=bulk))
                    held = held_triples(client)
                against = "" if full_s is None else (
                    f"; {full_s / bulk_s:.1f}x the SPARQL push, which left {baseline_held:,} "
                    f"triples")
                print(f"virtuoso: full push through the bulk loader: {loaded.bulk_graphs:,} "
                      f"graphs, {loaded.triples:,} triples ({loaded.bulk_bytes / 1e6:.1f} MB of "
                      f"N-Quads), {bulk_s:.2f} s, of which the loader {loaded.bulk_seconds:.2f} s "
                      f"({loaded.triples / bulk_s:,.0f} triples/s); server peak RSS "
                      f"{peak_rss_mb(server.pid):,.0f} MB; triples held "
                      f"{f'{held:,}' if held >= 0 else f'{-held:,} in every graph'}{against}")
                assert baseline_held is None or min(held, baseline_held) < 0 \
                    or held == baseline_held
                full, full_s = loaded, full_s or bulk_s
                full.bytes_sent += loaded.bulk_bytes  # (what one document's push is set against)
            with SparqlClient(url, auth=auth, timeout=3600) as client:
                times, sent = [], []
                for k in range(args.edits):
                    f = files[k * 37 % len(files)]
                    f.write_text(f.read_text().replace("description: Synthetic",
                                                       f"description: Edited {k} synthetic"))
                    build([f])
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
        except Exception:
            log = Path(tmp) / "server" / "virtuoso.log"
            if log.is_file():  # why the server went away
                print("".join(log.read_text(errors="replace").splitlines(True)[-30:]),
                      file=sys.stderr)
            raise
        finally:
            server.terminate()
            server.wait(60)


if __name__ == "__main__":
    main()
