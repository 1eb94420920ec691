"""SHACL validation: built graphs conform; each kind of damage is caught and named."""

import pytest
from conftest import BACKSTAGE, FIXTURE_CATALOG
from rdflib import Literal, URIRef
from rdflib.namespace import PROV, RDF, XSD

from kgbuild.project.pipeline import build_graph
from kgbuild.errors import InputError
from kgbuild.graph.model import node_iri as _node_iri
from kgbuild.graph.rdf import to_rdflib
from kgbuild.io.rdffile import load_graph
from kgbuild.schema.namespaces import KG
from kgbuild.validate.validator import validate_graph


@pytest.fixture(scope="module")
def fixture_graph():
    return build_graph([FIXTURE_CATALOG], validate=False, timestamp=0, root=FIXTURE_CATALOG.parent).graph


def node_iri(node_id):
    return URIRef(_node_iri(node_id))


def fresh(kg):
    return to_rdflib(kg)


@pytest.mark.corpus
def test_real_catalogs_conform(schema):
    result = build_graph([BACKSTAGE], validate=True, timestamp=0)
    assert result.validation.conforms, result.validation.render()


def sole_assertion(g, subject, pred):
    found = [a for a in g.subjects(RDF.subject, node_iri(subject))
             if g.value(a, RDF.predicate) == pred]
    assert len(found) == 1
    return found[0]


def test_deleting_an_assertion_names_the_edge(fixture_graph, schema):
    g = fresh(fixture_graph)
    ns = schema.namespace
    a = sole_assertion(g, "component:default/pricing-sdk", URIRef(ns + "ownedBy"))
    g.remove((a, None, None))
    report = validate_graph(g, schema)
    assert not report.conforms
    [v, doc] = sorted(report.violations, key=lambda v: v.rule != "EdgeCoverage")
    assert v.focus == "component:default/pricing-sdk" and v.rule == "EdgeCoverage"
    assert (v.path, v.value) == ("sw:ownedBy", "group:default/commerce-platform")
    assert "no assertion" in v.message and v.severity == "Violation"
    assert doc.rule == "DocumentCompleteness" and doc.value == "1"  # it declares 2
    assert doc.focus == "catalog/components/pricing-sdk.yaml"


@pytest.mark.corpus
def test_deleting_one_of_two_assertions_of_an_edge_is_caught(schema):
    # team-a's own file says "parent: backstage", backstage's file says "children: [team-a, ...]"
    kg = build_graph([BACKSTAGE / "backstage-upstream-2020-11"], validate=False, timestamp=0).graph
    g = fresh(kg)
    pred = URIRef(schema.namespace + "childOf")
    both = [a for a in g.subjects(RDF.subject, node_iri("group:default/team-a"))
            if g.value(a, RDF.predicate) == pred]
    assert len(both) == 2
    g.remove((both[0], None, None))
    report = validate_graph(g, schema)
    [v] = report.violations  # the edge is still covered, but its source lost an assertion
    assert v.rule == "DocumentCompleteness" and v.focus.endswith("-group.yaml")


@pytest.mark.parametrize("damage, expected", [
    (lambda g, a: g.remove((a, PROV.wasDerivedFrom, None)), "exactly one source"),
    (lambda g, a: g.remove((a, KG.extractor, None)), "names exactly one extractor"),
    (lambda g, a: g.set((a, KG.confidence, Literal("1.5", datatype=XSD.double))), "in [0, 1]"),
    (lambda g, a: g.remove((a, KG.line, None)), "has a location"),
    (lambda g, a: g.remove((a, PROV.generatedAtTime, None)), "generatedAtTime"),
    (lambda g, a: g.add((a, PROV.wasDerivedFrom, URIRef("https://kgbuild.dev/source/other"))),
     "exactly one source"),
])
def test_damaged_assertion_is_named(fixture_graph, schema, damage, expected):
    g = fresh(fixture_graph)
    a = sole_assertion(g, "api:default/payments-api", URIRef(schema.namespace + "ownedBy"))
    damage(g, a)
    report = validate_graph(g, schema)
    assert not report.conforms
    assert any(expected in v.message and v.focus.endswith(str(a).rsplit("/", 1)[1])
               for v in report.violations), report.render()


def test_broken_domain_and_range_name_node_and_rule(fixture_graph, schema):
    g = fresh(fixture_graph)
    team = node_iri("group:default/commerce-platform")
    g.set((team, RDF.type, URIRef(schema.namespace + "API")))
    report = validate_graph(g, schema)
    rules = {(v.rule, v.focus) for v in report.violations}
    assert ("ownedBy-range", "group:default/commerce-platform") in rules
    assert ("memberOf-range", "group:default/commerce-platform") in rules
    assert ("childOf-domain", "group:default/commerce-platform") in rules
    text = report.render()
    assert "range of sw:ownedBy: the object must be a Group or User or Domain" in text


def test_two_types_or_no_label(fixture_graph, schema):
    g = fresh(fixture_graph)
    node = node_iri("component:default/web-shop")
    g.add((node, RDF.type, URIRef(schema.namespace + "Library")))
    g.remove((node_iri("group:default/storefront"), URIRef("http://www.w3.org/2000/01/rdf-schema#label"), None))
    report = validate_graph(g, schema)
    msgs = {(v.focus, v.message) for v in report.violations}
    assert any(f == "component:default/web-shop" and "exactly one schema type" in m for f, m in msgs)
    assert any(f == "group:default/storefront" and "rdfs:label" in m for f, m in msgs)


def test_assertion_without_its_triple(fixture_graph, schema):
    g = fresh(fixture_graph)
    pred = URIRef(schema.namespace + "dependsOn")
    g.remove((node_iri("component:default/web-shop"), pred, node_iri("component:default/checkout-service")))
    report = validate_graph(g, schema)
    assert any("not in the graph" in v.message for v in report.violations)


def test_report_groups_and_json(fixture_graph, schema):
    g = fresh(fixture_graph)
    for a in list(g.subjects(RDF.type, KG.Assertion))[:3]:
        g.remove((a, KG.extractor, None))
    report = validate_graph(g, schema)
    d = report.to_dict()
    assert d["conforms"] is False and d["violations"] == 3
    assert [grp["count"] for grp in d["groups"]] == [3]


def test_unparseable_graph_file(tmp_path):
    p = tmp_path / "g.ttl"
    p.write_text("@prefix x: <http://x/> .\nx:a x:b .\n")
    with pytest.raises(InputError) as info:
        load_graph(p)
    assert "g.ttl" in str(info.value) and "cannot parse" in str(info.value)
