"""The structured sources through the build pipeline: claimed, typed, located, schema-valid."""

import json
import tomllib
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from kgbuild.project.pipeline import build_graph

pytestmark = pytest.mark.corpus

CATALOGS = REPO.parent / "shared" / "corpora" / "catalogs"
FOLDERS = ("cyclonedx", "compose", "manifests", "openapi")


@pytest.fixture(scope="module")
def result():
    return build_graph([CATALOGS / f for f in FOLDERS], timestamp=0)


def doc(path: Path) -> str:
    return path.relative_to(CATALOGS).as_posix()


def expected_dependency_counts() -> dict[str, int]:
    """dependsOn assertions each corpus file must yield, counted straight from the files."""
    out = {}
    for path in (CATALOGS / "cyclonedx").rglob("*.json"):
        out[doc(path)] = sum(len(d.get("dependsOn", [])) for d in json.loads(path.read_text())
                             ["dependencies"])
    for path in (CATALOGS / "compose").rglob("*compose*.y*ml"):
        services = yaml.safe_load(path.read_text())["services"].values()
        out[doc(path)] = sum(len(s.get("depends_on", [])) for s in services)
    for path in CATALOGS.glob("*/**/package.json"):
        data = json.loads(path.read_text())
        out[doc(path)] = sum(len(data.get(s, {})) for s in
                             ("dependencies", "devDependencies", "peerDependencies",
                              "optionalDependencies"))
    for path in CATALOGS.glob("*/**/go.mod"):
        text = path.read_text()
        out[doc(path)] = sum(1 for line in text.splitlines() if line.startswith("\t")) + \
            text.count("\nrequire ") - text.count("\nrequire (")
    flask = tomllib.loads((CATALOGS / "manifests/pallets-flask/pyproject.toml").read_text())
    out["manifests/pallets-flask/pyproject.toml"] = len(flask["project"]["dependencies"]) + sum(
        map(len, flask["project"]["optional-dependencies"].values())) + sum(
        map(len, flask["dependency-groups"].values())) + len(flask["build-system"]["requires"])
    vote = CATALOGS / "compose/dockersamples-example-voting-app/vote/requirements.txt"
    out[doc(vote)] = len(vote.read_text().split())
    return out


def test_each_file_is_read_by_its_extractor(result):
    assert {d.rsplit("/", 1)[1]: e for d, e in result.files.items()} == {
        "bom.json": "cyclonedx", "bom.1.4.json": "cyclonedx", "compose.yaml": "compose",
        "docker-compose.yml": "compose", "docker-compose.images.yml": "compose",
        "docker-compose.test.yml": "compose", "package.json": "npm", "requirements.txt":
        "requirements", "pyproject.toml": "pyproject", "go.mod": "gomod", "auth.yaml": "openapi",
        "nexus-swagger.json": "openapi"}
    assert len(result.files) == 19


def test_dependency_counts_per_file(result):
    counts = Counter(a.source for a in result.graph.assertions.values() if a.predicate == "dependsOn")
    assert dict(counts) == {d: n for d, n in expected_dependency_counts().items() if n}


def test_clean_typed_located_and_schema_valid(result):
    assert result.problems == []
    assert result.validation.conforms
    for a in result.graph.assertions.values():
        assert a.line is not None and a.evidence
        assert (a.pointer is not None) == a.source.endswith(".json")
    types = Counter(n.type for n in result.graph.nodes.values())
    assert types["API"] == 2 and types["Service"] > 0 and types["Library"] > 0
