"""package.json: every dependency entry an edge to its npm purl, at its pointer and line."""

import json
from pathlib import Path

import pytest
from conftest import REPO

from kgbuild.extract.manifests.npm import NpmExtractor
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

CATALOGS = REPO.parent / "shared" / "corpora" / "catalogs"
FILES = sorted(CATALOGS.glob("**/package.json"))
SECTIONS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
EX = NpmExtractor()


def run(path: Path, root: Path = CATALOGS):
    return EX.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(load_schema(), [root]))


def npm_id(name: str) -> str:
    return "pkg:npm/" + name.lower().replace("@", "%40")


@pytest.mark.corpus
def test_corpus_has_manifests():
    assert len(FILES) == 3


@pytest.mark.corpus
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name)
def test_every_dependency_is_an_edge(path):
    data = json.loads(path.read_text())
    expected = sorted((s, npm_id(name)) for s in SECTIONS for name in data.get(s, {}))
    result = run(path)
    assert sorted((e.evidence.split(":")[0], e.object) for e in result.edges) == expected
    lines = path.read_text().splitlines()
    for e in result.edges:
        section, name = e.pointer[1:].replace("~1", "/").split("/", 1)
        assert lines[e.line - 1].strip().rstrip(",") == f'"{name}": "{data[section][name]}"'
        assert e.evidence == f'{section}: "{name}": "{data[section][name]}"'
        assert e.subject == result.nodes[0].id and e.object_type == "Library"
    assert result.problems == []


@pytest.mark.corpus
def test_dev_dependencies_are_flagged_in_the_evidence():
    result = run(CATALOGS / "manifests/backstage-demo/package.json")
    cli = next(e for e in result.edges if e.object == "pkg:npm/%40backstage/cli")
    assert cli.evidence == 'devDependencies: "@backstage/cli": "backstage:^"'
    assert cli.pointer == "/devDependencies/@backstage~1cli"


@pytest.mark.corpus
def test_private_packages_get_document_scoped_ids():
    demo, showcase = (run(CATALOGS / f"manifests/{d}/package.json").nodes[0]
                      for d in ("backstage-demo", "janus-idp-backstage-showcase"))
    assert demo.label == showcase.label == "root"
    assert demo.id == "manifests/backstage-demo/package.json#root" != showcase.id
    [result] = run(CATALOGS / "compose/dockersamples-example-voting-app/result/package.json").nodes
    assert result.id == result.attributes["purl"] == "pkg:npm/result"
    assert result.attributes["version"] == "1.0.0"


def test_aliases_bad_entries_and_sections(tmp_path):
    path = tmp_path / "package.json"
    path.write_text(json.dumps({
        "name": "@Acme/Web", "version": "2.0.0",
        "dependencies": {"lodash-es": "npm:lodash@^4", "my-ui": "npm:@acme/ui", "ok": "^1"},
        "peerDependencies": {"react": "^18"},
        "optionalDependencies": ["fsevents"],
        "devDependencies": {"Bad Name": "1", "num": 3}}, indent=2))
    result = run(path, tmp_path)
    lines = path.read_text().splitlines()

    def line_of(needle: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if needle in line)

    assert result.nodes[0].id == "pkg:npm/%40acme/web"
    assert [(e.object, e.line) for e in result.edges] == [
        ("pkg:npm/lodash", line_of('"lodash-es"')), ("pkg:npm/%40acme/ui", line_of('"my-ui"')),
        ("pkg:npm/ok", line_of('"ok"')), ("pkg:npm/react", line_of('"react"'))]
    assert sorted((p.line, p.message.split(":")[0]) for p in result.problems) == [
        (line_of('"optionalDependencies"'), "/optionalDependencies"),
        (line_of('"Bad Name"'), "/devDependencies/Bad Name"),
        (line_of('"num"'), "/devDependencies/num")]


def test_non_object_and_nameless(tmp_path):
    path = tmp_path / "app" / "package.json"
    path.parent.mkdir()
    path.write_text("[1, 2]")
    assert [p.code for p in run(path, tmp_path).problems] == ["not-a-manifest"]
    path.write_text('{"dependencies": {"x": "1"}}')
    result = run(path, tmp_path)
    assert result.nodes[0].id == "app/package.json#app"
    assert [e.object for e in result.edges] == ["pkg:npm/x"]


def test_a_package_depending_on_itself_is_no_edge(tmp_path):
    path = tmp_path / "eslint" / "package.json"  # as eslint 9's own package.json has it
    path.parent.mkdir()
    path.write_text(json.dumps({"name": "eslint", "devDependencies": {
        "eslint": "file:.", "mocha": "^10"}}))
    result = run(path, tmp_path)
    assert [(e.subject, e.object) for e in result.edges] == [("pkg:npm/eslint", "pkg:npm/mocha")]
    assert result.problems == []
