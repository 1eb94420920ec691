"""Assertion filters (``exclude_qualifiers``, ``extractors``, ``min_confidence``): the read model
a filtered walk reads, without the assertions the filters drop.

An edge no assertion is left for is not walked; an edge read without assertions stays only
when neither an extractor nor a confidence is asked for. The filters are evaluated on the
read model's facet columns (per assertion: confidence, extractor, time, qualifier set; each
distinct term tested once), not on its records: a mask over the assertions gives the edges
kept, their best confidence and latest time, and the filtered model
(:func:`~kgbuild.store.readmodel.subgraph`) ranks the kept edges again. Only the records of
the edges a walk reports are read, each less the assertions the filters drop.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import KgbuildError
from ..store.readmodel import GraphModel, subgraph
from .spec import qualifier_excluded


def filtered_model(model: GraphModel, key: tuple) -> GraphModel:
    """``model`` less the assertions the filters of a spec's ``filter_key()`` drop."""
    excluded, extractors, least = set(key[0]), set(key[1]), key[2]

    def keep(a: dict) -> bool:
        return (not any(qualifier_excluded(q, excluded) for q in a["qualifiers"])
                and (not extractors or a["extractor"] in extractors)
                and (least is None or a["confidence"] >= least))

    try:
        rows, counts = model.facet_rows()
    except ValueError as exc:
        where = f" {model.folder}" if model.folder is not None else ""
        raise KgbuildError(f"damaged read model{where} ({exc}): remove it and it is made again",
                           code="store-damaged") from None
    terms = model.terms
    ok = np.ones(len(rows), dtype=bool)
    if least is not None:
        ok &= rows["conf"] >= least
    if extractors:
        ok &= _passing(terms, rows["extractor"], lambda t: t in extractors)
    if excluded:
        ok &= ~_passing(terms, rows["qualifiers"], lambda t: any(
            qualifier_excluded(q, excluded) for q in json.loads(t)))
    edge = np.repeat(np.arange(len(counts)), counts)[ok]
    kept = np.bincount(edge, minlength=len(counts)) > 0
    if not extractors and least is None:  # an edge read without assertions stays
        kept |= counts == 0
    conf = np.full(len(counts), -1.0)
    np.maximum.at(conf, edge, rows["conf"][ok])
    used = np.unique(rows["time"])
    stamps = sorted({terms[c] for c in used.tolist()} | {""})  # "" first: no time
    rank = np.zeros(len(terms), dtype=np.int64)
    position = {t: i for i, t in enumerate(stamps)}
    rank[used] = [position[terms[c]] for c in used.tolist()]
    latest = np.zeros(len(counts), dtype=np.int64)
    np.maximum.at(latest, edge, rank[rows["time"][ok]])
    edges = np.flatnonzero(kept)
    codes, recency = np.unique(latest[edges], return_inverse=True)
    return subgraph(model, edges, conf[edges], [stamps[c] for c in codes.tolist()], recency, keep)


def _passing(terms, codes: np.ndarray, test) -> np.ndarray:
    """Per row whether ``test`` passes its term (each distinct term tested once)."""
    used = np.unique(codes)
    passes = np.zeros(len(terms), dtype=bool)
    passes[used] = [test(terms[c]) for c in used.tolist()]
    return passes[codes]
