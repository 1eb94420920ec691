"""Typed, capped, access-safe traversal of a knowledge graph for retrieval consumers.

Seeds are stable IDs, names or aliases (through the resolver), the entity mentions of a
question, and optionally the nodes whose embeddings are closest to the question
(:mod:`kgbuild.retrieve.embeddings`). From the seeds, one of two walks:

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
:mod:`kgbuild.store.adjacency`, taken *after* the filters (edge type and direction, node
``types``, and in path mode the neighbour's having an edge for the next step); see
:mod:`kgbuild.retrieve.walk`. **Budgets** (max nodes, edges, walks listed, context
characters) cut the output in rank order and are reported too.

**One walk, any source**: a :class:`Traverser` walks the read model
(:class:`~kgbuild.store.readmodel.GraphModel`) of a graph source (:mod:`kgbuild.retrieve.
sources`): a graph in memory, a graph file, a store, a SPARQL endpoint;
:func:`open_traverser` picks the source. Seeds by ID read the node table, names and
questions the names table, a walk the index pages and edge records it touches.

**Access**: everything runs on the read model of the principal's view
(:func:`kgbuild.graph.access.visible_graph`; public items only by default); hidden items are
not in the index, the names, the embedded candidates or the output, and influence no ranking
or count. An entity only hidden
documents mention is hidden too, so a hidden seed (by ID, name, question or embeddings)
gives exactly what a nonexistent one gives; evidence naming a hidden entity is withheld.

**Abstain**: with no seed (``no-seed``, ``ambiguous``), no complete walk (``no-path``) or
nothing reached (``no-edges``) the result says so and carries no nodes beyond the seeds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ..graph.access import Principal
from ..graph.model import KnowledgeGraph
from ..store.adjacency import DIRECTIONS
from ..store.readmodel import GraphModel
from .context import context_pack, render_prompt, render_result
from .diagnose import diagnose_path, leaving_edges
from .filters import filtered_model
from .paths import schema_steps
from .sources import GraphSource, source_of
from .spec import (
    SHORTEST_PATH_HOPS,
    SHORTEST_PATH_WALKS,
    Step,
    TraversalSpec,
    parse_path,
    parse_step,
)
from .walk import Walk, Walker, end_of, enumerate_walks

MAX_FILTERED_VIEWS = 8  # filtered models (and their indexes) one Traverser keeps


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
      o], text, sources: [{source, location}]}], chars, abstain}``
      (see :mod:`kgbuild.retrieve.context`).
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
    """Traversals of one graph for one principal (public items only when None).

    ``graph`` is a :class:`~kgbuild.retrieve.sources.GraphSource` or a
    :class:`~kgbuild.graph.model.KnowledgeGraph` (walked in memory). The principal's read
    model is read once (a per-spec source reads one per run). A ``resolver`` given here must
    know the principal's visible graph only (by default the model's names table answers);
    a ``matcher`` is only ever offered the visible nodes' texts. A spec with assertion
    filters runs on a filtered model with its own index (built in memory; the last
    :data:`MAX_FILTERED_VIEWS` filter sets are kept)."""

    def __init__(self, graph: GraphSource | KnowledgeGraph, principal: Principal | None = None,
                 *, matcher=None, resolver=None):
        self.source = source_of(graph, getattr(graph, "schema", None))
        self.principal = principal or Principal()
        self.matcher = matcher  # an embeddings.EmbeddingMatcher for semantic seeds, or None
        self._resolver = resolver
        self._whole = None if self.source.per_spec else _Reader(self.source.model(self.principal))

    @property
    def model(self) -> GraphModel:
        """The read model walked (of the whole graph's view; not for a per-spec source)."""
        return self._whole.model

    @property
    def resolver(self):
        """The name resolver over the visible graph only."""
        return self._resolver or self._whole.resolver

    def run(self, spec: TraversalSpec) -> TraversalResult:
        """Find the seeds, walk, assemble nodes, edges, paths and the context pack."""
        spec.check()
        reader = self._whole or _Reader(self.source.model(self.principal, spec))
        resolver = self._resolver or reader.resolver if spec.names or spec.question else None
        return reader.filtered(spec.filter_key()).run(spec, self.principal, resolver,
                                                      self.matcher)


class _Reader:
    """One read model and what is made over it once: its walker, the seed index and the
    resolver (a filtered model's are its parent's), its filtered models."""

    def __init__(self, model: GraphModel, root: _Reader | None = None):
        self.model, self.index, self.walker = model, model.index, Walker(model.index)
        self.root = root or self
        self._seed_index = None
        self._resolver = None
        self._filtered: OrderedDict[tuple, _Reader] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def seed_index(self):
        """Reference keys of the visible node IDs (:class:`~kgbuild.retrieve.seeds.SeedIndex`),
        for ``seeds`` in any form (made on first use: an exact ID needs none)."""
        if self._seed_index is None:
            from .seeds import SeedIndex

            self._seed_index = SeedIndex(self.index.node_ids, self.model.schema)
        return self._seed_index

    @property
    def resolver(self):
        """The resolver over the model's names table (made on first use)."""
        if self._resolver is None:
            self._resolver = self.model.resolver()
        return self._resolver

    def filtered(self, key: tuple) -> _Reader:
        """The reader of this model less the assertions ``key`` (a filter key) drops."""
        if not key:
            return self
        with self._lock:
            child = self._filtered.pop(key, None)
            if child is None:
                child = _Reader(filtered_model(self.model, key), self)
            self._filtered[key] = child
            while len(self._filtered) > MAX_FILTERED_VIEWS:
                self._filtered.popitem(last=False)
        return child

    def run(self, spec: TraversalSpec, principal: Principal, resolver, matcher) -> TraversalResult:
        """Find the seeds, walk, assemble nodes, edges, paths and the context pack."""
        schema = self.model.schema
        seeds, unresolved = self._seeds(spec, resolver, matcher)
        cited: dict = {}  # the passages the reported assertions cite
        seed_pos = sorted(p for p in (self.index.position(s["id"]) for s in seeds) if p is not None)
        if spec.shortest_path and seeds:  # a path is chosen, or none is found (abstain below)
            spec = self._shortest_path(spec, seed_pos) or spec
        steps = parse_path(spec.path, schema) if spec.path else None
        follow = [parse_step(f, schema) for f in spec.follow] or [
            Step(e, (0, 1), f"{e}:both") for e in sorted(schema.edge_types)]
        keep = self.walker.type_filter(self._type_codes(spec.types))
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
            walk = self.walker.path(seed_pos, [self.walker.lists([s]) for s in steps], spec.cap,
                                    keep)
            answers = [self.index.node_ids[a] for a in walk.layers[-1].tolist()]
            if not answers:
                why = diagnose_path(self.walker, schema, seed_pos, steps, self._lists, keep,
                                    lambda n: self._node(self.index.node_ids[n])["label"])
                abstain = {"reason": "no-path", "diagnosis": why,
                           "message": f"no walk matches {spec.path} from the seeds: {why['message']}"}
            elif not spec.include_seeds:  # as in multi-hop QA: the topic entity is no answer
                seed_ids = {s["id"] for s in seeds}
                answers = [a for a in answers if a not in seed_ids]
            nodes, edges, paths, truncated = self._assemble_path(walk, seed_pos, spec, cited)
        else:
            walk = self.walker.follow(seed_pos, self.walker.lists(follow), spec.hops, spec.cap,
                                      keep, spec.max_nodes)
            answers = []
            if not any(len(e.eid) for e in walk.entries):
                there = leaving_edges(self.walker, schema, seed_pos)
                abstain = {"reason": "no-edges", "message": "no allowed edge leaves the seeds" + (
                    "; edges there: " + ", ".join(f"{x['step']} ({x['edges']})" for x in there)
                    if there else "")}
            nodes, edges, paths, truncated = self._assemble_follow(walk, spec, cited)
        if abstain:
            nodes = [self._node_out(s["id"], 0, True) for s in seeds]
            edges, paths = [], []
        context = context_pack(self.model, cited, seeds, nodes, edges, abstain, spec.max_chars)
        truncated["context_items"] = context.pop("dropped")
        return TraversalResult(
            "path" if steps else "follow", spec.to_dict(),
            {"labels": sorted(principal.labels), "all_access": principal.everyone},
            seeds, unresolved, nodes, edges, paths, answers, truncated, abstain, context,
            {a: self._node(a)["label"] for a in answers})

    # -- helpers ------------------------------------------------------------------------------
    def _lists(self, edge: str, dirs: tuple[int, ...]) -> list[tuple[int, int]]:
        return self.walker.lists([Step(edge, dirs, "")])

    def _shortest_path(self, spec: TraversalSpec, seed_pos: list[int]) -> TraversalSpec | None:
        """``spec`` with the shortest typed path (ties: by ``--path`` text) from the seeds to a
        node of ``spec.types``, found breadth first over the schema's steps (:func:`~kgbuild.
        retrieve.paths.schema_steps` of the types reached) walked here without cap; a step
        that reaches nothing is not extended. None when no path of at most
        :data:`SHORTEST_PATH_HOPS` steps arrives (at most :data:`SHORTEST_PATH_WALKS` steps are
        walked in all)."""
        schema, ix = self.model.schema, self.index
        keep = self.walker.type_filter(self._type_codes(spec.types))
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
                    lists = self.walker.lists([parse_step(text, schema)])
                    ent, _ = self.walker.expand(layer, lists, None)
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
        schema, code = self.model.schema, {t: i for i, t in enumerate(self.index.type_names)}
        names = {d for t in types for d in schema.descendants(schema.node_type(t).name)}
        return np.array(sorted(code[n] for n in names if n in code), dtype=np.int64)


    def _seeds(self, spec: TraversalSpec, resolver, matcher) -> tuple[list[dict], list[dict]]:
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

        root = self.root
        for i, sid in enumerate(spec.seeds):
            exact = root.index.position(sid.strip()) is not None  # (the seed index's first test)
            found = [sid.strip()] if exact else root.seed_index.lookup(sid, spec.types)
            if len(found) == 1:
                add(found[0], "id", sid)
            else:
                cands = found or root.seed_index.suggest(sid)
                unresolved.append({"via": "id", "index": i, "mention": sid,
                                   "status": "ambiguous" if found else "unknown",
                                   "candidates": [{**self._node(c), "score": None} for c in cands]})
        for i, name in enumerate(spec.names):
            r = resolver.resolve(name)
            if r.status == "resolved" and self.index.position(r.id) is not None:
                add(r.id, "name", name)
            else:
                miss("name", "unknown" if r.status in ("resolved", "new") else r.status,
                     r.candidates, index=i)
        if spec.question:
            for m in resolver.find_mentions(spec.question):
                if m.status == "resolved" and self.index.position(m.id or "") is not None:
                    add(m.id, "question", m.text, (m.start, m.end), round(float(m.score), 4))
                else:
                    miss("question", m.status, m.candidates, mention=m.text, span=[m.start, m.end])
        if spec.question and spec.semantic and matcher is not None:
            from .embeddings import node_text  # (its HTTP client only for semantic seeds)

            candidates = [(n.id, node_text(n.label, n.type,
                                           min(n.attributes.get("description", [""]))))
                          for n in self.model.nodes()]
            for node_id, score in matcher.match(spec.question, candidates, spec.semantic,
                                                spec.semantic_min):
                add(node_id, "semantic", spec.question, None, score)
        return list(seeds.values()), unresolved

    def _node(self, node_id: str) -> dict:
        n = self.model.brief(node_id)
        return {"id": node_id, "label": n[0] if n else node_id, "type": n[1] if n else ""}

    def _edges_out(self, walks: dict[int, list[tuple[int, int]]], cited: dict) -> list[dict]:
        out = []
        for i, (eid, w) in enumerate(walks.items(), 1):
            s, p, o = self.model.edge(eid)
            w = sorted(set(w))
            out.append({"id": f"e{i}", "subject": s, "predicate": p, "object": o,
                        "hop": w[0][0], "direction": DIRECTIONS[w[0][1]],
                        "walks": [{"hop": h, "direction": DIRECTIONS[d]} for h, d in w],
                        "assertions": self._assertions(eid, cited)})
        return out

    def _assertions(self, eid: int, cited: dict) -> list[dict]:
        """Edge ``eid``'s assertions; the passages they cite are added to ``cited``."""
        cited.update(self.model.passages(eid))
        return [a for _, a in self.model.record(eid)["a"]]

    def _node_out(self, n: int | str, hop: int, seed: bool) -> dict:
        node_id = self.index.node_ids[n] if isinstance(n, int) else n
        return {**self._node(node_id), "hop": hop, "seed": seed}

    def _cuts(self, walk: Walk, kept: set[int]) -> list[dict]:
        return [{"node": self.index.node_ids[n], "hop": h, "edges": c}
                for h, (nodes, counts) in enumerate(walk.cuts, 1)
                for n, c in zip(nodes.tolist(), counts.tolist()) if n in kept]

    def _path_out(self, steps: list[tuple[int, int, int]], edge_ids: dict[int, str]) -> dict:
        ids, ix = self.index.node_ids, self.index
        nodes = [ids[f] for f, _, _ in steps] + [ids[end_of(ix, steps[-1])]]
        text = self._node(nodes[0])["label"]
        for (_, eid, d), nxt in zip(steps, nodes[1:]):
            p = ix.edge_types[ix.etype[eid]]
            text += (f" -{p}-> " if d == 0 else f" <-{p}- ") + self._node(nxt)["label"]
        return {"seed": nodes[0], "end": nodes[-1], "nodes": nodes,
                "edges": [edge_ids[e] for _, e, _ in steps], "text": text}

    def _edges_in_order(self, walk: Walk, walks: dict[int, list[tuple[int, int]]], cited: dict):
        """Edges sorted by first hop and rank, as output dicts, and their output IDs."""
        first: dict[int, tuple[int, int]] = {}
        for h, ent in enumerate(walk.entries, 1):
            rank = np.empty(len(ent.eid), dtype=np.int64)
            rank[self.index.order(ent.owner, ent.nbr, ent.eid, ent.dir)] = np.arange(len(rank))
            for eid, r in zip(ent.eid.tolist(), rank.tolist()):
                first.setdefault(eid, (h, r))
        ordered = dict(sorted(walks.items(), key=lambda kv: first[kv[0]]))
        edges = self._edges_out(ordered, cited)
        return edges, {eid: e["id"] for eid, e in zip(ordered, edges)}

    def _assemble_follow(self, walk: Walk, spec: TraversalSpec, cited: dict):
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
        edges, edge_ids = self._edges_in_order(walk, walks, cited)
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

    def _assemble_path(self, walk: Walk, seeds: list[int], spec: TraversalSpec, cited: dict):
        listed, total = enumerate_walks(walk, seeds, spec.max_paths)
        nodes: dict[int, int] = {}
        walks: dict[int, list[tuple[int, int]]] = {}
        chosen = []
        for steps in listed:
            seq = [f for f, _, _ in steps] + [end_of(self.index, steps[-1])]
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
        edges, edge_ids = self._edges_in_order(walk, walks, cited)
        on_walks = set().union(*(layer.tolist() for layer in walk.layers))
        all_edges = set().union(*(ent.eid.tolist() for ent in walk.entries))
        seed_set = set(seeds)
        ordered = sorted(nodes, key=lambda n: nodes[n])
        truncated = {"cap": self._cuts(walk, set(nodes)), "nodes": len(on_walks - nodes.keys()),
                     "edges": len(all_edges - walks.keys()), "paths": total - len(chosen)}
        return ([self._node_out(n, nodes[n], n in seed_set and nodes[n] == 0) for n in ordered],
                edges, [self._path_out(s, edge_ids) for s in chosen], truncated)


def _no_truncation() -> dict:
    return {"cap": [], "nodes": 0, "edges": 0, "paths": 0}


def traverse(graph: GraphSource | KnowledgeGraph, spec: TraversalSpec,
             principal: Principal | None = None) -> TraversalResult:
    """One traversal of ``graph`` as ``principal`` (public items only when None)."""
    return Traverser(graph, principal).run(spec)


def open_traverser(graph, schema, principal: Principal | None = None, *, matcher=None,
                   resolver=None) -> Traverser:
    """A traverser over ``graph`` as ``principal`` (public items only when None): a store
    folder or a graph file (a path), a SPARQL endpoint (a
    :class:`~kgbuild.remote.sparql.SparqlClient`), a graph in memory, or any
    :class:`~kgbuild.retrieve.sources.GraphSource`."""
    return Traverser(source_of(graph, schema), principal, matcher=matcher, resolver=resolver)
