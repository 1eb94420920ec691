"""``kgbuild schema show|check|shapes``."""

import json

from click.testing import CliRunner
from rdflib import Graph

from kgbuild.cli.main import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_show_text_and_json():
    r = run("schema", "show", "software")
    assert r.exit_code == 0 and "--ownedBy-->" in r.output and "inverse: ownerOf" in r.output
    d = json.loads(run("schema", "show", "software", "--format", "json").output)
    assert d["edge_types"]["memberOf"]["inverse"] == "hasMember"


def test_show_turtle_vocabulary_parses():
    r = run("schema", "show", "software", "--format", "turtle")
    g = Graph().parse(data=r.output, format="turtle")
    assert len(g) > 50


def test_check_ok_and_error(tmp_path):
    assert run("schema", "check", "software").exit_code == 0
    bad = tmp_path / "b.yaml"
    bad.write_text("name: b\nnamespace: 'https://x/#'\nnode_types: {A: {}, a: {}}\nedge_types: {}\n")
    r = run("schema", "check", bad)
    assert r.exit_code == 2 and "duplicate name 'a'" in r.output
    d = json.loads(run("schema", "check", bad, "--format", "json").output)
    assert d["ok"] is False


def test_shapes_to_file(tmp_path):
    out = tmp_path / "shapes.ttl"
    assert run("schema", "shapes", "software", "-o", out).exit_code == 0
    g = Graph().parse(out, format="turtle")
    assert any("ownedBy-domain" in str(s) for s in g.subjects())


def test_extraction_json_schema_is_derived_from_the_schema():
    d = json.loads(run("schema", "show", "software", "--format", "json-schema").output)
    entity = d["properties"]["entities"]["items"]["properties"]
    relation = d["properties"]["relations"]["items"]
    assert "Service" in entity["type"]["enum"] and "Location" in entity["type"]["enum"]
    assert {"ownedBy", "ownerOf", "dependsOn", "dependencyOf"} <= set(relation["properties"]["predicate"]["enum"])
    assert "evidence" in relation["required"]
    assert "ownedBy: Component|API|Resource|System|Domain|Template -> Group|User|Domain" in \
        d["properties"]["relations"]["description"]
