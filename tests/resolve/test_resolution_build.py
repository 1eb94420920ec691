"""Entity resolution inside builds: reported, queued, applied only through the registry."""

import json

import pytest
from conftest import BACKSTAGE

from kgbuild.project.pipeline import build_graph
from kgbuild.resolve.aliases import AliasRegistry, accept, reject

pytestmark = pytest.mark.corpus

# 'owner: guest' in the 2020-11 examples names group:default/guest, which nothing defines;
# the create-app examples define group:default/guests.
SOURCES = [BACKSTAGE / "backstage-upstream-2020-11", BACKSTAGE / "backstage-create-app-0.9.2"]
GUEST, GUESTS = "group:default/guest", "group:default/guests"


def build(tmp_path, **kw):
    result = build_graph(SOURCES, store=tmp_path / "store", timestamp=0, validate=False,
                         registry=tmp_path / "aliases.yaml", **kw)
    result.store.close()
    return result


def owners(result):
    return {o for (s, p, o) in result.graph.edges() if p == "ownedBy"}


def test_lookalike_reference_is_queued_not_merged(tmp_path):
    result = build(tmp_path)
    report = result.resolution
    assert GUEST in owners(result) and GUESTS in result.graph.nodes
    [item] = [q for q in report["review"] if q["mention"] == "guest"]
    assert item["type"] == "Group" and "looks like group:default/guests" in item["reason"]
    assert report["resolved"]["id"] > 0 and report["queued"] >= 1
    queue = json.loads((tmp_path / "store" / "review-queue.json").read_text())["queue"]
    assert any(q["mention"] == "guest" for q in queue)


def test_accepted_decision_is_applied_and_survives_rebuilds(tmp_path):
    build(tmp_path)
    accept(tmp_path / "aliases.yaml", "guest", "Group", GUESTS)
    first = build(tmp_path)
    assert GUEST not in first.graph.nodes and GUEST not in owners(first)
    assert ("component:default/playback-order", "ownedBy", GUESTS) in first.graph.edges()
    assert first.changes["changed"]  # the registry is a dependency of every document
    assert first.resolution["resolved"]["alias"] == 3  # the renamed owner of three entities
    again = build(tmp_path)
    assert set(again.graph.edges()) == set(first.graph.edges())
    assert again.resolution["resolved"] == first.resolution["resolved"]  # nothing re-extracted
    assert not any(q["mention"] == "guest" for q in again.resolution["review"])


def test_rejected_decision_keeps_them_apart_and_stops_asking(tmp_path):
    build(tmp_path)
    reject(tmp_path / "aliases.yaml", "guest", "Group", GUESTS)
    result = build(tmp_path)
    assert GUEST in owners(result)
    assert not any(q["mention"] == "guest" for q in result.resolution["review"])


def test_distinct_pair_never_merges_even_with_an_alias(tmp_path):
    reg = AliasRegistry()
    reg.add_alias("Group", GUESTS, "guest")
    reg.add_distinct(GUEST, GUESTS)
    reg.save(tmp_path / "aliases.yaml")
    result = build(tmp_path)
    assert GUEST in owners(result)


def test_same_name_in_two_types_stays_two_nodes(tmp_path):
    result = build_graph([BACKSTAGE / "janus-idp-backstage-showcase"], store=None, timestamp=0,
                         validate=False, registry=tmp_path / "none.yaml")
    a, b = result.graph.nodes["system:default/rhdh"], result.graph.nodes["component:default/rhdh"]
    assert a.label == b.label == "Red Hat Developer Hub" and a.type != b.type
    assert not any({d["a"], d["b"]} == {a.id, b.id} for d in result.resolution["duplicates"])


def test_report_is_independent_of_source_order(tmp_path):
    one = build_graph(SOURCES, store=None, timestamp=0, validate=False, registry=tmp_path / "x.yaml")
    two = build_graph(SOURCES[::-1], store=None, timestamp=0, validate=False, registry=tmp_path / "x.yaml")
    assert one.resolution == two.resolution


def test_registry_beside_the_sources_is_used_when_the_project_has_none(tmp_path, monkeypatch):
    import shutil
    src = tmp_path / "catalog"
    shutil.copytree(BACKSTAGE / "backstage-upstream-2020-11", src / "a")
    shutil.copytree(BACKSTAGE / "backstage-create-app-0.9.2", src / "b")
    accept(src / "aliases.yaml", "guest", "Group", GUESTS)
    monkeypatch.chdir(tmp_path)  # no ./aliases.yaml here
    result = build_graph([src], store=None, timestamp=0, validate=False)
    assert GUEST not in owners(result) and GUESTS in owners(result)


def test_build_summary_and_review_agree(tmp_path):
    from kgbuild.graph.access import Principal
    from kgbuild.resolve.review import review
    from kgbuild.schema.loader import load_schema
    from kgbuild.store.graphstore import GraphStore

    report = build(tmp_path).resolution
    store = GraphStore(tmp_path / "store", load_schema())
    try:
        listed = review(store.knowledge_graph(), tmp_path / "aliases.yaml",
                        tmp_path / "store" / "review-queue.json", principal=Principal.all_access())
    finally:
        store.close()
    assert len(listed["queue"]) == report["queued"] >= 1
    assert len(listed["possible_duplicates"]) == report["possible_duplicates"]
    assert listed["possible_duplicates"][:20] == report["duplicates"]
    assert [q["priority"] for q in listed["queue"]] == sorted(
        (q["priority"] for q in listed["queue"]), reverse=True)


def test_real_catalogs_pair_no_registry_packages_and_no_ecosystems(tmp_path):
    from conftest import CATALOGS

    from kgbuild.resolve.ecosystem import ecosystem, is_package_purl

    result = build_graph([CATALOGS], timestamp=0, validate=False, registry=tmp_path / "a.yaml",
                         root=CATALOGS, resolve=True)
    kg, report = result.graph, result.resolution
    assert not [(s, o) for (s, p, o) in kg.edges() if s == o]
    assert report["possible_duplicates"] == len(report["duplicates"]) < 20
    for d in report["duplicates"]:
        assert not (is_package_purl(d["a"]) and is_package_purl(d["b"])), d
        assert len({ecosystem(d["a"]), ecosystem(d["b"])} - {None}) <= 1, d
    for q in report["review"]:
        own, best = q["own_id"], q["candidates"][0]["id"]
        assert not (is_package_purl(own) and is_package_purl(best)), q
