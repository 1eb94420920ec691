"""Reading any RDF graph: node IDs from identifiers or IRIs, edges and assertions mapped
through node IRIs, malformed parts skipped with one-line warnings."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG
from rdflib import Graph

from kgbuild.schema.loader import parse_schema
from kgbuild.project.pipeline import build
from kgbuild.cli.main import main
from kgbuild.graph.rdf import from_rdf, to_rdflib
from kgbuild.io.rdffile import load_graph

PREFIXES = """
@prefix sw: <https://kgbuild.dev/schema/software#> .
@prefix kg: <https://kgbuild.dev/ns#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix ex: <http://example.org/> .
"""

# nodes with their own IRIs and dcterms:identifier literals; one node without an identifier
FOREIGN = PREFIXES + """
ex:svc1 a sw:Service ; dcterms:identifier "svc1" ; rdfs:label "Checkout" ;
    sw:ownedBy ex:team-a ; sw:dependsOn ex:lib1 .
ex:lib1 a sw:Library ; dcterms:identifier "lib1" ; rdfs:label "Pricing SDK" ; sw:ownedBy ex:team-a .
ex:team-a a sw:Group ; dcterms:identifier "team-a" ; rdfs:label "Team A" .
ex:bob a sw:User ; rdfs:label "Bob" ; sw:memberOf ex:team-a .
ex:stmt1 a kg:Assertion ; rdf:subject ex:svc1 ; rdf:predicate sw:dependsOn ; rdf:object ex:lib1 ;
    kg:extractor "manual" ; kg:evidence "Checkout uses the Pricing SDK" ;
    prov:wasDerivedFrom <http://example.org/docs/architecture.md> ; kg:line 7 .
"""


def read(ttl: str, schema, problems=None):
    return from_rdf(Graph().parse(data=ttl, format="turtle"), schema, problems)


def test_edges_are_mapped_through_node_iris_not_identifiers(schema):
    problems = []
    kg = read(FOREIGN, schema, problems)
    assert problems == []
    assert set(kg.nodes) == {"svc1", "lib1", "team-a", "http://example.org/bob"}
    assert set(kg.edges()) == {("svc1", "ownedBy", "team-a"), ("svc1", "dependsOn", "lib1"),
                               ("lib1", "ownedBy", "team-a"),
                               ("http://example.org/bob", "memberOf", "team-a")}
    (a,) = kg.assertions.values()  # the reified statement names IRIs; it is keyed by node IDs
    assert (a.subject, a.predicate, a.object, a.line) == ("svc1", "dependsOn", "lib1", 7)
    assert a.source == "http://example.org/docs/architecture.md" and a.extractor == "manual"
    assert kg.edges()[("svc1", "dependsOn", "lib1")] == [a]
    assert kg.edges()[("svc1", "ownedBy", "team-a")] == []  # walkable, without evidence


def test_foreign_ids_round_trip_through_kgbuilds_layout(schema):
    kg = read(FOREIGN, schema)
    again = from_rdf(to_rdflib(kg), schema, problems := [])
    assert problems == []
    assert set(again.nodes) == set(kg.nodes) and set(again.edges()) == set(kg.edges())
    assert again.nodes["http://example.org/bob"].label == "Bob"
    assert list(again.assertions.values()) == list(kg.assertions.values())


def test_walk_a_foreign_graph_from_the_cli_with_identifier_and_iri_seeds(tmp_path, schema):
    f = tmp_path / "foreign.ttl"
    f.write_text(FOREIGN)
    runner = CliRunner()
    r = runner.invoke(main, ["traverse", "--graph", str(f), "--seed", "svc1", "--path",
                             "dependsOn/ownedBy/hasMember", "--no-cap", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["answers"] == ["http://example.org/bob"]
    r = runner.invoke(main, ["traverse", "--graph", str(f), "--seed", "http://example.org/bob",
                             "--path", "memberOf/ownerOf:out", "--no-cap", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["answers"] == ["lib1", "svc1"]
    assert r.stderr == ""


MALFORMED = FOREIGN + """
ex:bad1 a kg:Assertion ; rdf:subject ex:svc1 ; rdf:predicate sw:ownedBy .
<https://kgbuild.dev/assertion/bad2> rdf:subject ex:svc1 ; rdf:predicate ex:likes ; rdf:object ex:lib1 .
ex:bad3 a kg:Assertion ; rdf:subject ex:svc1 ; rdf:predicate sw:ownedBy ; rdf:object ex:team-a ;
    kg:confidence "high" .
"""


def test_malformed_assertions_are_skipped_with_a_warning_naming_them(schema):
    problems = []
    kg = read(MALFORMED, schema, problems)
    assert len(kg.assertions) == 1 and ("svc1", "ownedBy", "team-a") in kg.edges()
    text = [str(p) for p in problems]
    assert len(text) == 3, text
    assert any("<http://example.org/bad1> has no rdf:object" in t for t in text)
    assert any("<https://kgbuild.dev/assertion/bad2>" in t and "<http://example.org/likes>" in t
               and "not an edge type" in t for t in text)
    assert any("<http://example.org/bad3>" in t and "high" in t for t in text)
    assert all("\n" not in t and p.severity == "warning" for t, p in zip(text, problems))
    read(MALFORMED, schema)  # without a list to collect them, still no exception


def test_cli_prints_reading_warnings_on_stderr_and_still_walks(tmp_path):
    f = tmp_path / "bad.ttl"
    f.write_text(MALFORMED)
    r = CliRunner().invoke(main, ["traverse", "--graph", str(f), "--seed", "svc1", "--path",
                                  "dependsOn", "--no-cap", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["answers"] == ["lib1"]
    lines = r.stderr.splitlines()  # grouped by code (kgbuild/cli/output.py)
    items = [line.strip() for line in lines if line.startswith("    ")]
    assert lines[0] == "problems (3): 3 warnings"
    assert len(items) == 3 and all(line.startswith(f"{f}: warning: ") for line in items)


def test_inverse_predicates_and_literal_objects(schema):
    ttl = PREFIXES + """
    ex:team-a a sw:Group ; dcterms:identifier "team-a" ; sw:ownerOf ex:svc1 .
    ex:svc1 a sw:Service ; dcterms:identifier "svc1" ; sw:dependsOn "not a node" .
    """
    problems = []
    kg = read(ttl, schema, problems)
    assert set(kg.edges()) == {("svc1", "ownedBy", "team-a")}  # stored direction
    assert [p.code for p in problems] == ["literal-edge"]
    assert "dependsOn>: 1 triple(s) with a literal object" in problems[0].message


def test_ambiguous_ids_types_and_blank_nodes_are_read_deterministically(schema):
    ttl = PREFIXES + """
    ex:b a sw:Group ; dcterms:identifier "x" ; sw:ownerOf ex:svc .
    ex:a a sw:Group ; dcterms:identifier "x" .
    ex:svc a sw:Service, sw:Component ; dcterms:identifier "svc" .
    ex:both a sw:Group, sw:User ; dcterms:identifier "both", "also" .
    [] a sw:User ; rdfs:label "anonymous" .
    [] a sw:User ; dcterms:identifier "u9" ; sw:memberOf ex:a .
    """
    problems = []
    kg = read(ttl, schema, problems)
    # the first IRI keeps the shared identifier, the other is read under its full IRI
    assert kg.nodes["x"].type == "Group" and "http://example.org/b" in kg.nodes
    assert set(kg.edges()) == {("svc", "ownedBy", "http://example.org/b"), ("u9", "memberOf", "x")}
    assert kg.nodes["svc"].type == "Service"  # one branch: the most specific, no warning
    assert kg.nodes["also"].type == "Group"  # min identifier; first type by name
    codes = sorted(p.code for p in problems)
    assert codes == ["blank-node", "conflicting-types", "duplicate-id", "several-ids"]
    assert read(ttl, schema).nodes.keys() == kg.nodes.keys()


CATCH_ALL_SCHEMA = {
    "name": "plain", "namespace": "http://example.org/vocab#",
    "node_types": {"Node": {"iri": "http://www.w3.org/2000/01/rdf-schema#Resource"},
                   "Person": {"iri": "http://xmlns.com/foaf/0.1/Person"}},
    "edge_types": {"knows": {"iri": "http://xmlns.com/foaf/0.1/knows", "domain": ["Node", "Person"],
                             "range": ["Node", "Person"]}},
}


def test_a_type_with_the_rdfs_resource_iri_types_every_untyped_node():
    schema = parse_schema(CATCH_ALL_SCHEMA)
    ttl = """@prefix foaf: <http://xmlns.com/foaf/0.1/> . @prefix ex: <http://example.org/> .
    ex:ann a foaf:Person ; foaf:knows ex:bo . ex:bo foaf:knows ex:cy . _:x foaf:knows ex:ann ."""
    kg = read(ttl, schema)
    assert {n: kg.nodes[n].type for n in kg.nodes} == {
        "http://example.org/ann": "Person", "http://example.org/bo": "Node",
        "http://example.org/cy": "Node"}
    assert len(kg.edges()) == 2


def test_kgbuilds_own_graphs_read_without_warnings(tmp_path, schema):
    out = tmp_path / "g.ttl"
    build([FIXTURE_CATALOG], out, timestamp=0, validate=False, store=None)
    problems = []
    kg = from_rdf(load_graph(out), schema, problems)
    assert problems == [] and len(kg.assertions) > 20
    assert all(a.subject in kg.nodes and a.object in kg.nodes for a in kg.assertions.values())


@pytest.mark.parametrize("spec, message", [
    ({"iri": "not an iri"}, "iri must be an absolute IRI"),
    ({"iri": "https://kgbuild.dev/ns#Assertion"}, "reserved by kgbuild"),
    ({"iri": "http://example.org/vocab#knows"}, "already used by edge type 'knows'"),
])
def test_loader_checks_explicit_iris(spec, message):
    raw = {"name": "t", "namespace": "http://example.org/vocab#",
           "node_types": {"A": {}}, "edge_types": {"knows": {"domain": "A", "range": "A"}},
           "attributes": {"nick": spec}}
    with pytest.raises(Exception, match=message):
        parse_schema(raw)


def test_loader_reserves_layout_predicates_and_needs_an_inverse_for_inverse_iri():
    raw = {"name": "t", "namespace": "http://example.org/vocab#", "node_types": {"A": {}},
           "edge_types": {"e": {"domain": "A", "range": "A",
                                "iri": "http://www.w3.org/2000/01/rdf-schema#label"}}}
    with pytest.raises(Exception, match="reserved"):
        parse_schema(raw)
    raw["edge_types"]["e"] = {"domain": "A", "range": "A", "inverse_iri": "http://x.org/i"}
    with pytest.raises(Exception, match="inverse_iri without an inverse"):
        parse_schema(raw)
    raw["edge_types"]["e"] = {"domain": "A", "range": "A", "iri": "http://x.org/e",
                              "inverse": "f", "inverse_iri": "http://x.org/f"}
    s = parse_schema(raw)
    assert (s.edge_types["e"].iri, s.edge_types["e"].inverse_iri) == ("http://x.org/e", "http://x.org/f")
    assert s.type_by_iri == {"http://example.org/vocab#A": "A"}


def test_cli_prints_warnings_grouped_by_code_then_a_count(tmp_path):
    bad = "".join(f"ex:bad{i} a kg:Assertion ; rdf:subject ex:svc1 .\n" for i in range(25))
    f = tmp_path / "many.ttl"
    f.write_text(FOREIGN + bad)
    r = CliRunner().invoke(main, ["traverse", "--graph", str(f), "--seed", "svc1", "--path",
                                  "ownedBy", "--no-cap", "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["answers"] == ["team-a"]
    lines = r.stderr.splitlines()  # grouped by code, the first 5 of each (kgbuild/cli/output.py)
    assert lines[:2] == ["problems (25): 25 warnings", "  [malformed-assertion] 25 warnings"]
    assert len(lines) == 8 and lines[-1] == "    ... and 20 more (--verbose lists them)"
    assert all("has no rdf:predicate or rdf:object; skipped [malformed-assertion]" in x
               for x in lines[2:7])
