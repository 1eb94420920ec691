"""Writing the store, mixed into :class:`~kgbuild.store.graphstore.GraphStore`: an update of
some documents as one transaction, a full rebuild into a fresh database, each node's type and
label resolved from its claims, the counts kept current from each change's delta."""

from __future__ import annotations

import json
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pyoxigraph as ox

from ..errors import KgbuildError, Problem
from ..graph.model import (
    CLAIMS,
    A,
    Triple,
    doc_from_iri,
    id_from_iri,
    iri_value,
    lit,
    node_triples,
    resolve_node,
    source_iri,
)
from ..schema.model import Schema
from ..vocab import KG, NODES_GRAPH
from .fullbuild import FullBuild
from .guard import Guarded
from .manifest import (
    COUNTS,
    GENERATION,
    MANIFEST,
    MANIFEST_GRAPH,
    NODES_MARK,
    PROBLEM,
    SETTINGS,
    STORE_ID,
    DocumentState,
    counts_triple,
    generation_triple,
    json_triple,
    manifest_triples,
    shard,
    shard_iri,
)
from .reads import nt
from .splice import MAX_CHANGED
from .storemodel import Change, refresh_model

ASSERTION_TYPE = f"<{KG}Assertion>"


@dataclass
class DocumentUpdate:
    """The new content of one document's graph."""

    triples: list[Triple]
    problems: list[Problem] = field(default_factory=list)
    follows: list[str] = field(default_factory=list)  # absolute paths of followed files
    depends: dict[str, str] = field(default_factory=dict)  # absolute path -> content fingerprint
    stat: str = ""
    sha256: str = ""
    source: tuple[str, str, str] = ("", "", "")  # path, scanned root, ID base (absolute)
    extractor: str = ""
    labels: list[str] = field(default_factory=list)

    def state(self) -> DocumentState:
        return DocumentState(self.sha256, self.stat, sorted(set(self.follows)),
                             dict(sorted(self.depends.items())), *self.source, self.extractor,
                             sorted(self.labels))


class StoreWrites:
    """Changes to a store's documents, each committed whole or not at all."""

    schema: Schema
    path: Path | None
    _db: Guarded
    _damage: str | None
    _current_name: str | None

    def apply(self, changes: dict[str, DocumentUpdate | None],
              states: dict[str, DocumentState] | None = None,
              settings: dict | None = None, *,
              indexing: Callable[[], None] | None = None, whole: bool = True) -> list[Problem]:
        """Replace (or, for ``None``, delete) documents' graphs in one transaction, then bring
        the read model to the new revision (``indexing()`` is called when that starts).

        Nodes claimed by the old or new content of a changed document are re-resolved against
        every other document's claims; a node nobody claims any more disappears. ``states``
        is :meth:`document_states` when the caller already read it (it is updated in place);
        ``whole=False``: only the states of the changed documents' shards
        (``document_states(shards)``), which is all a commit rewrites.
        """
        if self._damage is None:
            revision = self.revision()
            merge = self.path is not None and len(changes) <= MAX_CHANGED  # (else made whole)
            used = self._used_iris(changes) if merge else set()
            problems = self._apply(changes, states, settings, whole)
            if self._damage is None:
                refresh_model(self, Change(revision, sorted(changes), used), indexing)
                return problems
        # a full rebuild found the database damaged: what can be kept is what was given
        return self.replace_all({d: u for d, u in changes.items() if u is not None}, settings,
                                indexing=indexing)

    def _used_iris(self, changes: dict[str, DocumentUpdate | None]) -> set[str]:
        """The IRIs the changed documents' graphs use as subject or object now, and their new
        content (classes and the schema's own IRIs left out): the nodes the read model
        re-reads after the change."""
        schema = self.schema
        own = {*schema.type_by_iri, *schema.edge_by_iri, *(a.iri for a in schema.attributes.values()),
               *(e.inverse_iri for e in schema.edge_types.values() if e.inverse_iri)}
        found = {x[1:-1] for upd in changes.values() if upd is not None
                 for s, p, o in upd.triples for x in ((s, o) if p != A else (s,))
                 if x.startswith("<")}
        for doc in changes:
            for q in self._db.quads_for_pattern(None, None, None, ox.NamedNode(source_iri(doc))):
                if isinstance(q.subject, ox.NamedNode):
                    found.add(q.subject.value)
                if isinstance(q.object, ox.NamedNode) and q.predicate.value != A[1:-1]:
                    found.add(q.object.value)
        return found - own

    def _apply(self, changes: dict[str, DocumentUpdate | None],
               states: dict[str, DocumentState] | None, settings: dict | None,
               whole: bool = True) -> list[Problem]:
        if not changes and (settings is None or settings == self.settings()):
            return []
        changed_graphs = {source_iri(d) for d in changes}
        affected: set[str] = set()
        for g in changed_graphs:
            for pred in CLAIMS:
                for q in self._db.quads_for_pattern(None, ox.NamedNode(pred[1:-1]), None, ox.NamedNode(g)):
                    affected.add(nt(q.subject))
        new_claims: dict[str, list[tuple[str, str, str]]] = {}
        for doc_id, upd in changes.items():
            if upd is None:
                continue
            g = source_iri(doc_id)
            for s, p, o in upd.triples:
                if p in CLAIMS:
                    affected.add(s)
                    new_claims.setdefault(s, []).append((g, p, o))
        problems: list[Problem] = []
        delete_nodes, insert_nodes = [], []
        for s in sorted(affected):
            claims = list(new_claims.get(s, []))
            subject = ox.NamedNode(s[1:-1])
            for pred in CLAIMS:
                for q in self._db.quads_for_pattern(subject, ox.NamedNode(pred[1:-1]), None, None):
                    if q.graph_name.value not in changed_graphs:
                        claims.append((q.graph_name.value, pred, nt(q.object)))
            node_id = id_from_iri(iri_value(s))
            resolved = self._resolve(node_id, claims, problems)
            delete_nodes.extend(f"{s} {nt(q.predicate)} {nt(q.object)} ." for q in
                                self._db.quads_for_pattern(subject, None, None, ox.NamedNode(NODES_GRAPH)))
            if resolved is not None:
                insert_nodes.extend(f"{a} {b} {c} ." for a, b, c in
                                    node_triples(node_id, resolved[0], resolved[1], self.schema))
        states = self.document_states() if states is None else states
        for doc_id, upd in changes.items():
            if upd is None:
                states.pop(doc_id, None)
            else:
                states[doc_id] = upd.state()
        counts = self._updated_counts(changes, changed_graphs, delete_nodes, insert_nodes)
        shards = sorted({shard(d) for d in changes})
        parts = [f"DROP SILENT GRAPH <{g}>" for g in sorted(changed_graphs)]
        nodes_changed = _differ(delete_nodes, insert_nodes)
        meta_preds = [COUNTS, GENERATION] + ([SETTINGS] if settings is not None else []) + (
            [NODES_MARK] if nodes_changed else [])
        for subject, pred in [(shard_iri(n), MANIFEST) for n in shards] + [
                (MANIFEST_GRAPH, p) for p in meta_preds]:
            parts.append(f"DELETE WHERE {{ GRAPH <{MANIFEST_GRAPH}> {{ <{subject}> {pred} ?v }} }}")
        if delete_nodes:
            parts.append(f"DELETE DATA {{ GRAPH <{NODES_GRAPH}> {{\n" + "\n".join(delete_nodes) + "\n} }")
        meta = [*manifest_triples(states, set(shards)), counts_triple(counts),
                generation_triple(self.generation())]
        if settings is not None:
            meta.append(json_triple(SETTINGS, settings))
        if nodes_changed:
            meta.append(json_triple(NODES_MARK, uuid.uuid4().hex))
        new_id = uuid.uuid4().hex if self._manifest_value(STORE_ID) is None else None
        if new_id:
            meta.append(json_triple(STORE_ID, new_id))
        inserts = [f"GRAPH <{MANIFEST_GRAPH}> {{\n" + "\n".join(meta) + "\n}"]
        for doc_id, upd in sorted(changes.items()):
            if upd is not None:
                inserts.append(f"GRAPH <{source_iri(doc_id)}> {{\n" +
                               "\n".join(f"{s} {p} {o} ." for s, p, o in with_meta(doc_id, upd)) + "\n}")
        if insert_nodes:
            inserts.append(f"GRAPH <{NODES_GRAPH}> {{\n" + "\n".join(insert_nodes) + "\n}")
        parts.append("INSERT DATA {\n" + "\n".join(inserts) + "\n}")
        previous = self.revision()
        self._db.update(" ;\n".join(parts))
        if self._damage is None:
            self.cache_states(self.revision(), states, changes, previous, whole=whole)
        if new_id and self.path is not None and self._current_name and self._damage is None:
            try:
                self._record_identity(self._current_name, new_id)
            except OSError as exc:
                raise self._translate(exc, writing=True) from None
        return problems

    def _updated_counts(self, changes: dict[str, DocumentUpdate | None], changed_graphs: set[str],
                        delete_nodes: list[str], insert_nodes: list[str]) -> dict:
        """:meth:`counts` after the change, from its delta: an edge or assertion counts while
        any graph holds it, so only the changed documents' items are looked up elsewhere."""
        counts = self.counts()
        by_iri = self.schema.type_by_iri
        edge_names = _edge_terms(self.schema)
        a = f"{A} <"
        for line, sign in [(x, -1) for x in delete_nodes] + [(x, 1) for x in insert_nodes]:
            if a in line:  # "<node> rdf:type <class> ." of the nodes graph
                name = by_iri.get(line.rsplit(" ", 2)[-2][1:-1])
                if name:
                    counts["nodes"][name] = counts["nodes"].get(name, 0) + sign
        old_items: set[tuple[str, str, str]] = set()
        for g in changed_graphs:
            graph = ox.NamedNode(g)
            for iri in edge_names:
                for q in self._db.quads_for_pattern(None, ox.NamedNode(iri[1:-1]), None, graph):
                    old_items.add((nt(q.subject), iri, nt(q.object)))
            for q in self._db.quads_for_pattern(None, ox.NamedNode(A[1:-1]),
                                                ox.NamedNode(ASSERTION_TYPE[1:-1]), graph):
                old_items.add((nt(q.subject), A, ASSERTION_TYPE))
        new_items = {(s_, p, o) for upd in changes.values() if upd is not None
                     for s_, p, o in upd.triples if p in edge_names or (p == A and o == ASSERTION_TYPE)}
        for item in old_items ^ new_items:
            s_, p, o = item
            elsewhere = any(q.graph_name.value not in changed_graphs for q in self._db.quads_for_pattern(
                ox.NamedNode(s_[1:-1]), ox.NamedNode(p[1:-1]), ox.NamedNode(o[1:-1]), None))
            if elsewhere:
                continue
            sign = 1 if item in new_items else -1
            if p in edge_names:
                counts["edges"][edge_names[p]] = counts["edges"].get(edge_names[p], 0) + sign
            else:
                counts["assertions"] += sign
        for key in ("nodes", "edges"):
            counts[key] = {k: v for k, v in sorted(counts[key].items()) if v}
        return counts

    def _resolve(self, node_id: str, claims: list[tuple[str, str, str]],
                 problems: list[Problem]) -> tuple[str, str] | None:
        """Type and label of a node from its claims; a conflict is reported, not fatal."""
        try:
            return resolve_node(node_id, claims, self.schema)
        except KgbuildError as exc:
            by_iri = self.schema.type_by_iri
            typed = sorted({(doc_from_iri(g), by_iri[iri_value(o)]) for g, p, o in claims if p in CLAIMS
                            and o.startswith("<")})
            where = "; ".join(f"{doc} says {t}" for doc, t in typed)
            problems.append(Problem("error", "node-conflict", f"{exc.message} ({where}); the most "
                                    f"specific type of the first document is kept", typed[0][0] if typed else "(store)"))
            return _first_claim(claims, self.schema)

    def replace_all(self, documents: dict[str, DocumentUpdate],
                    settings: dict | None = None, *,
                    indexing: Callable[[], None] | None = None,
                    index: bool = True) -> list[Problem]:
        """A full rebuild: the store afterwards holds exactly ``documents`` (see
        :meth:`full_build`, which takes them one at a time)."""
        with self.full_build(settings, indexing=indexing, index=index) as build:
            for doc_id, upd in sorted(documents.items()):
                build.add(doc_id, upd)
        return build.problems

    @contextmanager
    def full_build(self, settings: dict | None = None, *,
                   indexing: Callable[[], None] | None = None,
                   index: bool = True) -> Iterator[FullBuild]:
        """A full rebuild, committed on leaving the block: the store afterwards holds exactly
        the documents given to the :class:`~kgbuild.store.fullbuild.FullBuild`'s ``add``
        (each loaded as it is given, its triples not kept); its problems are in the build's
        ``problems`` then. Its read model is made from the quads loaded, sorted on disk
        (``indexing()`` is called when that starts), unless not ``index`` (a store only
        queried with SPARQL: the model is made when first read).

        A persistent store is loaded into a fresh database folder and switched to only once
        complete, so a crash, or an exception leaving the block, leaves the previous store
        usable. A damaged database (see ``rebuild``) is removed only after its replacement
        is complete.
        """
        build = FullBuild(self, settings, index)
        try:
            yield build
            problems = build.problems = build.commit()
        except BaseException:
            build.abandon()
            raise
        try:
            self._switched(build, problems, indexing)
        finally:
            build.close()

    def _switched(self, build: FullBuild, problems: list[Problem],
                  indexing: Callable[[], None] | None) -> None:
        """A persistent store's complete new database made the current one, and its read
        model made from the build's sorted quads (when it has them)."""
        if self.path is not None:
            old, damaged = self._switch(build.name, build.target, build.store_id)
            self.cache_states(self.revision(), build.states)
            if damaged is not None:
                problems.insert(0, Problem(
                    "warning", "store-rebuilt", f"the store was damaged ({damaged}); it was "
                    f"rebuilt from the sources{f' (the damaged {old} removed)' if old else ''}; "
                    f"documents it held outside the given paths are not kept", str(self.path)))
            if build.quads is not None:
                refresh_model(self, None, indexing, build.quads)


def _edge_terms(schema: Schema) -> dict[str, str]:
    """``<edge IRI>`` (N-Triples form) -> edge name."""
    return {f"<{iri}>": name for iri, name in schema.edge_by_iri.items()}


def with_meta(doc_id: str, upd: DocumentUpdate) -> Iterable[Triple]:
    src = f"<{source_iri(doc_id)}>"
    yield from upd.triples
    for p in upd.problems:
        yield src, PROBLEM, lit(json.dumps(p.to_dict(), sort_keys=True))


def _first_claim(claims: list[tuple[str, str, str]], schema: Schema) -> tuple[str, str] | None:
    """Fallback typing for a conflicted node: of the most specific claimed types, the one the
    first document (by ID) claims; the label as :func:`resolve_node` picks it."""
    by_iri = schema.type_by_iri
    typed = sorted((g, by_iri[iri_value(o)]) for g, p, o in claims if o.startswith("<"))
    if not typed:
        return None
    names = {t for _, t in typed}
    leaves = {t for t in names if not any(o != t and schema.is_a(o, t) for o in names)}
    chosen = next(t for _, t in typed if t in leaves)
    agreeing = [c for c in claims if not c[2].startswith("<") or by_iri[iri_value(c[2])] in
                schema.ancestors(chosen)]
    return chosen, resolve_node("", agreeing, schema)[1]


def _differ(deleted: list[str], inserted: list[str]) -> bool:
    """Whether replacing the ``deleted`` N-Triples lines by the ``inserted`` ones changes
    anything (compared as parsed triples: the two are written by different hands)."""
    if not deleted and not inserted:
        return False
    form = ox.RdfFormat.N_TRIPLES
    return set(ox.parse("\n".join(deleted), format=form)) != set(
        ox.parse("\n".join(inserted), format=form))
