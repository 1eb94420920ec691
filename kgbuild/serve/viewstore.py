"""What SPARQL sees for a principal who may not see everything: a store of their view.

The view is :func:`~kgbuild.graph.access.visible_graph`'s, the one traversal, resolution and
node lookup serve. :func:`view_documents` keeps, of each visible document's named graph, the
quads that state something visible: the document itself, the facts and claims about visible
nodes (an attribute value or alias only where the view keeps it, a label claim only when it
names nothing hidden), the direct triples and reified assertions of visible assertions (their
evidence ``[evidence withheld]`` where the view withholds it), visible passages, problems that
name nothing hidden. Hidden documents' graphs are not there at all. :func:`write_view_store`
loads those documents into a new store folder (without a read model: SPARQL reads only its
database), whose own commit resolves the nodes graph and writes the manifest from them alone: queried as ``kgbuild query`` queries a store, it answers
what a store built from the visible documents answers.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import pyoxigraph as ox

from ..graph.access import WITHHELD, NameScreen, Principal, visible_graph
from ..graph.model import (
    ACCESS,
    ALT,
    CLAIMS,
    DECLARED_TYPE,
    PASSAGE_BASE,
    KnowledgeGraph,
    id_from_iri,
    lit,
    source_iri,
)
from ..schema.namespaces import ASSERTION_BASE, ID_BASE, KG
from ..store.graphstore import DocumentUpdate, GraphStore

_EVIDENCE, _COUNT, _PROBLEM = str(KG.evidence), str(KG.assertionCount), str(KG.problem)


def view_documents(store: GraphStore, principal: Principal) -> dict[str, DocumentUpdate]:
    """The visible documents of ``store`` for ``principal``, each with the quads of its graph
    that state only what the principal may see (see the module)."""
    kg = store.knowledge_graph()
    view = visible_graph(kg, principal)
    screen = NameScreen([n for i, n in kg.nodes.items() if i not in view.nodes],
                        view.nodes.values())
    states = store.document_states()
    keep = _Keep(kg, view, screen)
    out = {}
    for doc_id, doc in sorted(view.documents.items()):
        triples = [t for q in store.graph_quads(source_iri(doc_id))
                   if (t := keep(doc_id, q)) is not None]
        state = states.get(doc_id)
        out[doc_id] = DocumentUpdate(triples, sha256=state.sha256 if state else "",
                                     extractor=state.extractor if state else "",
                                     labels=sorted(doc.access))
    return out


class _Keep:
    """One quad of a visible document's graph as the view states it, or None."""

    def __init__(self, kg: KnowledgeGraph, view: KnowledgeGraph, screen: NameScreen):
        self.view, self.screen = view, screen
        self.edge_types = kg.schema.edge_by_iri
        self.attributes = {a.iri: name for name, a in kg.schema.attributes.items()}
        self.assertions = {**view.assertions, **view.attribute_assertions}
        self.edges = {(a.subject, a.predicate, a.object, a.source) for a in view.assertions.values()}
        self.counts: dict[str, int] = {}
        for a in self.assertions.values():
            self.counts[a.source] = self.counts.get(a.source, 0) + 1

    def __call__(self, doc_id: str, q: ox.Quad) -> tuple[str, str, str] | None:
        s, p, o = q.subject, q.predicate.value, q.object
        triple = (str(s), str(q.predicate), str(o))
        iri = s.value if isinstance(s, ox.NamedNode) else ""
        if p == _PROBLEM:
            return None if self.screen.names_hidden(o.value) else triple
        if iri.startswith(ASSERTION_BASE):
            a = self.assertions.get(iri[len(ASSERTION_BASE):])
            if a is None or a.source != doc_id:
                return None
            if p == _EVIDENCE and a.evidence == WITHHELD:
                return triple[0], triple[1], lit(WITHHELD)
            return triple
        if iri.startswith(ID_BASE):
            return triple if self._node_fact(doc_id, id_from_iri(iri), q) else None
        if iri.startswith(PASSAGE_BASE):
            return triple if unquote(iri[len(PASSAGE_BASE):]) in self.view.passages else None
        if iri == source_iri(doc_id):
            if p == _COUNT:
                return triple[0], triple[1], lit(self.counts.get(doc_id, 0), o.datatype.value)
            return triple
        return None

    def _node_fact(self, doc_id: str, node_id: str, q: ox.Quad) -> bool:
        node = self.view.nodes.get(node_id)
        if node is None:
            return False
        p, o = str(q.predicate), q.object
        if p in (DECLARED_TYPE, ACCESS):
            return True
        if p in CLAIMS:
            return not self.screen.names_hidden(o.value)
        if p == ALT:
            return o.value in node.aliases
        edge = self.edge_types.get(q.predicate.value)
        if edge is not None:
            return isinstance(o, ox.NamedNode) and (
                node_id, edge, id_from_iri(o.value), doc_id) in self.edges
        attribute = self.attributes.get(q.predicate.value)
        return attribute is not None and o.value in node.attributes.get(attribute, ())


def write_view_store(store: GraphStore, principal: Principal, folder: Path) -> Path:
    """A new store at ``folder`` holding :func:`view_documents`; returns ``folder``."""
    documents = view_documents(store, principal)
    with GraphStore(folder, store.schema) as out:
        out.replace_all(documents, index=False)  # (SPARQL reads the database only)
    return folder
