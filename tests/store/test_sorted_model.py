"""A full build's read model made from its sorted quads (store/sortedmodel.py) is, file for
file and byte for byte, the model of the whole graph read back from the same store."""

import io
import shutil
import sys

import numpy as np
import pytest
from conftest import BACKSTAGE, REPO

import kgbuild.store.storemodel as storemodel
from kgbuild.graph.model import A, Assertion, KnowledgeGraph, Passage, SourceDocument
from kgbuild.project.pipeline import build_graph
from kgbuild.store.graphstore import DocumentUpdate, GraphStore
from kgbuild.store.modelfiles import current
from kgbuild.store.readmodel import graph_tables, model_arrays, with_names
from kgbuild.store.splice import labelled_graphs, model_meta

sys.path.insert(0, str(REPO / "bench"))
from catalog_gen import write_catalog  # noqa: E402


@pytest.fixture
def sorted_only(monkeypatch):
    """The build's model must come from the sorted quads: the whole-graph path fails."""
    def whole(*args):
        raise AssertionError("the model was made from the whole graph")
    monkeypatch.setattr(storemodel, "_whole", whole)


def npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def assert_whole_graph_model(store) -> dict:
    """The saved model's files are those of model_arrays(graph_tables(kg)) of the store's
    graph read back from its database; returns the expected columns."""
    meta = {**model_meta(store), "labelled": sorted(labelled_graphs(store))}
    store._graph = None
    tables = graph_tables(store.knowledge_graph(), meta)
    arrays, meta = with_names(model_arrays(tables, store.schema), tables.meta, store.schema)
    saved = current(store.path / "model", store.schema)
    assert saved.meta == meta
    files = {p.stem: p.read_bytes() for p in saved.folder.glob("*.npy")}
    assert sorted(files) == sorted(arrays)
    for name, column in arrays.items():
        assert files[name] == npy(column), name
    return arrays


@pytest.mark.slow
@pytest.mark.parametrize("source", ["fixtures", "estate",
                                    pytest.param("backstage", marks=pytest.mark.corpus)])
def test_a_full_builds_model_is_the_whole_graphs(source, tmp_path, sorted_only):
    if source == "fixtures":
        root = REPO / "fixtures" / "sources"
    elif source == "estate":
        root = tmp_path / "estate"
        write_catalog(root, 1000)
    else:
        root = BACKSTAGE
    result = build_graph([root], store=tmp_path / "st", timestamp=0, validate=False,
                         resolve=False)
    try:
        arrays = assert_whole_graph_model(result.store)
        assert len(arrays["src"]) > 50
    finally:
        result.store.close()


def test_untyped_edges_foreign_ends_passages_and_repeats(tmp_path, schema, sorted_only):
    """Nodes typed in the documents themselves, an edge triple no assertion states, an
    assertion to an IRI that is no node, one read in a passage, the same assertion in two
    documents, several access labels."""
    kg = KnowledgeGraph(schema)
    kg.add_document(SourceDocument("a.md", "a.md", "1"))
    kg.add_node("svc-a", "Component", "Service A", source="a.md", description="first")
    kg.add_node("svc-b", "Component", "Service B", source="a.md")
    kg.passages["a.md#c0"] = Passage("a.md#c0", "a.md", 0, 20, "Service A uses B.")
    kg.add_assertion(Assertion("svc-a", "dependsOn", "svc-b", "a.md", "llm:x", "2020-01-01",
                               0.75, evidence="uses B", chunk="a.md#c0",
                               access=frozenset({"red", "blue"})))
    kg.add_assertion(Assertion("svc-a", "dependsOn", "ghost", "a.md", "llm:x", "2020-01-02",
                               0.5, line=3, qualifiers=frozenset({"q1", "q2"})))
    triples = list(kg.triples())
    untyped = ("<https://kgbuild.dev/id/svc-b>", next(f"<{i}>" for i, n in
               schema.edge_by_iri.items() if n == "dependsOn"), "<https://kgbuild.dev/id/svc-a>")
    store = GraphStore(tmp_path / "st", schema)
    try:
        store.replace_all({"a.md": DocumentUpdate(triples, sha256="1"),
                           "b.md": DocumentUpdate([*triples[-12:], untyped], sha256="2"),
                           "c.md": DocumentUpdate([("<https://kgbuild.dev/id/svc-b>", A,
                                                    f"<{schema.node_types['Component'].iri}>")],
                                                  sha256="3")})
        arrays = assert_whole_graph_model(store)
        model = store.read_model()
        assert model.meta["untyped"] == 1 and "ghost" in model.index.node_ids
        assert any(model.record(i)["p"] for i in range(len(arrays["src"])))
    finally:
        store.close()


def test_a_store_only_the_whole_graph_reads_exactly_gets_that_model(tmp_path, schema):
    """A node whose identifier is not the one its IRI names: the whole graph's model."""
    comp = f"<{schema.node_types['Component'].iri}>"
    node = "<https://kgbuild.dev/id/svc-a>"
    store = GraphStore(tmp_path / "st", schema)
    try:
        store.replace_all({"a.md": DocumentUpdate(
            [(node, A, comp), (node, "<http://purl.org/dc/terms/identifier>", '"other-id"')],
            sha256="1")})
        assert_whole_graph_model(store)
        assert "other-id" in store.read_model().index.node_ids
    finally:
        store.close()


def test_a_model_larger_than_a_run_is_the_same(tmp_path, monkeypatch, sorted_only, schema):
    from kgbuild.store import sortedmodel, strings

    monkeypatch.setattr(sortedmodel, "RUN", 100)  # many runs of quads and of edges
    monkeypatch.setattr(sortedmodel, "EDGE_RUN", 7)
    monkeypatch.setattr(sortedmodel, "BATCH", 300)
    monkeypatch.setattr(strings, "CHUNK", 700)  # the records written as many chunk files
    root = tmp_path / "catalog"
    shutil.copytree(REPO / "fixtures" / "catalog", root)
    result = build_graph([root], schema, store=tmp_path / "st", timestamp=0, validate=False,
                         resolve=False)
    try:
        arrays = assert_whole_graph_model(result.store)
        assert len(arrays["src"]) > 20 and "records_c00009_blob" in arrays
    finally:
        result.store.close()


def test_a_killed_model_makings_scratch_files_go_with_the_next_commit(tmp_path, schema):
    store = GraphStore(tmp_path / "st", schema)
    try:
        left = tmp_path / "st" / "model" / ".scratch-0123456789abcdef"
        left.mkdir(parents=True)
        (left / "records_c00000_blob.npy").write_bytes(b"\0" * 1000)
        store.replace_all({"a.yaml": DocumentUpdate([], sha256="1")})
        assert not left.exists()
        assert [p.name for p in (tmp_path / "st" / "model").glob(".scratch-*")] == []
    finally:
        store.close()


@pytest.mark.slow
def test_a_model_made_again_later_comes_from_the_stores_own_sorted_quads(tmp_path, schema,
                                                                         sorted_only):
    """A reader finding no current model (another format, damage), and a commit the saved
    model cannot take (most documents changed), sort the store's own quads on disk: the
    same files as the whole graph's model, without the whole graph in memory."""
    root = tmp_path / "estate"
    write_catalog(root, 300)
    result = build_graph([root], store=tmp_path / "st", timestamp=0, validate=False,
                         resolve=False)
    result.store.close()
    shutil.rmtree(tmp_path / "st" / "model")
    with GraphStore(tmp_path / "st", schema) as store:
        assert store.read_model().index.size > 300  # (made by this reader, and saved)
        assert_whole_graph_model(store)
    for f in sorted(root.rglob("comp-*.yaml"))[:100]:  # a third of the estate: made whole
        f.write_text(f.read_text().replace("Synthetic", "Edited"))
    result = build_graph([root], store=tmp_path / "st", timestamp=0, validate=False,
                         resolve=False)
    try:
        assert result.summary()["documents_changed"]["changed"] == 100
        assert_whole_graph_model(result.store)
    finally:
        result.store.close()
