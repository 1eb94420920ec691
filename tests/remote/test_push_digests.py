"""What a push digests each graph by: stable across kgbuild versions, so that a push after
an upgrade sends only what changed."""

from __future__ import annotations

import hashlib
import json

from servers import build_store

from kgbuild.graph.model import source_iri
from kgbuild.remote.push import _digest, _graph_lines, graph_digests
from kgbuild.schema.loader import load_schema
from kgbuild.schema.namespaces import NODES_GRAPH
from kgbuild.store.graphstore import GraphStore
from kgbuild.store.manifest import MANIFEST_GRAPH, NODES_MARK

SCHEMA = load_schema("software")


def test_document_digests_are_the_recorded_states_hashed_as_before(tmp_path):
    store = build_store(tmp_path)
    with GraphStore(store, SCHEMA, write=False) as st:
        digests = graph_digests(st)
        ident = repr((st.store_id(), json.dumps(st.settings(), sort_keys=True)))
        states = st.document_states()
        assert {g: d for g, d in digests.items() if g != NODES_GRAPH} == {
            source_iri(doc): _digest(ident, tuple(state)) for doc, state in states.items()}
        assert digests[NODES_GRAPH] == _digest(ident, "nodes", st.nodes_revision())


def test_a_store_without_a_nodes_mark_digests_the_nodes_graph_itself(tmp_path):
    store = build_store(tmp_path)
    with GraphStore(store, SCHEMA) as st:  # (as a store made before the mark was kept)
        st._db.update(f"DELETE WHERE {{ GRAPH <{MANIFEST_GRAPH}> {{ ?s {NODES_MARK} ?v }} }}")
        assert st.nodes_revision() is None
        lines = _graph_lines(st, NODES_GRAPH)
        assert lines and graph_digests(st)[NODES_GRAPH] == hashlib.sha256(
            b"\n".join(lines)).hexdigest()
