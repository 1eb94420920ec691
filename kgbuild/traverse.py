"""Typed, capped, access-safe traversal of a knowledge graph for retrieval consumers.

Seeds are stable IDs, names or aliases (through the resolver), or the entity mentions of a
question. From the seeds, one of two walks:

* **follow** ``PRED[:out|:in|:both]`` (repeatable) for ``hops`` hops: breadth first over the
  allowed edges; each node is entered once, at its smallest hop, and never walked back along
  the edge that reached it.
* **path** ``"ownedBy:out/ownerOf:out/dependsOn:in"``: step *i* walks one edge of the named
  type and direction. The answers are the end nodes of every walk that completes all steps
  (walk semantics, as a SPARQL sequence path: nodes may repeat, seeds included); only
  nodes and edges on complete walks are reported.

A direction is relative to the name written: ``ownedBy:out`` walks stored ``ownedBy`` edges
from subject to object, an inverse name flips it (``ownerOf:out`` == ``ownedBy:in``),
``:both`` walks either way, no suffix means ``:out``.

**Hub cap K**: per hop, at most K edges leave any node: the best K by the cap ranking of
:mod:`kgbuild.adjacency`, taken *after* the filters (edge type and direction, node ``types``,
and in path mode the neighbour's having an edge for the next step). How many eligible edges
each node lost is reported. ``cap=None`` walks everything (exact). **Budgets** (max nodes,
edges, walks listed, context characters) cut the output in rank order and are reported too.

**Access**: everything runs on :func:`kgbuild.access.visible_graph` for the principal
(public items only by default); hidden items are not in the index, the resolver or the
output, and influence no ranking or count.

**Abstain**: with no seed (``no-seed``, ``ambiguous``), no complete walk (``no-path``) or
nothing reached (``no-edges``) the result says so and carries no nodes beyond the seeds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .access import Principal, visible_graph
from .adjacency import DIRECTIONS, AdjacencyIndex, Entries, cached_index
from .errors import KgbuildError
from .model import KnowledgeGraph

_DIRS = {"out": (0,), "in": (1,), "both": (0, 1)}


@dataclass(frozen=True)
class Step:
    """One walkable edge spec: stored edge type, directions (0 out, 1 in), as written."""

    edge: str
    dirs: tuple[int, ...]
    text: str


def parse_step(text: str, schema) -> Step:
    """Parse ``PRED[:out|:in|:both]`` (stored or inverse edge name) into a :class:`Step`."""
    name, _, direction = text.strip().partition(":")
    direction = direction or "out"
    if direction not in _DIRS:
        raise KgbuildError(f"bad direction {direction!r} in {text!r}: use out, in or both")
    try:
        et, inverted = schema.predicate(name)
    except KgbuildError:
        names = sorted({n for e in schema.edge_types.values() for n in (e.name, e.inverse) if n})
        raise KgbuildError(f"unknown edge type {name!r} (known: {', '.join(names)})") from None
    dirs = tuple(sorted(1 - d for d in _DIRS[direction])) if inverted else _DIRS[direction]
    return Step(et.name, dirs, f"{name}:{direction}")


def parse_path(text: str, schema) -> list[Step]:
    """Parse ``"a:out/b:in/..."`` into steps."""
    parts = [p for p in text.split("/")]
    if not text.strip() or any(not p.strip() for p in parts):
        raise KgbuildError(f"bad path {text!r}: write steps as PRED[:out|:in|:both] joined by '/'")
    return [parse_step(p, schema) for p in parts]


@dataclass
class TraversalSpec:
    """What to retrieve. Seeds: ``seeds`` (IDs), ``names`` (resolved), ``question`` (mentions).

    With neither ``path`` nor ``follow``, every edge type is followed both ways.
    """

    seeds: Sequence[str] = ()
    names: Sequence[str] = ()
    question: str | None = None
    follow: Sequence[str] = ()
    hops: int = 2
    path: str | None = None
    cap: int | None = 50
    types: Sequence[str] = ()
    max_nodes: int | None = 200
    max_edges: int | None = 400
    max_paths: int = 100
    max_chars: int | None = 12000

    def check(self) -> None:
        if self.path and self.follow:
            raise KgbuildError("give either a path or follow specs, not both")
        for name, value in (("hops", self.hops), ("cap", self.cap), ("max_nodes", self.max_nodes),
                            ("max_edges", self.max_edges), ("max_paths", self.max_paths),
                            ("max_chars", self.max_chars)):
            if value is not None and (not isinstance(value, int) or value < (1 if name == "hops" else 0)):
                raise KgbuildError(f"{name} must be a {'positive' if name == 'hops' else 'non-negative'} "
                                   f"integer, got {value!r}")

    def to_dict(self) -> dict:
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


# -- walks over the index -------------------------------------------------------------------
@dataclass
class Walk:
    """Raw walk: nodes in output order with their hop, walked entries with their hop, cuts."""

    nodes: list[int]
    hop: dict[int, int]
    entries: list[tuple[int, Entries]]  # (hop, entries), each best first
    cuts: list[tuple[int, int, int]]  # (node, hop, eligible edges not walked)
    parent: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # node: (from, eid, dir)
    paths: list[list[tuple[int, int, int]]] = field(default_factory=list)  # [(from, eid, dir)]
    paths_total: int = 0
    answers: list[int] = field(default_factory=list)
    dropped_nodes: int = 0


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


def follow_walk(index: AdjacencyIndex, seeds: np.ndarray, lists: list[tuple[int, int]], hops: int,
                cap: int | None, keep=None, max_nodes: int | None = None) -> Walk:
    """Breadth-first walk; new nodes enter in rank order of the edge that first reaches them."""
    mark, lock = index.scratch()
    seeds = np.unique(np.asarray(seeds, dtype=np.int32))
    order, hop_of = [int(s) for s in seeds], {int(s): 0 for s in seeds}
    entries, cuts, dropped, parent = [], [], 0, {}
    with lock:
        mark[seeds] = 0
        try:
            frontier, back = seeds, np.full(len(seeds), -1, dtype=np.int32)
            for h in range(1, hops + 1):
                if not len(frontier) or (max_nodes is not None and len(order) >= max_nodes):
                    break
                ent, cut = index.expand(frontier, lists, cap, keep, back)
                cuts += [(int(n), h, int(c)) for n, c in zip(frontier[cut > 0], cut[cut > 0])]
                new = np.flatnonzero(mark[ent.nbr] < 0)
                new = new[np.lexsort((ent.rank[new], ent.nbr[new]))]
                first = new[np.r_[True, ent.nbr[new][1:] != ent.nbr[new][:-1]]] if len(new) else new
                first = first[np.argsort(ent.rank[first], kind="stable")]
                if max_nodes is not None and len(first) > max_nodes - len(order):
                    dropped += len(first) - (max_nodes - len(order))
                    first = first[:max_nodes - len(order)]
                frontier, back = ent.nbr[first], ent.eid[first]
                parent.update(zip(frontier.tolist(), zip(ent.owner[first].tolist(), back.tolist(),
                                                         ent.dir[first].tolist())))
                order += frontier.tolist()
                mark[frontier] = h
                entries.append((h, ent.take(mark[ent.nbr] >= 0)))
                hop_of.update((int(n), h) for n in frontier)
        finally:
            mark[np.fromiter(order, dtype=np.int64, count=len(order))] = -1
    return Walk(order, hop_of, entries, cuts, parent, dropped_nodes=dropped)


def path_walk(index: AdjacencyIndex, seeds: np.ndarray, steps: Sequence[Step], cap: int | None,
              last_types: np.ndarray | None = None) -> Walk:
    """All walks matching ``steps`` from the seeds, pruned to those that complete."""
    layer = np.unique(np.asarray(seeds, dtype=np.int32))
    per_step: list[Entries] = []
    cuts = []
    for i, step in enumerate(steps):
        lists = step_lists(index, [step])
        if i + 1 < len(steps):
            nxt = step_lists(index, [steps[i + 1]])
            keep = lambda nbr, nxt=nxt: index.degree(nbr, nxt) > 0  # noqa: E731
        else:
            keep = type_filter(index, last_types)
        ent, cut = index.expand(layer, lists, cap, keep)
        cuts.append((layer, cut))
        per_step.append(ent)
        layer = np.unique(ent.nbr)
    alive = layer
    for i in range(len(steps) - 1, -1, -1):
        ent = per_step[i].take(np.isin(per_step[i].nbr, alive))
        per_step[i] = ent
        alive = np.unique(ent.owner)
    hop_nodes: dict[int, int] = {int(s): 0 for s in alive}
    for i, ent in enumerate(per_step, 1):
        for n in np.unique(ent.nbr).tolist():
            hop_nodes.setdefault(n, i)
    kept_owners = [set(alive.tolist())] + [set(np.unique(e.owner).tolist()) for e in per_step[1:]]
    cut_list = [(int(n), i + 1, int(c)) for i, (lay, cut) in enumerate(cuts)
                for n, c in zip(lay, cut) if c > 0 and int(n) in kept_owners[i]]
    walk = Walk(list(hop_nodes), hop_nodes, [(i + 1, e) for i, e in enumerate(per_step)], cut_list,
                answers=np.unique(per_step[-1].nbr).tolist() if per_step else [])
    return walk


def enumerate_walks(walk: Walk, seeds: Sequence[int], limit: int) -> None:
    """Fill ``walk.paths`` with up to ``limit`` complete walks (seed order, then rank order)."""
    steps = [e for _, e in walk.entries]
    nxt: list[dict[int, list[tuple[int, int, int]]]] = []
    for ent in steps:
        table: dict[int, list[tuple[int, int, int]]] = {}
        for o, n, e, d in zip(ent.owner.tolist(), ent.nbr.tolist(), ent.eid.tolist(), ent.dir.tolist()):
            table.setdefault(o, []).append((n, e, d))
        nxt.append(table)
    count: dict[int, int] = {}
    for i in range(len(steps) - 1, -1, -1):
        count = {o: sum(count[n] if i + 1 < len(steps) else 1 for n, _, _ in outs)
                 for o, outs in nxt[i].items()}
    walk.paths_total = sum(count.get(s, 0) for s in seeds)
    out: list[list[tuple[int, int, int]]] = []

    def dfs(node: int, i: int, prefix: list[tuple[int, int, int]]) -> None:
        if len(out) >= limit:
            return
        if i == len(steps):
            out.append(list(prefix))
            return
        for n, e, d in nxt[i].get(node, ()):
            prefix.append((node, e, d))
            dfs(n, i + 1, prefix)
            prefix.pop()

    for s in seeds:
        dfs(s, 0, [])
    walk.paths = out


# -- seeds, assembly, result ------------------------------------------------------------------
@dataclass
class TraversalResult:
    """Everything one traversal returns; :meth:`to_dict` is the documented JSON form."""

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

    def to_dict(self) -> dict:
        """JSON-ready result (schema in the README section "kgbuild traverse")."""
        return asdict(self)

    def render(self) -> str:
        """The result as text for people."""
        from .context import render_result

        return render_result(self)


class Traverser:
    """Traversals over one graph for one principal: view, index and resolver built once."""

    def __init__(self, kg: KnowledgeGraph, principal: Principal | None = None,
                 cache_dir: str | Path | None = None, resolver=None):
        self.principal = principal or Principal()
        self.view = visible_graph(kg, self.principal)
        self.evidence = self.view.edges()
        self.index = cached_index(self.view, cache_dir, self.evidence)
        self._resolver = resolver

    @property
    def resolver(self):
        """The name resolver over the visible graph only (built on first use)."""
        if self._resolver is None:
            from .resolve import Resolver

            self._resolver = Resolver.from_graph(self.view)
        return self._resolver

    def run(self, spec: TraversalSpec) -> TraversalResult:
        spec.check()
        schema = self.view.schema
        steps = parse_path(spec.path, schema) if spec.path else None
        follow = [parse_step(f, schema) for f in spec.follow] or [
            Step(e, (0, 1), f"{e}:both") for e in sorted(schema.edge_types)]
        type_codes = self._type_codes(spec.types)
        seeds, unresolved = self._seeds(spec)
        seed_pos = [self.index.position(s["id"]) for s in seeds]
        mode = "path" if steps else "follow"
        if not seeds:
            ambiguous = any(u["status"] == "ambiguous" for u in unresolved)
            walk = Walk([], {}, [], [])
            abstain = {"reason": "ambiguous" if ambiguous else "no-seed",
                       "message": "the seed names more than one entity; pick one by ID"
                       if ambiguous else "no seed entity was found in the graph"}
        elif steps:
            walk = path_walk(self.index, seed_pos, steps, spec.cap, type_codes)
            enumerate_walks(walk, sorted(set(seed_pos)), spec.max_paths)
            abstain = None if walk.answers else {
                "reason": "no-path", "message": f"no walk matches {spec.path} from the seeds"}
        else:
            keep = type_filter(self.index, type_codes)
            walk = follow_walk(self.index, seed_pos, step_lists(self.index, follow), spec.hops,
                               spec.cap, keep, spec.max_nodes)
            abstain = None if walk.entries and any(len(e.eid) for _, e in walk.entries) else {
                "reason": "no-edges", "message": "no allowed edge leaves the seeds"}
        nodes, edges, paths, truncated = (self._assemble_path(walk, spec) if steps
                                          else self._assemble_follow(walk, spec, len(seed_pos)))
        if abstain:
            nodes, edges, paths = [n for n in nodes if n["seed"]], [], []
        from .context import context_pack

        context = context_pack(self.view, seeds, nodes, edges, abstain, spec.max_chars)
        truncated["context_items"] = context.pop("dropped")
        return TraversalResult(
            mode, spec.to_dict(),
            {"labels": sorted(self.principal.labels), "all_access": self.principal.everyone},
            seeds, unresolved, nodes, edges, paths,
            [] if abstain else [self.index.node_ids[a] for a in walk.answers],
            truncated, abstain, context)

    # -- helpers ------------------------------------------------------------------------------
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

        def miss(mention: str, via: str, status: str, candidates=()) -> None:
            cands = [{**self._node(c[0]), "score": round(float(c[2]), 4)}
                     for c in candidates if self.index.position(c[0]) is not None]
            unresolved.append({"mention": mention, "via": via, "status": status,
                               "candidates": cands})

        for sid in spec.seeds:
            if self.index.position(sid) is not None:
                add(sid, "id", sid)
            else:
                miss(sid, "id", "unknown")
        for name in spec.names:
            r = self.resolver.resolve(name)
            if r.status == "resolved" and self.index.position(r.id) is not None:
                add(r.id, "name", name)
            else:
                miss(name, "name", r.status if r.status != "resolved" else "unknown", r.candidates)
        if spec.question:
            for m in self.resolver.find_mentions(spec.question):
                if m.status == "resolved" and m.id and self.index.position(m.id) is not None:
                    add(m.id, "question", m.text, (m.start, m.end), round(float(m.score), 4))
                else:
                    miss(m.text, "question", m.status, getattr(m, "candidates", ()))
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
                        "assertions": [_assertion(a) for a in self.evidence.get((s, p, o), [])]})
        return out

    def _nodes_out(self, order: list[int], hop: dict[int, int], seeds: set[int]) -> list[dict]:
        return [{**self._node(self.index.node_ids[n]), "hop": hop[n], "seed": n in seeds}
                for n in order]

    def _cuts(self, walk: Walk, kept: set[int]) -> list[dict]:
        return [{"node": self.index.node_ids[n], "hop": h, "edges": c}
                for n, h, c in walk.cuts if n in kept]

    def _path_out(self, steps: list[tuple[int, int, int]], to: int, edge_ids: dict[int, str]) -> dict:
        ids = self.index.node_ids
        nodes = [ids[f] for f, _, _ in steps] + [ids[to]]
        text = self._node(nodes[0])["label"]
        for (f, eid, d), nxt in zip(steps, nodes[1:]):
            p = self.index.edge_types[self.index.etype[eid]]
            text += f" -{p}-> " if d == 0 else f" <-{p}- "
            text += self._node(nxt)["label"]
        return {"seed": nodes[0], "end": nodes[-1], "nodes": nodes,
                "edges": [edge_ids[e] for _, e, _ in steps], "text": text}

    def _assemble_follow(self, walk: Walk, spec: TraversalSpec, n_seeds: int):
        limit = len(walk.nodes)
        if spec.max_nodes is not None:
            limit = min(limit, max(spec.max_nodes, n_seeds))
        if spec.max_edges is not None:
            limit = min(limit, n_seeds + spec.max_edges)
        kept = walk.nodes[:limit]
        kept_set = set(kept)
        walks: dict[int, list[tuple[int, int]]] = {}
        for n in kept[n_seeds:]:
            _, eid, d = walk.parent[n]
            walks[eid] = [(walk.hop[n], d)]
        room = None if spec.max_edges is None else spec.max_edges - len(walks)
        dropped_edges = set()
        for h, ent in walk.entries:
            for o, nb, eid, d in zip(ent.owner.tolist(), ent.nbr.tolist(), ent.eid.tolist(),
                                     ent.dir.tolist()):
                if eid in walks:
                    if (h, d) not in walks[eid]:
                        walks[eid].append((h, d))
                elif o in kept_set and nb in kept_set and (room is None or room > 0):
                    walks[eid] = [(h, d)]
                    room = None if room is None else room - 1
                else:
                    dropped_edges.add(eid)
        rank = {}
        for h, ent in walk.entries:
            for eid, r in zip(ent.eid.tolist(), ent.rank.tolist()):
                rank.setdefault(eid, (h, r))
        walks = dict(sorted(walks.items(), key=lambda kv: rank[kv[0]]))
        edges = self._edges_out(walks)
        edge_ids = {eid: e["id"] for eid, e in zip(walks, edges)}
        parents = {walk.parent[n][0] for n in kept[n_seeds:]}
        paths = []
        for n in kept[n_seeds:]:
            if n in parents or len(paths) >= spec.max_paths:
                continue
            chain, cur = [], n
            while cur in walk.parent:
                chain.append(walk.parent[cur])
                cur = walk.parent[cur][0]
            paths.append(self._path_out(chain[::-1], n, edge_ids))
        leaves = sum(1 for n in kept[n_seeds:] if n not in parents)
        truncated = {"cap": self._cuts(walk, kept_set),
                     "nodes": walk.dropped_nodes + len(walk.nodes) - len(kept),
                     "edges": len(dropped_edges - walks.keys()), "paths": leaves - len(paths)}
        return self._nodes_out(kept, walk.hop, set(walk.nodes[:n_seeds])), edges, paths, truncated

    def _assemble_path(self, walk: Walk, spec: TraversalSpec):
        nodes: dict[int, int] = {}
        walks: dict[int, list[tuple[int, int]]] = {}
        chosen = []
        for steps in walk.paths:
            seq = [f for f, _, _ in steps] + [self._end(steps)]
            new_nodes = {n for n in seq if n not in nodes}
            new_edges = {e for _, e, _ in steps if e not in walks}
            if ((spec.max_nodes is not None and len(nodes) + len(new_nodes) > spec.max_nodes)
                    or (spec.max_edges is not None and len(walks) + len(new_edges) > spec.max_edges)):
                break
            chosen.append(steps)
            for i, n in enumerate(seq):
                nodes.setdefault(n, i)
            for i, (_, e, d) in enumerate(steps, 1):
                if (i, d) not in walks.setdefault(e, []):
                    walks[e].append((i, d))
        rank = {}
        for h, ent in walk.entries:
            for eid, r in zip(ent.eid.tolist(), ent.rank.tolist()):
                rank.setdefault(eid, (h, r))
        walks = dict(sorted(walks.items(), key=lambda kv: rank[kv[0]]))
        edges = self._edges_out(walks)
        edge_ids = {eid: e["id"] for eid, e in zip(walks, edges)}
        all_edges = {int(e) for _, ent in walk.entries for e in ent.eid.tolist()}
        order = [n for _, _, n in sorted((h, i, n) for i, (n, h) in enumerate(nodes.items()))]
        seeds = {f for steps in chosen for f, _, _ in steps[:1]}
        truncated = {"cap": self._cuts(walk, set(nodes)),
                     "nodes": len(walk.nodes) - len(nodes), "edges": len(all_edges) - len(walks),
                     "paths": walk.paths_total - len(chosen)}
        return (self._nodes_out(order, nodes, seeds), edges,
                [self._path_out(s, self._end(s), edge_ids) for s in chosen], truncated)

    def _end(self, steps: list[tuple[int, int, int]]) -> int:
        f, eid, d = steps[-1]
        return int(self.index.dst[eid] if d == 0 else self.index.src[eid])


def _assertion(a) -> dict:
    return {"source": a.source, "location": a.location, "evidence": a.evidence,
            "extractor": a.extractor, "confidence": a.confidence, "generated_at": a.generated_at}


def traverse(kg: KnowledgeGraph, spec: TraversalSpec, principal: Principal | None = None,
             cache_dir: str | Path | None = None) -> TraversalResult:
    """One traversal of ``kg`` as ``principal`` (public items only when None)."""
    return Traverser(kg, principal, cache_dir).run(spec)
