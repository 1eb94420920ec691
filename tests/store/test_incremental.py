"""Incremental rebuilds through the store: exactly what changed changes, nothing else."""

import shutil

import pytest
from conftest import FIXTURE_CATALOG

from kgbuild.project.pipeline import build, build_graph
from kgbuild.errors import KgbuildError
from kgbuild.graph.turtle import to_turtle
from kgbuild.schema.loader import load_schema
from kgbuild.schema.namespaces import NODES_GRAPH
from kgbuild.store.graphstore import GraphStore


@pytest.fixture
def catalog(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    return root


def rebuild(root, store, **kw):
    result = build_graph([root], store=store, timestamp=0, validate=False, **kw)
    edges = set(result.graph.edges())
    nodes = {n.id: n.type for n in result.graph.nodes.values()}
    turtle = to_turtle(result.store.triples(), result.schema)
    assert result.store.counts() == result.store.recount()  # maintained counts stay exact
    summary = result.summary()
    result.store.close()
    return edges, nodes, turtle, summary


def full(root, tmp_path):
    return rebuild(root, tmp_path / "fresh-store", full=True)


def test_unchanged_sources_read_nothing(catalog, tmp_path):
    store = tmp_path / "store"
    first = rebuild(catalog, store)
    second = rebuild(catalog, store)
    assert second[3]["documents_changed"] == {"unchanged": 9, "changed": 0, "added": 0, "deleted": 0}
    assert first[2] == second[2]


def test_changing_an_owner_changes_exactly_that_edge(catalog, tmp_path):
    store = tmp_path / "store"
    before, _, _, _ = rebuild(catalog, store)
    f = catalog / "components" / "pricing-sdk.yaml"
    f.write_text(f.read_text().replace("owner: commerce-platform", "owner: storefront"))
    after, _, turtle, summary = rebuild(catalog, store)
    assert summary["documents_changed"]["changed"] == 1
    assert before - after == {("component:default/pricing-sdk", "ownedBy", "group:default/commerce-platform")}
    assert after - before == {("component:default/pricing-sdk", "ownedBy", "group:default/storefront")}
    assert turtle == full(catalog, tmp_path)[2]


def test_removing_a_dependency(catalog, tmp_path):
    store = tmp_path / "store"
    before, _, _, _ = rebuild(catalog, store)
    f = catalog / "components" / "checkout-service.yaml"
    f.write_text(f.read_text().replace("    - resource:orders-db\n", ""))
    after, _, turtle, _ = rebuild(catalog, store)
    assert before - after == {("component:default/checkout-service", "dependsOn", "resource:default/orders-db")}
    assert after - before == set()
    assert turtle == full(catalog, tmp_path)[2]


def test_deleting_a_file_drops_its_edges_and_orphans(catalog, tmp_path):
    store = tmp_path / "store"
    before, nodes_before, _, _ = rebuild(catalog, store)
    (catalog / "components" / "web-shop.yaml").unlink()
    after, nodes_after, turtle, summary = rebuild(catalog, store)
    assert summary["documents_changed"]["deleted"] == 1
    assert {e for e in before if "web-shop" in e[0] or "web-shop" in e[2]} == before - after
    assert "component:default/web-shop" not in nodes_after
    # checkout-service is still defined by its own file, although web-shop depended on it
    assert nodes_after["component:default/checkout-service"] == "Service"
    assert turtle == full(catalog, tmp_path)[2]


def test_defined_node_survives_losing_its_only_reference(catalog, tmp_path):
    store = tmp_path / "store"
    rebuild(catalog, store)
    (catalog / "components" / "checkout-service.yaml").unlink()
    _, nodes, turtle, _ = rebuild(catalog, store)
    assert "component:default/pricing-sdk" in nodes  # still defined by pricing-sdk.yaml
    assert "resource:default/orders-db" not in nodes  # defined only in the deleted file
    assert turtle == full(catalog, tmp_path)[2]


def test_stub_node_type_refines_and_reverts(catalog, tmp_path):
    store = tmp_path / "store"
    f = catalog / "components" / "pricing-sdk.yaml"
    text = f.read_text()
    f.unlink()
    _, nodes, _, _ = rebuild(catalog, store)
    assert nodes["component:default/pricing-sdk"] == "Component"  # only referenced
    f.write_text(text)
    _, nodes, turtle, summary = rebuild(catalog, store)
    assert nodes["component:default/pricing-sdk"] == "Library"  # now defined as a library
    assert summary["documents_changed"]["added"] == 1
    assert turtle == full(catalog, tmp_path)[2]


def test_location_targets_are_followed_when_the_location_is_unchanged(catalog, tmp_path):
    store = tmp_path / "store"
    loc = catalog / "catalog-info.yaml"
    _, first, _, _ = rebuild(loc, store)
    assert "component:default/web-shop" in first
    _, second, _, summary = rebuild(loc, store)
    assert first == second and summary["documents_changed"]["unchanged"] == 8


def test_export_turtle_equals_build_output(catalog, tmp_path):
    out = tmp_path / "g.ttl"
    result = build([catalog], out, store=tmp_path / "store", timestamp=0)
    result.store.close()
    with GraphStore(tmp_path / "store", load_schema(), write=False) as store:
        assert to_turtle(store.triples(), store.schema) == out.read_text()


def test_second_writer_gets_a_clear_error(tmp_path):
    schema = load_schema()
    with GraphStore(tmp_path / "store", schema):
        with pytest.raises(KgbuildError, match="another kgbuild process .* is writing the store"):
            GraphStore(tmp_path / "store", schema)


def test_reading_a_missing_store(tmp_path):
    with pytest.raises(KgbuildError, match="no kgbuild store"):
        GraphStore(tmp_path / "nothing", load_schema(), write=False)


def test_problems_of_unchanged_documents_are_still_reported(catalog, tmp_path):
    (catalog / "bad.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata:\n  name: [\n")
    store = tmp_path / "store"
    _, _, _, first = rebuild(catalog, store)
    _, _, _, second = rebuild(catalog, store)
    assert first["problem_list"] == second["problem_list"] and first["problems"] == 1


def test_conflicting_types_for_one_id_are_reported_with_the_documents(tmp_path):
    (tmp_path / "a.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: x}\n"
                                     "spec: {type: service, lifecycle: p, owner: t, dependsOn: ['component:lib']}\n")
    (tmp_path / "b.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: lib}\n"
                                     "spec: {type: website, lifecycle: p, owner: t}\n")
    (tmp_path / "c.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: lib}\n"
                                     "spec: {type: library, lifecycle: p, owner: t}\n")
    result = build_graph([tmp_path], store=None, timestamp=0, validate=True)
    [p] = [p for p in result.problems if p.code == "node-conflict"]
    assert "b.yaml says Website" in p.message and "c.yaml says Library" in p.message
    assert result.graph.nodes["component:default/lib"].type == "Website"
    assert result.validation.conforms


@pytest.mark.slow
def test_random_edits_keep_counts_and_graph_exact(tmp_path):
    import random
    import sys

    from conftest import REPO
    sys.path.insert(0, str(REPO / "bench"))
    from catalog_gen import component_yaml, write_catalog

    root = tmp_path / "gen"
    files = write_catalog(root, 60, seed=3)
    rng = random.Random(11)
    store = tmp_path / "store"
    rebuild(root, store)
    for step in range(8):
        for _ in range(3):
            f = rng.choice(files)
            action = rng.choice(["owner", "delete", "rewrite"])
            if action == "delete" and f.exists():
                f.unlink()
            elif action == "owner" and f.exists():
                f.write_text(f.read_text().replace("owner: team-", f"owner: step{step}-team-"))
            else:
                f.write_text(component_yaml(files.index(f), 60, rng))
        edges, nodes, turtle, summary = rebuild(root, store)  # asserts counts == recount
        assert turtle == full(root, tmp_path / f"full-{step}")[2]
        assert summary["edges"] == len(edges) and summary["entities"] == len(nodes)


@pytest.mark.slow
def test_the_nodes_mark_changes_exactly_when_the_nodes_graph_does(catalog, tmp_path):
    """``nodes_revision`` (what a push digests the nodes graph by) is new after a commit that
    changes the nodes graph's triples, the same after one that does not."""
    store, schema = tmp_path / "store", load_schema("software")

    def mark_and_nodes():
        rebuild(catalog, store)
        with GraphStore(store, schema, write=False) as st:
            return st.nodes_revision(), st.dump_graph(f"<{NODES_GRAPH}>")

    mark, nodes = mark_and_nodes()
    assert mark and nodes
    f = catalog / "components" / "pricing-sdk.yaml"
    f.write_text(f.read_text().replace("computes prices", "computes the prices"))
    assert mark_and_nodes() == (mark, nodes)  # a description: not in the nodes graph
    f.write_text(f.read_text().replace("title: Pricing SDK", "title: Pricing Kit"))
    renamed, renamed_nodes = mark_and_nodes()
    assert renamed != mark and renamed_nodes != nodes
    (catalog / "components" / "web-shop.yaml").unlink()
    gone, gone_nodes = mark_and_nodes()
    assert gone != renamed and gone_nodes != renamed_nodes
    rebuild(catalog, store, full=True)
    with GraphStore(store, schema, write=False) as st:
        assert st.nodes_revision() not in (None, gone)
