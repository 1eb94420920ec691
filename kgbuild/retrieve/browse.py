"""Looking around a graph: one node's summary, listings by type, statistics, a neighbourhood.

Everything runs on the read model of the principal's visible graph
(:func:`kgbuild.graph.access.visible_graph`), as traversal does: a hidden node is reported
exactly like a nonexistent one, and hidden nodes, edges, assertions and documents are never
listed, counted or suggested. Output is bounded (``max_edges``, ``limit``, ``top``) and
deterministic (sorted by ID, degree, name).
"""

from __future__ import annotations

import heapq
import json
import textwrap
from collections import Counter

import numpy as np

from ..errors import KgbuildError
from ..graph.access import Principal
from ..store.readmodel import digest, record_of
from .seeds import SeedIndex
from .spec import MAX_COUNT, MAX_HOPS, MAX_NAME_CHARS, TraversalSpec
from .traverse import Traverser


def _bounded(name: str, value: int, low: int = 0, high: int = MAX_COUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise KgbuildError(f"{name} must be an integer from {low} to {high}, got {value!r}",
                           code="usage")
    return value


def _assertion(a: dict) -> dict:
    """An assertion as traversal outputs it, without its time."""
    return {k: v for k, v in a.items() if k != "generated_at"}


class Browser:
    """Summaries, listings and statistics of one graph as one principal (public items only
    when ``principal`` is None), read from the read model of the principal's view: the one
    a :class:`~kgbuild.retrieve.traverse.Traverser` for the principal walks (also for
    :meth:`neighbourhood`). ``graph``: a graph source or a graph in memory; ``problems``:
    what reading a graph file skipped."""

    def __init__(self, graph, principal: Principal | None = None):
        self.traverser = Traverser(graph, principal)
        self.problems = list(getattr(graph, "problems", ()))  # what reading a file skipped
        self.principal = self.traverser.principal
        self.model = self.traverser.model
        ix = self.model.index
        n = ix.size
        loops = ix.src[ix.src == ix.dst]
        self._degree = (np.bincount(ix.src, minlength=n) + np.bincount(ix.dst, minlength=n)
                        - np.bincount(loops, minlength=n))
        self._typed = np.flatnonzero(ix.node_type != ix.type_names.index(""))
        self._seeds: SeedIndex | None = None
        self._documents: dict[bytes, str] | None = None  # name digest -> document

    def degree(self, node_id: str) -> int:
        """Visible edges touching the node, either way (a self-loop counts once)."""
        pos = self.model.index.position(node_id)
        return 0 if pos is None else int(self._degree[pos])

    def ids(self) -> list[str]:
        """The visible nodes' IDs, sorted."""
        ids = self.model.index.node_ids
        return [ids[p] for p in self._typed.tolist()]

    def _brief(self, node_id: str) -> dict:
        n = self.model.brief(node_id)
        return {"id": node_id, "label": n[0] if n else node_id, "type": n[1] if n else ""}

    def find(self, text: str) -> str:
        """The visible node ``text`` names: its exact ID, or the ID written another way, as
        traversal seeds are read (:mod:`kgbuild.retrieve.seeds`: percent-encoding, purl
        versions, Backstage default kind and namespace). Raises :class:`KgbuildError`:
        ``unknown-node`` (with suggestions among visible nodes) or ``ambiguous``."""
        if self.model.brief(text) is not None:
            return text
        if len(text) > MAX_NAME_CHARS:
            raise KgbuildError(f"an ID has at most {MAX_NAME_CHARS:,} characters", code="usage")
        if self._seeds is None:
            self._seeds = SeedIndex(self.ids(), self.model.schema)
        found = self._seeds.lookup(text)
        if len(found) == 1:
            return found[0]
        if found:
            raise KgbuildError(f"{text!r} names {len(found)} nodes: "
                               + ", ".join(self._named(i) for i in found[:10])
                               + "; give one by its ID", code="ambiguous")
        r = self.traverser.resolver.resolve(text)
        ids = self._seeds.suggest(text) + ([r.id] if r.id else []) + [c[0] for c in r.candidates]
        hint = ", ".join(self._named(i) for i in dict.fromkeys(ids)
                         if self.model.brief(i) is not None)
        raise KgbuildError(f"no node {text!r} in the graph"
                           + (f"; did you mean: {hint}" if hint else ""), code="unknown-node")

    def _named(self, node_id: str) -> str:
        return f"{self._brief(node_id)['label']} ({node_id})"

    def _edges(self, pos: int) -> tuple[list[int], list[int]]:
        """The edge numbers leaving and entering node ``pos``, in edge order."""
        ix = self.model.index
        lo, hi = (int(x) for x in np.searchsorted(ix.src, [pos, pos + 1]))
        incoming = sorted(int(e) for (_, d), c in ix.lists.items() if d == 1
                          for e in c.eid[c.indptr[pos]:c.indptr[pos + 1]].tolist())
        return list(range(lo, hi)), incoming

    def _sources(self, eids: list[int]) -> set[str]:
        """The documents the assertions of edges ``eids`` come from: read from the digests of
        the sources column (the edge's record when a digest names no document of the graph)."""
        if self._documents is None:
            self._documents = {digest(d): d for d in self.model.documents}
        out: set[str] = set()
        for eid in eids:
            raw = self.model.sources.raw(eid)
            names = [self._documents.get(raw[i:i + 8]) for i in range(0, len(raw), 8)]
            if None in names:
                names = [a["source"] for _, a in self.model.record(eid)["a"]]
            out.update(names)
        return out

    def _brief_at(self, pos: int) -> dict:
        """:meth:`_brief` of the node numbered ``pos``."""
        ix, model = self.model.index, self.model
        node_id, code = ix.node_ids[pos], ix.node_type[pos]
        typed = ix.type_names[code] != ""
        return {"id": node_id, "label": model.labels[pos] if typed else node_id,
                "type": ix.type_names[code]}

    def node(self, node_id: str, max_edges: int = 100) -> dict:
        """One node (``node_id`` as :meth:`find` reads it): ID, label, type, attributes,
        aliases, the documents defining it and citing it, its edges both ways with counts by
        edge type, and up to ``max_edges`` edges each way listed with their assertions
        (``truncated`` counts the rest). A node the principal cannot see is unknown."""
        _bounded("max_edges", max_edges)
        node_id = self.find(node_id)
        model = self.model
        n = model.node(node_id)
        schema = model.schema
        out = {**self._brief(node_id),
               "attributes": {k: sorted(v) for k, v in sorted(n.attributes.items())},
               "aliases": sorted(n.aliases), "access": sorted(n.access),
               "defined_in": sorted(d for d in n.defined_in if d in model.documents)}
        cited = set()
        truncated = {}
        ix = model.index
        for key, eids, ends in zip(("out", "in"), self._edges(ix.position(node_id)),
                                   (ix.dst, ix.src)):
            other = {eid: self._brief_at(int(ends[eid])) for eid in eids}
            predicate = {eid: ix.edge_types[ix.etype[eid]] for eid in eids}
            out[f"{key}_counts"] = dict(sorted(Counter(predicate.values()).items()))
            cited.update(self._sources(eids))
            ranked = heapq.nsmallest(max_edges, eids, key=lambda i: (
                predicate[i], other[i]["label"], other[i]["id"]))
            listed = []
            for eid in ranked:
                p = predicate[eid]
                inverse = schema.edge_types[p].inverse if p in schema.edge_types else None
                listed.append({"predicate": p, "name": p if key == "out" else (inverse or p),
                               "node": other[eid],
                               "assertions": [_assertion(a) for _, a in model.record(eid)["a"]]})
            out[key] = listed
            truncated[key] = len(eids) - len(listed)
        out["sources"] = sorted(cited | set(out["defined_in"]))
        out["truncated"] = truncated
        return out

    def nodes(self, type_name: str | None = None, limit: int = 100) -> dict:
        """Nodes of ``type_name`` (and its subtypes; all types when None), sorted by ID, at most
        ``limit``: ``{type, total, nodes: [{id, label, type, degree}], truncated}``."""
        _bounded("limit", limit)
        schema, ix = self.model.schema, self.model.index
        positions = self._typed
        if type_name:
            types = set(schema.descendants(schema.node_type(type_name).name))
            codes = [i for i, t in enumerate(ix.type_names) if t in types]
            positions = positions[np.isin(ix.node_type[positions], codes)]
        shown = [{**self._brief(ix.node_ids[p]), "degree": int(self._degree[p])}
                 for p in positions[:limit].tolist()]
        return {"type": schema.node_type(type_name).name if type_name else None,
                "total": len(positions), "nodes": shown, "truncated": len(positions) - len(shown)}

    def stats(self, top: int = 10) -> dict:
        """Counts by node type and edge type, assertions, the degree distribution (power-of-two
        buckets), the ``top`` hubs by degree, documents by assertion count, extractors."""
        _bounded("top", top)
        model, ix = self.model, self.model.index
        typed = self._typed
        degrees = self._degree[typed]
        values = sorted(degrees.tolist())
        buckets: Counter = Counter()
        for d in values:
            buckets["0" if d == 0 else "1" if d == 1 else
                    f"{1 << (d.bit_length() - 1)}-{(1 << d.bit_length()) - 1}"] += 1
        order = np.lexsort((typed, -degrees))[:top]  # (positions are in ID order)
        hubs = [(ix.node_ids[int(typed[i])], int(degrees[i])) for i in order.tolist()]
        per_doc: Counter = Counter()
        extractors: Counter = Counter()
        assertions = 0
        bare = record_of([], {})[0]  # (an edge without assertions: nothing to read)
        for eid in range(len(ix.src)):
            raw = model.records.raw(eid)
            if raw == bare:
                continue
            for _, a in json.loads(raw)["a"]:
                per_doc[a["source"]] += 1
                extractors[a["extractor"]] += 1
                assertions += 1
        documents = sorted(model.documents, key=lambda d: (-per_doc[d], d))
        by_type = Counter(ix.type_names[t] for t in ix.node_type[typed].tolist())
        by_edge = Counter(ix.edge_types[t] for t in ix.etype.tolist())
        return {
            "nodes": len(typed), "edges": len(ix.src),
            "assertions": assertions, "documents": len(model.documents),
            "nodes_by_type": dict(sorted(by_type.items())),
            "edges_by_type": dict(sorted(by_edge.items())),
            "degree": {"min": values[0] if values else 0, "max": values[-1] if values else 0,
                       "median": values[len(values) // 2] if values else 0,
                       "mean": round(sum(values) / len(values), 3) if values else 0.0,
                       "buckets": dict(sorted(buckets.items(),
                                              key=lambda kv: int(kv[0].split("-")[0])))},
            "hubs": [{**self._brief(i), "degree": d} for i, d in hubs],
            "top_documents": [{"id": d, "assertions": per_doc[d]} for d in documents[:top]],
            "extractors": dict(sorted(extractors.items())),
        }

    def neighbourhood(self, node_id: str, hops: int = 1, cap: int | None = 20,
                      max_nodes: int = 60, max_edges: int = 120) -> dict:
        """The node's neighbourhood as a traversal result (``TraversalResult.to_dict()``):
        every edge type both ways for ``hops`` hops, at most ``cap`` edges per node and hop
        (cut hubs are in ``truncated.cap``), at most ``max_nodes`` nodes and ``max_edges``."""
        _bounded("hops", hops, 1, MAX_HOPS)
        spec = TraversalSpec(seeds=[self.find(node_id)], hops=hops, cap=cap, max_nodes=max_nodes,
                             max_edges=max_edges)
        return self.traverser.run(spec).to_dict()


# -- text for people ---------------------------------------------------------------------------
WIDTH = 100  # columns of the text output (fixed: the same input prints the same text)


def _wrap(head: str, items: list[str], indent: str = "  ") -> list[str]:
    """``head: a, b, c`` wrapped at :data:`WIDTH`, continuation lines indented."""
    if not items:
        return []
    text = f"{head}: " + ", ".join(i.replace(" ", "\xa0") for i in items)  # items stay whole
    return [line.replace("\xa0", " ") for line in
            textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                          break_long_words=False, break_on_hyphens=False)]


def _named(n: dict) -> str:
    return f"{n['label']} ({n['type']}, {n['id']})" if n["type"] else f"{n['label']} ({n['id']})"


def _where(a: dict) -> str:
    at = f"{a['source']}:{a['location'].removeprefix('line ')}" if a["location"] else a["source"]
    return at + (f' "{a["evidence"]}"' if a["evidence"] else "")


def render_node(summary: dict) -> str:
    """:meth:`Browser.node` as text: the node, its attributes, its edges each way grouped by
    edge type (each with its first source), the documents behind it."""
    lines = [_named(summary)]
    for name, values in summary["attributes"].items():
        lines += _wrap(name, values)
    lines += _wrap("aliases", summary["aliases"])
    lines += _wrap("access labels", summary["access"])
    lines += _wrap("defined in", summary["defined_in"])
    for key, arrow in (("out", "->"), ("in", "<-")):
        counts = summary[f"{key}_counts"]
        total = sum(counts.values())
        by_type = ", ".join(f"{p} {c}" for p, c in counts.items())
        lines.append(f"{key}: {total} edge{'s' * (total != 1)}"
                     + (f" ({by_type})" if counts else ""))
        for e in summary[key]:
            first = _where(e["assertions"][0]) if e["assertions"] else "no source"
            more = f" (+{len(e['assertions']) - 1} more)" if len(e["assertions"]) > 1 else ""
            lines.append(f"  {e['name']} {arrow} {_named(e['node'])}")
            lines.append(f"      {first}{more}")
        if summary["truncated"][key]:
            lines.append(f"  ... {summary['truncated'][key]} more (raise --max-edges)")
    lines += _wrap("sources", summary["sources"], "")
    return "\n".join(lines)


def render_nodes(listing: dict) -> str:
    """:meth:`Browser.nodes` as text: one node a line, label first, then type, ID and degree."""
    what = listing["type"] or "all types"
    lines = [f"{listing['total']} node{'s' * (listing['total'] != 1)} ({what})"]
    width = min(40, max((len(n["label"]) for n in listing["nodes"]), default=0))
    for n in listing["nodes"]:
        lines.append(f"  {n['label']:<{width}}  {n['type']:<10} {n['id']}  degree {n['degree']}")
    if listing["truncated"]:
        lines.append(f"  ... {listing['truncated']} more (raise --limit)")
    return "\n".join(lines)


def render_stats(stats: dict) -> str:
    """:meth:`Browser.stats` as text, long lists wrapped."""
    d = stats["degree"]
    lines = [f"{stats['nodes']} nodes, {stats['edges']} edges, {stats['assertions']} assertions, "
             f"{stats['documents']} documents"]
    for key in ("nodes_by_type", "edges_by_type"):
        lines += _wrap(key.replace("_", " "), [f"{k} {v}" for k, v in stats[key].items()], "")
    lines.append(f"degree: min {d['min']}, median {d['median']}, mean {d['mean']}, max {d['max']}")
    lines += _wrap("nodes by degree", [f"{k}: {v}" for k, v in d["buckets"].items()])
    lines.append("hubs:")
    lines += [f"  {h['degree']:>6}  {_named(h)}" for h in stats["hubs"]]
    lines.append("documents by assertions:")
    lines += [f"  {x['assertions']:>6}  {x['id']}" for x in stats["top_documents"]]
    lines += _wrap("extractors", [f"{k} {v}" for k, v in stats["extractors"].items()], "")
    return "\n".join(lines)
