"""Dependency qualifiers (dev, peer, optional, build, indirect) as structured assertion data."""

import json
import tomllib

import pytest
from conftest import CATALOGS

from kgbuild.project.pipeline import build
from kgbuild.graph.rdf import from_rdf
from kgbuild.io.rdffile import load_graph

pytestmark = pytest.mark.corpus

MANIFESTS = CATALOGS / "manifests"


def qualified(result):
    return {(a.subject, a.object, q) for a in result.graph.assertions.values() for q in a.qualifiers}


def test_npm_dev_dependencies_are_flagged(tmp_path):
    pkg = MANIFESTS / "backstage-demo" / "package.json"
    result = build([pkg], tmp_path / "g.ttl", store=None, timestamp=0, validate=False)
    data = json.loads(pkg.read_text())
    dev = {a.object for a in result.graph.assertions.values() if "dev" in a.qualifiers}
    assert len(dev) == len(data.get("devDependencies", {})) > 0
    runtime = [a for a in result.graph.assertions.values() if not a.qualifiers]
    assert len(runtime) == len(data.get("dependencies", {}))


def test_pyproject_groups_and_build_requirements(tmp_path):
    py = MANIFESTS / "pallets-flask" / "pyproject.toml"
    result = build([py], tmp_path / "g.ttl", store=None, timestamp=0, validate=False)
    data = tomllib.loads(py.read_text())
    quals = {q for a in result.graph.assertions.values() for q in a.qualifiers}
    assert "build" in quals
    assert {f"optional:{g}" for g in data["project"].get("optional-dependencies", {})} <= quals
    assert {f"group:{g}" for g in data.get("dependency-groups", {})} <= quals


def test_go_indirect_requirements_survive_turtle(tmp_path):
    mod = CATALOGS / "manifests" / "docker-awesome-compose" / "nginx-golang-postgres" / "backend" / "go.mod"
    out = tmp_path / "g.ttl"
    result = build([mod], out, store=tmp_path / "s", timestamp=0, validate=True)
    indirect = {a.object for a in result.graph.assertions.values() if "indirect" in a.qualifiers}
    expected = {line.removeprefix("require").split()[0] for line in mod.read_text().splitlines()
                if "// indirect" in line}
    assert indirect == {f"pkg:golang/{m}" for m in expected} and indirect
    assert result.validation.conforms
    reread = from_rdf(load_graph(out), result.schema)
    assert {a.object for a in reread.assertions.values() if "indirect" in a.qualifiers} == indirect
