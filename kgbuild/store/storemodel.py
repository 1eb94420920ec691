"""The store's read model (``<store>/model/``), kept current by the store's own writes.

Every commit (:meth:`~kgbuild.store.graphstore.GraphStore.apply`,
:meth:`~kgbuild.store.graphstore.GraphStore.replace_all`) calls :func:`refresh_model` with what
it changed: the model of the revision before is brought to the new one from the changed
documents (:func:`~kgbuild.store.splice.apply_changes`), or made from the whole graph where
that cannot be exact. ``meta.json`` names the revision (database identity and generation),
the schema digest and the build settings it was made from. Readers call
:func:`open_model`, which makes one from the whole graph when the store was changed by
something that did not refresh it (an older kgbuild, a store copied in place).

**Access.** The model is the unrestricted graph. It serves a principal who may see
everything, or anyone when nothing in the store carries an access label (then every view
is the whole graph). Any other principal gets a model of their view
(:func:`~kgbuild.graph.access.visible_graph`: hidden documents, nodes and assertions absent,
evidence, labels and attribute values naming hidden entities withheld), saved per label set
in ``<store>/model/views/<key>/``: made from the whole graph on the first call after each
change (a commit removes the stale ones), memory-mapped on the calls after it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from ..graph.access import visible_graph
from ..io.collector import gc_paused
from .modelfiles import VIEWS, current, opened, prune, save
from .readmodel import GraphModel, graph_tables, model_arrays, view_key, with_names
from .splice import apply_changes, labelled_graphs, model_meta

MODEL = "model"  # the read model's folder in the store


class Change(NamedTuple):
    """What a commit changed: the store's revision before it, the documents it changed, added
    or deleted, and the IRIs their graphs used before it and use now."""

    revision: str
    documents: list[str]
    before: Iterable[str]


def _fresh(store) -> Callable[[GraphModel], bool]:
    revision, schema = store.revision(), store.schema.digest
    return lambda m: m.meta.get("revision") == revision and m.meta.get("schema") == schema


def _whole(store, kg, view: str | None = None) -> tuple[dict, dict]:
    """The columns and metadata of the whole graph ``kg`` of ``store`` (or a view of it)."""
    meta = {**model_meta(store), "labelled": sorted(labelled_graphs(store))}
    if view is not None:
        meta["view"] = view
    tables = graph_tables(kg, meta)
    return with_names(model_arrays(tables, store.schema), tables.meta, store.schema)


def _made(store, previous: GraphModel | None, change: Change | None) -> tuple[dict, dict]:
    """The columns and metadata of the store's revision: ``previous`` with ``change`` applied
    (only when ``previous`` is of the revision before it), or from the whole graph."""
    with gc_paused():
        made = None
        if previous is not None and change is not None and previous.meta["revision"] == change.revision:
            made = apply_changes(previous, store, store.schema, change.documents, change.before)
        return made or _whole(store, store.knowledge_graph())


def refresh_model(store, change: Change | None = None, starting: Callable[[], None] | None = None
                  ) -> bool:
    """After a commit to a saved store: make its model current (``starting()`` is called first,
    when there is anything to do), applying ``change`` to the saved model where that is
    exact. Returns whether there was anything to do."""
    if store.path is None:
        return False
    root = Path(store.path) / MODEL
    previous = current(root, store.schema)
    if previous is not None and _fresh(store)(previous):
        return False
    if starting:
        starting()
    shutil.rmtree(root / VIEWS, ignore_errors=True)  # every view is stale now
    arrays, meta = _made(store, previous, change)
    try:
        save(arrays, meta, root)
    except OSError:  # a read-only folder or a full disk: the next reader makes it again
        shutil.rmtree(root, ignore_errors=True)
    return True


def open_model(store, principal=None) -> GraphModel:
    """The model of ``store``'s current revision that serves ``principal`` (default: the
    unrestricted one): the saved one, or one made from the whole graph and saved (kept in
    memory only where the store's folder cannot be written)."""
    root = Path(store.path) / MODEL if store.path else None
    model = opened(root, store.schema, _fresh(store), lambda: _made(store, None, None))
    if principal is None or model.serves(principal):
        return model
    key = view_key(principal)

    def view() -> tuple[dict, dict]:
        return _whole(store, visible_graph(store.knowledge_graph(), principal), key)

    found = opened(root / VIEWS / key if root else None, store.schema, _fresh(store), view)
    if root is not None:
        prune(root / VIEWS)
    return found
