"""The build pipeline: determinism, merging of assertions, atomic output, summary."""

import os
import shutil

import pytest
from conftest import BACKSTAGE, FIXTURE_CATALOG

from kgbuild.project.pipeline import build, build_graph
from kgbuild.errors import InputError
from kgbuild.extract.discover import discover
from kgbuild.io.atomic import atomic_write


@pytest.mark.corpus
def test_same_input_gives_byte_identical_turtle(tmp_path):
    a, b = tmp_path / "a.ttl", tmp_path / "b.ttl"
    build([BACKSTAGE], a, validate=False)
    build([BACKSTAGE], b, validate=False)
    assert a.read_bytes() == b.read_bytes()


def test_output_independent_of_argument_order_and_copy_location(tmp_path):
    copy = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, copy)
    a, b = tmp_path / "a.ttl", tmp_path / "b.ttl"
    build([FIXTURE_CATALOG / "org", FIXTURE_CATALOG / "components"], a, validate=False,
          timestamp=1, root=FIXTURE_CATALOG.parent)  # document IDs are relative to the root
    build([copy / "components", copy / "org"], b, validate=False, timestamp=1, root=tmp_path)
    assert a.read_bytes() == b.read_bytes()


def test_source_date_epoch_fixes_generated_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    result = build_graph([FIXTURE_CATALOG], validate=False)
    assert {a.generated_at for a in result.graph.assertions.values()} == {"1970-01-02T00:00:00Z"}


@pytest.mark.corpus
def test_one_edge_several_assertions():
    # team-a says "parent: backstage" and backstage says "children: [team-a, team-b]"
    result = build_graph([BACKSTAGE / "backstage-upstream-2020-11"], validate=False, timestamp=0)
    edge = ("group:default/team-a", "childOf", "group:default/backstage")
    assertions = result.graph.edges()[edge]
    assert len(assertions) == 2
    assert {a.source.rsplit("/", 1)[1] for a in assertions} == {"team-a-group.yaml", "backstage-group.yaml"}
    direct = {t for t in result.store.triples() if t[0].endswith("team-a>") and t[1].endswith("childOf>")}
    assert len(direct) == 1
    edges = result.graph.edges()
    assert result.store.counts() == result.store.recount()
    assert result.store.counts()["edges"]["childOf"] == sum(1 for e in edges if e[1] == "childOf") == 7


def test_summary_counts_types_and_problems():
    result = build_graph([FIXTURE_CATALOG], timestamp=0)
    s = result.summary()
    assert s["entities_by_type"]["Library"] == 1 and s["entities_by_type"]["Service"] == 2
    assert s["edges_by_type"]["ownedBy"] == 10
    assert s["problems"] == 0 and s["conforms"] is True


def test_fixture_classic_graphrag_example():
    edges = build_graph([FIXTURE_CATALOG], validate=False, timestamp=0).graph.edges()
    assert ("component:default/checkout-service", "dependsOn", "component:default/pricing-sdk") in edges
    assert ("component:default/pricing-sdk", "ownedBy", "group:default/commerce-platform") in edges
    assert ("api:default/payments-api", "ownedBy", "group:default/commerce-platform") in edges


def test_atomic_write_keeps_previous_file_on_failure(tmp_path, monkeypatch):
    out = tmp_path / "graph.ttl"
    out.write_text("previous\n")

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        atomic_write(out, "new content")
    assert out.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.ttl"]


def test_failed_build_leaves_existing_output_untouched(tmp_path):
    out = tmp_path / "graph.ttl"
    out.write_text("previous\n")
    with pytest.raises(InputError):
        build([tmp_path / "missing"], out)
    assert out.read_text() == "previous\n"


def test_discover_skips_hidden_and_vendored_dirs(tmp_path):
    shutil.copytree(FIXTURE_CATALOG, tmp_path / "cat")
    shutil.copytree(FIXTURE_CATALOG, tmp_path / "cat" / "node_modules" / "x")
    shutil.copytree(FIXTURE_CATALOG, tmp_path / "cat" / ".cache")
    ids = [f.doc_id for f in discover([tmp_path / "cat"])]
    assert ids == sorted(ids) and all(i.startswith("cat/") for i in ids)
    assert not any("node_modules" in i or ".cache" in i for i in ids)


def test_edge_violating_schema_is_reported_not_written(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: c}\n"
        "spec: {type: service, lifecycle: p, owner: 'system:s'}\n")
    result = build_graph([tmp_path], validate=True, timestamp=0)
    [p] = [p for p in result.problems if p.code == "schema-violation"]
    assert p.line == 4 and "ownedBy" in p.message
    assert not result.graph.edges() and result.validation.conforms


def test_build_without_an_output_path_is_a_usage_error():
    from kgbuild import KgbuildError
    from kgbuild.project.pipeline import build

    with pytest.raises(KgbuildError, match="output path") as err:
        build([FIXTURE_CATALOG], None, store=None, timestamp=0)
    assert err.value.code == "usage"
