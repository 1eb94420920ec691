"""bench/told_bench.py's store copies: a hard-linked copy is a store of its own, so the two
checkouts it compares never write each other's (correctness only: timings are the
benchmark's business)."""

from __future__ import annotations

import shutil
import sys

import pytest
from conftest import REPO

from kgbuild.project.pipeline import build_graph
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

sys.path.insert(0, str(REPO / "bench"))
import told_bench  # noqa: E402

SCHEMA = load_schema()


def _build(folder, store, changed=None):
    build_graph([folder], SCHEMA, store=store, timestamp=0, validate=False, resolve=False,
                root=folder.parent, changed=changed).store.close()


def _state(store):
    with GraphStore(store, SCHEMA, write=False) as st:
        return st.revision(), st.read_model().meta["revision"], st.counts()


@pytest.mark.slow
def test_a_linked_copy_is_rebuilt_without_touching_the_store_it_copies(tmp_path):
    folder, store, copy = tmp_path / "catalog", tmp_path / "store", tmp_path / "copy"
    shutil.copytree(REPO / "fixtures" / "catalog", folder)
    _build(folder, store)
    before = _state(store)
    told_bench.linked_copy(store, copy)
    assert _state(copy) == before
    path = folder / "components" / "payments.yaml"
    path.write_text(path.read_text().replace("description: ", "description: copied "))
    _build(folder, copy, changed=[path])
    after = _state(copy)
    assert after[0] != before[0] and after[0] == after[1]  # (the copy's model follows it)
    assert _state(store) == before  # (the original: not a file of it written)
