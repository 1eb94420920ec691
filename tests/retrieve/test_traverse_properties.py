"""Property tests over random graphs: exact path semantics, and nothing hidden ever leaks."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgbuild import Assertion, KnowledgeGraph, load_schema
from kgbuild.graph.model import SourceDocument
from kgbuild.graph.access import Principal
from kgbuild.retrieve.traverse import TraversalSpec, traverse

SCHEMA = load_schema()
TYPES = ["Service", "Library", "Group", "API"]
EDGES = ["dependsOn", "ownedBy", "partOf"]
NAMES = EDGES + ["dependencyOf", "ownerOf", "hasPart"]
LABELS = ["red", "green", "blue"]


def node_id(i: int) -> str:
    return f"component:default/zz{i:03d}zz"


QUALIFIERS = [frozenset(), frozenset(), frozenset({"dev"}), frozenset({"group:tests"})]


@st.composite
def graphs(draw, labelled: bool):
    n = draw(st.integers(1, 10))
    kg = KnowledgeGraph(SCHEMA)
    labels = st.frozensets(st.sampled_from(LABELS), max_size=2) if labelled else st.just(frozenset())
    docs = [f"doc{d:02d}.yaml" for d in range(3)]
    for d in docs:
        kg.add_document(SourceDocument(d, d, "0" * 64, draw(labels)))
    for i in range(n):
        node = kg.add_node(node_id(i), draw(st.sampled_from(TYPES)), f"Label {i:03d}!")
        node.access.update(draw(labels))
        node.defined_in.add(draw(st.sampled_from(docs)))
    triples = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(EDGES),
                                      st.integers(0, n - 1)), max_size=25))
    for k, (s, p, o) in enumerate(triples):
        if draw(st.booleans()) or not labelled:
            kg.add_assertion(Assertion(node_id(s), p, node_id(o), draw(st.sampled_from(docs)), "t",
                                       draw(st.sampled_from(["2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"])),
                                       draw(st.sampled_from([1.0, 0.5])), k + 1,
                                       evidence=f"ev{k:03d}ev", access=draw(labels),
                                       qualifiers=draw(st.sampled_from(QUALIFIERS))))
        else:
            kg.untyped_edges.add((node_id(s), p, node_id(o)))
    return kg


steps = st.tuples(st.sampled_from(NAMES), st.sampled_from(["out", "in", "both"]))


def reference_answers(kg: KnowledgeGraph, seeds: set[str], path: list[tuple[str, str]]) -> set[str]:
    """Relational composition over the stored edges: the definition of path semantics."""
    edges = set(kg.edges())
    cur = set(seeds)
    for name, direction in path:
        et, inverted = SCHEMA.predicate(name)
        fwd = {"out": direction in ("out", "both"), "in": direction in ("in", "both")}
        if inverted:
            fwd = {"out": fwd["in"], "in": fwd["out"]}
        nxt = set()
        for s, p, o in edges:
            if p != et.name:
                continue
            if fwd["out"] and s in cur:
                nxt.add(o)
            if fwd["in"] and o in cur:
                nxt.add(s)
        cur = nxt
    return cur


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(labelled=False), st.lists(steps, min_size=1, max_size=4), st.data())
def test_uncapped_paths_are_exact(kg, path, data):
    seeds = data.draw(st.sets(st.sampled_from(sorted(kg.nodes)), min_size=1, max_size=3))
    text = "/".join(f"{n}:{d}" for n, d in path)
    r = traverse(kg, TraversalSpec(seeds=sorted(seeds), path=text, cap=None, max_paths=10_000,
                                   max_nodes=None, max_edges=None, include_seeds=True),
                 Principal.all_access())
    expected = reference_answers(kg, seeds, path)
    assert r.answers == sorted(expected)
    assert (r.abstain is None) == bool(expected)
    default = traverse(kg, TraversalSpec(seeds=sorted(seeds), path=text, cap=None, max_paths=10_000,
                                         max_nodes=None, max_edges=None), Principal.all_access())
    assert default.answers == sorted(expected - seeds)  # the topic entities are no answers
    edges = {e["id"]: e for e in r.edges}
    for p in r.paths:  # every listed path is a real walk of the requested shape
        assert p["seed"] in seeds and p["end"] in expected and len(p["edges"]) == len(path)
        for (name, direction), eid, a, b in zip(path, p["edges"], p["nodes"], p["nodes"][1:]):
            e = edges[eid]
            assert reference_answers(kg, {a}, [(name, direction)]) >= {b}
            assert {a, b} == {e["subject"], e["object"]}


def visible(labels, principal) -> bool:
    return set(labels) <= principal


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(labelled=False), st.lists(steps, min_size=1, max_size=3), st.data())
def test_filtered_paths_are_exact_paths_of_the_filtered_graph(kg, path, data):
    """A filter is the walk of the graph without the assertions it drops (untyped edges kept
    under a qualifier filter only)."""
    seeds = data.draw(st.sets(st.sampled_from(sorted(kg.nodes)), min_size=1, max_size=3))
    excluded = data.draw(st.sampled_from([(), ("dev",), ("test", "dev")]))
    least = data.draw(st.sampled_from([None, 0.7]))
    spec = TraversalSpec(seeds=sorted(seeds), path="/".join(f"{n}:{d}" for n, d in path), cap=None,
                         max_paths=10_000, max_nodes=None, max_edges=None, include_seeds=True,
                         exclude_qualifiers=excluded, min_confidence=least)
    r = traverse(kg, spec, Principal.all_access())
    drop = {"dev"} if excluded == ("dev",) else {"dev", "group:tests"} if excluded else set()
    kept = KnowledgeGraph(SCHEMA)
    kept.nodes = kg.nodes
    kept.assertions = {k: a for k, a in kg.assertions.items()
                       if not (a.qualifiers & drop) and (least is None or a.confidence >= least)}
    kept.untyped_edges = kg.untyped_edges if least is None else set()
    assert r.answers == sorted(reference_answers(kept, seeds, path))
    for e in r.edges:
        assert all(not set(a["qualifiers"]) & drop for a in e["assertions"])


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(labelled=True), st.frozensets(st.sampled_from(LABELS)), st.data())
def test_hidden_items_never_leak_and_do_not_influence_output(kg, held, data):
    seeds = data.draw(st.lists(st.sampled_from(sorted(kg.nodes)), min_size=1, max_size=3, unique=True))
    if data.draw(st.booleans()):
        spec = TraversalSpec(seeds=seeds, path="/".join(f"{n}:{d}" for n, d in
                                                         data.draw(st.lists(steps, min_size=1, max_size=3))),
                             cap=data.draw(st.sampled_from([None, 1, 2])))
    else:
        spec = TraversalSpec(seeds=seeds, follow=[f"{n}:{d}" for n, d in data.draw(st.lists(steps, max_size=3))],
                             hops=data.draw(st.integers(1, 3)), cap=data.draw(st.sampled_from([None, 1, 2])),
                             max_nodes=data.draw(st.sampled_from([None, 3])))
    if data.draw(st.booleans()):  # filters run on the visible graph: they neither leak nor interfere
        spec.exclude_qualifiers, spec.min_confidence = ["dev"], data.draw(st.sampled_from([None, 0.7]))
    principal = Principal(held)
    result = traverse(kg, spec, principal).to_dict()
    # an unknown seed is echoed as asked (the caller's own text, as for a nonexistent ID)
    out = json.dumps({**result, "unresolved": [{k: v for k, v in u.items() if k != "mention"}
                                                for u in result["unresolved"]]})

    docs_ok = {d for d, doc in kg.documents.items() if visible(doc.access, held)}
    allowed = {i for i, n in kg.nodes.items() if visible(n.access, held)}
    hidden = [d for d in kg.documents if d not in docs_ok]
    asserted_ok = set()
    for a in kg.assertions.values():
        if (visible(a.access, held) and a.source in docs_ok
                and a.subject in allowed and a.object in allowed):
            asserted_ok.add(a.edge)
        else:
            hidden.append(a.evidence)
    # a node is seen through a visible document that defines it or a visible assertion
    mentioned = {x for s, _, o in asserted_ok for x in (s, o)}
    nodes_ok = {i for i in allowed if kg.nodes[i].defined_in & docs_ok or i in mentioned}
    for i in set(kg.nodes) - nodes_ok:
        hidden += [i, kg.nodes[i].label]
    for token in hidden:
        assert token not in out, token
    for e in result["edges"]:  # every reported edge is visible, through visible nodes
        key = (e["subject"], e["predicate"], e["object"])
        assert e["subject"] in nodes_ok and e["object"] in nodes_ok
        assert key in asserted_ok or (key in kg.untyped_edges and not e["assertions"])

    # non-interference: the same answer as on a graph where the hidden items never existed
    stripped = KnowledgeGraph(SCHEMA)
    stripped.documents = {d: kg.documents[d] for d in docs_ok}
    for i in nodes_ok:
        n = kg.nodes[i]
        defined = n.defined_in & docs_ok  # seen only through a mention: the ID's name part
        stripped.add_node(i, n.type, n.label if defined else i.rsplit("/", 1)[-1]).access.update(n.access)
        stripped.nodes[i].defined_in = defined
    stripped.assertions = {k: a for k, a in kg.assertions.items()
                           if a.edge in asserted_ok and visible(a.access, held) and a.source in docs_ok}
    stripped.untyped_edges = {e for e in kg.untyped_edges if e[0] in nodes_ok and e[2] in nodes_ok}
    assert traverse(stripped, spec, principal).to_dict() == result
