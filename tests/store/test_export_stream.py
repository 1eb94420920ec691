"""The streamed export writes the bytes the reference writers write over the store's quads
read as Python objects (kgbuild's Turtle, N-Triples and JSON-LD writers; pyoxigraph's N-Quads
and TriG writers over the quads sorted): on the fixture catalog, a generated estate and the
shared corpora, in memory and with sorted runs spilled to disk and merged."""

import shutil
import sys

import pyoxigraph as ox
import pytest
from conftest import CATALOGS, CORPUS_REASON, FIXTURE_CATALOG, HAVE_CORPORA, REPO

from kgbuild.errors import InvalidValue
from kgbuild.graph.turtle import to_jsonld, to_ntriples, to_turtle
from kgbuild.project.pipeline import build_graph
from kgbuild.schema.loader import load_schema
from kgbuild.schema.namespaces import prefixes
from kgbuild.store import export
from kgbuild.store.export import export_store
from kgbuild.store.formats import EXPORT_FORMATS
from kgbuild.store.graphstore import GraphStore

sys.path.insert(0, str(REPO / "bench"))
from catalog_gen import write_catalog  # noqa: E402

ODD = """apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: odd-text
  title: "Ünïcode — 漢字 \\"quoted\\" back\\\\slash <https://kgbuild.dev/ns#declaredType> x .\\n"
  description: "line one\\nline\\ttwo \\u0001 \\u0002 \\u0003 control, \\u007f, emoji 🚀, \\u2028 \\u0085 \\u001c"
  annotations:
    note: "ends with a quote\\" and a dot ."
spec:
  type: service
  lifecycle: production
  owner: team-odd
  dependsOn: [component:pricing-sdk, component:zeta, component:alpha]
"""


def reference(store: GraphStore, fmt: str) -> str:
    """What the export wrote before it was streamed, from the quads as Python objects (the
    named graphs': the default graph was never exported)."""
    named = [q for q in store.quads() if not isinstance(q.graph_name, ox.DefaultGraph)]
    if fmt in ("nquads", "trig"):
        quads = sorted(named, key=lambda q: (str(q.graph_name), str(q.subject),
                                             str(q.predicate), str(q.object)))
        if fmt == "nquads":
            return ox.serialize(quads, format=ox.RdfFormat.N_QUADS).decode()
        names = {p: ns for p, ns in sorted(prefixes(store.schema).items()) if p not in ("id", "owl")}
        return ox.serialize(quads, format=ox.RdfFormat.TRIG, prefixes=names).decode()
    triples = [(str(q.subject), str(q.predicate), str(q.object)) for q in named]
    return {"turtle": to_turtle, "jsonld": to_jsonld}[fmt](triples, store.schema) \
        if fmt != "nt" else to_ntriples(triples)


def built(root, path):
    build_graph([root], store=path, timestamp=0, validate=False, resolve=False).store.close()
    return GraphStore(path, load_schema("software"), write=False)


def same_in_memory_and_spilled(store, monkeypatch, budget=20_000):
    for fmt in EXPORT_FORMATS:
        expected = reference(store, fmt)
        assert export_store(store, fmt) == expected, fmt
        with monkeypatch.context() as m:  # sorted runs of ~20 kB spilled and merged;
            m.setattr(export, "SORT_BUDGET", budget)  # one worker thread, two graphs ahead
            m.setattr(export, "WORKERS", 1)
            m.setattr(export, "AHEAD", 2)
            assert export_store(store, fmt) == expected, fmt
        with monkeypatch.context() as m:  # no worker thread
            m.setattr(export, "WORKERS", 0)
            assert export_store(store, fmt) == expected, fmt


def test_fixture_catalog_with_hostile_text(tmp_path, monkeypatch):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    (root / "odd.yaml").write_text(ODD, encoding="utf-8")
    with built(root, tmp_path / "store") as store:
        same_in_memory_and_spilled(store, monkeypatch)
        assert export_store(store, "nt").count("\n") == store.triple_count()


@pytest.mark.slow
def test_generated_estate(tmp_path, monkeypatch):
    write_catalog(tmp_path / "catalog", 400)
    with built(tmp_path / "catalog", tmp_path / "store") as store:
        same_in_memory_and_spilled(store, monkeypatch, budget=200_000)


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.skipif(not HAVE_CORPORA, reason=CORPUS_REASON)
def test_shared_catalogs(tmp_path, monkeypatch):
    for name in ("backstage", "codeowners", "compose", "cyclonedx", "manifests", "openapi"):
        with built(CATALOGS / name, tmp_path / f"store-{name}") as store:
            same_in_memory_and_spilled(store, monkeypatch)


def _store_with(tmp_path, quads):
    """A built store with extra quads written into it (what no build writes)."""
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    path = tmp_path / "store"
    build_graph([root], store=path, timestamp=0, validate=False, resolve=False).store.close()
    db = ox.Store(str(next(path.glob("db-*[0-9]"))))
    db.extend(quads)
    db.flush()
    del db
    return GraphStore(path, load_schema("software"), write=False)


def test_repeated_triples_and_rdf_type_as_an_object(tmp_path, monkeypatch):
    """The same triple in several graphs is written once (also when the runs that hold it are
    merged); rdf:type as an object is written rdf:type ("a" only as a predicate: it was "a"
    everywhere, which is not Turtle); the default graph is not exported, as before."""
    node = ox.NamedNode("https://kgbuild.dev/id/component:default/web-shop")
    rdf_type = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    label = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
    quads = [ox.Quad(node, label, ox.Literal("Web Shop"), ox.NamedNode(f"https://kgbuild.dev/source/x{i}"))
             for i in range(3)]
    quads.append(ox.Quad(node, label, ox.Literal("in the default graph"), ox.DefaultGraph()))
    quads.append(ox.Quad(ox.NamedNode("https://kgbuild.dev/assertion/t"),
                         ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#predicate"),
                         rdf_type, ox.NamedNode("https://kgbuild.dev/source/x0")))
    with _store_with(tmp_path, quads) as store:
        same_in_memory_and_spilled(store, monkeypatch, budget=2_000)
        turtle = export_store(store, "turtle")
        assert "rdf:predicate rdf:type" in turtle
        line = f'{node} {label} "Web Shop" .\n'
        assert export_store(store, "nt").count(line) == 1
        assert all("in the default graph" not in export_store(store, f) for f in EXPORT_FORMATS)
        from rdflib import Graph
        assert len(Graph().parse(data=turtle, format="turtle")) == store.triple_count()


def test_blank_nodes_are_refused_as_before(tmp_path):
    quads = [ox.Quad(ox.BlankNode("b0"), ox.NamedNode("http://x/p"), ox.Literal("v"),
                     ox.NamedNode("https://kgbuild.dev/source/x"))]
    with _store_with(tmp_path, quads) as store:
        for fmt in ("turtle", "jsonld"):
            with pytest.raises(InvalidValue, match="blank nodes"):
                export_store(store, fmt)
        assert "_:b0 <http://x/p>" in export_store(store, "nt")


def test_an_empty_store(tmp_path):
    with GraphStore(tmp_path / "store", load_schema("software")) as store:
        for fmt in EXPORT_FORMATS:
            assert export_store(store, fmt) == reference(store, fmt), fmt


def test_a_reader_that_stops_early_stops_the_dump(tmp_path, monkeypatch):
    """Worker threads dump the graphs: a reader that stops (an error while writing the
    output) leaves no thread behind, and the GIL's switch interval as it was."""
    import threading

    monkeypatch.setattr(export, "AHEAD", 1)
    # (an export another test left unfinished would hold the interval lowered: counted apart)
    monkeypatch.setattr(export, "_exporting", [0, 0.0])
    outer = sys.getswitchinterval()
    sys.setswitchinterval(before := 0.005)
    try:
        with built(FIXTURE_CATALOG, tmp_path / "store") as store:
            pieces = export._graphs(store)
            assert next(pieces)[0].startswith("<")
            assert sys.getswitchinterval() < before
            pieces.close()
            assert not any(t.name == "kgbuild-export" for t in threading.enumerate())
            assert sys.getswitchinterval() == before
            assert export_store(store, "nt") == reference(store, "nt")  # the next one works
    finally:
        sys.setswitchinterval(outer)
