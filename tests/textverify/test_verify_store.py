"""`kgbuild verify --store`: verified relations go into the store as extract's do (edge
records, evidence, spans), incrementally by document; rejected ones never; ambiguous names
join the store's review queue per document, shown by `kgbuild resolve review`."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO

from kgbuild.cli import main
from kgbuild.project.pipeline import build_graph
from kgbuild.resolve.review import load_review_queue
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

PROSE = REPO / "fixtures" / "prose"

REFUNDS = "Checkout Service sends every refund through Payments."  # appended to the design

LINES = [
    {"subject": "Checkout Service", "predicate": "dependsOn", "object": "Pricing SDK",
     "evidence": "Checkout Service depends on Pricing SDK for every price it shows or charges.",
     "source": "checkout-design.md"},
    {"subject": "Web Shop", "predicate": "dependsOn", "object": "Checkout Service",
     "evidence": "Web Shop depends on Checkout Service, so a checkout outage shows up in the "
                 "shop first.", "source": "checkout-runbook.md"},
    # rejected: the quote says nothing of the kind
    {"subject": "Checkout Service", "predicate": "dependsOn", "object": "Ledger Store",
     "evidence": "Checkout Service depends on Pricing SDK", "source": "checkout-design.md"},
    # "Payments" is the Payments API, the Payments Service and the Payments system alike
    {"subject": "Checkout Service", "predicate": "dependsOn", "object": "Payments",
     "evidence": REFUNDS, "source": "checkout-design.md"},
]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    build_graph([FIXTURE_CATALOG], "software", store=tmp_path / "store", timestamp=0, root=REPO,
                resolve=False, validate=False).store.close()
    shutil.copytree(PROSE, tmp_path / "docs")
    design = tmp_path / "docs" / "checkout-design.md"
    design.write_text(design.read_text() + "\n" + REFUNDS + "\n")
    (tmp_path / "edges.jsonl").write_text("".join(json.dumps(x) + "\n" for x in LINES))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def verify(*extra):
    return run("verify", "edges.jsonl", "--sources", "docs", "--store", "store",
               "--timestamp", "0", "--format", "json", *extra)


def assertions(store="store"):
    with GraphStore(store, load_schema("software"), write=False) as gs:
        kg = gs.knowledge_graph()
        return {k: [a for a in v if a.extractor == "verify:edges.jsonl"]
                for k, v in kg.edges().items()}, gs.generation()


@pytest.mark.slow
def test_verified_documents_go_into_the_store_and_traverse_finds_them(project):
    out = verify()
    assert out.exit_code == 0, out.output
    first = json.loads(out.output)
    assert first["changes"]["added"] == ["checkout-design.md", "checkout-runbook.md"]
    edges, generation = assertions()
    found = {k for k, v in edges.items() if v}
    assert found == {("component:default/checkout-service", "dependsOn", "component:default/pricing-sdk"),
                     ("component:default/web-shop", "dependsOn", "component:default/checkout-service")}
    # the rejected relation is not stored, nothing about Ledger Store at all
    assert not any("ledger" in s + o for s, _, o in edges)
    [a] = edges[("component:default/checkout-service", "dependsOn", "component:default/pricing-sdk")]
    assert a.source == "checkout-design.md" and a.span is not None
    text = (project / "docs" / "checkout-design.md").read_text()
    assert text[a.span[0]:a.span[1]] == LINES[0]["evidence"]

    walk = run("traverse", "--store", "store", "--seed", "component:default/web-shop",
               "--path", "dependsOn/dependsOn", "--format", "json")
    assert walk.exit_code == 0, walk.output
    data = json.dumps(json.loads(walk.output))
    assert "component:default/pricing-sdk" in data  # two verified hops
    assert all(x["evidence"].rstrip(".") in data for x in LINES[:2])  # with their evidence
    assert "checkout-runbook.md" in data and "checkout-design.md" in data

    # the same input again changes nothing
    again = json.loads(verify().output)
    assert again["changes"] == {"added": [], "changed": [], "deleted": [],
                                "unchanged": ["checkout-design.md", "checkout-runbook.md"]}
    assert assertions() == (edges, generation)
    # a build over the same folder neither reads nor removes them: documents of their own kind
    build_graph([project / "docs"], "software", store=project / "store", timestamp=0,
                root=project / "docs", resolve=False, validate=False).store.close()
    assert {k: v for k, v in assertions()[0].items() if v} == {k: v for k, v in edges.items() if v}


@pytest.mark.slow
def test_a_changed_document_is_replaced_and_a_dropped_one_removed(project):
    assert verify().exit_code == 0
    with open("edges.jsonl", "w") as f:  # the runbook's line gone; the design's kept
        f.write(json.dumps(LINES[0]) + "\n")
    out = json.loads(verify().output)
    assert out["changes"]["deleted"] == ["checkout-runbook.md"]
    assert out["changes"]["changed"] == ["checkout-design.md"]  # its lines changed
    edges, _ = assertions()
    assert {k for k, v in edges.items() if v} == {
        ("component:default/checkout-service", "dependsOn", "component:default/pricing-sdk")}


@pytest.mark.slow
def test_a_new_entity_stays_the_documents_own_when_verified_again(project):
    """An entity a document introduced is introduced again (not resolved to its own old node)
    when the changed document is verified anew."""
    line = {"subject": "Billing Worker", "predicate": "dependsOn", "object": "Pricing SDK",
            "evidence": "Billing Worker depends on Pricing SDK.", "source": "new.md"}
    doc = project / "docs" / "new.md"
    doc.write_text("# Billing\n\nBilling Worker depends on Pricing SDK.\n")
    (project / "edges.jsonl").write_text(json.dumps(line) + "\n")
    assert verify("-o", "one.ttl").exit_code == 0
    doc.write_text(doc.read_text() + "\nIt sends the invoices.\n")
    out = json.loads(verify("-o", "two.ttl").output)
    assert out["changes"]["changed"] == ["new.md"]
    one, two = (project / "one.ttl").read_text(), (project / "two.ttl").read_text()
    assert "billing-worker> a sw:Component" in one and "billing-worker> a sw:Component" in two
    with GraphStore("store", load_schema("software"), write=False) as gs:
        node = gs.knowledge_graph().nodes["component:default/billing-worker"]
    assert node.defined_in == {"new.md"} and node.type == "Component"


@pytest.mark.slow
def test_ambiguous_names_are_queued_per_document_and_reviewed(project):
    out = json.loads(verify().output)
    assert out["rejected_by_reason"]["ambiguous-entity"] == 1 and out["queued"] == 1
    [item] = load_review_queue(project / "store" / "review-queue.json")
    assert item["mention"] == "Payments" and item["source"] == "checkout-design.md"
    assert item["evidence"] == LINES[3]["evidence"] and item["line"] == 4
    assert {c["id"] for c in item["candidates"]} >= {"api:default/payments-api"}
    # never merged: nothing of the relation is stored
    edges, _ = assertions()
    assert not any(o.startswith(("api:", "system:", "component:default/payments"))
                   for (_, _, o), found in edges.items() if found)
    # a build rewrites its own queue and keeps the documents' items
    build_graph([FIXTURE_CATALOG], "software", store=project / "store", timestamp=0, root=REPO,
                resolve=True, validate=False).store.close()
    assert [q["mention"] for q in load_review_queue(project / "store" / "review-queue.json")
            if q.get("source")] == ["Payments"]
    shown = run("resolve", "review", "--store", "store")
    assert "'Payments'" in shown.output and "in checkout-design.md:4" in shown.output
    # the document verified again without the line: its items go
    (project / "edges.jsonl").write_text("".join(json.dumps(x) + "\n" for x in LINES[:3]))
    assert json.loads(verify().output)["queued"] == 0
    assert not [q for q in load_review_queue(project / "store" / "review-queue.json")
                if q.get("source")]


@pytest.mark.slow
def test_a_changed_alias_registry_stores_the_documents_again(project):
    """Regression: only aliases.yaml changed, and verify left the stored edges as they were
    (what a name resolves to is part of what a document's edges depend on)."""
    assert verify().exit_code == 0
    (project / "aliases.yaml").write_text(
        "aliases:\n  API:\n    api:default/payments-api: [Payments]\n")
    out = json.loads(verify("--aliases", "aliases.yaml").output)
    assert "checkout-design.md" in out["changes"]["changed"]
    edges, _ = assertions()
    assert edges[("component:default/checkout-service", "dependsOn", "api:default/payments-api")]
    again = json.loads(verify("--aliases", "aliases.yaml").output)
    assert again["changes"]["changed"] == []
