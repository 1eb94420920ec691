"""Abstention: saying there is no good evidence instead of padding the context.

Placeholder policy: abstain only when nothing can be ranked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class AbstainPolicy:
    """When to abstain (see the module docstring)."""

    enabled: bool = True


def decide(policy: AbstainPolicy, question: str, bm, cos, visible, names, graph, retriever) -> dict | None:
    """None, or ``{step, message, ...}`` saying which step found no evidence."""
    if not policy.enabled:
        return None
    if retriever.n_visible == 0:
        return {"step": "corpus", "message": "no passage is visible"}
    if not np.isfinite(bm).any() and cos is None:
        return {"step": "lexical", "message": "no passage shares a word with the question"}
    return None
