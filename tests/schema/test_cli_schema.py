"""``kgbuild schema show|check|shapes``."""

import json

from click.testing import CliRunner
from rdflib import Graph

from kgbuild.cli.main import main
from kgbuild.extract.text.chunking import chunk_text
from kgbuild.extract.text.prompts import extraction_request, response_schema
from kgbuild.llm.client import response_format
from kgbuild.schema.loader import load_schema


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


def test_json_schema_is_the_response_format_extract_sends():
    d = json.loads(run("schema", "show", "software", "--format", "json-schema").output)
    schema = load_schema("software")
    # the very object an extraction request carries (kgbuild.extract.text.prompts)
    chunk = chunk_text("# Doc\n\nCheckout depends on Pricing.\n", "doc.md")[0]
    request = extraction_request(schema, chunk)
    assert d == request.schema == response_schema(schema)
    sent = response_format("json_schema", request.schema, request.schema_name)  # on the wire
    assert sent["json_schema"]["schema"] == d and sent["json_schema"]["strict"] is True
    item = d["properties"]["relations"]["items"]
    assert {"ownedBy", "ownerOf", "dependsOn", "dependencyOf"} <= set(item["properties"]["predicate"]["enum"])
    assert "Service" in item["properties"]["subject_type"]["anyOf"][0]["enum"]
    assert item["required"] == ["subject", "subject_type", "predicate", "object", "object_type",
                                "evidence"]
