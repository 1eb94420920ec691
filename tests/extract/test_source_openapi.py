"""OpenAPI/Swagger/AsyncAPI: read_api_spec and the standalone spec extractor."""

import json
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from kgbuild.errors import InputError
from kgbuild.extract.manifests.openapi import (
    ApiSpecExtractor,
    parse_api_spec,
    read_api_spec,
    spec_api_id,
)
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

CATALOGS = REPO.parent / "shared" / "corpora" / "catalogs"
NEXUS = CATALOGS / "openapi/janus-idp-backstage-showcase/catalog-entities/apis/nexus-swagger.json"
AUTH = CATALOGS / "openapi/backstage-upstream-2020-11/docs/openapi/definitions/auth.yaml"
EX = ApiSpecExtractor()


def run(path: Path, root: Path = CATALOGS):
    return EX.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(load_schema(), [root]))


@pytest.mark.corpus
def test_swagger_json():
    raw = json.loads(NEXUS.read_text())
    spec = read_api_spec(NEXUS)
    assert (spec["kind"], spec["specVersion"]) == ("swagger", raw["swagger"]) == ("swagger", "2.0")
    assert (spec["title"], spec["version"]) == (raw["info"]["title"], raw["info"]["version"])
    assert (spec["pointer"], spec["line"]) == ("/info", None)


@pytest.mark.corpus
def test_openapi_yaml():
    raw = yaml.safe_load(AUTH.read_text())
    spec = read_api_spec(AUTH)
    assert (spec["kind"], spec["specVersion"]) == ("openapi", raw["openapi"]) == ("openapi", "3.0.1")
    assert (spec["title"], spec["version"]) == ("Auth API", raw["info"]["version"])
    assert spec["description"] == raw["info"]["description"].strip()
    assert spec["line"] == 2 and spec["pointer"] is None


def test_asyncapi_and_numeric_versions():
    spec = parse_api_spec("asyncapi: 2.6.0\ninfo:\n  title: Streetlights\n  version: 1.0\n", "a.yaml")
    assert (spec["kind"], spec["specVersion"], spec["title"], spec["version"]) == (
        "asyncapi", "2.6.0", "Streetlights", "1.0")


@pytest.mark.parametrize("text, is_json, line, message", [
    ("kind: Component\n", False, 1, "not an OpenAPI"),
    ("swagger:\n  enabled: true\n", False, 1, "not an OpenAPI"),
    ('{"openapi": "3.0.0",\n "info": {"title": "x"\n', True, 3, "JSON syntax error"),
    ("openapi: 3.0.0\ninfo: [\n", False, 3, "YAML syntax error"),
])
def test_not_a_spec(text, is_json, line, message):
    with pytest.raises(InputError) as err:
        parse_api_spec(text, "spec", is_json)
    assert err.value.line == line and message in err.value.message and err.value.file == "spec"


@pytest.mark.corpus
def test_extractor_node():
    for path in (NEXUS, AUTH):
        doc_id = path.relative_to(CATALOGS).as_posix()
        result = run(path)
        [node] = result.nodes
        assert node.id == spec_api_id(doc_id) == f"{doc_id}#api"
        assert node.type == "API" and node.attributes["definitionSource"] == doc_id
        assert node.attributes["specType"] == "openapi"
        assert result.edges == [] and result.problems == []
    [auth] = run(AUTH).nodes
    assert (auth.label, auth.attributes["version"], auth.attributes["specVersion"], auth.line) == (
        "Auth API", "0.1.1-alpha.8", "3.0.1", 2)


def test_spec_without_info():
    spec = parse_api_spec('{"swagger": "2.0", "paths": {}}', "s.json", is_json=True)
    assert (spec["title"], spec["version"], spec["pointer"]) == (None, None, "/swagger")
    assert parse_api_spec("x: 1\nopenapi: 3.1.0\ninfo: nope\n", "s.yaml")["line"] == 2


def test_untitled_spec_is_named_after_its_file(tmp_path):
    path = tmp_path / "asyncapi.yaml"
    path.write_text("asyncapi: 3.0.0\ninfo:\n  version: 2.0.0\n")
    result = run(path, tmp_path)
    assert result.nodes[0].label == "asyncapi" and result.nodes[0].attributes["specType"] == "asyncapi"
    assert [(p.code, p.line) for p in result.problems] == [("no-title", 2)]


@pytest.mark.parametrize("name, head, claimed", [
    ("openapi.yaml", b"", True), ("swagger.json", b"", True), ("asyncapi.yml", b"", True),
    ("petstore.yaml", b"# Petstore\nopenapi: 3.0.0\n", True),
    ("nexus.json", b'{\n  "swagger": "2.0",', True),
    ("catalog.yaml", b"kind: API\nspec:\n  definition: |\n    openapi: 3.0.0\n", False),
    ("package.json", b'{"name": "openapi"}', False),
    ("notes.txt", b"openapi: 3.0.0\n", False),
    ("values.yaml", b"image: x\nswagger:\n  enabled: true\n", False),
    ("spec.yaml", b"swagger: '2.0'\n", True),
])
def test_claims(name, head, claimed):
    assert EX.claims(Path(name), head) is claimed
