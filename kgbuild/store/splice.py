"""A saved read model brought to the store's next revision from the changed documents alone.

Each commit of a few documents (:meth:`~kgbuild.store.graphstore.GraphStore.apply`) applies
its change to the model of the revision before it (:func:`apply_changes`): the edges citing
the changed documents are found in the sources column, the changed documents' graphs and
every quad about the nodes they touch (before or after) are read from the store and merged
into those edges' records, the names table gets the touched nodes' entries removed and
added (:func:`~kgbuild.resolve.nametable.table_changes`), and the new columns are the old
ones spliced, renumbered and re-ranked with numpy: no Python object per node, edge or
record of the whole graph. A change that adds and removes no node and no edge (a
description, a time, an owner's attribute) writes its rows alone (:func:`_replaced`: of a
chunked column, the chunks they are in; of the fixed-width columns and the lists, a patch
of the positions that changed beside the old file): its cost is the rows it changes. Any
other change is spliced (:func:`_spliced`): C-speed array work linear in the graph.
Where the merge cannot be exact (a new database, another schema or settings, edges without
assertions, a catch-all node type, many changed documents) None is returned and the model is
made from the whole graph. The result reads as the model made from scratch (tested after
random edits of real catalogs, column by column, patches applied): its facets' new terms
are coded after the old ones, and the times no edge has any more may be kept.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import numpy as np
import pyoxigraph as ox

from ..graph.model import id_from_iri, node_iri, source_iri
from ..vocab import (
    ASSERTION_BASE,
    CATCH_ALL,
    KG,
    NODES_GRAPH,
    RDF_OBJECT,
    RDF_SUBJECT,
    SOURCE_BASE,
)
from .adjacency import patched, relisted
from .readmodel import (
    FORMAT,
    GraphModel,
    assertion_dict,
    cite,
    digest,
    node_info,
    pack_facets,
    patch_files,
    record_of,
    with_lists,
)
from .strings import ChunkedStrings, Strings

FEW_POINTS = 32  # insertion points renumbered by a pass each (more: by binary searches)
MAX_CHANGED = 200  # more changed documents than this (or a twentieth of all): made whole
_ENDS = (RDF_SUBJECT, RDF_OBJECT)
ACCESS = KG + "accessLabel"


def model_meta(store) -> dict:
    """What a model of the store is made from: its revision, schema and build settings."""
    return {"format": FORMAT, "revision": store.revision(),
            "schema": store.schema.digest, "settings": store.settings()}


def labelled_graphs(store, graphs=None) -> set[str]:
    """The graphs (of ``graphs``, or all) with an access label in them."""
    values = f"VALUES ?g {{ {' '.join(f'<{g}>' for g in graphs)} }} " if graphs is not None else ""
    return {row["g"].value for row in store.sparql(
        f"SELECT DISTINCT ?g WHERE {{ {values}GRAPH ?g {{ ?s <{ACCESS}> ?o }} }}")}


def edge_number(ix, edge: tuple[str, str, str]) -> int | None:
    """The number of ``edge`` (subject, type, object) in the index (edges sorted), or None."""
    s, o = ix.position(edge[0]), ix.position(edge[2])
    if s is None or o is None or edge[1] not in ix.edge_types:
        return None
    p = ix.edge_types.index(edge[1])
    j = _place(ix.src, ix.etype, ix.dst, ix.size, s, p, o)
    return j if j < len(ix.src) and (ix.src[j], ix.etype[j], ix.dst[j]) == (s, p, o) else None


def apply_changes(old: GraphModel, store, schema, documents: Iterable[str],
                  before: Iterable[str]) -> tuple[dict[str, np.ndarray], dict] | None:
    """The columns and metadata of ``old`` (the saved model of the revision before the change)
    brought to the store's current revision by re-reading only the changed ``documents`` and
    the nodes they touch; None when that cannot be exact (then rebuild). ``before``: the IRIs
    the changed documents' graphs used before the change, and the new content's
    (:func:`~kgbuild.validate.incremental.touched_terms`)."""
    from ..graph.rdf import from_quads
    from ..resolve.nametable import table_changes

    meta = model_meta(store)
    same_database = old.meta.get("revision", "").split(":")[0] == store.store_id()
    if (not same_database or old.meta.get("schema") != meta["schema"]  # (a full rebuild may
            or old.meta.get("settings") != meta["settings"]  # change unchanged documents' times)
            or old.meta.get("untyped") or CATCH_ALL in schema.type_by_iri):
        return None
    changed = set(documents)
    if len(changed) > min(MAX_CHANGED, max(10, len(old.documents) // 20)):
        return None
    graphs = {source_iri(d) for d in changed}
    inverse = {e.inverse_iri for e in schema.edge_types.values() if e.inverse_iri}
    touched = set(before)
    ix = old.index
    digests = np.frombuffer(b"".join(digest(d) for d in changed), dtype=np.uint8).view("<u8")
    citing = [np.zeros(0, dtype=np.int64)]
    for start, c in zip(old.sources.starts.tolist(), old.sources.chunks):
        at = np.flatnonzero(np.isin(np.asarray(c.blob).view("<u8"), digests)) * 8
        citing.append(start + np.searchsorted(c.ends, at, side="right"))
    evidence: dict[tuple, tuple[list, dict]] = {}
    for i in np.unique(np.concatenate(citing)).tolist():
        rec, edge = old.record(i), old.edge(i)
        touched.update((node_iri(edge[0]), node_iri(edge[2])))
        evidence[edge] = ([x for x in rec["a"] if x[1]["source"] not in changed], rec["p"])
    rows, direct = [], []
    for g in sorted(graphs):
        for q in store.graph_quads(g):
            s, p, o = q.subject.value, q.predicate.value, q.object.value
            rows.append((s, p, o, g))
            if isinstance(q.subject, ox.NamedNode):
                touched.add(s)
            if isinstance(q.object, ox.NamedNode) and (p in schema.edge_by_iri or p in _ENDS):
                touched.add(o)
                if p in schema.edge_by_iri:
                    direct.append((id_from_iri(s), schema.edge_by_iri[p], id_from_iri(o)))
            elif p in inverse:
                return None  # (inverse-named triples: rare, read by the whole-graph path)
    touched = {t for t in touched if not t.startswith((ASSERTION_BASE, SOURCE_BASE))}
    for iri in sorted(touched):
        rows.extend(r for r in store.rows_about(iri) if r[3] not in graphs)
    kg = from_quads(rows, schema)
    present = kg.documents.keys() & changed
    removed = sorted(d for d in changed - present if d in old.documents)
    added = sorted(d for d in present if d not in old.documents)
    for a in sorted((a for a in kg.assertions.values() if a.source in changed),
                    key=lambda a: a.key):
        if a.edge not in evidence:  # an edge only unchanged documents stated before, if any
            i = edge_number(ix, a.edge)
            rec = old.record(i) if i is not None else {"a": [], "p": {}}
            evidence[a.edge] = (rec["a"], rec["p"])
        found, pas = evidence[a.edge]
        found.append([a.key, assertion_dict(a)])
        cite(a, kg.passages, pas)
    fresh: dict[tuple, tuple | None] = {}
    for e, (found, pas) in evidence.items():
        if not found:
            if store.has_triple(node_iri(e[0]), schema.edge_types[e[1]].iri, node_iri(e[2])):
                return None  # now an edge without assertions: the whole graph reads those
            fresh[e] = None
            continue
        found.sort(key=lambda x: x[0])
        cited = {x[1].get("passage") for x in found}
        fresh[e] = record_of(found, {k: v for k, v in pas.items() if k in cited})
    if any(fresh.get(e) is None and (e in fresh or edge_number(ix, e) is None) for e in direct):
        return None  # a direct triple no assertion covers: an untyped edge
    nodes, before, after = {}, {}, {}
    for nid in {id_from_iri(t) for t in touched}:
        n = kg.nodes.get(nid)
        documents = {d for d in n.defined_in if d in present or (
            d not in changed and d in old.documents)} if n else set()
        nodes[nid] = (n.label, n.type, node_info(n, documents)) if n else (nid, "", "")
        before[nid] = old.entity(nid)
        after[nid] = (n.type, n.label, sorted({*n.aliases, *n.attributes.get("title", ())})) \
            if n else None
    labelled = (set(old.meta["labelled"]) - graphs - {NODES_GRAPH}) | labelled_graphs(
        store, sorted(graphs | {NODES_GRAPH}))
    meta = {**meta, "labelled": sorted(labelled), "untyped": 0}
    arrays = _replaced(old, nodes, fresh)
    if arrays is None:
        arrays = _spliced(old, nodes, fresh)
    arrays["docs_blob"], arrays["docs_ends"] = old.documents.changed(removed, added)
    arrays["names_blob"], arrays["names_ends"] = old.names.changed(
        *table_changes(old.names, before, after, schema))
    return arrays, meta


def _replaced(old: GraphModel, nodes: dict[str, tuple[str, str, str]],
              edges: dict[tuple, tuple | None]) -> dict[str, np.ndarray] | None:
    """:func:`_spliced`'s files when the change adds and removes no node and no edge (else
    None): a chunked column's changed chunks are made again; the confidence and time codes
    and the lists (ranked again only where an edge's confidence or time changed) keep their
    files, with patches of the positions that changed (:func:`~kgbuild.store.adjacency.
    patched`); every column the change leaves as it was is the old file. No pass renumbers
    the graph, unless a new time comes between the old ones (every later code then moves)."""
    ix = old.index
    number = {e: edge_number(ix, e) for e in edges}
    position = {x: ix.position(x) for x in nodes}
    if any(v is None for v in edges.values()) or None in number.values() \
            or None in position.values():
        return None
    lone = np.array([position[x] for x, (_, ty, _) in nodes.items() if not ty], dtype=np.int64)
    if len(lone) and not ix.degree(lone).all():  # (a node left without type or edge goes)
        return None
    types = {name: i for i, name in enumerate(ix.type_names)}
    typed = {position[x]: types[ty] for x, (_, ty, _) in nodes.items()}
    node_type = ix.node_type
    if any(int(node_type[i]) != t for i, t in typed.items()):
        node_type = np.array(node_type)
        node_type[list(typed)] = list(typed.values())
    rows = sorted((number[e], v) for e, v in edges.items())
    eids = np.array([i for i, _ in rows], dtype=np.int64)
    conf = np.array([v[1] for _, v in rows], dtype=np.float64)
    # the times, sorted (the new ones among them; those no edge has now are kept: dropping
    # them would renumber every edge), and the edges whose confidence or time changed
    times = list(old.times)
    redone = eids[(np.asarray(old.conf[eids]) != conf)
                  | np.array([times[c] != v[2] for c, (_, v) in
                              zip(old.recency[eids].tolist(), rows)], dtype=bool)]
    new_times = sorted({v[2] for _, v in rows}.difference(times))
    recency, patch = old.recency, ix.patches.get("recency")
    if new_times and times and new_times[0] < times[-1]:  # (else codes stay as they are)
        shift = np.array([bisect.bisect_left(times, x) for x in new_times], recency.dtype)
        recency = recency + _below(recency, shift, True).astype(recency.dtype)
        patch = None
    times = sorted(times + new_times)
    code = {x: i for i, x in enumerate(times)}
    stamps = np.array([code[v[2]] for _, v in rows], dtype=recency.dtype)
    out = {"node_type": node_type, "src": ix.src, "dst": ix.dst, "etype": ix.etype}
    for name, column, old_patch, values in (("conf", old.conf, ix.patches.get("conf"), conf),
                                            ("recency", recency, patch, stamps)):
        out[name], now = patched(column, old_patch, eids, values)  # (few: a patch)
        out.update(patch_files(name, now))
    out["times_blob"], out["times_ends"] = Strings.pack(times)
    terms = list(old.terms)  # (new terms after the old ones)
    blob, ends = pack_facets([v[4] for _, v in rows], terms)
    starts = [0, *ends[:-1].tolist()]
    facets = [blob[a:b].tobytes() for a, b in zip(starts, ends.tolist())]
    out["terms_blob"], out["terms_ends"] = (old.terms.blob, old.terms.ends) \
        if len(terms) == len(old.terms) else Strings.pack(terms)
    at = [position[x] for x in nodes]
    for name, column, where, items in (
            ("info", old.info, at, [v[2].encode() for v in nodes.values()]),
            ("records", old.records, eids, [v[0] for _, v in rows]),
            ("sources", old.sources, eids, [v[3] for _, v in rows]),
            ("facets", old.facets, eids, facets)):
        out.update(_edited(column, [], list(zip(np.asarray(where).tolist(), items)),
                           []).arrays(name))
    out["ids_blob"], out["ids_ends"] = ix.node_ids.blob, ix.node_ids.ends
    labels = {i: v[0].encode() for i, v in zip(at, nodes.values())
              if old.labels.raw(i) != v[0].encode()}
    take = np.arange(len(old.labels), dtype=np.int64)
    take[sorted(labels)] = -1
    out["labels_blob"], out["labels_ends"] = old.labels.splice(
        take, [labels[i] for i in sorted(labels)])
    none = np.zeros(0, dtype=np.int64)
    return with_lists(out, len(ix.edge_types), relisted(
        ix, ix.size, ix.src, ix.dst, ix.etype, out["conf"], out["recency"], none, redone, none))


def _spliced(old: GraphModel, nodes: dict[str, tuple[str, str, str]],
             edges: dict[tuple, tuple | None]) -> dict[str, np.ndarray]:
    """The files of ``old`` with ``nodes`` (ID: label, type, info) and ``edges`` (edge: record,
    confidence, time, sources, facets; None: gone) replaced, added or removed; a node stays
    while it has a type or an edge. The unchanged rows are copied and renumbered with numpy."""
    ix = old.index
    n, blank = ix.size, ix.type_names.index("")
    number = {e: edge_number(ix, e) for e in edges}
    gone = [i for e, i in number.items() if i is not None and edges[e] is None]
    redone = sorted((i, edges[e]) for e, i in number.items()
                    if i is not None and edges[e] is not None)
    added = sorted((e, v) for e, v in edges.items() if v is not None and number[e] is None)
    ends = {x for (s, _, o), _ in added for x in (s, o)}
    position = {x: ix.position(x) for x in nodes.keys() | ends}
    new_ids = sorted(x for x, i in position.items() if i is None)
    nodes = {**{x: (x, "", "") for x in new_ids}, **nodes}
    # the union of the old nodes and the new ones, in ID order
    at = np.array([bisect.bisect_left(ix.node_ids, x) for x in new_ids], dtype=np.int64)
    moved = np.arange(n)
    moved += _below(moved, at, True)
    where = {x: int(moved[i]) for x, i in position.items() if i is not None}
    where.update(zip(new_ids, (at + np.arange(len(at))).tolist()))
    size = n + len(new_ids)
    types = {name: i for i, name in enumerate(ix.type_names)}
    node_type = np.full(size, blank, dtype=np.int16)
    node_type[moved] = ix.node_type
    take = np.full(size, -1, dtype=np.int64)
    take[moved] = np.arange(n)
    for x, (_, ty, _) in nodes.items():
        node_type[where[x]], take[where[x]] = types[ty], -1
    # the added edges (union numbers); the nodes left without type or edge, which go: of
    # those the change leaves untyped, the ones whose edges all went
    codes = {name: i for i, name in enumerate(ix.edge_types)}
    add = np.array([(where[s], codes[p], where[o]) for (s, p, o), _ in added],
                   dtype=np.int64).reshape(-1, 3)
    cut = moved[np.concatenate([ix.src[gone], ix.dst[gone]]).astype(np.int64)]
    maybe = np.unique(np.concatenate([np.array(list(where.values()), dtype=np.int64), cut]))
    maybe = maybe[node_type[maybe] == blank]
    placed = at + np.arange(len(at))  # (the new nodes' union numbers)
    fresh = np.isin(maybe, placed)
    degree = np.zeros(len(maybe), dtype=np.int64)
    degree[~fresh] = ix.degree(maybe[~fresh] - np.searchsorted(placed, maybe[~fresh]))
    degree += np.bincount(np.concatenate([add[:, 0], add[:, 2]]), minlength=size)[maybe] \
        - np.bincount(cut, minlength=size)[maybe]
    alive = np.ones(size, dtype=bool)
    alive[maybe[degree == 0]] = False
    final = np.cumsum(alive) - 1
    count = int(alive.sum())
    # the edges kept, renumbered (as they were when no node came or went)
    cut_edges = np.array(sorted(gone), dtype=np.int64)
    kept = np.delete(np.arange(len(ix.src)), cut_edges) if gone else slice(None)  # (a view)
    src, dst, etype = ix.src[kept], ix.dst[kept], ix.etype[kept]
    if count != n or size != n:
        renumber = final[moved]
        src, dst = renumber[src], renumber[dst]
    add[:, 0], add[:, 2] = final[add[:, 0]], final[add[:, 2]]
    # the added edges' places among the kept ones (sorted by subject, type, object numbers)
    t = len(ix.edge_types)
    at_e = np.array([_place(src, etype, dst, count, *e) for e in add.tolist()], dtype=np.int64)
    slots = np.array([i for i, _ in redone], dtype=np.int64)
    slots -= np.searchsorted(cut_edges, slots)
    slots += np.searchsorted(at_e, slots, side="right")
    places = np.concatenate([slots, at_e + np.arange(len(at_e))])
    values = [v for _, v in redone] + [v for _, v in added]
    was = [i for i, _ in redone] + [-1] * len(added)  # the old edge each value replaces
    by_place = np.argsort(places)
    places, values = places[by_place], [values[k] for k in by_place]
    was = [was[k] for k in by_place]
    conf = np.insert(np.asarray(old.conf[kept], dtype=np.float64), at_e, 0.0)
    conf[places] = [v[1] for v in values]
    # the times' codes: past the new times (inserted), then without those no edge has now
    times = list(old.times)
    new_times = sorted({v[2] for v in values}.difference(times))
    shift = np.array([bisect.bisect_left(times, x) for x in new_times], dtype=np.int64)
    times = sorted(times + new_times)
    code = {x: i for i, x in enumerate(times)}
    recency = old.recency[kept]
    if len(shift):
        recency = recency + _below(recency, shift, True)
    recency = np.insert(recency, at_e, 0).astype(np.int32, copy=False)
    recency[places] = [code[v[2]] for v in values]
    used = np.bincount(recency, minlength=len(times)) > 0
    if not used.all():
        recency = (np.cumsum(used) - 1)[recency].astype(np.int32)
    order = [x for x in sorted(nodes, key=where.get) if alive[where[x]]]
    ntake = take[alive]
    out = {"node_type": node_type[alive],
           "src": np.insert(src, at_e, add[:, 0]).astype(np.int32, copy=False),
           "dst": np.insert(dst, at_e, add[:, 2]).astype(np.int32, copy=False),
           "etype": np.insert(etype, at_e, add[:, 1]).astype(np.int16, copy=False),
           "conf": conf, "recency": recency}
    known = [-1 if position.get(x) is None else position[x] for x in order]
    terms = list(old.terms)  # (new terms after the old ones)
    blob, ends = pack_facets([v[4] for v in values], terms)
    starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    for name, strings, items in (("ids", ix.node_ids, order),
                                 ("labels", old.labels, [nodes[x][0] for x in order])):
        out[f"{name}_blob"], out[f"{name}_ends"] = strings.splice(*_alike(
            strings, ntake, known, [x.encode() for x in items]))
    # the chunked columns: rows removed, replaced and inserted (before an old row)
    put = dict(zip(new_ids, at.tolist()))  # (a new node: before the old row after it)
    out.update(_edited(old.info, np.flatnonzero(~alive[moved]).tolist(),
                       [(position[x], nodes[x][2].encode()) for x in order if x not in put],
                       [(put[x], nodes[x][2].encode()) for x in order if x in put]
                       ).arrays("info"))
    before = [_kept_number(r, cut_edges) if r < len(src) else len(ix.src)
              for r in at_e.tolist()]
    inserted = iter(before)
    rows = [w if w >= 0 else -1 - next(inserted) for w in was]  # (-1 - r: put before row r)
    facets = [blob[a:b].tobytes() for a, b in zip(starts.tolist(), ends.tolist())]
    for name, strings, items in (("records", old.records, [v[0] for v in values]),
                                 ("sources", old.sources, [v[3] for v in values]),
                                 ("facets", old.facets, facets)):
        out.update(_edited(strings, gone, [(r, x) for r, x in zip(rows, items) if r >= 0],
                           [(-1 - r, x) for r, x in zip(rows, items) if r < 0]).arrays(name))
    out["times_blob"], out["times_ends"] = Strings.pack([x for x, u in zip(times, used) if u])
    out["terms_blob"], out["terms_ends"] = (old.terms.blob, old.terms.ends) \
        if len(terms) == len(old.terms) else Strings.pack(terms)
    # the lists: the old ones renumbered, the nodes the change touches ranked again
    nodes_map = np.where(alive[moved], final[moved], -1)

    def edges_map(e: np.ndarray) -> np.ndarray:  # old edge numbers -> new (-1: gone)
        out = np.array(e, dtype=np.int32)  # (the lists' type: no wider copies of them)
        if len(cut_edges):
            out -= _below(e, cut_edges)
        if len(at_e):
            out += _below(out, at_e, True)
        if len(cut_edges):
            out[np.isin(e, cut_edges)] = -1
        return out

    cut = nodes_map[np.concatenate([ix.src[gone], ix.dst[gone]]).astype(np.int64)]
    return with_lists(out, t, relisted(ix, count, out["src"], out["dst"], out["etype"], conf,
                                       out["recency"], at_e + np.arange(len(at_e)), slots,
                                       cut[cut >= 0], nodes_map, edges_map))


def _below(values: np.ndarray, points: np.ndarray, equal: bool = False) -> np.ndarray:
    """Per value, how many of the sorted ``points`` are below it (``equal``: or equal to it):
    ``np.searchsorted(points, values)``, but for a few points a comparison pass each, many
    times faster than a binary search per value over a whole column."""
    if len(points) > FEW_POINTS:
        return np.searchsorted(points, values, side="right" if equal else "left")
    out = np.zeros(len(values), dtype=np.int32)  # (no more than FEW_POINTS)
    for p in points.tolist():
        out += (values >= p) if equal else (values > p)
    return out


def _kept_number(r: int, cut: np.ndarray) -> int:
    """The old number of the ``r``-th edge kept when the edges ``cut`` (sorted) go."""
    for c in cut.tolist():
        if c > r:
            break
        r += 1
    return r


def _place(src: np.ndarray, etype: np.ndarray, dst: np.ndarray, count: int, s: int, p: int,
           o: int) -> int:
    """Where edge (``s``, ``p``, ``o``) goes among the edges ``src``, ``etype``, ``dst`` (sorted
    by subject, type, object numbers, of ``count`` nodes): binary searches, no pass over
    them."""
    lo, hi = (int(x) for x in np.searchsorted(src, np.array([s, s + 1], dtype=src.dtype)))
    # (keys of the column's type: none of it converted)
    keys = etype[lo:hi].astype(np.int64) * count + dst[lo:hi]
    return lo + int(np.searchsorted(keys, p * count + o))


def _edited(strings: ChunkedStrings, removed: list[int], replaced: list[tuple[int, bytes]],
            inserted: list[tuple[int, bytes]]) -> ChunkedStrings:
    """:meth:`~kgbuild.store.strings.ChunkedStrings.edited`, a row replaced by bytes equal to
    its own left as it is."""
    return strings.edited(removed, {i: x for i, x in replaced if strings.raw(i) != x}, inserted)


def _alike(strings: Strings, rows: np.ndarray, olds: list[int],
           items: list[bytes]) -> tuple[np.ndarray, list[bytes]]:
    """``rows`` (per new row its old item, or -1 for the next of ``items``) with each item
    that equals the old one it replaces (``olds``: per item, that old row or -1) taken from
    the old column instead, so that what did not change is copied in one piece, or not at
    all (:meth:`~kgbuild.store.strings.Strings.splice`)."""
    rows = np.array(rows, dtype=np.int64)
    fresh = []
    for r, o, x in zip(np.flatnonzero(rows < 0).tolist(), olds, items):
        if o >= 0 and strings.raw(o) == x:
            rows[r] = o
        else:
            fresh.append(x)
    return rows, fresh
