"""Exports serialised by the store: the same bytes as kgbuild's writers over the quads read
one by one, JSON-LD that reads back as the same graph, files left alone while current."""

import json
import os
import shutil

import pyoxigraph as ox
import pytest
from conftest import FIXTURE_CATALOG
from rdflib import Graph

from kgbuild.project.pipeline import build, build_graph
from kgbuild.graph.turtle import to_ntriples, to_turtle
from kgbuild.schema.loader import load_schema
from kgbuild.schema.namespaces import prefixes
from kgbuild.store.export import export_store, write_export
from kgbuild.store.formats import EXPORT_FORMATS
from kgbuild.store.graphstore import GraphStore

HOSTILE = """apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: odd-text
  title: "Ünïcode — 漢字 \\"quoted\\" back\\\\slash"
  description: "line one\\nline\\ttwo \\u0001 control, emoji 🚀, \\u2028 \\u0085 \\u001c separators"
spec:
  type: service
  lifecycle: production
  owner: team-odd
  dependsOn: [component:pricing-sdk]
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("export") / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    (root / "odd.yaml").write_text(HOSTILE, encoding="utf-8")
    path = root.parent / "store"
    build_graph([root], store=path, timestamp=0, validate=False, resolve=False).store.close()
    with GraphStore(path, load_schema("software"), write=False) as s:
        yield s


def test_triple_formats_equal_the_writers_over_python_quads(store):
    triples = list(store.triples())
    assert export_store(store, "turtle") == to_turtle(triples, store.schema)
    assert export_store(store, "nt") == to_ntriples(triples)
    assert "漢字" in export_store(store, "turtle") and '\\"quoted\\"' in export_store(store, "nt")
    # characters str.splitlines() splits at, written raw inside a literal (U+2028 made the
    # export crash; U+001C is written escaped)
    assert all(c in export_store(store, "turtle") for c in ("\u2028", "\x85"))


def test_quad_formats_equal_pyoxigraph_over_sorted_quads(store):
    quads = sorted(store.quads(), key=lambda q: (str(q.graph_name), str(q.subject),
                                                 str(q.predicate), str(q.object)))
    assert export_store(store, "nquads") == ox.serialize(quads, format=ox.RdfFormat.N_QUADS).decode()
    names = {p: ns for p, ns in sorted(prefixes(store.schema).items()) if p not in ("id", "owl")}
    assert export_store(store, "trig") == ox.serialize(quads, format=ox.RdfFormat.TRIG,
                                                       prefixes=names).decode()


def test_jsonld_is_compacted_and_reads_back_as_the_same_graph(store):
    text = export_store(store, "jsonld")
    doc = json.loads(text)
    assert doc["@context"]["kg"] == prefixes(store.schema)["kg"] and len(doc["@graph"]) > 10
    assert any(":" in k and not k.startswith("http") for n in doc["@graph"] for k in n)
    back = Graph().parse(data=text, format="json-ld")
    turtle = Graph().parse(data=export_store(store, "turtle"), format="turtle")
    assert set(back) == set(turtle)
    assert export_store(store, "jsonld") == text  # deterministic


def test_triple_count_is_the_distinct_exported_triples(store):
    assert store.triple_count() == len(set(store.triples()))
    assert store.triple_count() == export_store(store, "nt").count("\n")  # (one per line)


def test_write_export_leaves_a_current_file_alone(store, tmp_path):
    for fmt in EXPORT_FORMATS:
        out = tmp_path / f"graph.{fmt}"
        assert write_export(store, out, fmt) is True
        assert out.read_text() == export_store(store, fmt)
        before = out.stat().st_mtime_ns
        assert write_export(store, out, fmt) is False and out.stat().st_mtime_ns == before
    out = tmp_path / "graph.turtle"
    out.write_text("edited by hand\n")
    assert write_export(store, out, "turtle") is True and out.read_text() == export_store(store)
    out.unlink()
    assert write_export(store, out, "turtle") is True and out.is_file()
    other = tmp_path / "graph.nt"  # the same file, now asked for in another format
    assert write_export(store, other, "turtle") is True
    assert other.read_text() == export_store(store, "turtle")
    (tmp_path / "graph.trig").unlink()  # a file gone is forgotten by the next write
    write_export(store, tmp_path / "another.ttl")
    recorded = json.loads((store.path / "exports.json").read_text())
    assert str((tmp_path / "graph.trig").resolve()) not in recorded
    assert str(out.resolve()) in recorded and str((tmp_path / "another.ttl").resolve()) in recorded


def test_write_export_after_the_store_changed(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    path, out = tmp_path / "store", tmp_path / "g.ttl"
    build_graph([root], store=path, timestamp=0, validate=False, resolve=False).store.close()
    with GraphStore(path, load_schema("software"), write=False) as s:
        assert write_export(s, out) and not write_export(s, out)
    (root / "odd.yaml").write_text(HOSTILE, encoding="utf-8")
    build_graph([root], store=path, timestamp=0, validate=False, resolve=False).store.close()
    with GraphStore(path, load_schema("software"), write=False) as s:
        assert write_export(s, out) is True and "odd-text" in out.read_text()
        (path / "exports.json").write_text("{not json")  # a damaged record: written again
        assert write_export(s, out) is True
        os.chmod(path, 0o500)
        try:  # a store folder that cannot be written: the file still is
            out.unlink()
            assert write_export(s, out) is True and out.is_file()
        finally:
            os.chmod(path, 0o700)


def test_unchanged_rebuild_leaves_the_output_alone_and_names_its_phases(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    path, out = tmp_path / "store", tmp_path / "g.ttl"
    phases = []
    build([root], out, store=path, timestamp=0, validate=False, resolve=False,
          phase=phases.append).store.close()
    assert phases == ["storing", "indexing", "writing"]  # indexing: the snapshot is made
    first, stamp = out.read_text(), out.stat().st_mtime_ns
    phases.clear()
    result = build([root], out, store=path, timestamp=0, validate=False, resolve=False,
                   phase=phases.append)
    assert phases == ["writing"] and result.changes["changed"] == []
    assert out.stat().st_mtime_ns == stamp and out.read_text() == first
    assert out.read_text() == export_store(result.store)
    result.store.close()
    (root / "odd.yaml").write_text(HOSTILE, encoding="utf-8")
    build([root], out, store=path, timestamp=0, validate=False, resolve=False).store.close()
    assert "odd-text" in out.read_text()
