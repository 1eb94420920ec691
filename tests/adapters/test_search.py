"""The framework-free part of the adapters: typed paths and passages as records, the same
answers as `kgbuild traverse` and `kgbuild retrieve`, access carried through, bad settings."""

from __future__ import annotations

import pytest

from kgbuild.adapters.search import GraphSearch, PassageSearch
from kgbuild.errors import KgbuildError

from .conftest import CLASSIC, CLASSIC_PATH, cli_json

pytestmark = pytest.mark.slow  # each builds or opens a store


def test_classic_question_paths_are_the_traversals(catalog_store):
    local = cli_json("traverse", "--store", catalog_store, "-q", CLASSIC, "--path", CLASSIC_PATH)
    records = GraphSearch(catalog_store, path=CLASSIC_PATH).records(CLASSIC)
    assert [r.text.splitlines()[0] for r in records] == [p["text"] for p in local["paths"]]
    assert sorted({r.metadata["answer"] for r in records}) == local["answers"] == [
        "component:default/checkout-service", "component:default/payments-service"]
    checkout = next(r for r in records if r.metadata["answer"].endswith("checkout-service"))
    assert checkout.metadata["edge_types"] == ["ownedBy", "ownedBy", "dependsOn"]
    assert checkout.metadata["directions"] == ["out", "in", "in"]
    assert checkout.metadata["sources"] == ["catalog/apis/payments-api.yaml:10",
                                            "catalog/components/pricing-sdk.yaml:11",
                                            "catalog/components/checkout-service.yaml:14"]
    assert checkout.score == checkout.metadata["confidence"] == 1.0
    assert ('Checkout Service depends on Pricing SDK. [catalog/components/checkout-service.yaml:14 '
            '"- component:pricing-sdk"]') in checkout.text.splitlines()
    assert {e["extractor"] for e in checkout.metadata["evidence"]} == {"backstage"}


def test_a_seed_query_and_a_follow_walk(catalog_store):
    search = GraphSearch(catalog_store, query_as="seed", follow=["ownerOf"], hops=1, cap=0)
    local = cli_json("traverse", "--store", catalog_store, "--seed",
                     "group:default/commerce-platform", "--follow", "ownerOf", "--hops", 1,
                     "--no-cap")
    records = search.records("group:default/commerce-platform")
    assert [r.metadata["nodes"] for r in records] == [p["nodes"] for p in local["paths"]]
    assert len(records) >= 3 and {r.metadata["edge_types"][0] for r in records} == {"ownedBy"}
    by_name = GraphSearch(catalog_store, query_as="name", follow=["dependsOn"], hops=1)
    assert [r.metadata["answer"] for r in by_name.records("Payments Service")] == [
        "component:default/pricing-sdk"]  # the public principal: Payments DB is labelled pci
    local = cli_json("traverse", "--store", catalog_store, "--name", "Payments", "--follow",
                     "dependsOn")
    assert by_name.records("Payments") == [] and by_name.run("Payments").abstain == \
        local["abstain"]  # ambiguous: no guess


def test_access_is_carried_through(labelled_store):
    answers = {}
    for principal, flags in ((None, []), (["risk"], ["--principal", "risk"])):
        local = cli_json("traverse", "--store", labelled_store, "-q", CLASSIC, "--path",
                         CLASSIC_PATH, *flags)
        records = GraphSearch(labelled_store, principal=principal, path=CLASSIC_PATH).records(CLASSIC)
        assert [r.metadata["nodes"] for r in records] == [p["nodes"] for p in local["paths"]]
        answers[str(principal)] = sorted({r.metadata["answer"] for r in records})
        assert records[0].metadata["principal"] == local["principal"]
    assert answers["None"] == ["component:default/checkout-service"]
    assert answers["['risk']"] == ["component:default/checkout-service",
                                   "component:default/fraud-scoring"]
    # a hidden seed is an unknown one: no record, as the CLI abstains
    hidden = GraphSearch(labelled_store, query_as="seed", follow=["dependsOn"])
    assert hidden.records("component:default/fraud-scoring") == []
    assert hidden.run("component:default/fraud-scoring").abstain["reason"] == "no-seed"


def test_passages_are_the_retrieved_ones(passage_store):
    question = "Where was the director of Blue Harbor born?"
    local = cli_json("retrieve", "--store", passage_store, "-q", question)
    records = PassageSearch(passage_store).records(question)
    assert [(r.id, r.score) for r in records] == [(p["id"], p["score"]) for p in local["passages"]]
    by_id = {r.id: r for r in records}
    assert by_id["p1"].metadata["graph"] == {"question": True, "name": "blue harbor"}
    assert by_id["p2"].metadata["graph"]["from"] == "p1"  # the bridge: p1 names Mara Quill
    assert by_id["p2"].metadata["citation"].endswith("corpus.jsonl:2")
    assert [(x["passage"], x["way"]) for x in by_id["p2"].metadata["graph_path"]] == [
        ("p1", "question"), ("p2", "mentions")]
    assert "p6" not in by_id  # labelled press


def test_passage_access_is_carried_through(passage_store):
    question = "What did Mara Quill say in an interview?"
    local = cli_json("retrieve", "--store", passage_store, "-q", question, "--principal", "press")
    records = PassageSearch(passage_store, principal="press", k=3).records(question)
    assert [r.id for r in records] == [p["id"] for p in local["passages"]][:3]
    assert records[0].id == "p6"
    assert "p6" not in {r.id for r in PassageSearch(passage_store, k=3).records(question)}


def test_bad_settings_are_usage_errors(catalog_store):
    for kwargs in ({"query_as": "sql"}, {"seeds": ["x"]}, {"hops": 0}, {"pathh": "ownedBy"},
                   {"path": "ownedByy:out"}):
        with pytest.raises(KgbuildError) as err:
            GraphSearch(catalog_store, **kwargs)
        assert "\n" not in err.value.message
    with pytest.raises(KgbuildError):
        PassageSearch(catalog_store, method="magic")
