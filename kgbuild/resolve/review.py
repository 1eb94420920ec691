"""Resolution for people: build statistics, the review queue, ``explain`` and ``review``.

The resolver (:mod:`kgbuild.resolve`) decides; this module reports what it decided and what
waits for a person, in the forms ``kgbuild build`` and ``kgbuild resolve`` print.

``explain`` and ``review`` answer for a principal (public items only by default, as
traversal): they resolve against the principal's visible graph
(:func:`~kgbuild.graph.access.visible_graph`) only. When the graph carries access labels and
the principal does not see everything, registry aliases and accepted decisions count only
when they point at a visible entity, and a queued mention is listed only when it is the name
of a visible entity and nothing in it (candidates, reason) names a hidden one; so a hidden
entity gives exactly what a nonexistent one gives.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Container, Iterable

from ..errors import InputError
from ..graph.access import NameScreen, Principal, name_forms, visible_graph
from ..graph.ids import split_words
from ..graph.model import KnowledgeGraph
from ..io.atomic import atomic_write
from ..io.text import read_bytes
from ..io.yamlfile import MAX_CONFIG_BYTES
from .aliases import AliasRegistry
from .duplicates import Duplicate
from .ecosystem import ecosystem, split_version
from .normalize import fold
from .resolver import Resolution, Resolver

QUEUE_FILE = "review-queue.json"  # in a store folder: the build's queue and each document's


@dataclass
class ResolutionStats:
    """Counts for a build report: outcomes by status, resolutions by stage, duplicates."""

    by_status: Counter = field(default_factory=Counter)
    by_stage: Counter = field(default_factory=Counter)
    possible_duplicates: int = 0
    queued: int | None = None  # review queue items (undecided, deduplicated); None: by status

    def add(self, res: Resolution) -> None:
        self.by_status[res.status] += 1
        if res.status == "resolved":
            self.by_stage[res.stage] += 1

    def to_dict(self) -> dict:
        return {"mentions": sum(self.by_status.values()),
                "resolved": {s: self.by_stage[s] for s in ("id", "alias", "normalized", "fuzzy")},
                "new": self.by_status["new"], "review": self.by_status["review"],
                "ambiguous": self.by_status["ambiguous"],
                "queued": (self.by_status["review"] + self.by_status["ambiguous"]
                           if self.queued is None else self.queued),
                "possible_duplicates": self.possible_duplicates}

    def summary(self) -> str:
        d = self.to_dict()
        stages = ", ".join(f"{k} {v}" for k, v in d["resolved"].items())
        return (f"{d['mentions']} mentions: {sum(d['resolved'].values())} resolved ({stages}), "
                f"{d['new']} new, {d['queued']} queued for review ({d['review']} review, "
                f"{d['ambiguous']} ambiguous), {d['possible_duplicates']} possible duplicates")


def review_queue(resolutions: Iterable[Resolution], registry: AliasRegistry | None = None) -> list[dict]:
    """Mentions a person should decide on: review/ambiguous outcomes not yet decided,
    deduplicated, most likely accepted first (:func:`priority`)."""
    decided = {(fold(d.mention), d.type) for d in (registry.decisions if registry else ())}
    items: dict[tuple[str, str], dict] = {}
    for res in resolutions:
        if res.status not in ("review", "ambiguous") or not res.candidates:
            continue
        key = (fold(res.mention), res.type or "")
        if key in decided:
            continue
        if key in items:
            items[key]["count"] += 1
        else:
            items[key] = {**res.explain(), "count": 1, "priority": priority(res)}
    return [items[k] for k in sorted(items, key=lambda k: (-items[k]["priority"], k))]


_STAGE_WEIGHT = {"id": 1.0, "alias": 1.0, "normalized": 1.0, "fuzzy": 0.5}


def _name_words(name: str) -> set[str]:
    versioned = split_version(name)
    return set(split_words(versioned[0] if versioned else name))


def priority(res: Resolution) -> float:
    """How likely a person accepts a queued mention's best candidate, 0-1: its score (40 %),
    the words mention and candidate share (30 %), the match stage (exact forms and aliases
    over fuzzy, acronyms last: 10 %), the same type (10 %) and the same ecosystem (10 %);
    divided by the number of candidates tied at the top, halved when ``ambiguous``."""
    top_id, top_type, label, score, _ = res.details[0]
    mine, theirs = _name_words(res.mention), _name_words(label)
    shared = len(mine & theirs) / len(mine | theirs) if mine | theirs else 0.0
    own, other = ecosystem(res.own_id or ""), ecosystem(top_id)
    same_eco = 1.0 if own and own == other else 0.5 if not (own and other) else 0.0
    same_type = 1.0 if top_type == res.type else 0.5
    value = (0.4 * score / 100 + 0.3 * shared + 0.1 * _STAGE_WEIGHT.get(res.stage, 0.0)
             + 0.1 * same_type + 0.1 * same_eco)
    tied = sum(1 for _, _, s in res.candidates if s == score)
    return round(value / tied / (2 if res.status == "ambiguous" else 1), 3)


def package_resolver(kg: KnowledgeGraph, registry: AliasRegistry | None = None) -> Resolver:
    """The resolver a build reports with: it knows the entities ``kg``'s documents define
    (every entity when none records where it is defined, as in a graph read from a file)."""
    defined = [n for n in kg.nodes.values() if n.defined_in]
    return Resolver.from_graph(kg, registry, nodes=defined or None)


def possible_duplicates(kg: KnowledgeGraph, registry: AliasRegistry | None = None,
                        type: str | None = None) -> list[Duplicate]:
    """Pairs of defined entities that look like one (:meth:`Resolver.possible_duplicates`):
    the one computation behind both a build's count and ``kgbuild resolve review``."""
    return package_resolver(kg, registry).possible_duplicates(type)


def resolution_report(kg: KnowledgeGraph, registry: AliasRegistry | None = None,
                      renamed: Callable[[str, str], bool] | None = None
                      ) -> tuple[ResolutionStats, list[dict], list[Duplicate]]:
    """A build's resolution report: every mentioned-but-undefined entity resolved against the
    defined ones, with the counts by stage, the review queue and the possible duplicates.

    An assertion's end defined by some document counts as resolved by ``id``, or by
    ``alias`` when the registry renamed it there: ``renamed(document, entity)`` says so
    (asked only for entities the registry's aliases and accepted decisions point at). A
    mention that resolves is queued all the same: an explicit ID is never silently
    rewritten, a person accepts the merge.
    """
    resolver = package_resolver(kg, registry)
    stats = ResolutionStats()
    targets = set(registry.canonical_ids().values()) if registry and renamed else set()
    for (s, _, o), assertions in kg.edges().items():
        for end in (s, o):
            node = kg.nodes.get(end)
            if node is not None and node.defined_in:
                n = len(assertions) or 1
                alias = sum(1 for a in assertions if renamed(a.source, end)) \
                    if end in targets else 0
                stats.by_status["resolved"] += n
                stats.by_stage["id"] += n - alias
                stats.by_stage["alias"] += alias
    outcomes = []
    for node in sorted((n for n in kg.nodes.values() if not n.defined_in), key=lambda n: n.id):
        res = resolver.resolve(node.label, node.type, own_id=node.id)
        if res.status == "resolved":
            res.status, res.reason = "review", (
                f"{node.id} is mentioned but defined nowhere; it looks like {res.id} "
                f"({res.stage} match: {res.reason}): accept to merge, reject to keep apart")
        stats.add(res)
        outcomes.append(res)
    items = review_queue(outcomes, registry)
    stats.queued = len(items)
    duplicates = resolver.possible_duplicates()
    stats.possible_duplicates = len(duplicates)
    return stats, items, duplicates


def save_review_queue(path: str | Path, items: list[dict]) -> None:
    """Write a build's review queue as JSON, atomically (``review`` reads it); the queued
    names of text documents (:func:`queue_sources`) stay as they are."""
    _write_queue(path, items, _source_items(path))


def queue_sources(path: str | Path, reviews: dict[str, list[dict]]) -> None:
    """Queue, per source document, the names `kgbuild extract` or `kgbuild verify` found
    ambiguous there (:func:`ambiguous_items`): each document of ``reviews`` gets its items
    (an empty list clears it); other documents' items and the build's queue stay, so no run
    overwrites what another queued."""
    queued = _source_items(path)
    for doc_id, items in reviews.items():
        if items:
            queued[doc_id] = items
        else:
            queued.pop(doc_id, None)
    existing = _read_queue(path) if Path(path).is_file() else {}
    _write_queue(path, existing.get("queue", []), queued)


def ambiguous_items(rejections: Iterable[dict], source: str) -> list[dict]:
    """The review items of one source document's ``ambiguous-entity`` rejections (dicts as
    :meth:`~kgbuild.extract.text.verify.Rejected.to_dict` gives them, plus where: ``line``
    or ``chunk``): the name, its candidates and the evidence, never merged."""
    out = []
    for r in rejections:
        if r.get("reason") != "ambiguous-entity" or not r.get("mention"):
            continue
        rel = r.get("relation") or {}
        item = {"mention": r["mention"], "type": None, "id": None, "status": "ambiguous",
                "reason": r.get("detail", ""), "source": source,
                "evidence": r.get("evidence") or rel.get("evidence", ""),
                "relation": {k: rel.get(k) for k in ("subject", "predicate", "object")},
                "candidates": [{"id": i, "type": t, "score": sc} for i, t, sc in r.get("candidates", [])],
                "count": 1, "priority": 0.0}
        for where in ("line", "chunk"):
            if r.get(where) is not None:
                item[where] = r[where]
        out.append(item)
    return out


def _write_queue(path: str | Path, items: list[dict], sources: dict[str, list[dict]]) -> None:
    data: dict = {"queue": items}
    if sources:
        data["sources"] = dict(sorted(sources.items()))
    atomic_write(path, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False))


def _source_items(path: str | Path) -> dict[str, list[dict]]:
    if not Path(path).is_file():
        return {}
    sources = _read_queue(path).get("sources", {})
    return dict(sources) if isinstance(sources, dict) else {}


def review(kg: KnowledgeGraph, registry_path: str | Path | None = None,
           queue_path: str | Path | None = None, type: str | None = None,
           principal: Principal | None = None) -> dict:
    """What awaits a decision: queued mentions not yet decided, and possible duplicates in ``kg``,
    as far as ``principal`` (public items only when None) may see them."""
    registry = AliasRegistry.load(registry_path, missing_ok=True) if registry_path else None
    queue = load_review_queue(queue_path) if queue_path else []
    decided = {(fold(d.mention), d.type) for d in (registry.decisions if registry else ())}
    view = visible_graph(kg, principal or Principal())
    restricted = view is not kg
    resolver = package_resolver(view, visible_registry(registry, view.nodes) if restricted
                                else registry)
    type_name = kg.schema.node_type(type).name if type else None
    pending = [q for q in queue if (fold(q["mention"]), q.get("type") or "") not in decided
               and (type_name is None or q.get("type") == type_name)]
    if restricted and pending:
        shown = _visible_items(kg, view)
        pending = [q for q in pending if shown(q)]
    return {"queue": pending,
            "possible_duplicates": [d.to_dict() for d in resolver.possible_duplicates(type_name)]}


def load_review_queue(path: str | Path) -> list[dict]:
    """The items of a review queue file (:func:`save_review_queue`), the build's then each
    source document's (:func:`queue_sources`); raises :class:`InputError` naming the file
    when it is not a regular file, too large, or not a queue."""
    name = str(path)
    data = _read_queue(path)
    items, sources = data.get("queue"), data.get("sources", {})
    if not isinstance(items, list) or not isinstance(sources, dict) \
            or not all(isinstance(v, list) for v in sources.values()):
        raise InputError("cannot read review queue: expected {\"queue\": [...]}", name,
                         code="bad-queue")
    items = items + [q for doc in sorted(sources) for q in sources[doc]]
    for i, q in enumerate(items, 1):
        ok = (isinstance(q, dict) and isinstance(q.get("mention"), str)
              and isinstance(q.get("type"), (str, type(None)))
              and isinstance(q.get("id"), (str, type(None)))
              and isinstance(q.get("candidates", []), list)
              and all(isinstance(c, dict) and isinstance(c.get("id"), str)
                      for c in q.get("candidates", [])))
        if not ok:
            raise InputError(f"cannot read review queue: item {i} is not a queued mention "
                             f"(mention, type, id, candidates with IDs)", name, code="bad-queue")
    return items


def _read_queue(path: str | Path):
    """A queue file's JSON, or the :class:`InputError` naming it."""
    name = str(path)
    try:
        data = json.loads(read_bytes(path, MAX_CONFIG_BYTES, name).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read review queue: not UTF-8 ({exc.reason} at byte {exc.start})",
                         name, code="bad-queue") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"cannot read review queue: not JSON ({type(exc).__name__}: "
                         f"{str(exc)[:200]})", name, code="bad-queue") from None
    if not isinstance(data, dict):
        raise InputError("cannot read review queue: expected {\"queue\": [...]}", name,
                         code="bad-queue")
    return data


def visible_registry(registry: AliasRegistry | None, nodes: Container[str]) -> AliasRegistry | None:
    """``registry`` without the aliases and accepted decisions naming an entity not in
    ``nodes`` (the visible ones: hidden and nonexistent alike); distinct pairs and rejections
    only ever forbid, and stay."""
    if registry is None:
        return None
    return AliasRegistry(
        {t: {cid: list(names) for cid, names in ids.items() if cid in nodes}
         for t, ids in registry.aliases.items()},
        set(registry.distinct),
        [d for d in registry.decisions if d.decision == "rejected" or d.id in nodes])


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _visible_items(kg: KnowledgeGraph, view: KnowledgeGraph):
    """A test of whether a queued mention may be listed to whoever sees ``view``: it is the
    name of a visible entity, its candidates are visible, and no text in it names a hidden one."""
    names = {fold(f) for n in view.nodes.values() for f in name_forms(n)}
    screen = NameScreen([n for i, n in kg.nodes.items() if i not in view.nodes], view.nodes.values())

    def shown(item: dict) -> bool:
        ids = [c["id"] for c in item.get("candidates", [])] + [i for i in [item.get("id")] if i]
        return (fold(item["mention"]) in names and all(i in view.nodes for i in ids)
                and not any(screen.names_hidden(t) for t in _strings(item)))
    return shown


def render_review(report: dict) -> str:
    """:func:`review`'s report as text for people."""
    lines = [f"{len(report['queue'])} queued mention(s)"]
    for q in report["queue"]:
        cands = ", ".join(f"{c['id']} ({c.get('score')})" for c in q.get("candidates", [])[:3])
        lines.append(f"  [{q.get('priority', 0):.2f}] {q['mention']!r} as {q.get('type') or 'any type'}"
                     + (f" ({q['own_id']})" if q.get("own_id") else "") + f": {q.get('status')}, "
                     f"{q.get('reason')}" + (f"; candidates {cands}" if cands else ""))
        if q.get("source"):
            where = f":{q['line']}" if q.get("line") else f" ({q['chunk']})" if q.get("chunk") else ""
            lines.append(f"      in {q['source']}{where}: {q.get('evidence', '')!r}")
    lines.append(f"{len(report['possible_duplicates'])} possible duplicate pair(s)")
    for d in report["possible_duplicates"]:
        lines.append(f"  {d['a']} ~ {d['b']} ({d['type']}, {d['reason']} {d['score']})")
    return "\n".join(lines)


def explain(graph, mention: str, type: str | None = None,
            registry_path: str | Path | None = None, principal: Principal | None = None) -> dict:
    """How ``mention`` resolves against the nodes of ``graph`` that ``principal`` (public items
    only when None) may see: the JSON-ready explanation. ``graph``: a graph in memory, or the
    read model of the principal's view (a store's, a file's: its names table answers)."""
    registry = AliasRegistry.load(registry_path, missing_ok=True) if registry_path else None
    if not isinstance(graph, KnowledgeGraph):
        restricted = graph.view is not None
        resolver = graph.resolver(visible_registry(registry, graph) if restricted else registry)
        return resolver.resolve(mention, type).explain()
    view = visible_graph(graph, principal or Principal())
    if view is not graph:
        registry = visible_registry(registry, view.nodes)
    return Resolver.from_graph(view, registry).resolve(mention, type).explain()


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
