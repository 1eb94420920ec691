"""The CSR adjacency index (kgbuild/store/adjacency.py): ranking; the expand kernel of the walks
(kgbuild/retrieve/walk.py) against brute force; a graph's node numbering."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgbuild import Assertion, KnowledgeGraph
from kgbuild.retrieve.walk import Walker
from kgbuild.store.adjacency import AdjacencyIndex, csr_lists
from kgbuild.store.readmodel import GraphModel
from kgbuild.store.strings import Strings


def small_index(edges, n, conf=None, rec=None) -> Walker:
    src, et, dst = (np.array(x, dtype=np.int64) for x in zip(*edges)) if edges else (np.zeros(0, int),) * 3
    m = len(edges)
    src, dst, et = src.astype(np.int32), dst.astype(np.int32), et.astype(np.int16)
    lists = csr_lists(n, 2, src, dst, et, np.ones(m) if conf is None else np.array(conf),
                      np.zeros(m, int) if rec is None else np.array(rec))
    return Walker(AdjacencyIndex(Strings.of([f"n{i:02d}" for i in range(n)]),
                                 np.zeros(n, np.int16), ["T"], ["a", "b"], src, dst, et, lists))


def test_lists_are_ranked_by_confidence_recency_degree_then_id():
    # node 0 owns edges of type 0 to nodes 1..4; node 4 also has two extra edges (a hub)
    edges = [(0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 0, 4), (5, 1, 4), (6, 1, 4), (0, 1, 1)]
    ix = small_index(edges, 7, conf=[0.5, 1, 1, 1, 1, 1, 1], rec=[9, 1, 5, 5, 0, 0, 0])
    out = ix.index.lists[(0, 0)]
    assert out.nbr[out.indptr[0]:out.indptr[1]].tolist() == [3, 4, 2, 1]
    ent, cut = ix.expand(np.array([0]), [(0, 0)], cap=2)
    assert ent.nbr.tolist() == [3, 4] and cut.tolist() == [2]
    merged, _ = ix.expand(np.array([0]), [(0, 0), (1, 0)], cap=None)
    assert merged.nbr.tolist() == [3, 4, 2, 1, 1] and merged.eid.tolist()[3:] == [6, 0]
    incoming, _ = ix.expand(np.array([4]), [(1, 1), (0, 1)], cap=None)
    assert incoming.nbr.tolist() == [0, 5, 6] and incoming.dir.tolist() == [1, 1, 1]


@st.composite
def random_case(draw):
    n = draw(st.integers(2, 12))
    edges = sorted(set(draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 1),
                                               st.integers(0, n - 1)), max_size=40))))
    m = len(edges)
    conf = draw(st.lists(st.sampled_from([1.0, 0.5]), min_size=m, max_size=m))
    rec = draw(st.lists(st.integers(0, 2), min_size=m, max_size=m))
    frontier = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1)))
    lists = sorted(draw(st.sets(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1)))
    cap = draw(st.sampled_from([None, 1, 2, 3]))
    allowed = draw(st.none() | st.sets(st.integers(0, n - 1)))
    exclude = [draw(st.integers(-1, m - 1)) if m else -1 for _ in frontier]
    return n, edges, conf, rec, frontier, lists, cap, allowed, exclude


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(random_case())
def test_expand_matches_brute_force(case):
    n, edges, conf, rec, frontier, lists, cap, allowed, exclude = case
    ix = small_index(edges, n, conf, rec)
    deg = [0] * n
    for s, _, o in edges:
        deg[s] += 1
        deg[o] += 1
    keep = None if allowed is None else (lambda nbr: np.isin(nbr, sorted(allowed)))
    ent, cut = ix.expand(np.array(frontier, dtype=np.int32), lists, cap, keep,
                         np.array(exclude, dtype=np.int32))
    got = list(zip(ent.owner.tolist(), ent.eid.tolist(), ent.dir.tolist()))
    expected, expected_cut = [], []
    for u, ex in zip(frontier, exclude):
        cands = []
        for e, (s, t, o) in enumerate(edges):
            for d, (a, b) in enumerate(((s, o), (o, s))):
                if a == u and (t, d) in lists and e != ex and (allowed is None or b in allowed):
                    cands.append(((-conf[e], -rec[e], deg[b], b, t, d, u), e, d))
        cands.sort()
        taken = cands if cap is None else cands[:cap]
        expected += [(u, e, d) for _, e, d in taken]
        expected_cut.append(len(cands) - len(taken))
    assert got == expected
    assert cut.tolist() == expected_cut


def _kg(schema, extra=False) -> KnowledgeGraph:
    kg = KnowledgeGraph(schema)
    kg.add_node("component:default/süß", "Service", "Süß")
    kg.add_node("group:default/t", "Group", "T")
    kg.add_assertion(Assertion("component:default/süß", "ownedBy", "group:default/t", "a.yaml", "t",
                               "2024-01-01T00:00:00Z"))
    if extra:
        kg.untyped_edges.add(("component:default/süß", "dependsOn", "component:default/other"))
    return kg


def test_a_graph_numbers_its_nodes_and_edge_ends_by_id(schema):
    ix = GraphModel.of_graph(_kg(schema, extra=True)).index
    assert list(ix.node_ids) == ["component:default/other", "component:default/süß",
                                 "group:default/t"]
    assert ix.type_names[ix.node_type[0]] == ""  # only known as an edge endpoint
    assert ix.position("group:default/t") == 2 and ix.position("nope") is None
