"""Seeds by name and from question text, through the resolver over the visible graph only."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

from kgbuild.project.pipeline import build_graph
from kgbuild.graph.access import Principal
from kgbuild.retrieve.traverse import TraversalSpec, Traverser

CATALOG = REPO / "fixtures" / "retrieval" / "catalog"
QUESTION = "Which service depends on the library maintained by the team that owns Payments API?"
PATH = "ownedBy:out/ownerOf:out/dependsOn:in"


@pytest.fixture(scope="module")
def kg():
    return build_graph([CATALOG], timestamp=0, validate=False, root=CATALOG.parent).graph


def test_question_mentions_become_seeds(kg):
    r = Traverser(kg).run(TraversalSpec(question=QUESTION, path=PATH))
    assert [(s["id"], s["via"], s["mention"]) for s in r.seeds] == [
        ("api:default/payments-api", "question", "Payments API")]
    assert QUESTION[slice(*r.seeds[0]["span"])] == "Payments API"
    assert r.answers == ["component:default/checkout-service"]
    text = r.render()
    assert "seed: Payments API (API, api:default/payments-api) via question 'Payments API'" in text
    assert "Payments API -ownedBy-> Commerce Platform <-ownedBy- Pricing SDK <-dependsOn- Checkout Service" in text
    assert re.search(r'"owner: group:commerce-platform" \(catalog/commerce.yaml line \d+\)', text)


def test_names_and_aliases_resolve_and_ambiguity_is_reported(kg):
    t = Traverser(kg)
    r = t.run(TraversalSpec(names=["pricing-sdk", "Checkout Service"], path="ownedBy"))
    assert [s["id"] for s in r.seeds] == ["component:default/pricing-sdk",
                                          "component:default/checkout-service"]
    amb = t.run(TraversalSpec(names=["Storefront"], path="ownedBy"))
    assert amb.abstain["reason"] == "ambiguous" and amb.nodes == []
    assert {c["id"] for c in amb.unresolved[0]["candidates"]} == {
        "component:default/storefront", "system:default/storefront"}
    assert amb.unresolved[0]["index"] == 0
    assert "ABSTAIN (ambiguous)" in amb.render()
    none = t.run(TraversalSpec(question="Who maintains the Inventory Service?", hops=1))
    assert none.abstain["reason"] == "no-seed" and none.seeds == []


def test_resolver_never_sees_hidden_entities(kg):
    q = "What does the Fraud Scoring Service depend on?"
    public = Traverser(kg).run(TraversalSpec(question=q, follow=["dependsOn"], hops=1))
    assert public.abstain["reason"] == "no-seed"
    assert "fraud" not in str(public.to_dict()).lower()
    risk = Traverser(kg, Principal.of("risk")).run(TraversalSpec(question=q, follow=["dependsOn"], hops=1))
    assert [s["id"] for s in risk.seeds] == ["component:default/fraud-scoring"]
    assert [n["id"] for n in risk.nodes] == ["component:default/fraud-scoring", "component:default/pricing-sdk"]
