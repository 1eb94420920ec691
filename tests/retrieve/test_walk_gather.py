"""A walker merges several edge types' lists for the frontier only (a one-off walk reads
what it walks) until that has cost what merging the whole lists would; both give the same
walks, hub cap, filters and ties included."""

from __future__ import annotations

import numpy as np
import pytest

from kgbuild.retrieve.walk import Walker
from kgbuild.store.adjacency import AdjacencyIndex, csr_lists
from kgbuild.store.strings import Strings

LISTS = [[(0, 0), (0, 1), (1, 1)], [(0, 0), (2, 0)], [(0, 1), (1, 0), (1, 1), (2, 1)]]


@pytest.fixture(scope="module")
def index():
    rng = np.random.default_rng(7)
    n, m = 300, 3000
    hub = rng.random(m) < 0.3  # a third of the edges touch node 0..4: hubs the cap cuts
    src = np.where(hub, rng.integers(0, 5, m), rng.integers(0, n, m))
    dst = rng.integers(0, n, m)
    et = rng.integers(0, 3, m)
    key = np.unique((et * n + src) * n + dst)
    et, rest = key // (n * n), key % (n * n)
    src, dst = (rest // n).astype(np.int32), (rest % n).astype(np.int32)
    conf = rng.choice([1.0, 0.9], len(key))  # many ties in the ranking
    recency = rng.integers(0, 3, len(key)).astype(np.int32)
    types = rng.integers(0, 2, n).astype(np.int16)
    lists = csr_lists(n, 3, src, dst, et.astype(np.int16), conf, recency)
    return AdjacencyIndex(Strings.of([f"n{i:04d}" for i in range(n)]), types, ["A", "B", ""],
                          ["e0", "e1", "e2"], src, dst, et.astype(np.int16), lists, conf,
                          recency)


def as_lists(walk):
    return ([x.tolist() for x in walk.layers],
            [[getattr(e, f).tolist() for f in ("owner", "nbr", "eid", "rank", "dir")]
             for e in walk.entries],
            [(a.tolist(), b.tolist()) for a, b in walk.cuts])


@pytest.mark.parametrize("lists", LISTS)
def test_frontier_merges_walk_as_the_whole_lists_merged(index, lists):
    whole = Walker(index)
    whole.merged(tuple(sorted(set(lists))))  # as a walker reused many times has it
    walked, stayed = 0, 0
    for seed in [0, 1, 7, 42, 199]:
        for cap in (None, 1, 3, 20):
            local = Walker(index)  # a one-off walk's
            a = local.follow([seed], lists, 3, cap, max_nodes=120)
            stayed += not local._merged
            b = whole.follow([seed], lists, 3, cap, max_nodes=120)
            assert as_lists(a) == as_lists(b)
            keep = local.type_filter(np.array([0]))
            assert as_lists(Walker(index).follow([seed], lists, 2, cap, keep)) == \
                as_lists(whole.follow([seed], lists, 2, cap, keep))
            steps = [lists, lists[:1], lists]
            assert as_lists(Walker(index).path([seed], steps, cap)) == \
                as_lists(whole.path([seed], steps, cap))
            walked += sum(len(x) for x in a.layers[1:])
    assert walked > 100 and stayed > 5


def test_a_reused_walker_merges_the_whole_lists_once(index):
    w, lists = Walker(index), LISTS[0]
    key = tuple(sorted(set(lists)))
    for seed in range(300):
        w.follow([seed], lists, 2, 5)
        if key in w._merged:
            break
    assert key in w._merged and 0 < seed < 299
