"""The Backstage extractor on real catalogs: Backstage's own relation semantics."""

import pytest
from conftest import BACKSTAGE, both_directions, expected_relations

from kgbuild.project.pipeline import build_graph
from kgbuild.graph.rdf import to_rdflib

UPSTREAM = BACKSTAGE / "backstage-upstream-2020-11"


def relations(*paths, **kw):
    result = build_graph(list(paths), validate=False, timestamp=0, **kw)
    return result, both_directions(result.graph)


@pytest.mark.corpus
def test_reproduces_backstage_relations_exactly():
    expected = expected_relations(BACKSTAGE / "EXPECTED-backstage-upstream-2020-11.relations.jsonl")
    result, got = relations(UPSTREAM)
    assert got == expected
    ids = {n.id for n in result.graph.nodes.values()}
    assert {s for s, _, _ in expected} <= ids


@pytest.mark.corpus
def test_stable_ids_are_lowercase_refs_with_identifier():
    result, _ = relations(UPSTREAM)
    for node in result.graph.nodes.values():
        kind, rest = node.id.split(":", 1)
        assert node.id == node.id.lower() and "/" in rest
    g = to_rdflib(result.graph)
    idents = {str(o) for o in g.objects(None, __import__("rdflib").namespace.DCTERMS.identifier)}
    assert "component:default/artist-lookup" in idents


@pytest.mark.corpus
def test_rejected_entities_reported_with_file_and_line_and_build_goes_on():
    result, got = relations(BACKSTAGE)
    rejected = {(p.file.rsplit("/", 1)[-1], p.line) for p in result.problems if p.code == "rejected-entity"}
    assert ("invalid-component.yaml", 4) in rejected  # metadata.name with a space
    assert ("mcp-server-api.yaml", 15) in rejected  # API without spec.definition
    assert sum(1 for f, _ in rejected if f == "ai-resources.yaml") == 6  # unknown kind
    assert not any(s.startswith("component:default/invalid") for s, _, _ in got)
    assert not any("github-mcp-server" in s for s, _, _ in got)
    assert ("component:default/backstage-showcase", "dependsOn", "resource:default/pgdb") in got


def test_namespace_defaults_to_the_referencing_entity(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: web\n"
        "  namespace: shop\nspec:\n  type: website\n  lifecycle: production\n  owner: team-x\n"
        "  system: default/storefront\n  dependsOn: [component:api-gw]\n")
    _, got = relations(tmp_path)
    assert ("component:shop/web", "ownedBy", "group:shop/team-x") in got
    assert ("component:shop/web", "partOf", "system:default/storefront") in got
    assert ("component:shop/web", "dependsOn", "component:shop/api-gw") in got


@pytest.mark.corpus
def test_explicit_namespace_and_kind_in_refs():
    _, got = relations(BACKSTAGE / "backstage-upstream-transcribed")
    assert ("component:alternative/different-namespace", "ownedBy", "group:default/team-a") in got


def test_dependson_without_kind_rejects_the_whole_entity(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: web\n"
        "spec:\n  type: website\n  lifecycle: production\n  owner: team-x\n"
        "  dependsOn:\n    - component:ok\n    - pgdb\n")
    result, got = relations(tmp_path)
    assert got == set()
    [p] = [p for p in result.problems if p.code == "rejected-entity"]
    assert p.line == 11 and "no kind" in p.message


@pytest.mark.parametrize("spec, message", [
    ("  lifecycle: production\n  owner: x\n", "missing required spec.type"),
    ("  type: service\n  owner: x\n", "missing required spec.lifecycle"),
    ("  type: service\n  lifecycle: production\n  owner: [x]\n", "spec.owner .* must be a non-empty string"),
    ("  type: service\n  lifecycle: p\n  owner: x\n  providesApis: a\n", "must be a list"),
])
def test_missing_or_malformed_spec_fields(tmp_path, spec, message):
    (tmp_path / "c.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Component\n"
                                     "metadata:\n  name: svc\nspec:\n" + spec)
    result, got = relations(tmp_path)
    assert got == set()
    assert any(p.code == "rejected-entity" and __import__("re").search(message, p.message)
               for p in result.problems), result.problems


@pytest.mark.parametrize("head, message", [
    ("apiVersion: backstage.io/v1alpha1\nkind: component\n", "unknown kind 'component'"),
    ("apiVersion: backstage.io/v1beta3\nkind: Template\n", "does not support apiVersion"),
    ("apiVersion: backstage.io/\nkind: Component\n", "not of the form group/version"),
    ("apiVersion: backstage.io/v2\nkind: Component\n", "does not support apiVersion"),
])
def test_envelope_errors(tmp_path, head, message):
    (tmp_path / "c.yaml").write_text(head + "metadata:\n  name: x\nspec:\n  type: service\n"
                                     "  lifecycle: p\n  owner: y\n  steps: []\n")
    result, got = relations(tmp_path)
    assert got == set() and any(message in p.message for p in result.problems)


def test_invalid_tags_and_labels_reject(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata:\n  name: g\n  tags: [Go 1.15]\n"
        "spec:\n  type: team\n  children: []\n---\n"
        "apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata:\n  name: h\n"
        "  labels: {tier: 'not valid!'}\nspec:\n  type: team\n  children: [g]\n")
    result, _ = relations(tmp_path)
    lines = sorted(p.line for p in result.problems if p.code == "rejected-entity")
    assert lines == [5, 14]


@pytest.mark.corpus
def test_multi_document_and_users_groups():
    _, got = relations(UPSTREAM / "packages/catalog-model/examples/acme/team-a-group.yaml")
    assert ("user:default/nigel.manning", "memberOf", "group:default/team-a") in got
    assert ("group:default/team-a", "childOf", "group:default/backstage") in got


def test_location_targets_followed_inside_root_and_reported_otherwise(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "g.yml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata: {name: g}\n"
        "spec: {type: team, children: []}\n")
    (tmp_path / "loc.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Location\nmetadata: {name: l}\nspec:\n  targets:\n"
        "    - ./sub/g.yml\n    - ../outside.yaml\n    - https://example.com/x.yaml\n    - ./missing.yaml\n")
    result = build_graph([tmp_path / "loc.yaml"], validate=False, timestamp=0)
    assert "group:default/g" in result.graph.nodes  # followed although not passed
    codes = {(p.code, p.line) for p in result.problems}
    assert {("target-outside-root", 7), ("not-fetched", 8), ("missing-target", 9)} <= codes


@pytest.mark.corpus
def test_template_owner_and_text_placeholder(tmp_path):
    _, got = relations(BACKSTAGE / "backstage-create-app-0.9.2")
    assert ("template:default/example-nodejs-template", "ownedBy", "user:default/guest") in got
    assert ("user:default/guest", "memberOf", "group:default/guests") in got


def test_relative_placeholder_must_exist(tmp_path):
    api = ("apiVersion: backstage.io/v1alpha1\nkind: API\nmetadata: {name: a}\nspec:\n  type: openapi\n"
           "  lifecycle: p\n  owner: t\n  definition:\n    $text: ./spec.yaml\n")
    (tmp_path / "api.yaml").write_text(api)
    result, got = relations(tmp_path)
    assert got == set() and any("does not exist" in p.message for p in result.problems)
    (tmp_path / "spec.yaml").write_text("openapi: 3.0.0\n")
    _, got = relations(tmp_path)
    assert ("api:default/a", "ownedBy", "group:default/t") in got
    (tmp_path / "api.yaml").write_text(api.replace("$text", "$json"))
    _, got = relations(tmp_path)
    assert got == set()  # $json resolves to an object: not a valid definition


@pytest.mark.corpus
def test_evidence_and_location_point_at_the_asserting_line():
    result, _ = relations(UPSTREAM / "packages/catalog-model/examples/acme/team-a-group.yaml")
    text = (UPSTREAM / "packages/catalog-model/examples/acme/team-a-group.yaml").read_text().splitlines()
    assert result.graph.assertions
    for a in result.graph.assertions.values():
        assert a.extractor == "backstage" and a.confidence == 1.0
        assert a.evidence == text[a.line - 1].strip()


def test_access_labels_from_annotations():
    from conftest import FIXTURE_CATALOG
    result, _ = relations(FIXTURE_CATALOG)
    assert result.graph.nodes["resource:default/payments-db"].access == {"pci"}
    pci = [a for a in result.graph.assertions.values() if a.subject == "resource:default/payments-db"]
    assert pci and all(a.access == {"pci"} for a in pci)


@pytest.mark.corpus
def test_janus_showcase_counts():
    _, got = relations(BACKSTAGE / "janus-idp-backstage-showcase")
    deps = {o for s, p, o in got if s == "component:default/backstage-showcase" and p == "dependsOn"}
    assert deps == {f"resource:default/{r}" for r in ("pgdb", "argocd", "obc", "keycloak", "github")}


@pytest.mark.corpus
def test_kind_missing_from_a_custom_schema_is_reported(tmp_path):
    schema = tmp_path / "teams.yaml"
    schema.write_text("name: teams\nnamespace: 'https://example.org/teams#'\n"
                      "node_types: {Group: {}, User: {}}\n"
                      "edge_types: {memberOf: {domain: User, range: Group, inverse: hasMember}}\n")
    result = build_graph([BACKSTAGE / "backstage-create-app-0.9.2"], schema, store=None,
                         validate=True, timestamp=0)
    assert ("user:default/guest", "memberOf", "group:default/guests") in result.graph.edges()
    mismatched = [p for p in result.problems if p.code == "schema-mismatch"]
    assert mismatched and all(p.line for p in mismatched)
    assert result.validation.conforms
