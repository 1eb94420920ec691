"""Resolution for people: build statistics, the review queue, ``explain`` and ``review``.

The resolver (:mod:`kgbuild.resolve`) decides; this module reports what it decided and what
waits for a person, in the forms ``kgbuild build`` and ``kgbuild resolve`` print.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..errors import InputError
from ..graph.model import KnowledgeGraph
from ..io.atomic import atomic_write
from .aliases import AliasRegistry
from .normalize import fold
from .resolver import Resolution, Resolver


@dataclass
class ResolutionStats:
    """Counts for a build report: outcomes by status, resolutions by stage, duplicates."""

    by_status: Counter = field(default_factory=Counter)
    by_stage: Counter = field(default_factory=Counter)
    possible_duplicates: int = 0

    def add(self, res: Resolution) -> None:
        self.by_status[res.status] += 1
        if res.status == "resolved":
            self.by_stage[res.stage] += 1

    def to_dict(self) -> dict:
        return {"mentions": sum(self.by_status.values()),
                "resolved": {s: self.by_stage[s] for s in ("id", "alias", "normalized", "fuzzy")},
                "new": self.by_status["new"], "review": self.by_status["review"],
                "ambiguous": self.by_status["ambiguous"],
                "queued": self.by_status["review"] + self.by_status["ambiguous"],
                "possible_duplicates": self.possible_duplicates}

    def summary(self) -> str:
        d = self.to_dict()
        stages = ", ".join(f"{k} {v}" for k, v in d["resolved"].items())
        return (f"{d['mentions']} mentions: {sum(d['resolved'].values())} resolved ({stages}), "
                f"{d['new']} new, {d['queued']} queued for review ({d['review']} review, "
                f"{d['ambiguous']} ambiguous), {d['possible_duplicates']} possible duplicates")


def review_queue(resolutions: Iterable[Resolution], registry: AliasRegistry | None = None) -> list[dict]:
    """Mentions a person should decide on: review/ambiguous outcomes not yet decided, deduplicated."""
    decided = {(fold(d.mention), d.type) for d in (registry.decisions if registry else ())}
    items: dict[tuple[str, str], dict] = {}
    for res in resolutions:
        if res.status not in ("review", "ambiguous"):
            continue
        key = (fold(res.mention), res.type or "")
        if key in decided:
            continue
        if key in items:
            items[key]["count"] += 1
        else:
            items[key] = {**res.explain(), "count": 1}
    return [items[k] for k in sorted(items)]


def save_review_queue(path: str | Path, items: list[dict]) -> None:
    """Write a review queue as JSON, atomically (the build calls this; ``review`` reads it)."""
    atomic_write(path, json.dumps({"queue": items}, indent=1, sort_keys=True, ensure_ascii=False))


def review(kg: KnowledgeGraph, registry_path: str | Path | None = None,
           queue_path: str | Path | None = None, type: str | None = None) -> dict:
    """What awaits a decision: queued mentions not yet decided, and possible duplicates in ``kg``."""
    registry = AliasRegistry.load(registry_path, missing_ok=True) if registry_path else None
    queue: list[dict] = []
    if queue_path:
        try:
            queue = json.loads(Path(queue_path).read_text(encoding="utf-8"))["queue"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"cannot read review queue: {exc}", str(queue_path)) from None
    decided = {(fold(d.mention), d.type) for d in (registry.decisions if registry else ())}
    resolver = Resolver.from_graph(kg, registry)
    type_name = kg.schema.node_type(type).name if type else None
    pending = [q for q in queue if (fold(q["mention"]), q.get("type") or "") not in decided
               and (type_name is None or q.get("type") == type_name)]
    return {"queue": pending,
            "possible_duplicates": [d.to_dict() for d in resolver.possible_duplicates(type_name)]}


def render_review(report: dict) -> str:
    """:func:`review`'s report as text for people."""
    lines = [f"{len(report['queue'])} queued mention(s)"]
    for q in report["queue"]:
        cands = ", ".join(f"{c['id']} ({c['score']})" for c in q["candidates"][:3])
        lines.append(f"  {q['mention']!r} as {q['type'] or 'any type'}: {q['status']}, "
                     f"{q['reason']}" + (f"; candidates {cands}" if cands else ""))
    lines.append(f"{len(report['possible_duplicates'])} possible duplicate pair(s)")
    for d in report["possible_duplicates"]:
        lines.append(f"  {d['a']} ~ {d['b']} ({d['type']}, {d['reason']} {d['score']})")
    return "\n".join(lines)


def explain(kg: KnowledgeGraph, mention: str, type: str | None = None,
            registry_path: str | Path | None = None) -> dict:
    """How ``mention`` resolves against the nodes of ``kg``: the JSON-ready explanation."""
    registry = AliasRegistry.load(registry_path, missing_ok=True) if registry_path else None
    return Resolver.from_graph(kg, registry).resolve(mention, type).explain()


def render_explain(d: dict) -> str:
    """An :meth:`Resolution.explain` dict as text for people."""
    head = f"{d['mention']!r} as {d['type'] or 'any type'}: {d['status']}"
    head += f" -> {d['id']}" if d["id"] else ""
    lines = [f"{head} (stage {d['stage']}: {d['reason']})",
             f"searched types: {', '.join(d['searched_types'])}"]
    lines += [f"  {c['score']:>5}  {c['id']}  {c['type']}  {c['label']!r} matched {c['matched']!r}"
              for c in d["candidates"]]
    if d.get("suggested_id"):
        lines.append(f"suggested ID for a new entity: {d['suggested_id']}")
    return "\n".join(lines)
