"""Traversal: path semantics, follow walks, hub cap and ranking, budgets, abstains, output."""

from __future__ import annotations

import json

import pytest
from rdflib import Graph

from kgbuild import Assertion, KgbuildError, KnowledgeGraph
from kgbuild.graph.rdf import from_rdf
from kgbuild.graph.access import Principal
from kgbuild.retrieve.traverse import TraversalSpec, Traverser, parse_path, parse_step, traverse

ALL = Principal.all_access()
PA, CP, SDK, CHK = ("api:default/payments-api", "group:default/commerce-platform",
                    "component:default/pricing-sdk", "component:default/checkout-service")


def edge(kg, s, p, o, *, conf=1.0, when="2024-01-01T00:00:00Z", line=1, evidence=None, source="cat.yaml"):
    s, p, o = kg.schema.canonical(s, p, o)
    kg.add_assertion(Assertion(s, p, o, source, "test", when, conf, line,
                               evidence=evidence or f"{p}: {o}"))


def classic(schema) -> KnowledgeGraph:
    kg = KnowledgeGraph(schema)
    kg.add_node(PA, "API", "Payments API")
    kg.add_node(CP, "Group", "Commerce Platform")
    kg.add_node(SDK, "Library", "Pricing SDK")
    kg.add_node(CHK, "Service", "Checkout Service")
    edge(kg, PA, "ownedBy", CP, line=5, evidence="owner: group:commerce-platform")
    edge(kg, SDK, "ownedBy", CP, line=12, evidence="owner: group:commerce-platform")
    edge(kg, CHK, "dependsOn", SDK, line=20, evidence="dependsOn: [component:pricing-sdk]")
    return kg


def hub(schema, n_libs=180) -> KnowledgeGraph:
    """A team owning ``n_libs`` libraries and an API; one more library has a dependent."""
    kg = classic(schema)
    for i in range(n_libs):
        lib = f"component:default/lib-{i:03d}"
        kg.add_node(lib, "Library", f"Lib {i:03d}")
        edge(kg, lib, "ownedBy", CP)
    return kg


def test_step_directions_and_inverses(schema):
    assert parse_step("ownedBy", schema).dirs == (0,)
    assert parse_step("ownerOf:out", schema) == parse_step("ownedBy:in", schema).__class__(
        "ownedBy", (1,), "ownerOf:out")
    assert parse_step("ownerOf:in", schema).dirs == (0,)
    assert parse_step("dependencyOf:both", schema).dirs == (0, 1)
    with pytest.raises(KgbuildError, match="bad direction"):
        parse_step("ownedBy:up", schema)
    with pytest.raises(KgbuildError, match="known: .*ownerOf"):
        parse_step("maintains", schema)
    with pytest.raises(KgbuildError, match="bad path"):
        parse_path("ownedBy:out//dependsOn:in", schema)


def test_classic_path_answer_evidence_and_directions(schema):
    r = traverse(classic(schema), TraversalSpec(seeds=[PA], path="ownedBy:out/ownerOf:out/dependsOn:in"), ALL)
    assert r.abstain is None
    assert r.answers == [CHK]
    assert [p["text"] for p in r.paths] == [
        "Payments API -ownedBy-> Commerce Platform <-ownedBy- Pricing SDK <-dependsOn- Checkout Service"]
    stored = {(e["subject"], e["predicate"], e["object"]): e for e in r.edges}
    assert set(stored) == {(PA, "ownedBy", CP), (SDK, "ownedBy", CP), (CHK, "dependsOn", SDK)}
    assert stored[(SDK, "ownedBy", CP)]["walks"] == [{"hop": 2, "direction": "in"}]
    assert stored[(CHK, "dependsOn", SDK)]["assertions"][0] == {
        "source": "cat.yaml", "location": "line 20", "evidence": "dependsOn: [component:pricing-sdk]",
        "extractor": "test", "confidence": 1.0, "generated_at": "2024-01-01T00:00:00Z", "qualifiers": []}
    kinds = [i["kind"] for i in r.context["items"]]
    assert kinds == ["seed"] + ["evidence"] * 3 + ["relation"] * 3
    assert "Checkout Service depends on Pricing SDK." in [i["text"] for i in r.context["items"]]
    # the same query spelled with stored names only gives the same answer
    r2 = traverse(classic(schema), TraversalSpec(seeds=[PA], path="ownedBy/ownedBy:in/dependencyOf"), ALL)
    assert r2.answers == r.answers and r2.edges == r.edges


def test_path_walk_semantics_revisits_and_both(schema):
    kg = classic(schema)
    siblings = traverse(kg, TraversalSpec(seeds=[SDK], path="ownedBy:out/ownedBy:in"), ALL)
    assert siblings.answers == [PA]  # the seed is no answer of its own question ...
    walks = traverse(kg, TraversalSpec(seeds=[SDK], path="ownedBy:out/ownedBy:in", include_seeds=True), ALL)
    assert walks.answers == sorted([PA, SDK])  # ... although walks may return to it
    both = traverse(kg, TraversalSpec(seeds=[SDK], path="dependsOn:both"), ALL)
    assert both.answers == [CHK]
    none = traverse(kg, TraversalSpec(seeds=[SDK], path="dependsOn:out"), ALL)
    assert none.abstain["reason"] == "no-path" and none.answers == [] and none.edges == []


def test_missing_edge_reports_no_path(schema):
    kg = classic(schema)
    kg.assertions = {k: a for k, a in kg.assertions.items() if a.predicate != "dependsOn"}
    r = traverse(kg, TraversalSpec(seeds=[PA], path="ownedBy:out/ownerOf:out/dependsOn:in"), ALL)
    assert r.abstain["reason"] == "no-path"
    assert [n["id"] for n in r.nodes] == [PA] and r.edges == [] and r.paths == []
    assert r.context["items"] == [] and "no walk matches" in r.context["abstain"]


def test_no_seed_abstains(schema):
    r = traverse(classic(schema), TraversalSpec(seeds=["component:default/nope"], hops=2), ALL)
    assert r.abstain["reason"] == "no-seed"
    assert r.unresolved == [{"via": "id", "index": 0, "mention": "component:default/nope",
                             "status": "unknown", "candidates": []}]
    assert r.nodes == [] and r.context["items"] == []


def test_hub_cap_counts_cut_and_path_lookahead_keeps_useful_branch(schema):
    kg = hub(schema)
    spec = TraversalSpec(seeds=[PA], path="ownedBy:out/ownerOf:out/dependsOn:in", cap=50)
    r = traverse(kg, spec, ALL)
    assert r.answers == [CHK]  # only Pricing SDK can continue, so the cap never hides it
    follow = traverse(kg, TraversalSpec(seeds=[CP], follow=["ownerOf:out"], hops=1, cap=50), ALL)
    assert len(follow.edges) == 50
    assert follow.truncated["cap"] == [{"node": CP, "hop": 1, "edges": 182 - 50}]
    # equal confidence and recency; Pricing SDK has a dependent, so it ranks after the rest
    assert [n["id"] for n in follow.nodes[1:]] == [PA] + [
        f"component:default/lib-{i:03d}" for i in range(49)]


def test_ranking_confidence_recency_degree_then_id(schema):
    kg = KnowledgeGraph(schema)
    kg.add_node(CP, "Group", "Team")
    specs = {  # id: (confidence, timestamp, extra dependents)
        "component:default/a-low-conf": (0.5, "2024-06-01T00:00:00Z", 0),
        "component:default/b-old": (1.0, "2023-01-01T00:00:00Z", 0),
        "component:default/c-hubby": (1.0, "2024-06-01T00:00:00Z", 3),
        "component:default/d-plain": (1.0, "2024-06-01T00:00:00Z", 0),
        "component:default/e-plain": (1.0, "2024-06-01T00:00:00Z", 0),
    }
    for i, (lib, (conf, when, deps)) in enumerate(specs.items()):
        kg.add_node(lib, "Library", lib)
        edge(kg, lib, "ownedBy", CP, conf=conf, when=when)
        for k in range(deps):
            kg.add_node(f"component:default/user-{i}-{k}", "Service", "user")
            edge(kg, f"component:default/user-{i}-{k}", "dependsOn", lib)
    r = traverse(kg, TraversalSpec(seeds=[CP], follow=["ownerOf"], hops=1, cap=5), ALL)
    assert [n["id"].split("/")[1] for n in r.nodes[1:]] == [
        "d-plain", "e-plain", "c-hubby", "b-old", "a-low-conf"]
    capped = traverse(kg, TraversalSpec(seeds=[CP], follow=["ownerOf"], hops=1, cap=2), ALL)
    assert [n["id"].split("/")[1] for n in capped.nodes[1:]] == ["d-plain", "e-plain"]
    assert capped.truncated["cap"] == [{"node": CP, "hop": 1, "edges": 3}]


def test_type_filter_applies_before_the_cap(schema):
    kg = hub(schema, 60)
    r = traverse(kg, TraversalSpec(seeds=[CP], follow=["ownerOf"], hops=1, cap=1, types=["API"]), ALL)
    assert [n["id"] for n in r.nodes] == [CP, PA]
    assert r.truncated["cap"] == []
    comp = traverse(kg, TraversalSpec(seeds=[CP], follow=["ownerOf"], hops=1, cap=3,
                                      types=["Component"]), ALL)
    assert {n["type"] for n in comp.nodes[1:]} == {"Library"} and len(comp.nodes) == 4
    assert comp.truncated["cap"] == [{"node": CP, "hop": 1, "edges": 61 - 3}]


def test_follow_hops_directions_and_no_walking_back(schema):
    r = traverse(classic(schema), TraversalSpec(seeds=[PA], follow=["ownedBy:both", "dependsOn:in"],
                                                hops=3, cap=50), ALL)
    assert [(n["id"], n["hop"]) for n in r.nodes] == [(PA, 0), (CP, 1), (SDK, 2), (CHK, 3)]
    assert [e["walks"] for e in r.edges] == [[{"hop": 1, "direction": "out"}],
                                             [{"hop": 2, "direction": "in"}],
                                             [{"hop": 3, "direction": "in"}]]
    assert r.truncated["cap"] == []
    out_only = traverse(classic(schema), TraversalSpec(seeds=[PA], follow=["ownedBy:out"], hops=3), ALL)
    assert [n["id"] for n in out_only.nodes] == [PA, CP]
    nothing = traverse(classic(schema), TraversalSpec(seeds=[CHK], follow=["ownedBy"], hops=2), ALL)
    assert nothing.abstain["reason"] == "no-edges"


def test_budgets_cut_in_rank_order_and_are_reported(schema):
    kg = hub(schema, 30)
    r = traverse(kg, TraversalSpec(seeds=[CP], follow=["ownerOf"], hops=1, cap=None, max_nodes=5), ALL)
    assert len(r.nodes) == 5 and r.truncated["nodes"] == 32 - 4
    e = traverse(kg, TraversalSpec(seeds=[CP], follow=["ownerOf"], hops=1, cap=None, max_edges=3), ALL)
    assert len(e.edges) == 3 and len(e.nodes) == 4
    c = traverse(kg, TraversalSpec(seeds=[CP], follow=["ownerOf"], hops=1, max_chars=300), ALL)
    assert 0 < c.context["chars"] <= 300 and c.truncated["context_items"] > 0
    p = traverse(kg, TraversalSpec(seeds=[PA], path="ownedBy/ownerOf", max_paths=4), ALL)
    assert len(p.answers) == 31 and PA not in p.answers  # 32 walk ends, minus the seed
    assert len(p.paths) == 4 and p.truncated["paths"] == 28


def test_untyped_edges_from_rdf_are_walked_without_evidence(schema):
    ttl = """
    @prefix sw: <https://kgbuild.dev/schema/software#> .
    @prefix id: <https://kgbuild.dev/id/> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    id:a a sw:Service ; rdfs:label "A" ; sw:dependsOn id:b .
    id:b a sw:Library ; rdfs:label "B" ; sw:ownedBy id:t .
    id:t a sw:Group ; rdfs:label "T" .
    """
    kg = from_rdf(Graph().parse(data=ttl, format="turtle"), schema)
    r = traverse(kg, TraversalSpec(seeds=["t"], path="ownerOf/dependencyOf"))
    assert r.answers == ["a"]
    assert all(e["assertions"] == [] for e in r.edges)
    assert [i["kind"] for i in r.context["items"]] == ["seed", "relation", "relation"]
    assert "A depends on B." in r.render()


def test_json_and_text_outputs(schema):
    t = Traverser(classic(schema), ALL)
    r = t.run(TraversalSpec(seeds=[PA], path="ownedBy:out/ownerOf:out/dependsOn:in"))
    d = json.loads(json.dumps(r.to_dict()))
    assert set(d) == {"mode", "spec", "principal", "seeds", "unresolved", "nodes", "edges", "paths",
                      "answers", "labels", "truncated", "abstain", "context"}
    assert d["seeds"][0]["via"] == "id" and d["principal"] == {"labels": [], "all_access": True}
    assert d["paths"][0]["edges"] == ["e1", "e2", "e3"]
    text = r.render()
    assert "answers: Checkout Service (component:default/checkout-service)" in text
    assert "[c1] Payments API is an API" in text
    again = Traverser(classic(schema), ALL)
    assert again.run(TraversalSpec(seeds=[PA], path="ownedBy:out/ownerOf:out/dependsOn:in")).to_dict() == d


def test_spec_checks(schema):
    for bad in (dict(hops=0), dict(cap=-1), dict(max_nodes=-2),
                dict(path="ownedBy", follow=["ownedBy"])):
        with pytest.raises(KgbuildError):
            traverse(classic(schema), TraversalSpec(seeds=[PA], **bad), ALL)
