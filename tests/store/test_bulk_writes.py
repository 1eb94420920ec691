"""A full rebuild's batched bulk load and the graph made from its quads, and the marshalled
copy of the document states: each must give what reading the database gives."""

import os
import shutil

import pytest
from conftest import FIXTURE_CATALOG, REPO

import kgbuild.store.writes as writes
from kgbuild.project.pipeline import build_graph
from kgbuild.store.graphstore import DocumentUpdate, GraphStore
from kgbuild.store.manifest import STATES, shard
from kgbuild.store.readmodel import graph_tables

SOURCES = REPO / "fixtures" / "sources"


@pytest.fixture
def catalog(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    return root


@pytest.mark.slow
def test_the_graph_made_while_loading_is_the_one_the_database_gives(tmp_path, monkeypatch, schema):
    monkeypatch.setattr(writes, "LOAD_BATCH", 1000)  # many batches, some loaded meanwhile
    store = tmp_path / "st"
    result = build_graph([SOURCES], schema, store=store, timestamp=0, validate=False, resolve=False)
    made = result.store.knowledge_graph()  # kept from the build, not read back
    assert made is result.store._graph[1]
    read = result.store._materialise()
    assert len(read.edges()) > 4000
    assert graph_tables(made) == graph_tables(read)
    result.store.close()


def test_a_load_that_fails_raises_and_leaves_the_store_as_it_was(tmp_path, monkeypatch, schema):
    store = GraphStore(tmp_path / "st", schema)
    store.replace_all({"a.yaml": DocumentUpdate([("<http://x/a>", "<http://x/p>", "<http://x/b>")],
                                                sha256="1")})
    before = (tmp_path / "st" / "CURRENT").read_text()
    monkeypatch.setattr(writes, "LOAD_BATCH", 2)
    bad = {f"d{i}.yaml": DocumentUpdate([("<http://x/a b>", "<http://x/p>", "<http://x/b>")],
                                        sha256="2") for i in range(3000)}
    with pytest.raises(SyntaxError):
        store.replace_all(bad)
    assert (tmp_path / "st" / "CURRENT").read_text() == before
    assert sorted(store.documents()) == ["a.yaml"]
    store.close()


def states_from_json(path, schema):
    """The document states as the manifest's JSON has them (the copies removed first)."""
    shutil.rmtree(path / STATES, ignore_errors=True)
    with GraphStore(path, schema, write=False) as st:
        return st.document_states()


def test_the_states_copy_follows_every_commit(catalog, tmp_path, schema):
    store = tmp_path / "st"
    build_graph([catalog], schema, store=store, timestamp=0, validate=False).store.close()
    copies = store / STATES
    assert len(os.listdir(copies)) == 65  # 64 shards and the revision mark
    f = catalog / "components" / "pricing-sdk.yaml"
    f.write_text(f.read_text().replace("owner: commerce-platform", "owner: storefront"))
    written = {n: (copies / n).stat().st_mtime_ns for n in os.listdir(copies)}
    result = build_graph([catalog], schema, store=store, timestamp=0, validate=False)
    assert result.summary()["documents_changed"]["changed"] == 1
    cached = result.store.document_states()
    revision = result.store.revision()
    result.store.close()
    rewritten = {n for n in os.listdir(copies) if (copies / n).stat().st_mtime_ns != written[n]}
    doc = next(d for d in cached if d.endswith("pricing-sdk.yaml"))
    assert rewritten == {"revision", f"{shard(doc):02d}"}  # that document's shard alone
    assert (copies / "revision").read_text() == revision
    assert cached == states_from_json(store, schema)


def test_a_copy_of_another_revision_is_not_read(catalog, tmp_path, schema):
    store = tmp_path / "st"
    build_graph([catalog], schema, store=store, timestamp=0, validate=False).store.close()
    (store / STATES / "revision").write_text("someone-else:1")
    with GraphStore(store, schema, write=False) as st:
        assert st._cached_states(st.revision()) is None
        states = st.document_states()  # from the JSON shards
    assert states == states_from_json(store, schema) and len(states) == 9
