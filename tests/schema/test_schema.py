"""Schema loading, its checks, and what is derived from it."""

import textwrap

import pytest
from rdflib import URIRef
from rdflib.namespace import OWL, RDF, RDFS

from kgbuild import SchemaError, load_schema
from kgbuild.schema.loader import parse_schema
from kgbuild.schema.shapes import schema_shapes
from kgbuild.schema.vocabulary import vocabulary

GOOD = """
name: tiny
namespace: "https://example.org/tiny#"
node_types:
  Thing: {}
  Widget: {parent: Thing}
  Team: {}
edge_types:
  ownedBy: {domain: [Thing], range: Team, inverse: ownerOf}
  uses: {domain: Thing, range: Thing, transitive: true}
attributes:
  colour: {datatype: string}
"""


def write(tmp_path, text):
    p = tmp_path / "s.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def test_bundled_software_schema(schema):
    assert schema.name == "software"
    assert {"Component", "Service", "Library", "Website", "API", "Resource", "System", "Domain",
            "Group", "User", "Template", "Location"} <= set(schema.node_types)
    pairs = {e.name: e.inverse for e in schema.edge_types.values()}
    assert pairs == {"ownedBy": "ownerOf", "dependsOn": "dependencyOf", "providesApi": "apiProvidedBy",
                     "consumesApi": "apiConsumedBy", "partOf": "hasPart", "memberOf": "hasMember",
                     "childOf": "parentOf", "routesTo": "routedFrom"}
    assert schema.is_a("Service", "Component") and not schema.is_a("Component", "Service")


def test_inverse_is_derived(schema):
    assert schema.canonical("group:default/a", "ownerOf", "component:default/b") == (
        "component:default/b", "ownedBy", "group:default/a")
    assert schema.canonical("x", "dependsOn", "y") == ("x", "dependsOn", "y")
    et, inverted = schema.predicate("hasMember")
    assert et.name == "memberOf" and inverted


def test_allows_uses_type_hierarchy(schema):
    assert schema.allows("ownedBy", "Service", "Group")
    assert not schema.allows("ownedBy", "Group", "Service")
    assert schema.allows("dependsOn", "Library", "Resource")


def test_load_by_path(tmp_path):
    s = load_schema(write(tmp_path, GOOD))
    assert s.name == "tiny" and s.prefix == "tiny"
    assert s.edge_types["ownedBy"].range == ("Team",)


@pytest.mark.parametrize("mutation, message", [
    (("range: Team, inverse", "range: Teem, inverse"), "unknown type 'Teem' in range"),
    (("Team: {}", "Team: {}\n  widget: {}"), "duplicate name 'widget'"),
    (("uses: {domain", "ownerOf: {domain: Thing, range: Thing}\n  uses: {domain"),
     "inverse 'ownerOf' is declared as an edge type"),
    (("transitive: true", "transitive: yes-please"), "transitive must be true or false"),
    (("Widget: {parent: Thing}", "Widget: {parent: Gadget}"), "unknown parent 'Gadget'"),
    (("Thing: {}", "Thing: {parent: Widget}"), "parent cycle"),
    (("datatype: string", "datatype: colourful"), "unknown datatype"),
    (('namespace: "https://example.org/tiny#"', "namespace: tiny"), "absolute IRI"),
    (("colour: {datatype: string}", "colour: {datatype: string, unit: cm}"), "unknown key 'unit'"),
    (("edge_types:", "edge_typez:"), "missing required key 'edge_types'"),
    (("ownedBy: {domain: [Thing], ", "ownedBy: {"), "has no domain"),
])
def test_schema_errors(tmp_path, mutation, message):
    old, new = mutation
    assert old in GOOD
    with pytest.raises(SchemaError, match=message) as info:
        load_schema(write(tmp_path, GOOD.replace(old, new)))
    assert str(info.value).startswith(str(tmp_path / "s.yaml"))


def test_inverse_name_clash_between_two_edges(tmp_path):
    text = GOOD.replace("uses: {domain: Thing, range: Thing, transitive: true}",
                        "uses: {domain: Thing, range: Thing, inverse: ownerOf}")
    with pytest.raises(SchemaError, match="duplicate name 'ownerOf'"):
        load_schema(write(tmp_path, text))


def test_yaml_syntax_error_has_line(tmp_path):
    with pytest.raises(SchemaError) as info:
        load_schema(write(tmp_path, "name: x\nnode_types: [\n  a: b\n"))
    assert info.value.line is not None and "YAML syntax error" in str(info.value)


def test_unknown_schema_name():
    with pytest.raises(SchemaError, match="unknown schema 'nope'.*software"):
        load_schema("nope")


def test_not_a_mapping():
    with pytest.raises(SchemaError, match="must be a mapping"):
        parse_schema(["x"])


def test_vocabulary_has_classes_properties_inverses(schema):
    g = vocabulary(schema)
    ns = schema.namespace
    assert (URIRef(ns + "Service"), RDFS.subClassOf, URIRef(ns + "Component")) in g
    assert (URIRef(ns + "ownerOf"), OWL.inverseOf, URIRef(ns + "ownedBy")) in g
    assert (URIRef(ns + "partOf"), RDF.type, OWL.TransitiveProperty) in g
    assert (URIRef(ns + "memberOf"), RDFS.domain, URIRef(ns + "User")) in g


def test_shapes_cover_every_edge_type(schema):
    g = schema_shapes(schema)
    shapes = {str(s).rsplit("#", 1)[1] for s in g.subjects(RDF.type, None) if "#" in str(s)}
    for e in schema.edge_types:
        assert f"{e}-domain" in shapes and f"{e}-range" in shapes


def test_allowed_edges_include_both_directions(schema):
    names = {(e["name"], e["stored"], e["direction"]) for e in schema.allowed_edges()}
    assert ("ownerOf", "ownedBy", "in") in names and ("ownedBy", "ownedBy", "out") in names
