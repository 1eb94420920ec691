"""The property-graph sync every Cypher push shares (push --falkordb, push --neo4j): the
deletion and MERGE batches, their order and counts; the Bolt URL and credentials rules."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner
from conftest import require

from kgbuild.cli.main import main
from kgbuild.errors import InputError
from kgbuild.graph.model import Assertion, KnowledgeGraph, SourceDocument
from kgbuild.remote import cypher
from kgbuild.remote.neo4j import bolt_target, neo4j_auth

SEP = cypher.SEP


def _graph(schema) -> KnowledgeGraph:
    kg = KnowledgeGraph(schema)
    kg.add_document(SourceDocument("c.yaml", "c.yaml", "0" * 64))
    for nid, t in (("component:default/a", "Service"), ("component:default/b", "Library"),
                   ("component:default/c", "Library"), ("group:default/t", "Group")):
        kg.add_node(nid, t, nid.rsplit("/", 1)[1].upper(), source="c.yaml")
    for s, p, o, line in (("component:default/a", "dependsOn", "component:default/b", 4),
                          ("component:default/a", "dependsOn", "component:default/c", 5),
                          ("component:default/b", "ownedBy", "group:default/t", 9)):
        kg.add_assertion(Assertion(s, p, o, "c.yaml", "backstage", "2024-01-01T00:00:00Z", 1.0,
                                   line, evidence=f"{p} {o}"))
    return kg


def test_deletions_cover_the_graphs_and_the_servers_types(schema):
    kg = _graph(schema)
    out = cypher.delete_statements(cypher.node_rows(kg), cypher.edge_rows(kg),
                                   labels=["Entity", "Website", "Service"],
                                   relationship_types=["partOf"])
    assert [q.split(" WHERE")[0] for q, _ in out] == [
        "MATCH (a:Entity)-[r:`dependsOn`]->(b:Entity)", "MATCH (a:Entity)-[r:`ownedBy`]->(b:Entity)",
        "MATCH (a:Entity)-[r:`partOf`]->(b:Entity)", "MATCH (n:Entity:`Group`)",
        "MATCH (n:Entity:`Library`)", "MATCH (n:Entity:`Service`)", "MATCH (n:Entity:`Website`)"]
    assert out[0][1] == {"sep": SEP, "keys": [f"component:default/a{SEP}component:default/b",
                                              f"component:default/a{SEP}component:default/c"]}
    assert out[2][1]["keys"] == [] and out[6][1] == {"ids": []}  # the server's stale types: all go
    assert out[4][1] == {"ids": ["component:default/b", "component:default/c"]}
    assert all(q.endswith(("DELETE r", "DETACH DELETE n")) for q, _ in out)


def test_sync_deletes_first_then_merges_in_batches_and_counts(schema, monkeypatch):
    kg = _graph(schema)
    monkeypatch.setattr(cypher, "BATCH", 1)
    ran = []

    def run(query, params):
        ran.append((query, params))
        return (2, 3) if "DELETE" in query else (0, 0)

    counts = cypher.sync(kg, run, labels=["Website"], relationship_types=[])
    kinds = ["delete" if "DELETE" in q else "node" if "MERGE (n:" in q else "edge" for q, _ in ran]
    assert kinds == ["delete"] * 6 + ["node"] * 4 + ["edge"] * 3  # one row per batch here
    assert counts == {"nodes": 4, "edges": 3, "deleted_nodes": 12, "deleted_edges": 18}
    assert [q for q, _ in ran[6:]] == [q for q, _ in cypher.statements(kg)]
    edge = ran[-1][1]["rows"][0]
    assert edge["props"]["locations"] == ["line 9"] and edge["props"]["sources"] == ["c.yaml"]


def test_bolt_urls():
    assert bolt_target("bolt://127.0.0.1:7687") == ("bolt://127.0.0.1:7687", None, None)
    assert bolt_target("neo4j+s://bob:p%40ss@db.example:7687/") == (
        "neo4j+s://db.example:7687", "bob", "p@ss")
    for bad in ("http://127.0.0.1:7474", "bolt://", "bolt://h:99999", "bolt://h/db", "bolt://h x"):
        with pytest.raises(InputError) as err:
            bolt_target(bad)
        assert err.value.code == "usage" and "\n" not in err.value.message


def test_credentials_come_from_arguments_then_environment_then_the_url():
    require(importlib.util.find_spec("neo4j") is not None,
            "needs the neo4j driver (pip install 'kgbuild[servers]')")
    env = {"NEO4J_USERNAME": "envuser", "NEO4J_PASSWORD": "envpw"}
    url = "bolt://urluser:urlpw@h:7687"

    def principal(auth):
        return None if auth is None else (auth.scheme, auth.principal, auth.credentials)

    assert principal(neo4j_auth(url, "me", "mine", environ=env)) == ("basic", "me", "mine")
    assert principal(neo4j_auth(url, environ=env)) == ("basic", "envuser", "envpw")
    assert principal(neo4j_auth(url, environ={})) == ("basic", "urluser", "urlpw")
    assert principal(neo4j_auth("bolt://h", environ={})) is None
    assert neo4j_auth(url, token="tok", environ=env).scheme == "bearer"


def test_one_target_at_a_time(tmp_path):
    r = CliRunner().invoke(main, ["push", "--neo4j", "bolt://h", "--falkordb", "redis://h",
                                  "--store", str(tmp_path)])
    assert r.exit_code == 2 and "give one of --endpoint" in r.output
    r = CliRunner().invoke(main, ["push", "--neo4j", "http://h:7474", "--store", str(tmp_path)])
    assert r.exit_code == 2 and "is not a Bolt URL" in r.output
