"""``resolve accept|reject``: the ID must exist (or be declared new), one-line mentions only."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgbuild import InputError, KnowledgeGraph, load_schema
from kgbuild.cli.main import main
from kgbuild.graph.rdf import to_rdflib
from kgbuild.resolve.aliases import AliasRegistry, accept, reject

SCHEMA = load_schema()
PAYMENTS = "api:default/payments"


def graph() -> KnowledgeGraph:
    kg = KnowledgeGraph(SCHEMA)
    kg.add_node(PAYMENTS, "API", "Payments", source="a.yaml")
    kg.add_node("group:default/payments", "Group", "Payments", source="a.yaml")
    return kg


def test_accept_checks_the_id_against_the_graph(tmp_path):
    reg = tmp_path / "aliases.yaml"
    with pytest.raises(InputError, match="not an entity of the graph.*--new") as info:
        accept(reg, "foo", "Component", "component:default/does-not-exist", SCHEMA, graph())
    assert info.value.code == "unknown-entity" and not reg.exists()  # nothing written
    with pytest.raises(InputError, match="is a Group, not a API"):
        accept(reg, "Paymnts", "API", "group:default/payments", SCHEMA, graph())
    made = accept(reg, "foo", "Component", "component:default/to-come", SCHEMA, graph(), new=True)
    assert made.id == "component:default/to-come"
    accept(reg, "Paymnts", "API", PAYMENTS, SCHEMA, graph())
    reject(reg, "Payouts", "API", PAYMENTS, SCHEMA, graph())
    assert len(AliasRegistry.load(reg).decisions) == 3


@pytest.mark.parametrize("mention, eid, message", [
    ("two\nlines", PAYMENTS, "spans lines"), ("a\u2028b", PAYMENTS, "spans lines"),
    ("Paymnts", "api:default/pay ments", "holds whitespace"),
    ("Paymnts", " api:default/payments", "holds whitespace"), ("Paymnts", "", "empty")])
def test_a_mention_is_one_line_and_an_id_has_no_whitespace(tmp_path, mention, eid, message):
    with pytest.raises(InputError, match=message):
        accept(tmp_path / "aliases.yaml", mention, "API", eid, SCHEMA)
    assert not (tmp_path / "aliases.yaml").exists()


def test_cli_accept_and_reject(tmp_path):
    path = tmp_path / "g.ttl"
    to_rdflib(graph()).serialize(path, format="turtle")
    base = ["--graph", str(path), "--registry", str(tmp_path / "aliases.yaml")]
    run = CliRunner().invoke
    r = run(main, ["resolve", "accept", "foo", "component:default/does-not-exist", "--type",
                   "Component", *base])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "--new" in r.output and "[unknown-entity]" in r.output
    r = run(main, ["resolve", "accept", "foo", "component:default/to-come", "--type", "Component",
                   "--new", *base])
    assert r.exit_code == 0 and "not in the graph yet" in r.output, r.output
    r = run(main, ["resolve", "accept", "Paymnts", PAYMENTS, "--type", "API", *base,
                   "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["exists"] is True, r.output
    r = run(main, ["resolve", "reject", "line\nbreak", PAYMENTS, "--type", "API", *base])
    assert r.exit_code == 2 and "spans lines" in r.output
    store = ["--store", str(tmp_path / "nostore"), "--registry", str(tmp_path / "aliases.yaml")]
    r = run(main, ["resolve", "accept", "bar", PAYMENTS, "--type", "API", *store])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    r = run(main, ["resolve", "accept", "bar", PAYMENTS, "--type", "API", "--new", *store])
    assert r.exit_code == 0, r.output
