"""Readers during incremental builds see the old state or the new, never "damaged".

A read-only open of the database could meet a build's commit: RocksDB lists a table file
that the build's compaction removes a moment later, and the open failed with "No such file"
(reported as a damaged store: `/query` 503 store-damaged, `/health` stale, `kgbuild query`
exit 2). Here builds run in a loop while threads, a process (the CLI) and the server read.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import threading
import time

import pytest
from conftest import FIXTURE_CATALOG
from starlette.testclient import TestClient

from kgbuild.project.pipeline import build_graph
from kgbuild.errors import KgbuildError
from kgbuild.graph.access import Principal
from kgbuild.serve.app import create_app
from kgbuild.serve.config import Limits, ServeConfig, Token
from kgbuild.store.graphstore import GraphStore

BUILDING = 8.0  # seconds of back-to-back incremental builds

CLI_READER = """
import sys, time
from click.testing import CliRunner
from kgbuild.cli.main import main
runner, end, bad, n = CliRunner(), time.monotonic() + float(sys.argv[2]), [], 0
while time.monotonic() < end:
    r = runner.invoke(main, ["query", "--store", sys.argv[1], "ASK { ?s ?p ?o }"])
    n += 1
    if r.exit_code != 0 or r.output.strip() != "true":
        bad.append(f"exit {r.exit_code}: {r.output.strip()[:300]}")
print(n, len(bad), *bad[:3], sep="\\n")
"""


@pytest.mark.slow  # about 15 s on the 2-core machine
def test_readers_never_see_a_damaged_store_while_builds_commit(tmp_path, schema):
    catalog = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, catalog)
    store = tmp_path / "store"
    build_graph([catalog], schema, store=store, timestamp=0, validate=False).store.close()
    edited = catalog / "components" / "checkout-service.yaml"
    text = edited.read_text()
    stop = threading.Event()
    failures: list[str] = []
    reads = {"store": 0, "query": 0, "health": 0}

    def store_reader():
        while not stop.is_set():
            try:
                with GraphStore(store, schema, write=False) as s:
                    s.generation()
                    assert sum(1 for _ in s.triples()) > 0
                reads["store"] += 1
            except KgbuildError as exc:
                failures.append(f"open: {exc.code}: {exc}")

    token = Token("admin", hashlib.sha256(b"admin").digest(), Principal.all_access())
    config = ServeConfig((token,), limits=Limits(reload_interval=0.05, query_timeout=20))
    app = create_app(store, schema, config)  # watching: reloads each new generation
    admin = {"Authorization": "Bearer admin"}

    def server_reader(client):
        while not stop.is_set():
            health = client.get("/health", headers=admin)
            if health.status_code != 200 or health.json()["status"] != "ok":
                failures.append(f"/health: {health.status_code} {health.text[:300]}")
            reads["health"] += 1
            answer = client.post("/query", json={"query": "ASK { ?s ?p ?o }"}, headers=admin)
            if answer.status_code != 200:
                failures.append(f"/query: {answer.status_code} {answer.text[:300]}")
            reads["query"] += 1

    cli = subprocess.Popen([sys.executable, "-c", CLI_READER, str(store), str(BUILDING)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with TestClient(app, raise_server_exceptions=False) as client:
        # one build, reload and read before the threads: every module they import lazily is
        # imported once (CPython before 3.11.8 can fail two threads compiling at once with
        # "SystemError: AST constructor recursion depth mismatch", CI compiles from source)
        edited.write_text(f"{text}\n# warm\n")
        build_graph([catalog], schema, store=store, timestamp=0, validate=False).store.close()
        deadline = time.monotonic() + 60
        while app.state.live.reloads == 0 and time.monotonic() < deadline:
            client.get("/health", headers=admin)
            time.sleep(0.05)
        with GraphStore(store, schema, write=False) as s:
            assert sum(1 for _ in s.triples()) > 0
        threads = [threading.Thread(target=store_reader) for _ in range(2)]
        threads.append(threading.Thread(target=server_reader, args=(client,)))
        for t in threads:
            t.start()
        builds, end = 0, time.monotonic() + BUILDING
        try:  # (on a loaded machine, on until enough builds and reads met: at most 60 s)
            while time.monotonic() < end or (time.monotonic() < end + 60 and not (
                    builds >= 5 and reads["store"] > builds and reads["health"])):
                builds += 1
                edited.write_text(f"{text}\n# round {builds}\n")
                build_graph([catalog], schema, store=store, timestamp=0,
                            validate=False).store.close()
        finally:
            stop.set()
            for t in threads:
                t.join(60)
        reloads = app.state.live.reloads
    out, _ = cli.communicate(timeout=120)
    runs, bad, *_ = out.strip().splitlines() + ["0", "?"]
    assert not failures, f"{len(failures)} failed reads of {reads} during {builds} builds: " \
                         f"{failures[:3]}"
    assert int(bad) == 0 and int(runs) > 0, out
    assert builds >= 5 and reads["store"] > builds and reads["health"] > 0 and reloads > 1


def test_a_file_removed_under_an_open_reader_is_a_change_not_damage(tmp_path, schema):
    """A read that needs a table file a build's compaction removed after the open (RocksDB
    opens table files lazily in a large store) says the store changed: run again."""
    catalog = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, catalog)
    store = tmp_path / "store"
    build_graph([catalog], schema, store=store, timestamp=0, validate=False).store.close()
    reader = GraphStore(store, schema, write=False)
    try:
        edited = catalog / "components" / "checkout-service.yaml"
        for i in range(2):  # each build opens the database anew: its MANIFEST is replaced
            edited.write_text(f"{edited.read_text()}\n# {i}\n")
            build_graph([catalog], schema, store=store, timestamp=0, validate=False).store.close()

        class Gone:
            def quads_for_pattern(self, *args):
                raise OSError(2, "IO error: No such file or directory: 000012.sst")

        reader._db.db = Gone()
        with pytest.raises(KgbuildError) as info:
            list(reader.triples())
        assert info.value.code == "store-changed" and "run the command again" in str(info.value)
    finally:
        reader.close()
