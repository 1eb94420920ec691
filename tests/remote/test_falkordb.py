"""The property graph: `export --format cypher` and `push --falkordb` against a real FalkorDB."""

from __future__ import annotations

import json
import re

import pytest
from servers import build_store, falkordb_url, run  # noqa: F401

from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

pytestmark = pytest.mark.server
CLASSIC = ["--seed", "api:default/payments-api", "--path", "ownedBy:out/ownerOf:out/dependsOn:in",
           "--all-access", "--format", "json"]  # the FalkorDB copy holds every item


def graph(url, name):
    from falkordb import FalkorDB

    return FalkorDB.from_url(url).select_graph(name)


def push(store, url, name):
    r = run("push", "--falkordb", url, "--graph-name", name, "--store", store, "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def snapshot(g) -> tuple[list, list]:
    nodes = g.query("MATCH (n:Entity) RETURN labels(n), properties(n) ORDER BY n.id").result_set
    edges = g.query("MATCH (a)-[r]->(b) RETURN a.id, type(r), b.id, properties(r) "
                    "ORDER BY a.id, type(r), b.id").result_set
    return ([(sorted(lab), props) for lab, props in nodes], [list(e) for e in edges])


def test_classic_question_by_cypher_equals_traverse(falkordb_url, tmp_path):  # noqa: F811
    store = build_store(tmp_path)
    report = push(store, falkordb_url, "classic")
    local = json.loads(run("traverse", "--store", store, *CLASSIC).output)
    with GraphStore(store, load_schema("software"), write=False) as st:
        kg = st.knowledge_graph()
    assert (report["nodes"], report["edges"]) == (len(kg.nodes), len(kg.edges()))
    rows = graph(falkordb_url, "classic").query(
        "MATCH (a:Entity {id: $api})-[r1:ownedBy]->(t:Entity)<-[r2:ownedBy]-(l:Entity)"
        "<-[r3:dependsOn]-(s:Entity) RETURN s.id, [a.id, t.id, l.id, s.id], "
        "[type(r1), type(r2), type(r3)], labels(s) ORDER BY s.id",
        {"api": "api:default/payments-api"}).result_set
    assert sorted({r[0] for r in rows}) == local["answers"]
    typed = {e["id"]: e["predicate"] for e in local["edges"]}
    assert sorted((r[1], r[2]) for r in rows) == sorted(
        (p["nodes"], [typed[e] for e in p["edges"]]) for p in local["paths"])
    assert len(rows) == 3
    assert all(sorted(r[3]) == ["Entity", "Service"] for r in rows)


def test_push_is_idempotent_and_follows_deletions(falkordb_url, tmp_path):  # noqa: F811
    store = build_store(tmp_path)
    first = push(store, falkordb_url, "idem")
    before = snapshot(graph(falkordb_url, "idem"))
    second = push(store, falkordb_url, "idem")
    assert second["deleted_nodes"] == second["deleted_edges"] == 0
    assert snapshot(graph(falkordb_url, "idem")) == before
    assert len(before[0]) == first["nodes"] and len(before[1]) == first["edges"]

    (tmp_path / "catalog" / "components" / "web-shop.yaml").unlink()
    build_store(tmp_path)
    third = push(store, falkordb_url, "idem")
    assert third["deleted_nodes"] >= 1 and third["deleted_edges"] >= 1
    nodes, edges = snapshot(graph(falkordb_url, "idem"))
    assert len(nodes) == third["nodes"] and len(edges) == third["edges"]
    assert "component:default/web-shop" not in {p["id"] for _, p in nodes}


def test_edge_properties_carry_provenance(falkordb_url, tmp_path):  # noqa: F811
    store = build_store(tmp_path)
    push(store, falkordb_url, "prov")
    [[props]] = graph(falkordb_url, "prov").query(
        "MATCH (:Entity {id: 'api:default/payments-api'})-[r:ownedBy]->() RETURN properties(r)"
    ).result_set
    assert props["sources"] == ["catalog/apis/payments-api.yaml"]
    assert props["locations"] == ["line 10"] and props["evidence"] == ["owner: commerce-platform"]
    assert props["extractors"] == ["backstage"] and props["confidence"] == [1.0]


def test_exported_cypher_script_builds_the_same_graph(falkordb_url, tmp_path):  # noqa: F811
    store = build_store(tmp_path)
    script = run("export", "--store", store, "--format", "cypher")
    assert script.exit_code == 0
    assert script.output == run("export", "--store", store, "--format", "cypher").output
    g = graph(falkordb_url, "script")
    rows = None
    for line in script.output.splitlines():  # cypher-shell's `:param` lines, played by hand
        if line.startswith(":param rows => "):
            rows = line[len(":param rows => "):-1]
        elif line.startswith("UNWIND $rows"):
            g.query(line[:-1].replace("$rows", rows, 1))
        elif line and not line.startswith("//"):
            g.query(line[:-1])
    push(store, falkordb_url, "pushed")
    assert snapshot(g) == snapshot(graph(falkordb_url, "pushed"))
    assert re.search(r"SET n:`Service`", script.output)
