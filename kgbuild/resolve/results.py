"""What resolving a mention answers (:class:`Resolution`, one of :data:`STATUSES`) and the
:class:`Thresholds` that decide it."""

from __future__ import annotations

from dataclasses import dataclass, field

STATUSES = ("resolved", "new", "review", "ambiguous")
MAX_CANDIDATES = 10  # candidates kept on a resolution, best first


@dataclass(frozen=True)
class Thresholds:
    """Fuzzy-stage limits (scores are 0-100)."""

    accept: float = 85.0  # a fuzzy match resolves at or above this score...
    margin: float = 5.0  # ...when it beats the second-best entity by this much
    review: float = 75.0  # below accept, down to this score, it is queued for review
    max_df: int = 16  # words in more names than this do not form blocks
    window: int = 2  # sorted-neighbourhood width on each side
    mention_ngram: int = 6  # longest word n-gram tried by find_mentions


@dataclass(slots=True)
class Resolution:
    """The outcome of resolving one mention; ``candidates`` are ``(id, type, score)``, best first."""

    mention: str
    type: str | None
    status: str
    id: str | None = None
    stage: str = "none"
    score: float = 0.0
    candidates: list[tuple[str, str, float]] = field(default_factory=list)
    reason: str = ""
    searched: tuple[str, ...] = ()
    suggested_id: str | None = None
    details: list[tuple[str, str, str, float, str]] = field(default_factory=list, repr=False)
    own_id: str | None = None  # the ID the mention's own record carries

    def to_dict(self) -> dict:
        return {"mention": self.mention, "type": self.type, "status": self.status,
                "id": self.id, "stage": self.stage, "score": round(self.score, 1),
                "candidates": [[i, t, round(s, 1)] for i, t, s in self.candidates],
                "suggested_id": self.suggested_id, "own_id": self.own_id}

    def explain(self) -> dict:
        """Why this outcome: stage, reason, types searched and every candidate's match."""
        return {**self.to_dict(), "reason": self.reason, "searched_types": list(self.searched),
                "candidates": [{"id": i, "type": t, "label": label, "score": round(s, 1),
                                "matched": matched} for i, t, label, s, matched in self.details]}
