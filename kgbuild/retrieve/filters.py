"""Assertion filters (``exclude_qualifiers``, ``extractors``, ``min_confidence``): the read model
a filtered walk reads, without the assertions the filters drop.

An edge no assertion is left for is not walked; an edge read without assertions stays only
when neither an extractor nor a confidence is asked for. The filtered model is made from
the edge records of the unfiltered one (:func:`~kgbuild.store.readmodel.subgraph`): the
remaining edges ranked again, nodes and names shared.
"""

from __future__ import annotations

from ..store.readmodel import GraphModel, record_of, subgraph
from .spec import qualifier_excluded


def filtered_model(model: GraphModel, key: tuple) -> GraphModel:
    """``model`` less the assertions the filters of a spec's ``filter_key()`` drop."""
    excluded, extractors, least = set(key[0]), set(key[1]), key[2]

    def keep(a: dict) -> bool:
        return (not any(qualifier_excluded(q, excluded) for q in a["qualifiers"])
                and (not extractors or a["extractor"] in extractors)
                and (least is None or a["confidence"] >= least))

    untyped = not extractors and least is None
    edges, records = [], []
    for eid in range(len(model.index.src)):
        rec = model.record(eid)
        found = [x for x in rec["a"] if keep(x[1])]
        if found or (untyped and not rec["a"]):
            cited = {x[1].get("passage") for x in found}
            edges.append(eid)
            records.append(record_of(found, {k: v for k, v in rec["p"].items() if k in cited}))
    return subgraph(model, edges, records)
