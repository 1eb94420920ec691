"""CODEOWNERS in builds: fallback owners for manifests, cited at the CODEOWNERS line."""

import shutil

import pytest
from conftest import CATALOGS

from kgbuild.project.pipeline import build_graph

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


CODEOWNERS = """\
# one file rules every kind of manifest alike
*             @acme/platform
/py/          @acme/python-team
/web/         @acme/web-team  # a comment
/go/          @acme/go-team
/reqs/        @jane
/owned/       @acme/web-team
"""


def mixed_repo(tmp_path):
    repo = tmp_path / "repo"
    for folder in ("py", "web", "go", "reqs", "owned", "tools"):
        (repo / folder).mkdir(parents=True)
    (repo / ".github").mkdir()
    (repo / ".github" / "CODEOWNERS").write_text(CODEOWNERS)
    (repo / "py" / "pyproject.toml").write_text(
        '[project]\nname = "Acme_Billing"\ndependencies = ["requests>=2"]\n')
    (repo / "web" / "package.json").write_text('{"name": "@acme/web", "dependencies": {"react": "^18"}}')
    (repo / "go" / "go.mod").write_text("module example.com/acme/svc\n\ngo 1.22\n\n"
                                        "require github.com/spf13/cobra v1.8.0\n")
    (repo / "reqs" / "requirements-dev.txt").write_text("pytest>=8\n")
    (repo / "tools" / "requirements.txt").write_text("black\n")  # only the catch-all rule
    # a Backstage entity names its owner: CODEOWNERS never adds one
    (repo / "owned" / "catalog-info.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: billing-ui}\n"
        "spec: {type: website, lifecycle: production, owner: group:default/ui-team}\n")
    return repo


def test_one_codeowners_owns_pyproject_npm_gomod_and_requirements_alike(tmp_path):
    repo = mixed_repo(tmp_path)
    result = build_graph([repo], store=tmp_path / "s", validate=True, timestamp=0)
    edges = owned(result)
    codeowners_doc = next(d for d in result.graph.documents if d.endswith(".github/CODEOWNERS"))
    [reqs] = [i for i in result.graph.nodes if i.endswith("reqs#python")]  # <dir>#python
    [tools] = [i for i in result.graph.nodes if i.endswith("tools#python")]
    expected = {  # component -> (owner, CODEOWNERS line, extractor)
        "pkg:pypi/acme-billing": ("group:default/python-team", 3, "pyproject"),
        "pkg:npm/%40acme/web": ("group:default/web-team", 4, "npm"),
        "pkg:golang/example.com/acme/svc": ("group:default/go-team", 5, "gomod"),
        reqs: ("user:default/jane", 6, "requirements"),
        tools: ("group:default/platform", 2, "requirements"),
    }
    assert {s for s, _ in edges} - {"component:default/billing-ui"} == set(expected)
    for component, (owner, line, extractor) in expected.items():
        [a] = edges[(component, owner)]  # exactly one owner: the last matching rule's
        assert (a.source, a.line, a.extractor) == (codeowners_doc, line, extractor)
        assert a.evidence == CODEOWNERS.splitlines()[line - 1].strip()
        assert a.confidence == 1.0
        assert result.graph.nodes[owner].type == ("User" if owner.startswith("user:") else "Group")
    assert set(o for s, o in edges if s == "component:default/billing-ui") == {"group:default/ui-team"}
    assert result.validation.conforms
    result.store.close()

    # a new rule re-extracts the Python project through its CODEOWNERS dependency
    co = repo / ".github" / "CODEOWNERS"
    co.write_text(CODEOWNERS + "/py/pyproject.toml @acme/billing\n")
    result = build_graph([repo], store=tmp_path / "s", validate=False, timestamp=0)
    assert {o for s, o in owned(result) if s == "pkg:pypi/acme-billing"} == {"group:default/billing"}
    assert any(d.endswith("py/pyproject.toml") for d in result.changes["changed"])
    result.store.close()


def test_sbom_and_api_spec_components_are_not_owned_by_codeowners(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    (repo / ".github" / "CODEOWNERS").write_text("* @acme/platform\n")
    (repo / "bom.json").write_text(
        '{"bomFormat": "CycloneDX", "specVersion": "1.5", "components": '
        '[{"type": "library", "name": "left-pad", "purl": "pkg:npm/left-pad@1.3.0"}]}')
    (repo / "openapi.yaml").write_text("openapi: 3.0.0\ninfo: {title: Payments, version: '1'}\npaths: {}\n")
    result = build_graph([repo], store=None, validate=False, timestamp=0)
    assert len(result.graph.nodes) >= 2 and owned(result) == {}
