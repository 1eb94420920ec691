"""Compose files: services scoped to their project, every depends_on entry an edge at its line."""

from pathlib import Path

import pytest
import yaml
from conftest import REPO

from kgbuild.extract.manifests.compose import ComposeExtractor
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

CATALOGS = REPO.parent / "shared" / "corpora" / "catalogs"
FILES = sorted(p for p in (CATALOGS / "compose").rglob("*") if p.suffix in (".yml", ".yaml"))
VOTING = CATALOGS / "compose" / "dockersamples-example-voting-app"
EX = ComposeExtractor()


def run(path: Path, root: Path = CATALOGS):
    return EX.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(load_schema(), [root]))


@pytest.mark.corpus
def test_corpus_has_compose_files():
    assert len(FILES) == 6 and all(EX.claims(p, b"") for p in FILES)


@pytest.mark.corpus
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(CATALOGS / "compose").as_posix())
def test_every_depends_on_entry_is_an_edge(path):
    services = yaml.safe_load(path.read_text())["services"]
    project = path.parent.name.lower()
    expected = sorted((f"compose:{project}/{name}", f"compose:{project}/{dep}")
                      for name, spec in services.items() for dep in spec.get("depends_on", []))
    result = run(path)
    assert sorted((e.subject, e.object) for e in result.edges) == expected
    lines = path.read_text().splitlines()
    for e in result.edges:
        target = e.object.rsplit("/", 1)[1]
        assert lines[e.line - 1].strip() in (f"- {target}", f"{target}:")
        assert e.evidence.startswith(lines[e.line - 1].strip())
        assert e.predicate == "dependsOn" and e.subject_type == e.object_type == "Service"
    assert {n.id for n in result.nodes} == {f"compose:{project}/{s}" for s in services}
    assert result.problems == []


@pytest.mark.corpus
def test_map_form_keeps_the_condition_in_the_evidence():
    edges = run(VOTING / "docker-compose.yml").edges
    seed = next(e for e in edges if e.subject.endswith("/seed"))
    assert (seed.object, seed.line) == ("compose:dockersamples-example-voting-app/vote", 85)
    assert seed.evidence == "vote: condition: service_healthy"


@pytest.mark.corpus
def test_projects_scope_services():
    nginx = {n.id for n in run(CATALOGS / "compose/docker-awesome-compose/nginx-golang-postgres/"
                                          "compose.yaml").nodes}
    mysql = {n.id for n in run(CATALOGS / "compose/docker-awesome-compose/react-java-mysql/"
                                          "compose.yaml").nodes}
    assert "compose:nginx-golang-postgres/db" in nginx and "compose:react-java-mysql/db" in mysql
    assert not nginx & mysql
    # two files of one project describe the same services; a sub-directory is another project
    dev = {n.id for n in run(VOTING / "docker-compose.yml").nodes}
    images = {n.id for n in run(VOTING / "docker-compose.images.yml").nodes}
    test = {n.id for n in run(VOTING / "result" / "docker-compose.test.yml").nodes}
    assert images <= dev and not dev & test


@pytest.mark.corpus
def test_image_and_build_context_are_kept():
    nodes = {n.label: n for n in run(VOTING / "docker-compose.yml").nodes}
    assert nodes["db"].attributes == {"image": "postgres:15-alpine"}
    assert nodes["vote"].attributes == {"buildContext": "./vote"}
    assert nodes["db"].type == "Service" and nodes["db"].line == 64


def test_top_level_name_links_and_undefined_services(tmp_path):
    path = tmp_path / "My App!" / "compose.yml"
    path.parent.mkdir()
    path.write_text("services:\n  web:\n    links:\n      - db:database\n    depends_on:\n"
                    "      api:\n        condition: service_started\n        required: false\n"
                    "  db:\n    image: postgres\n")
    result = run(path, tmp_path)
    assert [(e.subject, e.object, e.line) for e in result.edges] == [
        ("compose:myapp/web", "compose:myapp/api", 6), ("compose:myapp/web", "compose:myapp/db", 4)]
    assert result.edges[0].evidence == "api: condition: service_started required: false"
    [p] = result.problems
    assert (p.line, p.code) == (6, "unknown-service")
    path.write_text("name: shop\n" + path.read_text())
    assert {n.id for n in run(path, tmp_path).nodes} == {"compose:shop/web", "compose:shop/db"}


@pytest.mark.parametrize("name, claimed", [
    ("docker-compose.yml", True), ("docker-compose.override.yaml", True), ("compose.yaml", True),
    ("compose.prod.yml", True), ("Docker-Compose.YML", True), ("catalog-info.yaml", False),
    ("composer.json", False)])
def test_claims(name, claimed):
    assert EX.claims(Path(name), b"") is claimed
