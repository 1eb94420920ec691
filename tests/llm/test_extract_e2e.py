"""End to end: `kgbuild build` the fixture catalog, `kgbuild extract` the fixture prose through
a scripted model on loopback (the real openai client), into one store; the relations land on
the catalog's IDs, mistakes are rejected with reasons, a re-run sends nothing, `kgbuild build`
keeps the text documents, and `traverse` answers the classic question citing the passage
behind each LLM edge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import llm_fixtures
import pytest
from click.testing import CliRunner
from fakellm import Reply
from prose_oracle import EXPECTED_ATTRIBUTES, EXPECTED_EDGES, FACTS, oracle

from kgbuild.cli import main
from kgbuild.graph.model import passage_iri
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

fake_llm = llm_fixtures.fake_llm  # the fixtures, shared with the other LLM tests
_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
QUESTION = "Which service depends on the library maintained by the team that owns Payments API?"
CLASSIC = "ownedBy:out/ownerOf:out/dependsOn:in"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder with the catalog and the prose (copied: the tests change them)."""
    shutil.copytree(FIXTURES / "catalog", tmp_path / "catalog")
    shutil.copytree(FIXTURES / "prose", tmp_path / "docs")
    (tmp_path / "kgbuild.toml").write_text("[llm]\nmodel = \"fake-model\"\nchunk_size = 600\n"
                                           "chunk_overlap = 100\nprice = {input = 1.0, output = 4.0}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def extract(server, *extra):
    return run("extract", "docs", "--base-url", server.base_url, "--timestamp", "0", *extra)


def store_graph(path=".kgbuild"):
    with GraphStore(path, load_schema("software"), write=False) as store:
        return store.knowledge_graph()


def llm_edges(kg):
    return {e: [a for a in assertions if a.extractor == "llm:fake-model"]
            for e, assertions in kg.edges().items()
            if any(a.extractor == "llm:fake-model" for a in assertions)}


@pytest.mark.slow
def test_prose_joins_the_catalog(fake_llm, project):
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    server = fake_llm(oracle)
    out = extract(server, "--report", "rejected.jsonl", "--format", "json")
    assert out.exit_code == 0, out.output
    summary = json.loads(out.output)
    kg = store_graph()
    edges = llm_edges(kg)
    assert set(edges) == EXPECTED_EDGES  # on the catalog's IDs, nothing else
    pricing = [n for n in kg.nodes.values() if "pricing" in (n.id + n.label).lower()]
    assert [n.id for n in pricing] == ["component:default/pricing-sdk"]  # no duplicate Pricing SDK
    assert not any(n.defined_in <= {"docs/checkout-design.md", "docs/checkout-runbook.md"}
                   and n.defined_in for n in kg.nodes.values())  # the prose defined no new entity
    for edge, assertions in edges.items():
        for a in assertions:
            doc = (project / a.source).read_text()
            assert a.span is not None and a.chunk and a.chunk.startswith(a.source + "#c")
            quoted = " ".join(doc[a.span[0]:a.span[1]].split())
            assert quoted.lower() == " ".join(a.evidence.split()).lower()
            passage = kg.passages[a.chunk]
            assert passage.start <= a.span[0] < a.span[1] <= passage.end
            assert doc[passage.start:passage.end] == passage.text
            assert 0 < a.confidence <= 1
    # an attribute value is an assertion too, the literal as its object, on the catalog's node
    values = {(a.subject, a.predicate, a.object): a for a in kg.attribute_assertions.values()}
    assert set(values) == EXPECTED_ATTRIBUTES
    [(subject, attribute, value)] = EXPECTED_ATTRIBUTES
    assert value in kg.nodes[subject].attributes[attribute]
    assert "Library that computes prices, discounts and taxes." in kg.nodes[subject].attributes[attribute]
    a = values[(subject, attribute, value)]
    assert a.chunk in kg.passages and a.span and a.extractor == "llm:fake-model"
    # the mistakes, each with its reason, in the report
    ex = summary["extraction"]
    assert ex["rejected_by_reason"] == {"evidence-not-found": 1, "object-not-grounded": 1,
                                        "type-mismatch": 1, "unknown-predicate": 1}
    report = [json.loads(line) for line in Path("rejected.jsonl").read_text().splitlines()]
    assert sorted(r["reason"] for r in report) == sorted(ex["rejected_by_reason"])
    reversed_ = next(r for r in report if r["reason"] == "type-mismatch")
    assert reversed_["detail"].startswith("reversed") and reversed_["chunk"].startswith(
        "docs/checkout-design.md#c")
    assert summary["build"]["conforms"] is True
    # usage: one request per chunk, tokens and cost from the responses' usage
    usage = summary["usage"]
    assert usage["requests"] == server.count == ex["chunks"] and usage["cache_hits"] == 0
    assert usage["estimated_cost_usd"] == pytest.approx(
        (usage["prompt_tokens"] * 1.0 + usage["completion_tokens"] * 4.0) / 1e6)
    assert summary["llm"]["mode"] == "json_schema" and summary["llm"]["confirmed"]
    # every prompt starts with the same fixed part (prefix caching), the chunk comes last
    systems = {b["messages"][0]["content"] for b in server.bodies}
    assert len(systems) == 1 and "dependsOn" in systems.pop()
    assert all(b["messages"][1]["content"].startswith("Document: ") for b in server.bodies)
    assert all(b["response_format"]["json_schema"]["strict"] for b in server.bodies)


@pytest.mark.slow
def test_second_run_sends_nothing_and_changes_are_incremental(fake_llm, project):
    server = fake_llm(oracle)
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    assert extract(server).exit_code == 0
    first = server.count
    out = extract(server, "--format", "json")
    assert server.count == first  # zero HTTP requests
    s = json.loads(out.output)
    assert s["build"]["documents_changed"]["unchanged"] == 2 and s["usage"]["requests"] == 0
    s = json.loads(extract(server, "--full", "--format", "json").output)  # re-verified from cache
    assert s["build"]["documents_changed"]["changed"] == 2 and server.count == first
    # a touched file (same content) costs cache hits, no request
    doc = project / "docs" / "checkout-runbook.md"
    doc.write_text(doc.read_text())
    s = json.loads(extract(server, "--format", "json").output)
    assert server.count == first and s["usage"]["cache_hits"] >= 1
    # a changed document: only its new chunks are asked; its old edges go
    doc.write_text(doc.read_text().replace("Web Shop depends on Checkout Service",
                                           "Web Shop calls Checkout Service"))
    s = json.loads(extract(server, "--format", "json").output)
    assert s["build"]["documents_changed"]["changed"] == 1
    assert 0 < server.count - first <= 2
    edges = llm_edges(store_graph())
    assert ("component:default/web-shop", "dependsOn", "component:default/checkout-service") \
        not in edges
    # a deleted document is removed with its edges and passages
    (project / "docs" / "checkout-design.md").unlink()
    s = json.loads(extract(server, "--format", "json").output)
    assert s["build"]["documents_changed"]["deleted"] == 1
    kg = store_graph()
    assert not any(p.startswith("docs/checkout-design.md") for p in kg.passages)
    assert ("component:default/checkout-service", "consumesApi", "api:default/payments-api") \
        in kg.edges()  # the catalog still says so
    assert not any(a.source == "docs/checkout-design.md" for a in kg.assertions.values())


@pytest.mark.slow
def test_build_keeps_text_documents_and_never_reads_them(fake_llm, project):
    server = fake_llm(oracle)
    assert extract(server).exit_code == 0  # text first, into an empty store
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    out = run("build", ".", "--timestamp", "0", "--format", "json")  # the docs folder is under .
    assert out.exit_code == 0, out.output
    s = json.loads(out.output)
    assert s["documents_changed"]["deleted"] == 0
    kg = store_graph()
    assert len(llm_edges(kg)) == len(EXPECTED_EDGES) and kg.passages
    assert run("build", "catalog", "--prune", "--full", "--timestamp", "0").exit_code == 0
    assert len(llm_edges(store_graph())) == len(EXPECTED_EDGES)  # --prune is for manifests
    # and extract leaves the manifests alone
    s = json.loads(extract(server, "--format", "json", "--full").output)
    assert s["build"]["documents_changed"]["deleted"] == 0
    assert any(a.extractor == "backstage" for a in store_graph().assertions.values())


@pytest.mark.slow
def test_traverse_cites_the_passage_behind_each_llm_edge(fake_llm, project):
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    assert extract(fake_llm(oracle)).exit_code == 0
    out = run("traverse", "-q", QUESTION, "--path", CLASSIC, "--format", "json")
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert "component:default/checkout-service" in result["answers"]
    items = result["context"]["items"]
    passages = {i["id"]: i for i in items if i["kind"] == "passage"}
    kg = store_graph()
    for e in result["edges"]:
        for a in e["assertions"]:
            if a["extractor"] == "llm:fake-model":
                assert a["passage"] in passages  # cited under its chunk ID
                assert passages[a["passage"]]["text"] == " ".join(kg.passages[a["passage"]].text.split())
    assert passages  # the walk crossed LLM edges
    text = run("traverse", "-q", QUESTION, "--path", CLASSIC).output
    assert "[docs/checkout-design.md#c" in text


def test_dry_run_sends_and_changes_nothing(fake_llm, project):
    server = fake_llm(oracle)
    out = extract(server, "--dry-run", "--format", "json")
    assert out.exit_code == 0, out.output
    plan = json.loads(out.output)["plan"]
    assert server.count == 0 and not (project / ".kgbuild").exists()
    assert plan["calls"] == len(plan["requests"]) > 0 and plan["estimated_prompt_tokens"] > 0
    assert extract(server).exit_code == 0
    n = server.count
    assert n == plan["calls"]
    again = json.loads(extract(server, "--dry-run", "--format", "json").output)["plan"]
    assert again["calls"] == 0 and server.count == n  # nothing left to send
    text = extract(server, "--dry-run", "--gleanings", "1").output
    assert "would be sent" in text and server.count == n


def test_gleanings_ask_again_and_add_what_was_missed(fake_llm, project):
    missed = FACTS[1]  # the first answer leaves out one relation; the gleaning pass finds it

    def forgetful(body):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        if len(users) > 1:  # the gleaning follow-up
            return Reply.relations(missed[1]) if missed[0] in users[0] else Reply.relations()
        return oracle(body, [f for f in FACTS if f is not missed])
    server = fake_llm(forgetful)
    assert extract(server, "--gleanings", "1").exit_code == 0
    assert ("component:default/pricing-sdk", "ownedBy", "group:default/commerce-platform") in \
        llm_edges(store_graph())
    assert server.count == 2 * len({b["messages"][1]["content"] for b in server.bodies})


@pytest.mark.slow
def test_document_mode_asks_once_per_document(fake_llm, project):
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    server = fake_llm(oracle)
    out = extract(server, "--mode", "document", "--format", "json")
    assert out.exit_code == 0 and server.count == 2
    kg = store_graph()
    assert sorted(kg.passages) == ["docs/checkout-design.md#c1", "docs/checkout-runbook.md#c1"]
    assert set(llm_edges(kg)) == EXPECTED_EDGES


@pytest.mark.slow
def test_a_failed_request_is_reported_and_retried_next_run(fake_llm, project):
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    calls = {"n": 0}

    def flaky(body):
        calls["n"] += 1
        if "Who to call" in body["messages"][1]["content"] and calls["n"] < 100:
            return Reply(status=503, error="overloaded", headers={"retry-after-ms": "5"})
        return oracle(body)
    server = fake_llm(flaky)
    out = extract(server, "--max-retries", "1", "--format", "json")
    assert out.exit_code == 1  # the run completed, but a request failed
    s = json.loads(out.output)
    assert s["extraction"]["failed_requests"] == 1
    assert any(p["code"] == "llm-error" for p in s["build"]["problem_list"])
    calls["n"] = 100  # the server recovers
    before = server.count
    s = json.loads(extract(server, "--format", "json").output)
    assert s["build"]["documents_changed"]["changed"] == 1  # the incomplete document again
    assert server.count - before == 1  # only the failed chunk: the others are cached
    assert not s["build"]["problem_list"]
    assert ("component:default/pricing-sdk", "ownedBy", "group:default/commerce-platform") in \
        llm_edges(store_graph())


def test_passages_are_in_the_exported_graph(fake_llm, project):
    assert extract(fake_llm(oracle), "-o", "graph.ttl").exit_code == 0
    ttl = Path("graph.ttl").read_text()
    assert "kg:Passage" in ttl and "kg:chunk " in ttl
    assert passage_iri("docs/checkout-design.md#c1").endswith("docs/checkout-design.md%23c1")
    assert run("validate", "graph.ttl").exit_code == 0


def test_no_model_is_a_one_line_error(project):
    (project / "kgbuild.toml").write_text("")
    out = run("extract", "docs")
    assert out.exit_code == 2 and "no model given" in out.output


@pytest.mark.slow
def test_access_labels_hide_passages_llm_edges_and_values(fake_llm, project):
    (project / "access.yaml").write_text("rules:\n  - paths: docs/**\n    labels: [internal]\n")
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    assert extract(fake_llm(oracle), "--access", "access.yaml").exit_code == 0
    kg = store_graph()
    assert all(p.access == {"internal"} for p in kg.passages.values())
    public = run("traverse", "-q", QUESTION, "--path", CLASSIC, "--format", "json")
    data = json.loads(public.output)
    assert not [i for i in data["context"]["items"] if i["kind"] == "passage"]
    assert all(a["extractor"] != "llm:fake-model" for e in data["edges"] for a in e["assertions"])
    assert "docs/" not in public.output  # nothing of the prose reaches a public caller
    seed = json.loads(run("traverse", "--seed", "component:default/pricing-sdk", "--follow",
                          "ownedBy", "--hops", "1", "--format", "json").output)
    assert "the shared pricing library" not in json.dumps(seed)
    inside = json.loads(run("traverse", "-q", QUESTION, "--path", CLASSIC, "--principal",
                            "internal", "--format", "json").output)
    assert [i for i in inside["context"]["items"] if i["kind"] == "passage"]
    seed = json.loads(run("traverse", "--seed", "component:default/pricing-sdk", "--follow",
                          "ownedBy", "--hops", "1", "--principal", "internal", "--format", "json").output)
    assert "the shared pricing library" in json.dumps(seed)


@pytest.mark.slow
def test_an_endpoint_that_refuses_us_is_one_line_and_changes_nothing(fake_llm, project):
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    server = fake_llm(lambda body: Reply(status=401, error="Incorrect API key provided"))
    out = extract(server)
    assert out.exit_code == 2 and server.count == 1
    [line] = out.output.strip().splitlines()
    assert "AuthenticationError" in line and "OPENAI_API_KEY" in line and line.endswith("[llm]")
    assert not store_graph().passages  # nothing of the prose was stored
