"""Combining rankings and scores: reciprocal rank fusion, and scores on one scale.

RRF (Cormack et al., 2009) adds ``weight / (k + rank)`` per ranking: it needs no score
calibration, so it is the default way to fuse signals whose scores mean different things
(``hybrid``: BM25 and cosine). The default method adds scores instead, each signal made a
z-score over the principal's visible passages (how many standard deviations above the
corpus's mean a passage is), so one strong signal is not flattened into a rank.
"""

from __future__ import annotations

import numpy as np

RRF_K = 60


def rrf(rankings: list[np.ndarray], weights: list[float] | None = None, k: int = RRF_K,
        size: int | None = None) -> np.ndarray:
    """RRF scores over ``size`` rows from rankings (arrays of row indices, best first);
    rows no ranking lists score 0."""
    size = size if size is not None else (max((int(r.max()) for r in rankings if len(r)), default=-1) + 1)
    out = np.zeros(size, dtype=np.float64)
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings)):
        if len(ranking):
            out[ranking] += weight / (k + 1 + np.arange(len(ranking)))
    return out


def zscores(scores: np.ndarray, visible: np.ndarray | None) -> np.ndarray:
    """``scores`` as z-scores over the visible rows (None: all); rows not visible are -inf."""
    pool = scores if visible is None else scores[visible]
    if not len(pool):
        return np.full(len(scores), -np.inf)
    mean, std = float(pool.mean()), float(pool.std())
    out = (scores - mean) / (std if std > 1e-12 else 1.0)
    if visible is not None:
        out = np.where(visible, out, -np.inf)
    return out


def top(scores: np.ndarray, k: int, idrank: np.ndarray) -> np.ndarray:
    """The ``k`` best rows by score (finite only), ties broken by passage ID."""
    finite = np.nonzero(np.isfinite(scores))[0]
    if not len(finite):
        return finite
    if len(finite) > 4 * k + 64:
        cut = np.argpartition(-scores[finite], 4 * k + 63)[:4 * k + 64]
        kth = scores[finite[cut]].min()
        finite = finite[scores[finite] >= kth]
    order = np.lexsort((idrank[finite], -scores[finite]))
    return finite[order[:k]]
