"""Help when a walk finds nothing: the diagnosis, the schema's typed paths, the shortest path."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import REPO

from kgbuild import Assertion, KgbuildError, KnowledgeGraph
from kgbuild.retrieve.paths import typed_paths
from kgbuild.project.pipeline import build, build_graph
from kgbuild.cli.main import main
from kgbuild.retrieve.paths import schema_steps
from kgbuild.retrieve.traverse import TraversalSpec, Traverser

CATALOG = REPO / "fixtures" / "retrieval" / "catalog"
PA, SDK = "api:default/payments-api", "component:default/pricing-sdk"
QUESTION = "Which service depends on the library maintained by the team that owns Payments API?"


@pytest.fixture(scope="module")
def kg():
    return build_graph([CATALOG], timestamp=0, validate=False, root=CATALOG.parent).graph


def test_wrong_direction_names_the_step_and_the_direction_that_matches(kg):
    r = Traverser(kg).run(TraversalSpec(seeds=[SDK], path="ownedBy:in/ownerOf:out/dependsOn:in"))
    d = r.abstain["diagnosis"]
    assert (d["step"], d["step_text"], d["reason"]) == (1, "ownedBy:in", "no-edge")
    assert d["from"] == [{"id": SDK, "label": "Pricing SDK"}] and d["partial"] is None
    assert d["alternatives"] == [{"step": "ownedBy:out", "same_as": "ownerOf:in", "edges": 1}]
    assert "step 1 (ownedBy:in) matched no edge from Pricing SDK; ownedBy:out (same as " \
           "ownerOf:in) would match 1 edge" in r.render()
    # written with the inverse name, the suggestion keeps that name
    inv = Traverser(kg).run(TraversalSpec(seeds=[SDK], path="ownerOf:out"))
    assert inv.abstain["diagnosis"]["alternatives"][0]["step"] == "ownerOf:in"
    assert inv.abstain["diagnosis"]["alternatives"][0]["same_as"] == "ownedBy:out"


def test_later_step_failure_gives_the_nearest_partial_walk(kg):
    r = Traverser(kg).run(TraversalSpec(seeds=[PA], path="ownedBy:out/ownedBy:out"))
    d = r.abstain["diagnosis"]
    assert d["step"] == 2 and d["from"][0]["label"] == "Commerce Platform"
    assert d["partial"]["text"] == "Payments API -ownedBy-> Commerce Platform"
    assert d["partial"]["nodes"] == [PA, "group:default/commerce-platform"]
    assert d["alternatives"][0]["step"] == "ownedBy:in" and d["alternatives"][0]["edges"] >= 2
    both = Traverser(kg).run(TraversalSpec(seeds=[PA], path="ownedBy/providesApi:both"))
    d = both.abstain["diagnosis"]
    assert d["alternatives"] == [] and d["leaving"] == [{"step": "ownerOf:out", "edges": 2}]
    assert "edges there: ownerOf:out (2); nearest partial walk: Payments API -ownedBy-> " \
           "Commerce Platform" in both.abstain["message"]


def test_type_filter_failure_says_so(kg):
    r = Traverser(kg).run(TraversalSpec(seeds=[PA], path="ownedBy", types=["User"]))
    assert r.abstain["diagnosis"]["reason"] == "no-type"
    assert "none ends at the --type" in r.abstain["message"]


def test_typed_paths_between_types(schema):
    found, total = typed_paths(schema, "API", "Service", max_hops=3)
    assert total == 650 and len(found) == 50  # (routesTo/routedFrom: Kubernetes, a8c4fca)
    assert [len(p.steps) for p in found] == sorted(len(p.steps) for p in found)
    assert found[0].path == "apiConsumedBy:out" and found[0].text == "API <-consumesApi- Component"
    classic = typed_paths(schema, "API", "Component", 3, 10_000)[0]
    assert "ownedBy:out/ownerOf:out/dependencyOf:out" in [p.path for p in classic]
    one, n = typed_paths(schema, "User", "Group", 1)
    assert [p.path for p in one] == ["memberOf:out"] and n == 1
    assert typed_paths(schema, "Location", "Group", 3) == ([], 0)
    assert {s.source for s in schema_steps(schema, "library")} == {"Library"}
    assert "dependsOn:out" in {s.step for s in schema_steps(schema, "library")}  # a Component's
    with pytest.raises(KgbuildError):
        typed_paths(schema, "API", "Service", max_hops=7)
    with pytest.raises(KgbuildError, match="unknown node type"):
        typed_paths(schema, "API", "Nope")


def test_question_with_type_takes_the_shortest_walkable_typed_path(kg):
    r = Traverser(kg).run(TraversalSpec(question="Who owns Pricing SDK?", types=["Group"],
                                        shortest_path=True))
    assert r.spec["path"] == "ownedBy:out" and r.answers == ["group:default/commerce-platform"]
    # the classic question: 1 and 2 steps from Payments API reach no Service, 3 do
    r = Traverser(kg).run(TraversalSpec(question=QUESTION, types=["Service"], shortest_path=True))
    assert r.mode == "path" and r.abstain is None and r.spec["shortest_path"] is True
    assert r.spec["path"] == "ownedBy:out/ownerOf:out/dependencyOf:out"
    assert r.answers == ["component:default/checkout-service"]
    none = Traverser(kg).run(TraversalSpec(question="Who owns Pricing SDK?", types=["Location"],
                                           shortest_path=True))
    assert none.abstain["reason"] == "no-path" and "no typed path of at most 3 steps" in \
        none.abstain["message"]
    with pytest.raises(KgbuildError, match="shortest_path"):
        Traverser(kg).run(TraversalSpec(question=QUESTION, shortest_path=True))


@pytest.fixture(scope="module")
def ttl(tmp_path_factory):
    out = tmp_path_factory.mktemp("g") / "graph.ttl"
    build([CATALOG], out, timestamp=0, validate=False, store=None)
    return str(out)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_paths_and_diagnosis(ttl):
    r = run("paths", "API", "Group", "--max-hops", "1")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == "1 typed path from API to Group in at most 1 hops:"
    assert "ownedBy:out  API -ownedBy-> Group" in r.output
    j = json.loads(run("paths", "User", "Group", "--max-hops", "2", "--limit", "1",
                       "--format", "json").output)
    assert j["paths"][0]["path"] == "memberOf:out" and j["left_out"] == j["total"] - 1 > 0
    assert "... and" in run("paths", "User", "Group", "--max-hops", "2", "--limit", "1").output
    bad = run("paths", "API", "Nope")
    assert bad.exit_code == 2 and "unknown node type 'Nope'" in bad.output
    d = run("traverse", "--graph", ttl, "--seed", SDK, "--path", "ownedBy:in", "--format", "json")
    assert d.exit_code == 1
    assert json.loads(d.output)["abstain"]["diagnosis"]["alternatives"][0]["step"] == "ownedBy:out"
    q = run("traverse", "--graph", ttl, "-q", "Who owns Pricing SDK?", "--type", "Group")
    assert q.exit_code == 0 and "answers: Commerce Platform (group:default/commerce-platform)" in q.output


def test_text_output_labels_and_wrapping(schema):
    kg = KnowledgeGraph(schema)
    kg.add_node("group:default/team", "Group", "Team")
    for i in range(8):
        kg.add_node(f"component:default/c{i}", "Component", f"Component Number {i}")
        kg.add_assertion(Assertion(f"component:default/c{i}", "ownedBy", "group:default/team",
                                   "c.yaml", "test", "2024-01-01T00:00:00Z", 1.0, i + 1))
    r = Traverser(kg).run(TraversalSpec(seeds=["group:default/team"], path="ownerOf", max_nodes=3))
    assert len(r.answers) == 8 and len(r.nodes) == 3  # the seed and two answers
    text = r.render()
    assert f"answers ({len(r.answers)}):" in text
    for a in r.answers:  # every answer on its own line, with its label, though not in nodes
        assert f"\n  {r.labels[a]} ({a})" in text and r.labels[a] != a
    capped = Traverser(kg).run(TraversalSpec(seeds=["group:default/team"], follow=["ownerOf"],
                                             hops=1, cap=2)).render()
    assert "cap: 6 more edges at Team (group:default/team) (hop 1) not walked" in capped


def test_follow_without_edges_names_the_edges_that_are_there(kg):
    r = Traverser(kg).run(TraversalSpec(seeds=[PA], follow=["dependsOn"], hops=2))
    assert r.abstain == {"reason": "no-edges",
                         "message": "no allowed edge leaves the seeds; edges there: ownedBy:out (1)"}
