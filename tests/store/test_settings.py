"""A store remembers the settings it was built with: changing the access rules, the schema,
the size limit or an extractor re-extracts exactly what that change affects, and caches are
keyed by the database's identity, never by a counter that restarts."""

import shutil

import pytest
from conftest import FIXTURE_CATALOG

from kgbuild import Principal, TraversalSpec, Traverser, load_schema
from kgbuild.project.pipeline import build, build_graph
from kgbuild.extract.registry import EXTRACTORS
from kgbuild.store.graphstore import GraphStore


@pytest.fixture
def project(tmp_path):
    shutil.copytree(FIXTURE_CATALOG, tmp_path / "catalog")
    return tmp_path


def run(project, **kw):
    result = build_graph([project / "catalog"], store=project / "store", timestamp=0,
                         root=project, **kw)
    result.store.close()
    return result


def public_ids(project):
    with GraphStore(project / "store", load_schema(), write=False) as store:
        kg = store.knowledge_graph()
    seeds = TraversalSpec(seeds=["group:default/commerce-platform"], follow=["ownerOf"], hops=1)
    return {n["id"] for n in Traverser(kg, Principal.of()).run(seeds).to_dict()["nodes"]}


def test_tightening_access_on_an_existing_store_hides_on_the_next_incremental_build(project):
    run(project)
    assert "group:default/commerce-platform" in public_ids(project)
    rules = project / "access.yaml"
    rules.write_text("rules:\n  - paths: ['**']\n    labels: [secret]\n")
    assert len(run(project, access=rules).changes["changed"]) == 9
    assert public_ids(project) == set()


def test_an_access_change_re_extracts_only_the_documents_whose_labels_change(project):
    run(project)
    rules = project / "access.yaml"
    rules.write_text("rules:\n  - paths: ['catalog/org/teams.yaml']\n    labels: [hr]\n")
    changed = run(project, access=rules).changes
    assert changed["changed"] == ["catalog/org/teams.yaml"] and len(changed["unchanged"]) == 8
    assert run(project, access=rules).changes["changed"] == []  # the same rules again: nothing


def test_switching_schema_gives_what_a_fresh_build_gives(project, tmp_path):
    other = tmp_path / "other.yaml"
    text = (FIXTURE_CATALOG.parents[1] / "schema" / "software.yaml").read_text()
    other.write_text(text.replace("https://kgbuild.dev/schema/software#", "https://example.org/sw#")
                     .replace("name: software", "name: other"))
    first = build([project / "catalog"], tmp_path / "a.ttl", store=project / "store", timestamp=0,
                  root=project)
    first.store.close()
    switched = build([project / "catalog"], tmp_path / "b.ttl", other, store=project / "store",
                     timestamp=0, root=project, validate=True)
    switched.store.close()
    assert switched.validation.conforms
    fresh = build([project / "catalog"], tmp_path / "c.ttl", other, store=tmp_path / "fresh",
                  timestamp=0, root=project)
    fresh.store.close()
    assert (tmp_path / "b.ttl").read_bytes() == (tmp_path / "c.ttl").read_bytes()
    assert b"example.org/sw#" in (tmp_path / "b.ttl").read_bytes()


def test_raising_the_size_limit_takes_effect(project):
    big = project / "catalog" / "components" / "checkout-service.yaml"
    limit = big.stat().st_size - 1
    small = run(project, max_file_bytes=limit)
    assert any("over the" in p.message and p.file.endswith("checkout-service.yaml") for p in small.problems)
    too_large = sorted(p.file for p in small.problems if "over the" in p.message)
    raised = run(project, max_file_bytes=limit + 100_000)
    assert raised.changes["changed"] == too_large  # exactly the files the old limit skipped
    assert not any("over the" in p.message and p.file.endswith("checkout-service.yaml") for p in raised.problems)
    with GraphStore(project / "store", load_schema(), write=False) as store:
        assert "component:default/checkout-service" in store.knowledge_graph().nodes


def test_a_new_extractor_version_re_extracts_its_documents_only(project, monkeypatch):
    run(project)
    backstage = next(ex for ex in EXTRACTORS if ex.name == "backstage")
    monkeypatch.setattr(backstage, "version", getattr(backstage, "version", 1) + 1, raising=False)
    changes = run(project).changes
    assert changes["unchanged"] == ["catalog/apis/openapi/payments.yaml"]  # the OpenAPI spec
    assert len(changes["changed"]) == 8  # every Backstage file


def test_a_recreated_database_never_meets_an_old_cache(project, tmp_path):
    store = project / "store"
    run(project)
    with GraphStore(store, load_schema(), write=False) as s:
        assert "component:default/checkout-service" in s.knowledge_graph().nodes  # cache written
    for db in store.glob("db-*"):  # the database folders and the identities beside them
        shutil.rmtree(db) if db.is_dir() else db.unlink()
    (store / "CURRENT").unlink()
    shutil.rmtree(project / "catalog" / "components")
    run(project)  # a new database whose generation counter starts again
    with GraphStore(store, load_schema(), write=False) as s:
        assert "component:default/checkout-service" not in s.knowledge_graph().nodes
