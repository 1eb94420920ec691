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
    conf = np.ones(m) if conf is None else np.array(conf)
    rec = np.zeros(m, int) if rec is None else np.array(rec)
    lists = csr_lists(n, 2, src, dst, et, conf, rec)
    return Walker(AdjacencyIndex(Strings.of([f"n{i:02d}" for i in range(n)]),
                                 np.zeros(n, np.int16), ["T"], ["a", "b"], src, dst, et, lists,
                                 conf, rec))


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


def _random_graph(rng, n: int, m: int):
    """``m`` distinct random edges of two types among ``n`` nodes, sorted by (subject, type,
    object), with confidences and times drawn from few values (many ties)."""
    key = np.unique(rng.integers(0, n * 2 * n, m))
    src, rest = key // (2 * n), key % (2 * n)
    et, dst = rest // n, rest % n
    return (src.astype(np.int32), dst.astype(np.int32), et.astype(np.int16),
            rng.choice([1.0, 0.9, -1.0], len(key)), rng.integers(0, 3, len(key)))


def _lists_equal(got: dict, expected: dict) -> bool:
    return got.keys() == expected.keys() and all(
        np.array_equal(getattr(got[k], f), getattr(expected[k], f))
        for k in expected for f in ("indptr", "nbr", "eid", "rank", "dir"))


@pytest.mark.parametrize("seed", range(60))
def test_relisted_equals_the_lists_of_the_changed_graph_ranked_again(seed):
    """A change (edges added and removed, confidences and times changed, nodes inserted into
    the numbering) applied to the old lists gives what ranking the new graph whole gives;
    with nothing added or removed, the lists no touched node is in are the old ones, and so
    is each column of the others whose slices stay as they were."""
    from kgbuild.store.adjacency import relisted

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 30))
    src, dst, et, conf, rec = _random_graph(rng, n, int(rng.integers(1, 80)))
    old = AdjacencyIndex(Strings.of([f"n{i:02d}" for i in range(n)]), np.zeros(n, np.int16),
                         ["T"], ["a", "b"], src, dst, et, csr_lists(n, 2, src, dst, et, conf, rec),
                         conf, rec)
    structural = seed % 3 != 0
    m = len(src)
    gone = rng.random(m) < (0.2 if structural else 0)
    redo = ~gone & (rng.random(m) < 0.15)
    conf2, rec2 = conf.copy(), rec.copy()
    conf2[redo] = rng.choice([1.0, 0.9, 0.5], int(redo.sum()))
    rec2[redo] = rng.integers(0, 4, int(redo.sum()))
    inserted = np.sort(rng.choice(n + 3, 3, replace=False)) if structural else np.zeros(0, int)
    size = n + len(inserted)
    nodes = np.flatnonzero(~np.isin(np.arange(size), inserted))  # old node -> new number
    rows = [(nodes[s], t, nodes[o], c, r, i) for i, (s, t, o, c, r) in
            enumerate(zip(src, et, dst, conf2, rec2)) if not gone[i]]
    fresh = {(int(a), int(t), int(b)) for a, t, b in zip(
        rng.integers(0, size, 6), rng.integers(0, 2, 6), rng.integers(0, size, 6))}
    fresh = fresh - {(s, t, o) for s, t, o, *_ in rows} if structural else set()
    rows += [(s, t, o, 0.7, 5, -1) for s, t, o in fresh]
    rows.sort(key=lambda x: x[:3])
    s2, t2, o2, c2, r2, was = (np.array(x) for x in zip(*rows)) if rows else \
        (np.zeros(0, int),) * 6
    s2, o2, t2 = s2.astype(np.int32), o2.astype(np.int32), t2.astype(np.int16)
    edges = np.full(m, -1, dtype=np.int64)
    edges[was[was >= 0]] = np.flatnonzero(was >= 0)
    cut = nodes[np.concatenate([src[gone], dst[gone]])]
    got = relisted(old, size, s2, o2, t2, c2.astype(float), r2, np.flatnonzero(was < 0),
                   edges[np.flatnonzero(redo)], cut,
                   *((nodes, edges.__getitem__) if structural else (None, None)))
    assert _lists_equal(got, csr_lists(size, 2, s2, o2, t2, c2.astype(float), r2))
    if not structural:
        touched = set(src[redo].tolist()) | set(dst[redo].tolist())
        for key, c in got.items():
            owners = np.repeat(np.arange(n), np.diff(old.lists[key].indptr))
            assert (c is old.lists[key]) == (not touched & set(owners.tolist())), key
            for name in ("nbr", "eid", "rank"):  # (a column left as it was: the old array)
                new, was_ = getattr(c, name), getattr(old.lists[key], name)
                assert (new is was_) == np.array_equal(new, was_), (key, name)


def test_relisted_to_a_graph_left_without_nodes():
    """Regression: every edge and node removed (a real catalog's random edits) indexed an
    empty mark array."""
    from kgbuild.store.adjacency import relisted

    src, dst, et = (np.array(x, dtype=t) for x, t in (([0, 1], np.int32), ([1, 2], np.int32),
                                                        ([0, 1], np.int16)))
    conf, rec = np.ones(2), np.zeros(2, int)
    old = AdjacencyIndex(Strings.of(["a", "b", "c"]), np.zeros(3, np.int16), ["T"], ["a", "b"],
                         src, dst, et, csr_lists(3, 2, src, dst, et, conf, rec), conf, rec)
    empty = np.zeros(0, dtype=np.int32)
    got = relisted(old, 0, empty, empty, empty.astype(np.int16), np.zeros(0), empty,
                   np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                   np.full(3, -1), np.full(2, -1).__getitem__)
    assert got == {} == csr_lists(0, 2, empty, empty, empty.astype(np.int16), np.zeros(0), empty)
