"""A full rebuild's streamed, batched bulk load and its counts, and the marshalled copy of the
document states: each must give what reading the database gives."""

import os
import shutil

import pytest
from conftest import FIXTURE_CATALOG, REPO

import kgbuild.store.fullbuild as fullbuild
from kgbuild.errors import InvalidValue
from kgbuild.graph.model import A
from kgbuild.project.pipeline import build_graph
from kgbuild.schema.namespaces import KG
from kgbuild.store.graphstore import DocumentUpdate, GraphStore
from kgbuild.store.manifest import STATES, shard

SOURCES = REPO / "fixtures" / "sources"


@pytest.fixture
def catalog(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    return root


@pytest.mark.slow
def test_the_counts_of_a_full_build_are_those_recounted_in_the_store(tmp_path, monkeypatch,
                                                                      schema):
    monkeypatch.setattr(fullbuild, "LOAD_BATCH", 1000)  # many batches, some loaded meanwhile
    result = build_graph([SOURCES], schema, store=tmp_path / "st", timestamp=0,
                         validate=False, resolve=False)
    counts = result.store.counts()
    assert sum(counts["edges"].values()) > 4000
    assert counts == result.store.recount()
    result.store.close()


@pytest.mark.parametrize("saved", [True, False])
def test_an_edge_or_assertion_several_documents_hold_counts_once(tmp_path, schema, saved):
    edge = next(iter(schema.edge_by_iri))
    same = [("<http://x/a>", f"<{edge}>", "<http://x/b>"), ("<http://x/s>", A, f"<{KG.Assertion}>"),
            ("<http://x/c>", f"<{edge}>", "<http://x/b>")]
    store = GraphStore(tmp_path / "st" if saved else None, schema)
    store.replace_all({f"d{i}.yaml": DocumentUpdate(same[:2 + i % 2], sha256=str(i))
                       for i in range(5)})
    counts = store.counts()
    assert counts["assertions"] == 1 and sum(counts["edges"].values()) == 2
    assert counts == store.recount()
    store.close()


def test_a_load_that_fails_raises_and_leaves_the_store_as_it_was(tmp_path, monkeypatch, schema):
    store = GraphStore(tmp_path / "st", schema)
    store.replace_all({"a.yaml": DocumentUpdate([("<http://x/a>", "<http://x/p>", "<http://x/b>")],
                                                sha256="1")})
    before = (tmp_path / "st" / "CURRENT").read_text()
    monkeypatch.setattr(fullbuild, "LOAD_BATCH", 2)
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
    assert len(os.listdir(copies)) == 66  # 64 shards, their index and the revision mark
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


def test_a_document_given_twice_to_a_full_build_is_refused_and_nothing_changes(tmp_path, schema):
    store = GraphStore(tmp_path / "st", schema)
    store.replace_all({"a.yaml": DocumentUpdate([], sha256="1")})
    before = (tmp_path / "st" / "CURRENT").read_text()
    with pytest.raises(InvalidValue, match="added twice"):
        with store.full_build() as build:
            build.add("b.yaml", DocumentUpdate([], sha256="2"))
            build.add("b.yaml", DocumentUpdate([], sha256="3"))
    assert (tmp_path / "st" / "CURRENT").read_text() == before
    assert sorted(store.documents()) == ["a.yaml"]
    store.close()
