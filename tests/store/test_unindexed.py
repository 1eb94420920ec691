"""A store written without its read model (``replace_all(index=False)``: serve's SPARQL view
stores) holds the same database, and its model is made when first read."""

from conftest import FIXTURE_CATALOG

from kgbuild.graph.access import Principal
from kgbuild.project.pipeline import build_graph
from kgbuild.serve.viewstore import view_documents
from kgbuild.store.graphstore import GraphStore


def test_an_unindexed_store_answers_alike_and_makes_its_model_when_read(tmp_path, schema):
    built = build_graph([FIXTURE_CATALOG], schema, store=tmp_path / "a", timestamp=0,
                        validate=False, resolve=False)
    built.store.close()
    with GraphStore(tmp_path / "a", schema, write=False) as indexed:
        documents = view_documents(indexed, Principal.all_access())
        counts, model = indexed.counts(), indexed.read_model()
        seed = model.index.position("api:default/payments-api")
    with GraphStore(tmp_path / "b", schema) as plain:
        plain.replace_all(documents, index=False)
        assert not (tmp_path / "b" / "model").exists()  # no model written by the commit
        assert plain.counts() == counts
        again = plain.read_model()  # made now, from the database
        assert again.index.size == model.index.size and seed is not None
        assert again.index.position("api:default/payments-api") == seed
