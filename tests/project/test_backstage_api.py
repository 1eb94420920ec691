"""A running Backstage as a source: the catalog API served by a loopback server (the shared
corpora, processed as Backstage's catalog would) gives the relations reading the same entities
from files gives; each entity is a document kept incrementally by its etag."""

from __future__ import annotations

import copy
import json

import pytest
from catalog_api_server import TOKEN, CatalogApi, load_entities
from click.testing import CliRunner
from conftest import BACKSTAGE, both_directions, expected_relations

from kgbuild.cli.main import main
from kgbuild.project.pipeline import build_graph
from kgbuild.remote.backstage import BY_NAME, CatalogError, CatalogSource
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

UPSTREAM = BACKSTAGE / "backstage-upstream-2020-11"
FOLDERS = sorted(p.name for p in BACKSTAGE.iterdir() if p.is_dir()) if BACKSTAGE.is_dir() else []

COMPONENT = {"apiVersion": "backstage.io/v1alpha1", "kind": "Component",
             "metadata": {"name": "web", "namespace": "default", "annotations": {
                 "backstage.io/managed-by-location": "url:https://github.com/acme/web/blob/main/catalog-info.yaml",
                 "backstage.io/managed-by-origin-location": "url:https://github.com/acme/catalog/blob/main/all.yaml"}},
             "spec": {"type": "website", "lifecycle": "production", "owner": "team-web",
                      "dependsOn": ["resource:db", "component:api"], "system": "shop"}}


def entity(name: str, **spec) -> dict:
    e = copy.deepcopy(COMPONENT)
    e["metadata"]["name"] = name
    e["spec"].update(spec)
    return e


def small_catalog(n: int = 4) -> CatalogApi:
    api = CatalogApi({})
    for i in range(n):
        api.put(entity(f"svc-{i}"))
    return api


def api_build(api: CatalogApi, store=None, paths=(), token=TOKEN, **kw):
    return build_graph(list(paths), store=store, validate=False, timestamp=0, resolve=False,
                       backstage=[CatalogSource(api.url, token, page_size=kw.pop("page_size", 3))],
                       **kw)


@pytest.mark.corpus
@pytest.mark.parametrize("folder", FOLDERS)
def test_the_api_gives_the_relations_the_files_give(folder):
    entities = load_entities(BACKSTAGE / folder)
    with CatalogApi(entities) as api:
        result = api_build(api, page_size=4)
    files = build_graph([BACKSTAGE / folder], validate=False, timestamp=0, resolve=False)
    got = both_directions(result.graph)
    assert got == both_directions(files.graph) and got
    assert result.catalogs == [{"url": api.url, "entities": len(entities),
                                "pages": -(-len(entities) // 4), "endpoint": "by-query"}]
    # the same entities refused, for the same reason
    refused = sorted(p.message for p in result.problems if p.code == "rejected-entity")
    assert refused == sorted(p.message for p in files.problems if p.code == "rejected-entity")
    if folder == UPSTREAM.name:  # and Backstage's own relations
        assert got == expected_relations(
            BACKSTAGE / "EXPECTED-backstage-upstream-2020-11.relations.jsonl")


@pytest.mark.corpus
def test_provenance_is_the_origin_location_the_api_url_and_a_json_pointer():
    with CatalogApi(load_entities(UPSTREAM)) as api:
        result = api_build(api)
    kg = result.graph
    doc_id = f"{api.url}{BY_NAME}component/default/artist-lookup"
    doc = kg.documents[doc_id]
    assert doc.path.startswith("file:") and doc.path.endswith("/artist-lookup-component.yaml")
    mine = sorted((a.predicate, a.object, a.pointer, a.evidence, a.line)
                  for a in kg.assertions.values() if a.source == doc_id)
    assert ("ownedBy", "group:default/artists@example.com", "/spec/owner",
            "owner: artists@example.com", None) in mine
    assert all(p and p.startswith("/spec/") for _, _, p, _, _ in mine)
    assert result.files[doc_id] == "backstage"


def test_a_location_entity_is_checked_but_never_followed():
    api = CatalogApi({})
    api.put({"apiVersion": "backstage.io/v1alpha1", "kind": "Location",
             "metadata": {"name": "all"}, "spec": {"targets": ["./a.yaml", "../../etc/passwd"]}})
    api.put({"apiVersion": "backstage.io/v1alpha1", "kind": "Location",
             "metadata": {"name": "bad"}, "spec": {"targets": [3]}})
    with api:
        result = api_build(api)
    assert [(p.code, p.file.rsplit("/", 1)[1], p.line) for p in result.problems] == [
        ("rejected-entity", "bad", None)]
    assert set(result.files) == {f"{api.url}{BY_NAME}location/default/all",
                                 f"{api.url}{BY_NAME}location/default/bad"}


def test_an_api_definition_served_as_text_gives_its_version():
    api = CatalogApi({})
    api.put({"apiVersion": "backstage.io/v1alpha1", "kind": "API", "metadata": {"name": "pets"},
             "spec": {"type": "openapi", "lifecycle": "production", "owner": "team-a",
                      "definition": "openapi: 3.0.1\ninfo:\n  title: Pets\n  version: 2.1.0\n"}})
    with api:
        node = api_build(api).graph.nodes["api:default/pets"]
    assert node.attributes["version"] == {"2.1.0"} and node.attributes["specVersion"] == {"3.0.1"}


@pytest.mark.slow
def test_incremental_by_etag_and_a_removed_entity_is_dropped(tmp_path, monkeypatch):
    from kgbuild.project import catalog

    extracted = []

    def counting(data, doc_id, ctx):
        extracted.append(doc_id)
        return real(data, doc_id, ctx)

    real = catalog.extract_entity
    monkeypatch.setattr(catalog, "extract_entity", counting)
    store = tmp_path / "store"
    with small_catalog(5) as api:
        first = api_build(api, store)
        first.store.close()
        assert len(first.changes["added"]) == 5 == len(extracted)
        ids = sorted(first.changes["added"])
        # nothing changed: nothing re-extracted
        extracted.clear()
        again = api_build(api, store)
        again.store.close()
        assert again.changes["unchanged"] == ids and not extracted
        # one entity changes (content, so its etag): only it is re-extracted
        api.put(entity("svc-1", owner="team-new"))
        changed = api_build(api, store)
        svc1 = f"{api.url}{BY_NAME}component/default/svc-1"
        assert changed.changes["changed"] == [svc1] == extracted
        assert len(changed.changes["unchanged"]) == 4
        assert ("component:default/svc-1", "ownedBy", "group:default/team-new") in \
            set(changed.graph.edges())
        assert ("component:default/svc-1", "ownedBy", "group:default/team-web") not in \
            set(changed.graph.edges())
        changed.store.close()
        # a new etag over the same content: looked at, not re-extracted
        api.entities["component:default/svc-2"]["metadata"]["etag"] = "bumped"
        bumped = api_build(api, store)
        bumped.store.close()
        assert not bumped.changes["changed"] and len(bumped.changes["unchanged"]) == 5
        assert extracted == [svc1]
        # one entity removed from the catalog: its graph is gone
        api.remove("component:default/svc-3")
        removed = api_build(api, store)
        gone = f"{api.url}{BY_NAME}component/default/svc-3"
        assert removed.changes["deleted"] == [gone]
        assert gone not in removed.store.document_states()
        assert "component:default/svc-3" not in removed.graph.nodes
        removed.store.close()


def test_files_and_a_catalog_in_one_store(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "catalog-info.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: from-file\n"
        "spec:\n  type: service\n  lifecycle: production\n  owner: team-a\n")
    store = tmp_path / "store"
    with small_catalog(2) as api:
        both = api_build(api, store, [folder], root=tmp_path)
        both.store.close()
        assert len(both.changes["added"]) == 3
        # a build of the files alone (even of the whole project: scope "") keeps the catalog's
        for paths in ([folder], [tmp_path]):
            files = build_graph(paths, store=store, validate=False, resolve=False, timestamp=0,
                                root=tmp_path)
            assert len(files.changes["kept"]) == 2 and not files.changes["deleted"]
            assert "component:default/svc-0" in files.graph.nodes
            files.store.close()
        # a catalog build alone keeps the files' documents
        alone = api_build(api, store, root=tmp_path)
        assert alone.changes["kept"] == ["repo/catalog-info.yaml"]
        assert len(alone.changes["unchanged"]) == 2
        alone.store.close()


def test_the_older_entities_route_is_paged_by_offset():
    with CatalogApi({}, by_query=False) as api:
        for i in range(7):
            api.put(entity(f"svc-{i}"))
        result = api_build(api, page_size=5)
    assert result.catalogs[0]["endpoint"] == "entities"
    assert {f"component:default/svc-{i}" for i in range(7)} <= set(result.graph.nodes)
    offsets = [int(q["offset"]) for p, q in api.requests if p == "/api/catalog/entities"]
    assert offsets == list(range(0, 5 * len(offsets), 5))


def test_a_catalog_that_wants_a_token_is_one_line_and_the_token_never_shown(tmp_path):
    with small_catalog(1) as api:
        with pytest.raises(CatalogError) as no_token:
            api_build(api, token=None)
        with pytest.raises(CatalogError) as wrong:
            api_build(api, token="s3cret-wrong-token")
    assert no_token.value.code == wrong.value.code == "backstage-auth"
    assert "answered 401" in str(no_token.value) and "$BACKSTAGE_TOKEN" in str(no_token.value)
    assert "refused the token" in str(wrong.value) and "s3cret" not in str(wrong.value)
    assert "\n" not in str(wrong.value)


def test_cli_backstage_flag_project_setting_and_errors(tmp_path, monkeypatch):
    runner = CliRunner()
    with small_catalog(3) as api:
        monkeypatch.setenv("BACKSTAGE_TOKEN", TOKEN)
        out = runner.invoke(main, ["build", "--backstage", api.url, "--no-resolve"])
        assert out.exit_code == 0, out.output
        assert f"backstage: {api.url}: 3 entities read in 1 page" in out.output
        assert "0 unchanged, 0 changed, 3 added" in out.output
        # the project's [backstage] table, with its own token variable
        (tmp_path / "kgbuild.toml").write_text(
            f'[backstage]\nurl = "{api.url}"\ntoken_env = "MY_TOKEN"\npage_size = 2\n')
        monkeypatch.setenv("MY_TOKEN", TOKEN)
        # the project file's URL gets no token unless trusted (a checkout names the host)
        out = runner.invoke(main, ["build", "--no-resolve"])
        assert out.exit_code == 2 and "[backstage-auth]" in out.output
        assert "warning: $MY_TOKEN not sent to " in out.output and "--trust-project-url" in out.output
        out = runner.invoke(main, ["build", "--no-resolve", "--format", "json",
                                   "--trust-project-url"])
        assert out.exit_code == 0, out.output
        summary = json.loads(out.output)
        assert summary["catalogs"][0]["pages"] == 2
        assert summary["documents_changed"]["unchanged"] == 3
        # a refused token: one line, exit 2, the token not printed, the store unchanged
        monkeypatch.setenv("MY_TOKEN", "wrong-" + TOKEN)
        monkeypatch.setenv("KGBUILD_TRUST_PROJECT_URL", "1")
        out = runner.invoke(main, ["build", "--no-resolve"])
        assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
        assert "[backstage-auth]" in out.output and TOKEN not in out.output
    out = runner.invoke(main, ["build", "--backstage", "ftp://x"])
    assert out.exit_code == 2 and "[usage]" in out.output
    with GraphStore(tmp_path / ".kgbuild", load_schema(), write=False) as store:
        assert len(store.document_states()) == 3


@pytest.mark.parametrize("toml, message", [
    ('[backstage]\ntoken_env = "X"\n', "backstage needs url"),
    ('[backstage]\nurl = "http://x"\npage_size = 0\n', "backstage.page_size must be between"),
    ('[backstage]\nurl = "http://x"\ntoken = "secret"\n', "unknown setting backstage.token"),
])
def test_the_backstage_table_is_checked(tmp_path, toml, message):
    from kgbuild.errors import InputError
    from kgbuild.project.config import load_project

    (tmp_path / "kgbuild.toml").write_text(toml)
    with pytest.raises(InputError, match=message):
        load_project(tmp_path / "kgbuild.toml")


def test_access_rules_match_an_entity_by_kind_namespace_and_name(tmp_path):
    from kgbuild.graph.access import Principal, visible_graph

    (tmp_path / "access.yaml").write_text(
        "rules:\n  - paths: [component/default/svc-1]\n    labels: [secret]\n")
    with small_catalog(3) as api:
        result = api_build(api, tmp_path / "store", access=tmp_path / "access.yaml")
        result.store.close()
        again = api_build(api, tmp_path / "store", access=tmp_path / "access.yaml")
        assert len(again.changes["unchanged"]) == 3  # the labels as stored: not stale
        graph = again.graph
        again.store.close()
    doc = f"{api.url}{BY_NAME}component/default/svc-1"
    assert graph.documents[doc].access == {"secret"}
    public = visible_graph(graph, Principal())
    assert "component:default/svc-1" not in public.nodes and "component:default/svc-0" in public.nodes
