"""A full build's read model made from its quads in sorted runs, without the graph in memory.

The columns equal those of :func:`~kgbuild.store.readmodel.graph_tables` and
:func:`~kgbuild.store.readmodel.model_arrays` of the whole graph (tested on real catalogs):

1. :class:`QuadRuns` takes every quad a full build loads, as the plain values
   :func:`~kgbuild.graph.rdf.from_quads` reads, and sorts them by subject in runs of
   :data:`RUN` spilled to disk (the documents' own subjects first);
2. :func:`sorted_model` reads the merged runs a batch of subjects at a time through
   :func:`~kgbuild.graph.rdf.from_quads` itself (an assertion's passage looked up in the
   database): each node's row of the node table, and each edge assertion, and each edge
   triple between nodes, handed to a second external sort by edge and key;
3. the merged edges, one edge at a time, make its record and the edge columns, the largest
   blobs written to ``.npy`` files as they grow (the records' a file per chunk).

Memory then holds a run, a batch, the node table and a few numbers per edge, not the
estate's triples or records. Where a store holds what needs the whole graph to read (a
catch-all type, inverse-named triples, blank or re-identified nodes, several values of a
one-valued field, one key for two assertions) None is returned: the caller makes the model
from the whole graph.
"""

from __future__ import annotations

import heapq
import io
import itertools
import marshal
import tempfile
from array import array
from operator import itemgetter
from pathlib import Path

import numpy as np
import pyoxigraph as ox

from ..graph.model import (
    DECLARED_TYPE,
    MENTION_LABEL,
    doc_from_iri,
    id_from_iri,
    parse_literal,
)
from ..graph.rdf import from_quads
from ..vocab import (
    ASSERTION_BASE,
    CATCH_ALL,
    DCTERMS,
    KG,
    MANIFEST_GRAPH,
    PASSAGE_BASE,
    RDF,
    RDFS,
    SKOS,
    SOURCE_BASE,
)
from .adjacency import code_names
from . import strings
from .readmodel import (
    FORMAT,
    assertion_dict,
    node_info,
    pack_facets,
    record_of,
    sorted_terms,
    with_lists,
    with_names,
)
from .reads import quad_row
from .strings import ChunkedStrings, Strings, chunk_key

RUN = 500_000  # quads sorted in memory before a run is spilled
EDGE_RUN = 200_000  # edge items (an assertion's about 0.5 KB) likewise
BATCH = 50_000  # quads read through one from_quads call
_TYPE = RDF + "type"
_A = f"<{_TYPE}>"
# the fields from_quads keeps every value of (the others: one, the last it reads)
_MANY = frozenset({KG + "accessLabel", KG + "qualifier", _TYPE, RDFS + "label",
                   DCTERMS + "identifier", SKOS + "altLabel", KG + "declaredLabel"})
_UNREAD = frozenset({DECLARED_TYPE, MENTION_LABEL})  # (claims from_quads does not read)
_CHUNK = KG + "chunk"
_ASSERTION = KG + "Assertion"
_SOURCE = KG + "SourceDocument"
_KEY = itemgetter(0, 1, 2, 3)
_FIRST = itemgetter(0)
_SOURCE_TERM = f"<{SOURCE_BASE}"


class _Inexact(Exception):
    """The store holds something only the whole graph reads exactly."""


class QuadRuns:
    """A full build's quads sorted by subject (a document's own subject first, and of it
    only its type), in runs of :data:`RUN` spilled to unnamed files in ``folder``, each
    run's quads grouped by subject."""

    def __init__(self, folder: Path):
        self.folder, self.items, self.runs = folder, [], []
        self.preds: dict[str, str] = {}  # (one string per predicate)

    def add(self, triples: list, g: str) -> None:
        """The ``triples`` (N-Triples terms) of graph ``g``."""
        items, preds = self.items, self.preds
        for s, p, o in triples:
            if p in _UNREAD:
                continue
            if s.startswith(_SOURCE_TERM):
                if p != _A:
                    continue
                key = "0" + s[1:-1]
            else:
                key = "1" + (s[1:-1] if s[0] == "<" else s)  # (an IRI, or a blank node)
            pred = preds.get(p) or preds.setdefault(p, p[1:-1])
            items.append((key, pred, o[1:-1] if o[0] == "<" else _term_value(o), g))
        if len(items) >= RUN:
            self.runs.append(_spill(_grouped(items), self.folder, 250))  # (about 3k quads)
            self.items = []

    def subjects(self):
        """``(subject, rows)`` in subject order, rows as from_quads reads them."""
        merged = heapq.merge(_grouped(self.items), *(_read(fh) for fh in self.runs),
                             key=_FIRST)
        self.items = []
        for key, groups in itertools.groupby(merged, key=_FIRST):
            _, rows = next(groups)
            for _, more in groups:  # (a subject of several runs)
                rows = rows + more
            yield key[1:], rows

    def close(self) -> None:
        for fh in self.runs:
            fh.close()
        self.runs, self.items = [], []


def store_runs(store, folder: Path) -> QuadRuns:
    """Every quad of a saved store but its manifest's, in the database's order, as a full
    build hands them to :class:`QuadRuns`: what a read model is made from when no build's
    runs are at hand, in memory bounded by the runs, not by the store."""
    runs = QuadRuns(folder)
    batch: list = []
    graph = None
    for q in store._db.quads_for_pattern(None, None, None, None):
        g = q.graph_name
        if not isinstance(g, ox.NamedNode) or g.value == MANIFEST_GRAPH:
            continue
        if g.value != graph or len(batch) >= BATCH:
            if batch:
                runs.add(batch, graph)
            batch, graph = [], g.value
        batch.append((str(q.subject), str(q.predicate), str(q.object)))
    if batch:
        runs.add(batch, graph)
    return runs


def _grouped(items: list) -> list:
    """``(key, p, o, g)`` items sorted by key, as ``(key, [(s, p, o, g), ...])`` (``s``: the
    key's subject, one string, which marshal writes once)."""
    items.sort(key=_FIRST)
    out = []
    for key, group in itertools.groupby(items, key=_FIRST):
        s = key[1:]
        out.append((key, [(s, p, o, g) for _, p, o, g in group]))
    return out


def _term_value(term: str) -> str:
    """An N-Triples term's plain value, as :func:`~kgbuild.store.reads.quad_row` reads it
    back from the database (an IRI's or literal's ``.value``, a blank node as ``_:label``)."""
    if term[0] == "<":
        return term[1:-1]
    if term[0] == '"':
        if "\\" not in term:
            return term[1:term.rindex('"')]
        return parse_literal(term)[0]
    return term  # a blank node: _:label


def _spill(items: list, folder: Path, size: int):
    """Sorted ``items`` marshalled ``size`` at a time to an unnamed file (left at its start):
    a merge holds one such chunk of each run."""
    fh = tempfile.TemporaryFile(dir=folder)
    for chunk in _batches(items, size):
        data = marshal.dumps(chunk)
        fh.write(len(data).to_bytes(8, "little"))
        fh.write(data)
    fh.seek(0)
    return fh


def _read(fh):
    """The items :func:`_spill` wrote, in order."""
    while size := int.from_bytes(fh.read(8), "little"):
        yield from marshal.loads(fh.read(size))


def sorted_model(store, quads: QuadRuns, scratch: Path, meta: dict) -> tuple[dict, dict] | None:
    """The columns and metadata of ``store``'s whole graph from the full build's ``quads``
    (``meta`` added to the metadata), its largest blobs written as ``.npy`` files in folder
    ``scratch`` (their arrays are those files mapped); None where only the whole graph
    gives it exactly."""
    schema = store.schema
    if CATCH_ALL in schema.type_by_iri:
        return None
    db = store._db
    for e in schema.edge_types.values():
        if e.inverse_iri and next(iter(db.quads_for_pattern(
                None, ox.NamedNode(e.inverse_iri), None, None)), None) is not None:
            return None
    try:
        with _Sorter(scratch) as edges:
            nodes = _Nodes(schema)
            batch, size = [], 0
            for subject, rows in quads.subjects():
                if subject.startswith(SOURCE_BASE):  # (all before the first node)
                    types = {o for _, _, o, _ in rows}
                    if len(types) > 1:
                        raise _Inexact
                    if types == {_SOURCE}:
                        nodes.docs.add(doc_from_iri(subject))
                elif not subject.startswith(PASSAGE_BASE):  # (read with their assertions)
                    batch.append((subject, rows))
                    size += len(rows)
                    if size >= BATCH:
                        nodes.read(db, batch, edges)
                        batch, size = [], 0
            nodes.read(db, batch, edges)
            node_cols, pos = nodes.columns()
            edge_cols, untyped = _edges(edges.merged(), pos, nodes.iris, schema, scratch)
    except _Inexact:
        return None
    meta = {**meta, "format": FORMAT, "untyped": untyped}
    out = {**node_cols, **edge_cols}
    out["docs_blob"], out["docs_ends"] = Strings.pack(sorted(nodes.docs))
    return with_names(with_lists(out, len(code_names(schema)[1])), meta, schema)


class _Nodes:
    """The node table as batches of subjects are read, and the edge ends seen."""

    def __init__(self, schema):
        self.schema, self.docs = schema, set()
        self.iris: set[str] = set()
        self.rows: list[tuple[str, str, int, str]] = []  # ID, label, type code, info
        self.ends: set[str] = set()
        self.tcode = {n: i for i, n in enumerate(code_names(schema)[0])}

    def read(self, db, batch: list, edges: _Sorter) -> None:
        """Read ``batch`` (subject, its rows) through from_quads: its nodes' rows, its edge
        assertions and edge triples handed to ``edges``."""
        types, preds = self.schema.type_by_iri, self.schema.edge_by_iri
        rows, expected, cited = [], [], set()
        for subject, about in batch:
            typed = {o for _, p, o, _ in about if p == _TYPE}
            if subject.startswith(ASSERTION_BASE) or _ASSERTION in typed:
                if typed & types.keys() and not subject.startswith(ASSERTION_BASE):
                    raise _Inexact  # (typed as a node and as an assertion)
                _single(about)
                cited.update(o for _, p, o, _ in about
                             if p == _CHUNK and o.startswith(PASSAGE_BASE))
            elif typed & types.keys():
                if subject.startswith("_:"):
                    raise _Inexact
                expected.append(subject)
            rows += about
        for iri in sorted(cited):  # (from the database: the runs have them elsewhere)
            about = [quad_row(q) for q in db.quads_for_pattern(ox.NamedNode(iri), None, None,
                                                                None)]
            _single(about)
            rows += about
        kg = from_quads(rows, self.schema)
        if len(kg.nodes) != len(expected):
            raise _Inexact
        docs = self.docs
        for iri in expected:
            node = kg.nodes.get(id_from_iri(iri))
            if node is None:
                raise _Inexact  # (re-identified)
            self.iris.add(iri)
            self.rows.append((node.id, node.label, self.tcode[node.type], node_info(node, docs)))
        known = set(expected)
        for s, p, o, _ in rows:
            if p in preds and s in known:
                edges.add((id_from_iri(s), preds[p], id_from_iri(o), "", o.encode()))
        for a in kg.assertions.values():
            self.ends.update((a.subject, a.object))
            p = kg.passages.get(a.chunk) if a.chunk else None
            cited = None if p is None else (p.id, [p.text, p.document, p.start, p.end])
            edges.add((a.subject, a.predicate, a.object, a.key,
                       marshal.dumps((assertion_dict(a), cited))))

    def columns(self) -> tuple[dict, dict[str, int]]:
        """The node columns (the nodes and the edge ends that are none, by ID) and each
        one's position."""
        self.rows.sort()
        ids = [r[0] for r in self.rows]
        if len(set(ids)) != len(ids):
            raise _Inexact
        known = set(ids)
        blank = self.tcode[""]
        rows = heapq.merge(self.rows, ((x, x, blank, "") for x in sorted(self.ends - known)))
        ids, labels, types, info = (list(c) for c in zip(*rows)) if self.rows or self.ends \
            else ([], [], [], [])
        out = {"node_type": np.array(types, dtype=np.int16)}
        for name, items in (("ids", ids), ("labels", labels)):
            out[f"{name}_blob"], out[f"{name}_ends"] = Strings.pack(items)
        out.update(ChunkedStrings.of(info).arrays("info"))
        return out, {x: i for i, x in enumerate(ids)}


def _single(rows: list) -> None:
    """Raise where a one-valued field of a subject has several values (the whole graph
    would keep the last in its own order)."""
    single = {(p, o) for _, p, o, _ in rows if p not in _MANY}
    if len({p for p, _ in single}) != len(single):
        raise _Inexact


def _batches(items, size: int = BATCH):
    it = iter(items)
    while batch := list(itertools.islice(it, size)):
        yield batch


def _edges(items, pos: dict[str, int], nodes: set[str], schema, scratch: Path
           ) -> tuple[dict, int]:
    """The edge columns from the sorted items of :meth:`_Nodes.read`, one edge at a time
    (an edge triple only when its object is one of the ``nodes``); and how many edges have
    no assertion."""
    ecode = {n: i for i, n in enumerate(code_names(schema)[1])}
    src, dst, etype, conf, recency = (array("i"), array("i"), array("h"), array("d"),
                                      array("i"))
    times: dict[str, int] = {}
    records, sources = _Chunks(scratch, "records"), _Chunks(scratch, "sources")
    terms: list[str] = []
    facet_blobs, facet_ends, pending, offset = [], [], [], 0
    untyped = 0
    for (s, p, o), group in itertools.groupby(items, key=itemgetter(0, 1, 2)):
        found, cited, keys, direct = [], {}, set(), False
        for _, _, _, key, data in group:
            if not key:  # an edge triple: data is its object's IRI
                direct = direct or data.decode() in nodes
                continue
            if key in keys:
                raise _Inexact  # (one key, two assertions: the whole graph keeps one)
            keys.add(key)
            a, passage = marshal.loads(data)
            found.append([key, a])
            if passage is not None:
                cited[passage[0]] = passage[1]
        if not (found or direct):
            continue
        untyped += not found
        record, best, latest, cites, facets = record_of(found, cited)
        src.append(pos[s]), dst.append(pos[o]), etype.append(ecode[p]), conf.append(best)
        recency.append(times.setdefault(latest, len(times)))
        records.add(record), sources.add(cites)
        pending.append(facets)
        if len(pending) >= EDGE_RUN:
            offset = _pack(pending, terms, facet_blobs, facet_ends, offset)
    _pack(pending, terms, facet_blobs, facet_ends, offset)
    order = sorted(times)
    recode = np.zeros(len(order), dtype=np.int32)
    recode[[times[t] for t in order]] = np.arange(len(order), dtype=np.int32)
    out = {"src": np.frombuffer(src, dtype=np.int32).copy(),
           "dst": np.frombuffer(dst, dtype=np.int32).copy(),
           "etype": np.frombuffer(etype, dtype=np.int16).copy(),
           "conf": np.frombuffer(conf, dtype=np.float64).copy(),
           "recency": recode[np.frombuffer(recency, dtype=np.int32)]}
    out.update(records.finish())
    out["times_blob"], out["times_ends"] = Strings.pack(order)
    out.update(sources.finish())
    blob = np.concatenate([np.zeros(0, np.uint8), *facet_blobs])
    blob, out["terms_blob"], out["terms_ends"] = sorted_terms(blob, terms)
    out.update(ChunkedStrings.packed(
        blob, np.concatenate([np.zeros(0, np.int64), *facet_ends])).arrays("facets"))
    return out, untyped


def _pack(pending: list, terms: list[str], blobs: list, ends: list, offset: int) -> int:
    """Pack the ``pending`` edges' facets (coded in ``terms``), appended to ``blobs`` and
    ``ends`` (offset by ``offset`` bytes); returns the new offset."""
    blob, end = pack_facets(pending, terms)
    blobs.append(blob), ends.append(end + offset)
    pending.clear()
    return offset + len(blob)


class _Blob:
    """A column's bytes written to a ``.npy`` file of one dimension as they come (its header
    written last: its length does not depend on the count), and each item's end."""

    def __init__(self, path: Path):
        self.path, self.ends, self.size = path, array("q"), 0
        self.fh = path.open("wb")
        self.fh.write(self._header(0))

    @staticmethod
    def _header(n: int) -> bytes:
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            buf, {"descr": np.lib.format.dtype_to_descr(np.dtype(np.uint8)),
                  "fortran_order": False, "shape": (n,)})
        return buf.getvalue()

    def add(self, data: bytes) -> None:
        self.fh.write(data)
        self.size += len(data)
        self.ends.append(self.size)

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """The blob (the file mapped; empty: in memory) and the ends."""
        ends = np.frombuffer(self.ends, dtype=np.int64).copy()
        header = self._header(self.size)
        if len(header) != len(self._header(0)):  # (numpy's header keeps room for the count)
            raise _Inexact
        self.fh.seek(0)
        self.fh.write(header)
        self.fh.close()
        if not self.size:  # (nothing to map)
            return np.zeros(0, dtype=np.uint8), ends
        return np.load(self.path, mmap_mode="r").view(np.ndarray), ends


class _Chunks:
    """A :class:`~kgbuild.store.strings.ChunkedStrings` column written as it comes, chunk by
    chunk (each a :class:`_Blob` file of ``folder``, named as the model names it), as
    :meth:`~kgbuild.store.strings.ChunkedStrings.of` chunks it."""

    def __init__(self, folder: Path, name: str):
        self.folder, self.name, self.done, self.blob = folder, name, [], None

    def add(self, data: bytes) -> None:
        if self.blob is None:
            self.blob = _Blob(self.folder / f"{chunk_key(self.name, len(self.done))}_blob.npy")
        self.blob.add(data)
        if self.blob.size >= strings.CHUNK:
            self.done.append(Strings(*self.blob.finish()))
            self.blob = None

    def finish(self) -> dict[str, np.ndarray]:
        """The column's arrays (its chunks' blobs the files mapped)."""
        if self.blob is not None:
            self.done.append(Strings(*self.blob.finish()))
        return ChunkedStrings(self.done or [Strings(*Strings.pack([]))]).arrays(self.name)


class _Sorter:
    """An external sort of tuples by their first four fields: runs of :data:`EDGE_RUN`
    sorted in memory and spilled to unnamed files in a folder, merged when read."""

    def __init__(self, folder: Path):
        self.folder, self.items, self.runs = folder, [], []

    def __enter__(self) -> _Sorter:
        return self

    def __exit__(self, *exc) -> None:
        for fh in self.runs:
            fh.close()

    def add(self, item: tuple) -> None:
        self.items.append(item)
        if len(self.items) >= EDGE_RUN:
            self.items.sort(key=_KEY)
            self.runs.append(_spill(self.items, self.folder, 2000))
            self.items = []

    def merged(self):
        """Every item added, sorted."""
        self.items.sort(key=_KEY)
        return heapq.merge(self.items, *(_read(fh) for fh in self.runs), key=_KEY)
