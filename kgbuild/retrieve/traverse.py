"""Typed, capped, access-safe traversal of a knowledge graph for retrieval consumers.

Seeds are stable IDs, names or aliases (through the resolver), the entity mentions of a
question, and optionally the nodes whose embeddings are closest to the question
(:mod:`kgbuild.embeddings`). From the seeds, one of two walks:

* **follow** ``PRED[:out|:in|:both]`` (repeatable) for ``hops`` hops: breadth first over the
  allowed edges; each node is entered once, at its smallest hop, and never walked back along
  the edge that reached it.
* **path** ``"ownedBy:out/ownerOf:out/dependsOn:in"``: step *i* walks one edge of the named
  type and direction. The answers are the end nodes of every walk that completes all steps
  (walk semantics, as a SPARQL sequence path: nodes may repeat), without the seeds unless
  ``include_seeds``; only nodes and edges on complete walks are reported.

A direction is relative to the name written: ``ownedBy:out`` walks stored ``ownedBy`` edges
from subject to object, an inverse name flips it (``ownerOf:out`` == ``ownedBy:in``),
``:both`` walks either way, no suffix means ``:out``.

**Hub cap K**: per hop, at most K edges leave any node: the best K by the cap ranking of
:mod:`kgbuild.adjacency`, taken *after* the filters (edge type and direction, node ``types``,
and in path mode the neighbour's having an edge for the next step). How many eligible edges
each node lost is reported. ``cap=None`` walks everything (exact). **Budgets** (max nodes,
edges, walks listed, context characters) cut the output in rank order and are reported too.

**Access**: everything runs on :func:`kgbuild.graph.access.visible_graph` for the principal
(public items only by default); hidden items are not in the index, the resolver, the
embedded candidates or the output, and influence no ranking or count. An entity only hidden
documents mention is hidden too, so a hidden seed (by ID, name, question or embeddings)
gives exactly what a nonexistent one gives; evidence naming a hidden entity is withheld.

**Abstain**: with no seed (``no-seed``, ``ambiguous``), no complete walk (``no-path``) or
nothing reached (``no-edges``) the result says so and carries no nodes beyond the seeds.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..graph.access import Principal, visible_graph
from ..graph.model import KnowledgeGraph, Passage
from ..resolve.resolver import Resolver
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from .adjacency import DIRECTIONS, AdjacencyIndex, Walk, cached_index, follow_walk, path_walk
from .context import context_pack, render_prompt, render_result
from .diagnose import diagnose_path, leaving_edges
from .embeddings import node_text
from .paths import schema_steps
from .seeds import SeedIndex
from .snapshot import Snapshot, assertion_dict, open_snapshot
from .spec import (
    SHORTEST_PATH_HOPS,
    SHORTEST_PATH_WALKS,
    Step,
    TraversalSpec,
    parse_path,
    parse_step,
    qualifier_excluded,
)

MAX_FILTERED_VIEWS = 8  # filtered graphs (and their indexes) one Traverser keeps


def filtered_graph(view: KnowledgeGraph, evidence: dict, key: tuple) -> tuple[KnowledgeGraph, dict]:
    """``view`` without the assertions the filters of :meth:`TraversalSpec.filter_key` drop
    (nodes, documents and passages shared), and its ``edges()`` filtered from ``evidence``
    (``view.edges()``; no new sort). Edges read without assertions stay only when neither an
    extractor nor a confidence is asked for."""
    excluded, extractors, least = set(key[0]), set(key[1]), key[2]

    def keep(a) -> bool:
        return (not any(qualifier_excluded(q, excluded) for q in a.qualifiers)
                and (not extractors or a.extractor in extractors)
                and (least is None or a.confidence >= least))

    out = KnowledgeGraph(view.schema)
    out.nodes, out.documents, out.passages = view.nodes, view.documents, view.passages
    out.attribute_assertions = view.attribute_assertions
    out.assertions = {k: a for k, a in view.assertions.items() if keep(a)}
    out.untyped_edges = set() if extractors or least is not None else view.untyped_edges
    edges = {}
    for e, assertions in evidence.items():
        kept = [a for a in assertions if keep(a)]
        if kept or (not assertions and e in out.untyped_edges):
            edges[e] = kept
    return out, edges


# -- walks over the index -------------------------------------------------------------------
def step_lists(index: AdjacencyIndex, steps: Sequence[Step]) -> list[tuple[int, int]]:
    """The index lists (edge type code, direction) a set of steps walks."""
    code = {t: i for i, t in enumerate(index.edge_types)}
    return sorted({(code[s.edge], d) for s in steps for d in s.dirs if s.edge in code})


def type_filter(index: AdjacencyIndex, types: np.ndarray | None):
    """A ``keep(nbr)`` callable admitting nodes whose type code is in ``types`` (None: all)."""
    if types is None:
        return None
    allowed = np.zeros(len(index.type_names), dtype=bool)
    allowed[types] = True
    return lambda nbr: allowed[index.node_type[nbr]]


def enumerate_walks(walk: Walk, seeds: Sequence[int], limit: int) -> tuple[list, int]:
    """Up to ``limit`` complete walks of a path walk (seed order, then rank order), and how many
    there are in all. A walk is a list of steps ``(from node, edge number, direction)``."""
    nxt: list[dict[int, list[tuple[int, int, int]]]] = []
    for ent in walk.entries:
        table: dict[int, list[tuple[int, int, int]]] = {}
        for o, n, e, d in zip(ent.owner.tolist(), ent.nbr.tolist(), ent.eid.tolist(),
                              ent.dir.tolist()):
            table.setdefault(o, []).append((n, e, d))
        nxt.append(table)
    count: dict[int, int] = {}
    for i in range(len(nxt) - 1, -1, -1):
        count = {o: sum(count[n] if i + 1 < len(nxt) else 1 for n, _, _ in outs)
                 for o, outs in nxt[i].items()}
    out: list[list[tuple[int, int, int]]] = []

    def dfs(node: int, i: int, prefix: list[tuple[int, int, int]]) -> None:
        if i == len(nxt):
            out.append(list(prefix))
            return
        for n, e, d in nxt[i].get(node, ()):
            if len(out) >= limit:
                return
            prefix.append((node, e, d))
            dfs(n, i + 1, prefix)
            prefix.pop()

    for s in seeds:
        dfs(s, 0, [])
    return out, sum(count.get(s, 0) for s in seeds)


# -- seeds, assembly, result ------------------------------------------------------------------
@dataclass
class TraversalResult:
    """Everything one traversal returns. :meth:`to_dict` (JSON) has these keys:

    * ``mode``: ``"follow"`` or ``"path"``; ``spec``: the settings (seeds excluded);
      ``principal``: ``{labels, all_access}``.
    * ``seeds``: ``[{id, label, type, via: id|name|question, mention, span, score}]``;
      ``unresolved``: ``[{via, index (id/name seeds) | span (question), mention (id seeds and
      questions: as asked), status: unknown|new|review|ambiguous, candidates: [{id, label,
      type, score}]}]`` (an unknown ID seed's candidates are the closest visible IDs).
    * ``nodes``: ``[{id, label, type, hop, seed}]`` (hop: first hop or step reaching it).
    * ``edges``: ``[{id: "e1", subject, predicate, object, hop, direction, walks: [{hop,
      direction}], assertions: [{source, location, evidence, extractor, confidence, passage?,
      generated_at}]}]``: stored direction; ``direction`` ``out`` = walked subject to object.
    * ``paths``: ``[{seed, end, nodes: [ids], edges: ["e1", ...], text}]``: complete walks
      (path mode) or the walk to each leaf (follow mode).
    * ``answers``: end nodes of all complete walks (path mode; complete unless capped), the
      seeds themselves left out unless ``include_seeds``; ``labels``: ``{id: label}`` of every
      answer (the node budget may leave an answer out of ``nodes``).
    * ``truncated``: ``{cap: [{node, hop, edges}], nodes, edges, paths, context_items}``:
      edges the hub cap cut per node and hop; items the budgets left out.
    * ``abstain``: null or ``{reason: no-seed|ambiguous|no-path|no-edges, message}``; a
      ``no-path`` abstain of a walk carries ``diagnosis`` (:func:`~kgbuild.retrieve.diagnose.
      diagnose_path`): the failing step, what would match instead, the nearest partial walk.
    * ``context``: ``{items: [{id: "c1", kind: seed|evidence|passage|relation, node | edge: [s, p,
      o], text, sources: [{source, location}]}], chars, abstain}`` (see :mod:`kgbuild.context`).
    """

    mode: str
    spec: dict
    principal: dict
    seeds: list[dict]
    unresolved: list[dict]
    nodes: list[dict]
    edges: list[dict]
    paths: list[dict]
    answers: list[str]
    truncated: dict
    abstain: dict | None
    context: dict
    labels: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready result (schema in the README section "kgbuild traverse")."""
        return asdict(self)

    def render(self) -> str:
        """The result as text for people."""
        return render_result(self)

    def prompt(self) -> str:
        """Only the context pack, as prompt text (see :func:`kgbuild.retrieve.context.render_prompt`)."""
        return render_prompt(self)


class Traverser:
    """Traversals over one graph for one principal: view, index and resolver built once.

    A ``resolver`` given here must know the principal's visible graph only (by default one
    is built over it); a ``matcher`` is only ever offered the visible nodes' texts. A spec
    with assertion filters runs on a filtered copy of the view with its own index (built in
    memory; the last :data:`MAX_FILTERED_VIEWS` filter sets are kept)."""

    def __init__(self, kg: KnowledgeGraph, principal: Principal | None = None,
                 cache_dir: str | Path | None = None, resolver=None, matcher=None):
        principal = principal or Principal()
        view = visible_graph(kg, principal)
        evidence = view.edges()
        self._over(view, evidence, cached_index(view, cache_dir, evidence), principal,
                   matcher=matcher, resolver=resolver)

    def _over(self, view, evidence: dict, index: AdjacencyIndex, principal: Principal, *,
              matcher=None, resolver=None, parent: "Traverser | None" = None,
              filter_key: tuple = ()) -> None:
        """Set up a traverser over a ready ``view``, its edges' ``evidence`` and ``index``."""
        self.matcher = matcher  # an embeddings.EmbeddingMatcher for semantic seeds, or None
        self.principal, self.view, self.evidence, self.index = principal, view, evidence, index
        self._resolver = resolver
        self._seed_index: SeedIndex | None = None
        self._filter = filter_key  # the filter key this (filtered) traverser's view has applied
        self._parent = parent  # the unfiltered one (names, seed IDs: its own)
        self._filtered: OrderedDict[tuple, Traverser] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def seed_index(self) -> SeedIndex:
        """Reference keys of the visible node IDs, for ``seeds`` in any form (built on first use)."""
        if self._seed_index is None:
            self._seed_index = self._parent.seed_index if self._parent else \
                SeedIndex(self.index.node_ids, self.view.schema)
        return self._seed_index

    def filtered(self, key: tuple) -> "Traverser":
        """The traverser over this view less the assertions ``key`` (a filter key) drops."""
        if not key or key == self._filter:
            return self
        with self._lock:
            child = self._filtered.pop(key, None)
            if child is None:  # (resolver and seed index: the parent's, when first needed)
                child = object.__new__(Traverser)
                view, evidence = filtered_graph(self.view, self.evidence, key)
                child._over(view, evidence, cached_index(view, None, evidence), self.principal,
                            matcher=self.matcher, parent=self, filter_key=key)
            self._filtered[key] = child
            while len(self._filtered) > MAX_FILTERED_VIEWS:
                self._filtered.popitem(last=False)
        return child

    @property
    def resolver(self):
        """The name resolver over the visible graph only (built on first use)."""
        if self._resolver is None:
            self._resolver = self._parent.resolver if self._parent else Resolver.from_graph(self.view)
        return self._resolver

    def run(self, spec: TraversalSpec) -> TraversalResult:
        """Find the seeds, walk, assemble nodes, edges, paths and the context pack."""
        spec.check()
        key = spec.filter_key()
        if key != self._filter:
            return self.filtered(key).run(spec)
        schema = self.view.schema
        seeds, unresolved = self._seeds(spec)
        seed_pos = sorted(p for p in (self.index.position(s["id"]) for s in seeds) if p is not None)
        if spec.shortest_path and seeds:  # a path is chosen, or none is found (abstain below)
            spec = self._shortest_path(spec, seed_pos) or spec
        steps = parse_path(spec.path, schema) if spec.path else None
        follow = [parse_step(f, schema) for f in spec.follow] or [
            Step(e, (0, 1), f"{e}:both") for e in sorted(schema.edge_types)]
        keep = type_filter(self.index, self._type_codes(spec.types))
        abstain = None
        if not seeds:
            ambiguous = any(u["status"] == "ambiguous" for u in unresolved)
            abstain = {"reason": "ambiguous" if ambiguous else "no-seed",
                       "message": "a name matches more than one entity; pick one by ID"
                       if ambiguous else "no seed entity was found in the graph"}
            nodes, edges, paths, answers, truncated = [], [], [], [], _no_truncation()
        elif spec.shortest_path and not spec.path:
            abstain = {"reason": "no-path", "message": f"no typed path of at most "
                       f"{SHORTEST_PATH_HOPS} steps leads from the seeds to {', '.join(spec.types)}"}
            nodes, edges, paths, answers, truncated = [], [], [], [], _no_truncation()
        elif steps:
            walk = path_walk(self.index, seed_pos, [step_lists(self.index, [s]) for s in steps],
                             spec.cap, keep)
            answers = [self.index.node_ids[a] for a in walk.layers[-1].tolist()]
            if not answers:
                why = diagnose_path(self.index, schema, seed_pos, steps, self._lists, keep,
                                    lambda n: self._node(self.index.node_ids[n])["label"])
                abstain = {"reason": "no-path", "diagnosis": why,
                           "message": f"no walk matches {spec.path} from the seeds: {why['message']}"}
            elif not spec.include_seeds:  # as in multi-hop QA: the topic entity is no answer
                seed_ids = {s["id"] for s in seeds}
                answers = [a for a in answers if a not in seed_ids]
            nodes, edges, paths, truncated = self._assemble_path(walk, seed_pos, spec)
        else:
            walk = follow_walk(self.index, seed_pos, step_lists(self.index, follow), spec.hops,
                               spec.cap, keep, spec.max_nodes)
            answers = []
            if not any(len(e.eid) for e in walk.entries):
                there = leaving_edges(self.index, schema, seed_pos)
                abstain = {"reason": "no-edges", "message": "no allowed edge leaves the seeds" + (
                    "; edges there: " + ", ".join(f"{x['step']} ({x['edges']})" for x in there)
                    if there else "")}
            nodes, edges, paths, truncated = self._assemble_follow(walk, spec)
        if abstain:
            nodes = [self._node_out(s["id"], 0, True) for s in seeds]
            edges, paths = [], []
        context = context_pack(self.view, seeds, nodes, edges, abstain, spec.max_chars)
        truncated["context_items"] = context.pop("dropped")
        return TraversalResult(
            "path" if steps else "follow", spec.to_dict(),
            {"labels": sorted(self.principal.labels), "all_access": self.principal.everyone},
            seeds, unresolved, nodes, edges, paths, answers, truncated, abstain, context,
            {a: self._node(a)["label"] for a in answers})

    # -- helpers ------------------------------------------------------------------------------
    def _lists(self, edge: str, dirs: tuple[int, ...]) -> list[tuple[int, int]]:
        return step_lists(self.index, [Step(edge, dirs, "")])

    def _shortest_path(self, spec: TraversalSpec, seed_pos: list[int]) -> TraversalSpec | None:
        """``spec`` with the shortest typed path (ties: by ``--path`` text) from the seeds to a
        node of ``spec.types``, found breadth first over the schema's steps (:func:`~kgbuild.
        retrieve.paths.schema_steps` of the types reached) walked here without cap; a step
        that reaches nothing is not extended. None when no path of at most
        :data:`SHORTEST_PATH_HOPS` steps arrives (at most :data:`SHORTEST_PATH_WALKS` steps are
        walked in all)."""
        schema, ix = self.view.schema, self.index
        keep = type_filter(ix, self._type_codes(spec.types))
        frontier = [((), np.unique(np.asarray(seed_pos, dtype=np.int32)))]
        budget = SHORTEST_PATH_WALKS
        for _ in range(SHORTEST_PATH_HOPS):
            reached = []
            for prefix, layer in frontier:
                types = {ix.type_names[t] for t in np.unique(ix.node_type[layer]).tolist()}
                steps = sorted({s.step for t in types if t for s in schema_steps(schema, t)})
                for text in steps:
                    if budget == 0:
                        return None
                    budget -= 1
                    ent, _ = ix.expand(layer, step_lists(ix, [parse_step(text, schema)]), None)
                    nodes = np.unique(ent.nbr)
                    if not len(nodes):
                        continue
                    path = (*prefix, text)
                    if keep(nodes).any():
                        return replace(spec, path="/".join(path))
                    reached.append((path, nodes))
            frontier = reached
        return None

    def _type_codes(self, types: Sequence[str]) -> np.ndarray | None:
        if not types:
            return None
        schema, code = self.view.schema, {t: i for i, t in enumerate(self.index.type_names)}
        names = {d for t in types for d in schema.descendants(schema.node_type(t).name)}
        return np.array(sorted(code[n] for n in names if n in code), dtype=np.int64)

    def _seeds(self, spec: TraversalSpec) -> tuple[list[dict], list[dict]]:
        seeds: dict[str, dict] = {}
        unresolved: list[dict] = []

        def add(node_id: str, via: str, mention: str, span=None, score=None) -> None:
            if node_id not in seeds:
                seeds[node_id] = {**self._node(node_id), "via": via, "mention": mention,
                                  "span": list(span) if span else None, "score": score}

        def miss(via: str, status: str, candidates=(), **where) -> None:
            cands = [{**self._node(c[0]), "score": round(float(c[2]), 4)}
                     for c in candidates if self.index.position(c[0]) is not None]
            unresolved.append({"via": via, **where, "status": status, "candidates": cands})

        for i, sid in enumerate(spec.seeds):
            found = self.seed_index.lookup(sid, spec.types)
            if len(found) == 1:
                add(found[0], "id", sid)
            else:
                cands = found or self.seed_index.suggest(sid)
                unresolved.append({"via": "id", "index": i, "mention": sid,
                                   "status": "ambiguous" if found else "unknown",
                                   "candidates": [{**self._node(c), "score": None} for c in cands]})
        for i, name in enumerate(spec.names):
            r = self.resolver.resolve(name)
            if r.status == "resolved" and self.index.position(r.id) is not None:
                add(r.id, "name", name)
            else:
                miss("name", "unknown" if r.status in ("resolved", "new") else r.status,
                     r.candidates, index=i)
        if spec.question:
            for m in self.resolver.find_mentions(spec.question):
                if m.status == "resolved" and self.index.position(m.id or "") is not None:
                    add(m.id, "question", m.text, (m.start, m.end), round(float(m.score), 4))
                else:
                    miss("question", m.status, m.candidates, mention=m.text, span=[m.start, m.end])
        if spec.question and spec.semantic and self.matcher is not None:
            candidates = [(n.id, node_text(n.label, n.type, min(n.attributes.get("description", [""]))))
                          for n in sorted(self.view.nodes.values(), key=lambda n: n.id)
                          if self.index.position(n.id) is not None]
            for node_id, score in self.matcher.match(spec.question, candidates, spec.semantic,
                                                     spec.semantic_min):
                add(node_id, "semantic", spec.question, None, score)
        return list(seeds.values()), unresolved

    def _node(self, node_id: str) -> dict:
        n = self.view.nodes.get(node_id)
        return {"id": node_id, "label": n.label if n else node_id, "type": n.type if n else ""}

    def _edge(self, eid: int) -> tuple[str, str, str]:
        ix = self.index
        return (ix.node_ids[ix.src[eid]], ix.edge_types[ix.etype[eid]], ix.node_ids[ix.dst[eid]])

    def _edges_out(self, walks: dict[int, list[tuple[int, int]]]) -> list[dict]:
        out = []
        for i, (eid, w) in enumerate(walks.items(), 1):
            s, p, o = self._edge(eid)
            w = sorted(set(w))
            out.append({"id": f"e{i}", "subject": s, "predicate": p, "object": o,
                        "hop": w[0][0], "direction": DIRECTIONS[w[0][1]],
                        "walks": [{"hop": h, "direction": DIRECTIONS[d]} for h, d in w],
                        "assertions": self._assertions(eid, (s, p, o))})
        return out

    def _assertions(self, eid: int, edge: tuple[str, str, str]) -> list[dict]:
        return [assertion_dict(a) for a in self.evidence.get(edge, [])]

    def _node_out(self, n: int | str, hop: int, seed: bool) -> dict:
        node_id = self.index.node_ids[n] if isinstance(n, int) else n
        return {**self._node(node_id), "hop": hop, "seed": seed}

    def _cuts(self, walk: Walk, kept: set[int]) -> list[dict]:
        return [{"node": self.index.node_ids[n], "hop": h, "edges": c}
                for h, (nodes, counts) in enumerate(walk.cuts, 1)
                for n, c in zip(nodes.tolist(), counts.tolist()) if n in kept]

    def _path_out(self, steps: list[tuple[int, int, int]], edge_ids: dict[int, str]) -> dict:
        ids, ix = self.index.node_ids, self.index
        nodes = [ids[f] for f, _, _ in steps] + [ids[_end(ix, steps[-1])]]
        text = self._node(nodes[0])["label"]
        for (_, eid, d), nxt in zip(steps, nodes[1:]):
            p = ix.edge_types[ix.etype[eid]]
            text += (f" -{p}-> " if d == 0 else f" <-{p}- ") + self._node(nxt)["label"]
        return {"seed": nodes[0], "end": nodes[-1], "nodes": nodes,
                "edges": [edge_ids[e] for _, e, _ in steps], "text": text}

    def _edges_in_order(self, walk: Walk, walks: dict[int, list[tuple[int, int]]]):
        """Edges sorted by first hop and rank, as output dicts, and their output IDs."""
        first: dict[int, tuple[int, int]] = {}
        for h, ent in enumerate(walk.entries, 1):
            for eid, r in zip(ent.eid.tolist(), ent.rank.tolist()):
                first.setdefault(eid, (h, r))
        ordered = dict(sorted(walks.items(), key=lambda kv: first[kv[0]]))
        edges = self._edges_out(ordered)
        return edges, {eid: e["id"] for eid, e in zip(ordered, edges)}

    def _assemble_follow(self, walk: Walk, spec: TraversalSpec):
        n_seeds = len(walk.layers[0])
        order = np.concatenate(walk.layers).tolist()
        hop = {n: h for h, layer in enumerate(walk.layers) for n in layer.tolist()}
        parent = {n: (o, e, d) for via in walk.via for n, o, e, d in
                  zip(via.nbr.tolist(), via.owner.tolist(), via.eid.tolist(), via.dir.tolist())}
        limit = len(order)
        if spec.max_nodes is not None:
            limit = min(limit, max(spec.max_nodes, n_seeds))
        if spec.max_edges is not None:
            limit = min(limit, n_seeds + spec.max_edges)
        kept = order[:limit]
        kept_set = set(kept)
        walks = {parent[n][1]: [(hop[n], parent[n][2])] for n in kept[n_seeds:]}
        room = None if spec.max_edges is None else spec.max_edges - len(walks)
        seen = set()
        for h, ent in enumerate(walk.entries, 1):
            for o, nb, eid, d in zip(ent.owner.tolist(), ent.nbr.tolist(), ent.eid.tolist(),
                                     ent.dir.tolist()):
                seen.add(eid)
                if eid in walks:
                    if (h, d) not in walks[eid]:
                        walks[eid].append((h, d))
                elif o in kept_set and nb in kept_set and (room is None or room > 0):
                    walks[eid] = [(h, d)]
                    room = None if room is None else room - 1
        edges, edge_ids = self._edges_in_order(walk, walks)
        parents = {parent[n][0] for n in kept[n_seeds:]}
        leaves = [n for n in kept[n_seeds:] if n not in parents]
        paths = []
        for n in leaves[:spec.max_paths]:
            chain = []
            while n in parent:
                chain.append(parent[n])
                n = parent[n][0]
            paths.append(self._path_out(chain[::-1], edge_ids))
        truncated = {"cap": self._cuts(walk, kept_set),
                     "nodes": walk.dropped + len(order) - len(kept),
                     "edges": len(seen) - len(walks), "paths": len(leaves) - len(paths)}
        return ([self._node_out(n, hop[n], hop[n] == 0) for n in kept], edges, paths, truncated)

    def _assemble_path(self, walk: Walk, seeds: list[int], spec: TraversalSpec):
        listed, total = enumerate_walks(walk, seeds, spec.max_paths)
        nodes: dict[int, int] = {}
        walks: dict[int, list[tuple[int, int]]] = {}
        chosen = []
        for steps in listed:
            seq = [f for f, _, _ in steps] + [_end(self.index, steps[-1])]
            if ((spec.max_nodes is not None
                 and len(nodes.keys() | set(seq)) > spec.max_nodes)
                    or (spec.max_edges is not None
                        and len(walks.keys() | {e for _, e, _ in steps}) > spec.max_edges)):
                break
            chosen.append(steps)
            for i, n in enumerate(seq):
                nodes[n] = min(nodes.get(n, i), i)
            for i, (_, e, d) in enumerate(steps, 1):
                if (i, d) not in walks.setdefault(e, []):
                    walks[e].append((i, d))
        edges, edge_ids = self._edges_in_order(walk, walks)
        on_walks = set().union(*(layer.tolist() for layer in walk.layers))
        all_edges = set().union(*(ent.eid.tolist() for ent in walk.entries))
        seed_set = set(seeds)
        ordered = sorted(nodes, key=lambda n: nodes[n])
        truncated = {"cap": self._cuts(walk, set(nodes)), "nodes": len(on_walks - nodes.keys()),
                     "edges": len(all_edges - walks.keys()), "paths": total - len(chosen)}
        return ([self._node_out(n, nodes[n], n in seed_set and nodes[n] == 0) for n in ordered],
                edges, [self._path_out(s, edge_ids) for s in chosen], truncated)


def _end(index: AdjacencyIndex, step: tuple[int, int, int]) -> int:
    """The node a step ``(from, edge, direction)`` arrives at."""
    _, eid, d = step
    return int(index.dst[eid] if d == 0 else index.src[eid])


def _no_truncation() -> dict:
    return {"cap": [], "nodes": 0, "edges": 0, "paths": 0}


def traverse(kg: KnowledgeGraph, spec: TraversalSpec, principal: Principal | None = None,
             cache_dir: str | Path | None = None) -> TraversalResult:
    """One traversal of ``kg`` as ``principal`` (public items only when None)."""
    return Traverser(kg, principal, cache_dir).run(spec)


class SnapshotTraverser(Traverser):
    """Traversals by ID over a store's :class:`~kgbuild.retrieve.snapshot.Snapshot`: a walk
    reads the (memory-mapped) index pages it touches, the labels of the nodes and the records
    of the edges it returns, the same results as :class:`Traverser` over the store's graph.
    Specs that need the whole graph (``names``, a ``question``, assertion filters) run on
    ``full()``: a :class:`Traverser` over it, made on first use. The snapshot must serve the
    principal (:meth:`~kgbuild.retrieve.snapshot.Snapshot.serves`)."""

    def __init__(self, snap: Snapshot, schema: Schema, principal: Principal,
                 full: Callable[[], Traverser]):
        if not snap.serves(principal):
            raise ValueError("this snapshot shows more than the principal may see")
        self._over(_SnapshotView(snap, schema), {}, snap.index, principal)
        self.snapshot = snap
        self._full: Traverser | None = None
        self._make_full = full

    def full(self) -> Traverser:
        """The traverser over the store's whole graph (read on first use)."""
        if self._full is None:
            self._full = self._make_full()
        return self._full

    def run(self, spec: TraversalSpec) -> TraversalResult:
        spec.check()
        if spec.names or spec.question or spec.filter_key():
            return self.full().run(spec)
        self.view.passages = {}
        return super().run(spec)

    def _assertions(self, eid: int, edge: tuple[str, str, str]) -> list[dict]:
        rec = self.snapshot.record(eid)
        for pid, (text, doc, start, end) in rec["p"].items():
            self.view.passages[pid] = Passage(pid, doc, start, end, text)
        return [a for _, a in rec["a"]]


@dataclass
class _SnapshotNode:
    """What :meth:`Traverser._node` and the context pack read of a node."""

    label: str
    type: str
    attributes: dict
    defined_in: set


class _SnapshotView:
    """The parts of a graph :class:`Traverser` and the context pack read, from a snapshot."""

    def __init__(self, snap: Snapshot, schema: Schema):
        self.schema, self.documents = schema, snap.documents
        self.passages: dict[str, Passage] = {}  # of the edges read by the current run
        self.nodes = self
        self._snap, self._index = snap, snap.index

    def get(self, node_id: str, default=None):
        pos = self._index.position(node_id)
        if pos is None or not self._snap.info.raw(pos):
            return default
        info = json.loads(self._snap.info.raw(pos))
        return _SnapshotNode(self._snap.labels[pos],
                             self._index.type_names[self._index.node_type[pos]],
                             {"description": set(info["description"])} if info["description"] else {},
                             set(info["docs"]))


def store_traverser(store_path: str | Path, schema: Schema, principal: Principal | None = None,
                    matcher=None) -> Traverser:
    """A traverser over the store at ``store_path`` as ``principal``: over the snapshot that
    serves the principal (:func:`~kgbuild.retrieve.snapshot.open_snapshot`: the store's, or
    their view's) when no ``matcher`` is given, else over the principal's view of the
    store's graph (adjacency index cached in ``<store>/adjacency``)."""
    principal = principal or Principal()

    def full() -> Traverser:
        with GraphStore(store_path, schema, write=False) as store:
            kg = store.knowledge_graph()
        return Traverser(kg, principal, Path(store_path) / "adjacency", matcher=matcher)

    if matcher is not None:
        return full()
    with GraphStore(store_path, schema, write=False) as store:
        snap = open_snapshot(store, principal)
    return SnapshotTraverser(snap, schema, principal, full)
