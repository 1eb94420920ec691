"""A project schema that extends the bundled one: every base term kept as it is, new types
declared, and everything derived from the schema (shapes, JSON schema, type rules, the
Backstage reader's kinds) following the merged schema."""

from pathlib import Path

import pytest
from conftest import BACKSTAGE, REPO

from kgbuild.errors import SchemaError
from kgbuild.extract.text.prompts import response_schema
from kgbuild.project.pipeline import build_graph
from kgbuild.schema.loader import load_schema
from kgbuild.schema.shapes import schema_shapes

AI_SCHEMA = REPO / "fixtures" / "schemas" / "ai-catalog.yaml"


def test_extension_keeps_every_base_term_and_adds_its_own():
    base, ext = load_schema(), load_schema(AI_SCHEMA)
    assert ext.name == "ai-catalog"
    assert (ext.namespace, ext.prefix) == (base.namespace, base.prefix)
    for name, t in base.node_types.items():
        assert ext.node_types[name] == t
    assert ext.edge_types == base.edge_types and ext.attributes == base.attributes
    assert ext.node_types["AiResource"].parent == "Resource"
    assert ext.node_types["AiResource"].iri == base.namespace + "AiResource"
    # type rules follow: an AiResource is a Resource, may be owned and be part of a system
    assert ext.is_a("AiResource", "Resource") and "AiResource" in ext.compatible_types("Resource")
    assert ext.allows("ownedBy", "AiResource", "Group") and ext.allows("partOf", "AiResource", "System")
    assert "AiResource" in response_schema(ext)["properties"]["relations"]["items"][
        "properties"]["subject_type"]["anyOf"][0]["enum"]
    assert any("AiResource" in str(o) for o in schema_shapes(ext).objects())
    assert ext.digest != base.digest


def write(tmp_path: Path, text: str, name: str = "schema.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("body, message, line", [
    ("node_types:\n  Component: {}\n", "used by node type 'Component' (from schema 'software')", 4),
    ("edge_types:\n  x:\n    domain: Component\n    range: Group\n    inverse: ownerOf\n",
     "'ownerOf': already used by inverse of 'ownedBy' (from schema 'software')", None),
    ("node_types:\n  Bot:\n    parent: Robot\n", "unknown parent 'Robot'", 4),
    ("attributes:\n  purl: {}\n", "used by attribute 'purl' (from schema 'software')", 4),
])
def test_an_extension_cannot_redeclare_or_break_base_terms(tmp_path, body, message, line):
    path = write(tmp_path, "name: mine\nextends: software\n" + body)
    with pytest.raises(SchemaError) as info:
        load_schema(path)
    assert message in info.value.message and info.value.line == line


def test_extends_a_file_relative_to_the_schema_and_chains(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path, "name: mid\nextends: software\nnode_types:\n  Model:\n    parent: Resource\n",
          "mid.yaml")
    top = write(tmp_path / "sub", "name: top\nextends: ../mid.yaml\nedge_types:\n  trainedOn:\n"
                "    domain: Model\n    range: Resource\n    inverse: trains\n")
    schema = load_schema(top)
    assert schema.allows("trainedOn", "Model", "Resource") and "Component" in schema.node_types
    assert schema.predicate("trains")[1] is True


def test_extends_cycles_unknown_bases_and_wrong_values_are_located(tmp_path):
    write(tmp_path, "name: a\nextends: b.yaml\n", "a.yaml")
    write(tmp_path, "name: b\nextends: a.yaml\n", "b.yaml")
    with pytest.raises(SchemaError, match="extends itself") as info:
        load_schema(tmp_path / "a.yaml")
    assert info.value.line == 2
    for value, message in (("nosuch", "unknown schema 'nosuch'"), ("missing.yaml", "not found"),
                           ("[software]", "bundled schema name or a YAML file")):
        with pytest.raises(SchemaError, match=message) as info:
            load_schema(write(tmp_path, f"name: x\nextends: {value}\n"))
        assert info.value.line == 2


def test_own_namespace_for_new_terms_base_iris_unchanged(tmp_path):
    schema = load_schema(write(tmp_path, "name: acme\nextends: software\nprefix: acme\n"
                               "namespace: 'https://acme.example/vocab#'\n"
                               "node_types:\n  Robot:\n    parent: Component\n"))
    assert schema.node_types["Robot"].iri == "https://acme.example/vocab#Robot"
    assert schema.node_types["Component"].iri == "https://kgbuild.dev/schema/software#Component"


@pytest.mark.corpus
def test_custom_backstage_kind_is_read_when_the_schema_declares_it():
    demo = BACKSTAGE / "backstage-demo" / "examples" / "ai-resources.yaml"
    plain = build_graph([demo], validate=False, timestamp=0, root=demo.parent)
    assert {p.code for p in plain.problems} == {"rejected-entity"}
    assert "declares" not in plain.problems[0].message and "extends" in plain.problems[0].message
    result = build_graph([demo], AI_SCHEMA, validate=True, timestamp=0, root=demo.parent)
    assert [p for p in result.problems if p.severity == "error"] == []
    nodes = {n.id: n for n in result.graph.nodes.values()}
    skill = nodes["airesource:default/mui-to-bui-migration"]
    assert skill.type == "AiResource" and skill.label == "MUI to BUI Migration"
    edges = set(result.graph.edges())
    assert ("airesource:default/mui-to-bui-migration", "ownedBy", "group:backstage/maintainers") in edges
    assert ("airesource:default/mui-to-bui-migration", "partOf", "system:default/backstage") in edges
    assert sum(1 for n in nodes.values() if n.type == "AiResource") == 6
