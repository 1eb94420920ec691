"""A graph's read model: what traversal, name seeds, browsing and serving read, as arrays.

A :class:`GraphModel` holds, for one graph (the store's, a principal's view of it, a graph
file's, any graph in memory):

* the node table: sorted IDs, labels, type codes, and per node a JSON record of its
  attributes, aliases, access labels and defining documents (``info``; empty for a node only
  known as an edge's end);
* the edges, sorted by subject, type and object, with the ranked adjacency lists of
  :mod:`kgbuild.store.adjacency`, and per edge a JSON record of its assertions (as traversal
  outputs them) and the passages they cite, its best confidence, the code of its latest time,
  the documents it comes from (8-byte name digests) and its assertions' filterable fields
  (``facets``: per assertion a :data:`FACET` row of confidence and the codes of its extractor,
  time and qualifier set in the ``terms`` column), so that a filter reads columns, not records;
* the names table of :mod:`kgbuild.resolve.nametable`: the resolver's index, one sorted
  column of strings, so that a name is resolved by binary searches.

Every column is a numpy array or a :class:`~kgbuild.store.strings.Strings` column (the
per-row ones, the largest: node rows, edge records, sources and facets, a
:class:`~kgbuild.store.strings.ChunkedStrings`, so that a change makes again only the chunks
of the rows it changed); saved, they are ``.npy`` files
opened memory-mapped (:mod:`kgbuild.store.modelfiles`), so a call reads the pages its walk or
lookup touches. A commit that changes a few values of the confidence, time-code or list
columns saves a patch beside the old file (``X_ppos``, ``X_pval``: positions and values),
applied when the model is opened (:func:`apply_patches`). :func:`graph_tables` makes the
tables of a :class:`~kgbuild.graph.model.KnowledgeGraph`; :meth:`GraphModel.of_graph` the
model in memory.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .adjacency import AdjacencyIndex, Csr, check_patch, code_names, csr_lists, directions
from .strings import ChunkedStrings, SortedStrings, Strings

if TYPE_CHECKING:  # (a walk by ID reads no graph in memory)
    from ..graph.model import KnowledgeGraph, Passage

FORMAT = 8  # bump when the files or the names table's rules change: older models are made again
_LISTS = ("indptr", "nbr", "eid", "rank")
PATCHED = ("conf", "recency", "nbr", "eid", "rank")  # columns a commit may patch (the lists')
PATCH = ("_ppos", "_pval")  # a patch of column X: files X_ppos and X_pval
# an assertion's filterable fields; extractor, time and qualifiers (a JSON list) coded in ``terms``
FACET = np.dtype([("conf", "<f8"), ("extractor", "<i4"), ("time", "<i4"), ("qualifiers", "<i4")])


def assertion_dict(a) -> dict:
    """An assertion as traversal outputs it (``passage``: the text chunk an LLM read it in)."""
    out = {"source": a.source, "location": a.location, "evidence": a.evidence,
           "extractor": a.extractor, "confidence": a.confidence, "generated_at": a.generated_at,
           "qualifiers": sorted(a.qualifiers)}
    if a.chunk:
        out["passage"] = a.chunk
    return out


@dataclass(frozen=True)
class NodeInfo:
    """A node as the read model has it (``defined_in``: the graph's documents defining it)."""

    id: str
    label: str
    type: str
    attributes: dict[str, list[str]]
    aliases: list[str]
    access: list[str]
    defined_in: list[str]

    @property
    def names(self) -> list[str]:
        """The names the resolver knows it by besides its label: aliases and titles."""
        return sorted({*self.aliases, *self.attributes.get("title", ())})


@dataclass
class Tables:
    """Everything a read model holds, as plain Python values (:func:`graph_tables`)."""

    meta: dict  # what it was made from; labelled graphs, untyped edge count
    documents: list[str]  # sorted: the graph's documents
    ids: list[str]  # sorted: nodes and edge endpoints
    labels: list[str]
    types: list[str]  # "" for nodes only known as edge endpoints
    info: list[str]  # JSON {"attributes", "aliases", "access", "docs"} or ""
    edges: list[tuple[str, str, str]]  # sorted
    records: list[bytes]  # JSON {"a": [[key, assertion]], "p": {passage: [text, doc, start, end]}}
    conf: list[float]  # per edge: its best assertion's confidence (-1: none)
    stamps: list[str]  # per edge: its latest assertion's time ("": none)
    sources: list[bytes]  # per edge: its assertions' documents (sorted 8-byte name digests)
    facets: list[list[tuple]]  # per edge: its assertions' (confidence, extractor, time, qualifiers)


def record_of(found: list, passages: dict) -> tuple[bytes, float, str, bytes, list[tuple]]:
    """An edge's record (``found``: ``[key, assertion dict]`` sorted by key), best confidence,
    latest time, sources and facets (:func:`facet_of`)."""
    return (json.dumps({"a": found, "p": passages}, sort_keys=True).encode(),
            max((a["confidence"] for _, a in found), default=-1.0),
            max((a["generated_at"] for _, a in found), default=""),
            b"".join(sorted({digest(a["source"]) for _, a in found})),
            [facet_of(a) for _, a in found])


def facet_of(a: dict) -> tuple[float, str, str, str]:
    """An assertion's filterable fields (``a`` as :func:`assertion_dict` gives it): confidence,
    extractor, time and its qualifiers as one JSON list."""
    return (a["confidence"], a["extractor"], a["generated_at"],
            json.dumps(a["qualifiers"], separators=(",", ":")))


def pack_facets(facets: Sequence[list[tuple]], terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per edge its facets as :data:`FACET` rows, packed like strings (one item per edge),
    coding every term in ``terms`` (new ones appended)."""
    code = {t: i for i, t in enumerate(terms)}

    def coded(t: str) -> int:
        if t not in code:
            code[t] = len(terms)
            terms.append(t)
        return code[t]

    rows = np.array([(c, coded(x), coded(t), coded(q)) for edge in facets for c, x, t, q in edge],
                    dtype=FACET)
    ends = np.cumsum([len(edge) for edge in facets], dtype=np.int64) * FACET.itemsize
    return rows.view(np.uint8).reshape(-1), ends


def sorted_terms(blob: np.ndarray, terms: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The facet rows ``blob`` (coded in ``terms``) recoded in the sorted terms they use, and
    those terms packed: equal graphs made from scratch give equal columns (``blob`` itself
    when its codes are those already). A commit's splice codes its new terms after these
    (:mod:`~kgbuild.store.splice`), so as not to recode every row."""
    rows = np.frombuffer(blob, dtype=FACET)
    fields = ("extractor", "time", "qualifiers")
    used = np.zeros(len(terms), dtype=bool)
    for f in fields:
        used[rows[f]] = True
    order = sorted(np.flatnonzero(used).tolist(), key=terms.__getitem__)
    if order == list(range(len(terms))):
        return (blob, *Strings.pack(terms))
    recode = np.zeros(len(terms), dtype=np.int32)
    recode[order] = np.arange(len(order), dtype=np.int32)
    rows = rows.copy()
    for f in fields:
        rows[f] = recode[rows[f]]
    return (rows.view(np.uint8).reshape(-1), *Strings.pack([terms[c] for c in order]))


@functools.lru_cache(maxsize=1 << 16)
def digest(document: str) -> bytes:
    """A document's name as an edge's sources hold it."""
    return hashlib.blake2b(document.encode(), digest_size=8).digest()


def cite(a, passages: dict, cited: dict) -> None:
    """Add the passage assertion ``a`` was read in (if any) to an edge record's ``cited``."""
    p = passages.get(a.chunk) if a.chunk else None
    if p is not None:
        cited[p.id] = [p.text, p.document, p.start, p.end]


def _graph_record(assertions, passages) -> tuple[bytes, float, str, bytes]:
    cited: dict = {}
    for a in assertions:
        cite(a, passages, cited)
    return record_of([[a.key, assertion_dict(a)] for a in assertions], cited)


def node_info(node, docs: set[str]) -> str:
    """A node's info record (``docs``: the graph's documents); "" for None."""
    if node is None:
        return ""
    return json.dumps({"attributes": {k: sorted(v) for k, v in node.attributes.items()},
                       "aliases": sorted(node.aliases), "access": sorted(node.access),
                       "docs": sorted(d for d in node.defined_in if d in docs)}, sort_keys=True)


def node_ids(kg: KnowledgeGraph, edges: dict) -> list[str]:
    """The index's node numbering: the IDs of the graph's nodes and edge endpoints, sorted."""
    return sorted(set(kg.nodes).union(*((s, o) for s, _, o in edges)))


def graph_tables(kg: KnowledgeGraph, meta: dict | None = None) -> Tables:
    """The tables of ``kg``; ``meta`` adds to what the graph says of itself (its documents and
    edges without assertions)."""
    edges = kg.edges()
    ids = node_ids(kg, edges)
    nodes, docs = kg.nodes, set(kg.documents)
    bare = record_of([], {})  # (an edge without assertions: a foreign graph's are all so)
    per_edge = [_graph_record(assertions, kg.passages) if assertions else bare
                for assertions in edges.values()]
    meta = {**(meta or {}), "format": FORMAT, "untyped": len(kg.untyped_edges)}
    return Tables(meta, sorted(docs), ids,
                  [nodes[i].label if i in nodes else i for i in ids],
                  [nodes[i].type if i in nodes else "" for i in ids],
                  [node_info(nodes.get(i), docs) for i in ids], list(edges),
                  *([list(x) for x in zip(*per_edge)] if per_edge else ([], [], [], [], [])))


def model_arrays(t: Tables, schema) -> dict[str, np.ndarray]:
    """The columns of tables ``t`` (the names table left to :func:`with_names`)."""
    type_names, edge_types = code_names(schema)
    tcode = {n: i for i, n in enumerate(type_names)}
    ecode = {n: i for i, n in enumerate(edge_types)}
    pos = {n: i for i, n in enumerate(t.ids)}
    m = len(t.edges)
    out = {"node_type": np.array([tcode[x] for x in t.types], dtype=np.int16),
           "src": np.fromiter((pos[s] for s, _, _ in t.edges), dtype=np.int32, count=m),
           "dst": np.fromiter((pos[o] for _, _, o in t.edges), dtype=np.int32, count=m),
           "etype": np.fromiter((ecode[p] for _, p, _ in t.edges), dtype=np.int16, count=m),
           "conf": np.asarray(t.conf, dtype=np.float64)}
    times, recency = np.unique(np.array(t.stamps, dtype=str), return_inverse=True)
    out["recency"] = recency.astype(np.int32)
    for name, items in (("docs", t.documents), ("ids", t.ids), ("labels", t.labels),
                        ("times", times.tolist())):
        out[f"{name}_blob"], out[f"{name}_ends"] = Strings.pack(items)
    for name, items in (("info", t.info), ("records", t.records), ("sources", t.sources)):
        out.update(ChunkedStrings.of(items).arrays(name))
    terms: list[str] = []
    blob, ends = pack_facets(t.facets, terms)
    blob, out["terms_blob"], out["terms_ends"] = sorted_terms(blob, terms)
    out.update(ChunkedStrings.packed(blob, ends).arrays("facets"))
    return with_lists(out, len(edge_types))


def with_lists(out: dict[str, np.ndarray], edge_types: int,
               lists: dict[tuple[int, int], Csr] | None = None) -> dict[str, np.ndarray]:
    """``out`` (the node and edge columns) with their adjacency lists: ``lists`` where the
    caller has them (:func:`~kgbuild.store.adjacency.relisted`), else ranked from the
    columns."""
    if lists is None:
        lists = csr_lists(len(out["node_type"]), edge_types, out["src"], out["dst"],
                          out["etype"], out["conf"], out["recency"])
    for (ty, d), c in lists.items():
        for name in _LISTS:
            out[f"l{ty}_{d}_{name}"] = getattr(c, name)
        for name, patch in c.patches.items():
            out.update(patch_files(f"l{ty}_{d}_{name}", patch))
    return out


def patch_files(name: str, patch: tuple[np.ndarray, np.ndarray] | None) -> dict:
    """The arrays a model saves ``patch`` of column ``name`` as (none for None)."""
    return {} if patch is None else dict(zip((f"{name}{x}" for x in PATCH), patch))


def patchable(name: str) -> bool:
    """Whether a model's column ``name`` may have a patch (:data:`PATCHED`)."""
    return name in ("conf", "recency") or (name.startswith("l") and name.count("_") == 2
                                           and name.rsplit("_", 1)[1] in PATCHED)


def apply_patches(arr: dict[str, np.ndarray]) -> None:
    """Apply each patch in ``arr`` to its column: in place when the column can be written (a
    copy-on-write mapping of its file, whose file stays as it was), else to a copy; raises
    ValueError when a patch does not fit its column."""
    for key in [k for k in arr if k.endswith(PATCH[0])]:
        name = key[:-len(PATCH[0])]
        column, pos, val = arr.get(name), arr[key], arr.get(name + PATCH[1])
        if not (patchable(name) and column is not None and val is not None):
            raise ValueError(f"a patch without its column {name!r}")
        check_patch(name, pos, val, column)
        if not column.flags.writeable:
            column = arr[name] = np.array(column)
        column[pos] = val


def patches(arr: dict[str, np.ndarray], name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The patches of the columns ``name`` + each of :data:`PATCHED` in ``arr``, by column."""
    return {k: (arr[f"{name}{k}{PATCH[0]}"], arr[f"{name}{k}{PATCH[1]}"]) for k in PATCHED
            if f"{name}{k}{PATCH[0]}" in arr}


def with_names(out: dict[str, np.ndarray], meta: dict, schema) -> tuple[dict, dict]:
    """``out`` and ``meta`` with the names table made from the node columns."""
    from ..resolve.nametable import name_table  # (a walk by ID needs no resolver)

    model = model_of(out, meta, schema)
    out = {**out}
    out["names_blob"], out["names_ends"] = Strings.pack(name_table(model.entities(), schema))
    return out, meta


def model_of(arr: dict[str, np.ndarray], meta: dict, schema, folder=None,
             checked: bool = False) -> GraphModel:
    """The model of columns ``arr``; raises ValueError when they do not fit together
    (``checked``: their values were found in range before, so only sizes are checked)."""
    def strings(name: str) -> Strings:
        return Strings(arr[f"{name}_blob"], arr[f"{name}_ends"])

    def chunked(name: str) -> ChunkedStrings:
        return ChunkedStrings.saved(arr, name, values=not checked)

    lists = {}
    for name in arr:
        if name.startswith("l") and name.endswith("_indptr"):
            ty, d = (int(x) for x in name[1:].split("_")[:2])
            if d not in (0, 1):
                raise ValueError(f"bad list name {name!r}")
            parts = [arr[f"l{ty}_{d}_{k}"] for k in _LISTS]
            lists[(ty, d)] = Csr(*parts, directions(len(parts[1]), d),
                                 patches(arr, f"l{ty}_{d}_"))
    index = AdjacencyIndex(strings("ids"), arr["node_type"], *code_names(schema), arr["src"],
                           arr["dst"], arr["etype"], lists, arr["conf"], arr["recency"],
                           patches(arr, ""))
    index.check(values=not checked)
    names = strings("names") if "names_blob" in arr else None
    model = GraphModel(folder, meta, schema, index, strings("labels"),
                       chunked("info"), chunked("records"),
                       strings("times"), arr["recency"], chunked("sources"),
                       arr["conf"], SortedStrings(arr["docs_blob"], arr["docs_ends"]),
                       chunked("facets"), strings("terms"), names)
    if not (len(model.labels) == len(model.info) == index.size
            and len(model.records) == len(model.recency) == len(model.sources) == len(model.conf)
            == len(model.facets) == len(index.src)
            and all(len(c.blob) % 8 == 0 for c in model.sources.chunks)
            and all(len(c.blob) % FACET.itemsize == 0 for c in model.facets.chunks)
            and (checked or int(model.recency.max(initial=-1)) < len(model.times))):
        raise ValueError("inconsistent read model tables")
    return model


@dataclass
class GraphModel:
    """One graph's read model, saved (``folder``) or in memory (see the module's text)."""

    folder: object  # a Path, or None in memory
    meta: dict
    schema: object
    index: AdjacencyIndex
    labels: Strings
    info: ChunkedStrings
    records: ChunkedStrings  # (a filtered model's: a KeptColumn)
    times: Strings  # the edges' distinct latest times, sorted
    recency: np.ndarray  # per edge: its latest time's position in ``times``
    sources: ChunkedStrings  # (a filtered model's: a KeptColumn)
    conf: np.ndarray
    documents: SortedStrings  # the graph's documents (``doc in documents``)
    facets: ChunkedStrings  # per edge: its assertions' FACET rows
    terms: Strings  # the facets' extractors, times and qualifier sets (JSON lists), by code
    # (made from scratch: sorted, each used; a commit adds its new ones after them)
    names: Strings | None = None  # (in memory: made on first use)

    @classmethod
    def of_graph(cls, kg: KnowledgeGraph, meta: dict | None = None) -> GraphModel:
        """The read model of ``kg``, in memory."""
        tables = graph_tables(kg, meta)
        return model_of(model_arrays(tables, kg.schema), tables.meta, kg.schema)

    @property
    def labelled(self) -> bool:
        """Whether anything in the graph carries an access label."""
        return bool(self.meta.get("labelled"))

    @property
    def view(self) -> str | None:
        """The label set this model is the view of (:func:`view_key`), or None."""
        return self.meta.get("view")

    def serves(self, principal) -> bool:
        """Whether this model is what ``principal`` may see: the unrestricted one, when they
        may see everything or nothing is labelled; a view, when they hold its labels."""
        if self.view is None:
            return principal.everyone or not self.labelled
        return not principal.everyone and self.view == view_key(principal)

    def facet_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Every assertion's :data:`FACET` row, and per edge how many it has; raises
        ValueError when the facet columns do not fit together."""
        chunks = self.facets.chunks
        if any(len(c.blob) % FACET.itemsize or (len(c.ends) and int(c.ends[-1]) != len(c.blob))
               for c in chunks):
            raise ValueError("inconsistent read model facets")
        rows = np.concatenate([np.zeros(0, FACET), *(np.asarray(c.blob).view(FACET)
                                                     for c in chunks)])
        counts = np.concatenate([np.zeros(0, np.int64), *(
            np.diff(np.asarray(c.ends, dtype=np.int64), prepend=0) for c in chunks)]
                                ) // FACET.itemsize
        codes = [rows[f] for f in ("extractor", "time", "qualifiers")]
        if int(counts.sum()) != len(rows) or (len(rows) and not (
                min(int(c.min()) for c in codes) >= 0
                and max(int(c.max()) for c in codes) < len(self.terms))):
            raise ValueError("inconsistent read model facets")
        return rows, counts

    def record(self, eid: int) -> dict:
        """Edge ``eid``'s assertions (``a``: ``[key, assertion]``) and cited passages (``p``)."""
        return json.loads(self.records.raw(eid))

    def passages(self, eid: int) -> dict[str, Passage]:
        """The passages edge ``eid``'s assertions were read in."""
        from ..graph.model import Passage

        return {pid: Passage(pid, doc, start, end, text)
                for pid, (text, doc, start, end) in self.record(eid)["p"].items()}

    def edge(self, eid: int) -> tuple[str, str, str]:
        """Edge ``eid`` as (subject, type, object)."""
        ix = self.index
        return (ix.node_ids[int(ix.src[eid])], ix.edge_types[int(ix.etype[eid])],
                ix.node_ids[int(ix.dst[eid])])

    def __contains__(self, node_id: str) -> bool:
        """Whether the graph has a node with this ID (an edge's end only is none)."""
        return self.brief(node_id) is not None

    def brief(self, node_id: str) -> tuple[str, str] | None:
        """A node's label and type (no JSON read), None when the graph has no such node."""
        ix = self.index
        pos = ix.position(node_id)
        if pos is None or self.info.empty(pos):
            return None
        return self.labels[pos], ix.type_names[ix.node_type[pos]]

    def node(self, node_id: str) -> NodeInfo | None:
        """The node with this ID, None when the graph has none (an edge's end only is none)."""
        pos = self.index.position(node_id)
        return None if pos is None else self.node_at(pos)

    def node_at(self, pos: int) -> NodeInfo | None:
        raw = self.info.raw(pos)
        if not raw:
            return None
        info = json.loads(raw)
        ix = self.index
        return NodeInfo(ix.node_ids[pos], self.labels[pos], ix.type_names[ix.node_type[pos]],
                        info["attributes"], info["aliases"], info["access"], info["docs"])

    def nodes(self):
        """Every node, in ID order (an edge's end only is none)."""
        ix = self.index
        typed = np.flatnonzero(ix.node_type != ix.type_names.index(""))
        return (self.node_at(int(p)) for p in typed)

    def entities(self):
        """``(ID, type, label, names)`` of every node, for the names table."""
        return ((n.id, n.type, n.label, n.names) for n in self.nodes())

    def entity(self, node_id: str) -> tuple[str, str, list[str]] | None:
        """``(type, label, names)`` of a node, for a resolver over the names table."""
        n = self.node(node_id)
        return None if n is None else (n.type, n.label, n.names)

    def resolver(self, registry=None):
        """A resolver over this graph's nodes (:func:`~kgbuild.resolve.nametable.
        table_resolver`): what ``Resolver.from_graph`` gives, reading what it looks up."""
        from ..resolve.nametable import name_table, table_resolver

        if self.names is None:
            self.names = Strings.of(name_table(self.entities(), self.schema))
        return table_resolver(self.schema, self.names, self.entity, registry)


def subgraph(model: GraphModel, edges: np.ndarray, conf: np.ndarray, times: list[str],
             recency: np.ndarray, keep) -> GraphModel:
    """``model`` in memory with only the edges numbered ``edges`` (ascending) and of their
    assertions only those ``keep(assertion dict)`` passes: per kept edge its best ``conf``
    and the code of its latest time in ``times`` (sorted) as ``recency``. A node left with
    neither a type nor an edge is dropped; the kept edges are ranked again. Records and sources
    are made from the unfiltered record when read (:class:`KeptColumn`); the names table is
    the same."""
    ix = model.index
    edges = np.asarray(edges, dtype=np.int64)
    src, dst = ix.src[edges], ix.dst[edges]
    alive = ix.node_type != ix.type_names.index("")
    alive[src] = alive[dst] = True
    kept = np.flatnonzero(alive)
    final = np.cumsum(alive) - 1
    out = {"node_type": np.asarray(ix.node_type[kept]),
           "src": final[src].astype(np.int32), "dst": final[dst].astype(np.int32),
           "etype": np.asarray(ix.etype[edges]), "conf": np.asarray(conf, dtype=np.float64),
           "recency": np.asarray(recency, dtype=np.int32)}
    columns = {}
    for name, column in (("ids", ix.node_ids), ("labels", model.labels)):
        columns[name] = Strings(*column.splice(kept, []))
    columns["info"] = model.info.splice(kept, [])
    out = with_lists(out, len(ix.edge_types))
    lists = {(ty, d): Csr(*(out[f"l{ty}_{d}_{k}"] for k in _LISTS),
                          directions(len(out[f"l{ty}_{d}_nbr"]), d))
             for ty, d in {tuple(int(x) for x in k[1:].split("_")[:2]) for k in out
                           if k.startswith("l") and k.endswith("_indptr")}}
    index = AdjacencyIndex(columns["ids"], out["node_type"], ix.type_names, ix.edge_types,
                           out["src"], out["dst"], out["etype"], lists, out["conf"],
                           out["recency"])
    index.check()
    empty = ChunkedStrings([Strings(np.zeros(0, np.uint8), np.zeros(len(edges), np.int64))])
    return GraphModel(None, model.meta, model.schema, index, columns["labels"], columns["info"],
                      KeptColumn(model, edges, keep), Strings.of(times), out["recency"],
                      KeptColumn(model, edges, keep, sources=True), out["conf"],
                      model.documents, empty, Strings.of([]), model.names)


class KeptColumn:
    """A filtered model's records (or ``sources``) column: edge i's of the assertions ``keep``
    passes, made from the unfiltered model's record of edge ``edges[i]`` when read."""

    def __init__(self, model: GraphModel, edges: np.ndarray, keep, sources: bool = False):
        self.model, self.edges, self.keep, self.sources = model, edges, keep, sources

    def __len__(self) -> int:
        return len(self.edges)

    def raw(self, i: int) -> bytes:
        rec = self.model.record(int(self.edges[i]))
        found = [x for x in rec["a"] if self.keep(x[1])]
        if self.sources:
            return b"".join(sorted({digest(a["source"]) for _, a in found}))
        cited = {a.get("passage") for _, a in found}
        return record_of(found, {k: v for k, v in rec["p"].items() if k in cited})[0]


def view_key(principal) -> str:
    """The name of the view of a principal's label set."""
    return hashlib.sha256("\n".join(sorted(principal.labels)).encode()).hexdigest()[:16]
