"""CODEOWNERS in builds: fallback owners for manifests, cited at the CODEOWNERS line."""

import shutil

import pytest
from conftest import CATALOGS

from kgbuild.build.pipeline import build_graph

pytestmark = pytest.mark.corpus


def repo_with(tmp_path, codeowners_from, manifests):
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    shutil.copy(CATALOGS / "codeowners" / codeowners_from / ".github" / "CODEOWNERS", repo / ".github")
    for rel in manifests:
        shutil.copytree(CATALOGS / rel, repo / rel.rsplit("/", 1)[-1])
    return repo


def owned(result):
    return {(s, o): a for (s, p, o), a in result.graph.edges().items() if p == "ownedBy"}


def test_compose_services_owned_by_codeowners_users(tmp_path):
    repo = repo_with(tmp_path, "docker-awesome-compose", ["compose/docker-awesome-compose/nginx-golang-postgres"])
    result = build_graph([repo], store=tmp_path / "s", validate=True, timestamp=0)
    edges = owned(result)
    services = {n.id for n in result.graph.nodes.values() if n.type == "Service"}
    assert services  # the compose services
    for svc in services:
        for user in ("user:default/aiordache", "user:default/glours"):
            [a] = edges[(svc, user)]
            assert a.source == "repo/.github/CODEOWNERS" and a.line == 1 and a.extractor == "compose"
            assert a.confidence == 0.8  # written without '@': GitHub ignores such owners
    assert result.validation.conforms


def test_npm_package_owned_by_team_and_changes_follow_codeowners(tmp_path):
    repo = repo_with(tmp_path, "backstage-demo", ["manifests/backstage-demo"])
    store = tmp_path / "s"
    result = build_graph([repo], store=store, validate=False, timestamp=0)
    owners = {o for (s, o) in owned(result)}
    assert owners == {"group:default/operations-maintainers", "user:default/mihaitabara"}
    result.store.close()
    co = repo / ".github" / "CODEOWNERS"
    co.write_text(co.read_text() + "\n/backstage-demo/ @backstage/demo-team\n")
    result = build_graph([repo], store=store, validate=False, timestamp=0)
    assert {o for (s, o) in owned(result)} == {"group:default/demo-team"}  # last match wins
    assert "repo/backstage-demo/package.json" in result.changes["changed"]  # via its dependency
    result.store.close()
    co.unlink()
    result = build_graph([repo], store=store, validate=False, timestamp=0)
    assert owned(result) == {}


def test_explicit_owner_beats_codeowners(tmp_path):
    repo = repo_with(tmp_path, "backstage-demo", [])
    (repo / "catalog-info.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: web}\n"
        "spec: {type: website, lifecycle: production, owner: web-team}\n")
    result = build_graph([repo], store=None, validate=False, timestamp=0)
    assert set(owned(result)) == {("component:default/web", "group:default/web-team")}
