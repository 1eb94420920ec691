"""The store's read model (``<store>/model/``), kept current by the store's own writes.

Every commit (:meth:`~kgbuild.store.graphstore.GraphStore.apply`,
:meth:`~kgbuild.store.graphstore.GraphStore.replace_all`) calls :func:`refresh_model` with what
it changed: the model of the revision before is brought to the new one from the changed
documents (:func:`~kgbuild.store.splice.apply_changes`), or made from the whole graph where
that cannot be exact. ``meta.json`` names the revision (database identity and generation),
the schema digest and the build settings it was made from. Readers call
:func:`open_model`, which makes one from the whole graph when the store was changed by
something that did not refresh it (an older kgbuild, a store copied in place).

**Reading without the database.** A reader that opened the database and found the saved
model current records, in ``model/seen.json``, the model's folder and the committed
database's files as they were (names, sizes, modification times: every commit appends to
the database's log or adds files, so it changes them). So does a writer, when it closes the
database it made the model current for, before it releases its lock
(:func:`record_fresh`): the first walk after a build need not open the database either.
While they stay so, :func:`saved_model` opens the model without opening the database (nor
importing what opens it); anything else goes through :func:`checked_model`.

**Access.** The model is the unrestricted graph. It serves a principal who may see
everything, or anyone when nothing in the store carries an access label (then every view
is the whole graph). Any other principal gets a model of their view
(:func:`~kgbuild.graph.access.visible_graph`: hidden documents, nodes and assertions absent,
evidence, labels and attribute values naming hidden entities withheld), saved per label set
in ``<store>/model/views/<key>/``: made from the whole graph on the first call after each
change (a commit removes the stale ones), memory-mapped on the calls after it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from ..io.atomic import atomic_write
from ..io.collector import gc_paused
from .modelfiles import SCRATCH, VIEWS, current, current_name, opened, prune, saved
from .readmodel import GraphModel, graph_tables, model_arrays, view_key, with_names

MODEL = "model"  # the read model's folder in the store
SEEN = "seen.json"  # in MODEL: the database files a reader found the current model fresh for


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
    from .splice import labelled_graphs, model_meta

    meta = {**model_meta(store), "labelled": sorted(labelled_graphs(store))}
    if view is not None:
        meta["view"] = view
    tables = graph_tables(kg, meta)
    return with_names(model_arrays(tables, store.schema), tables.meta, store.schema)


def _made(store, previous: GraphModel | None, change: Change | None,
          scratch: Path | None = None, quads=None) -> tuple[dict, dict]:
    """The columns and metadata of the store's revision: ``previous`` with ``change`` applied
    (only when ``previous`` is of the revision before it), or of the whole graph: from
    quads sorted by subject (:mod:`kgbuild.store.sortedmodel`: a full build's ``quads``, or
    the saved store's own read into ``scratch``; the largest columns are files there) where
    that is exact, else from the graph in memory."""
    from .sortedmodel import sorted_model, store_runs
    from .splice import apply_changes, labelled_graphs, model_meta

    with gc_paused():
        made = None
        if previous is not None and change is not None and previous.meta["revision"] == change.revision:
            made = apply_changes(previous, store, store.schema, change.documents, change.before)
        if made is None and scratch is not None:
            runs = quads if quads is not None else store_runs(store, scratch)
            try:
                made = sorted_model(store, runs, scratch, {
                    **model_meta(store), "labelled": sorted(labelled_graphs(store))})
            finally:
                if quads is None:
                    runs.close()
        return made or _whole(store, store.knowledge_graph())


def refresh_model(store, change: Change | None = None, starting: Callable[[], None] | None = None,
                  quads=None) -> bool:
    """After a commit to a saved store: make its model current (``starting()`` is called first,
    when there is anything to do), applying ``change`` to the saved model where that is
    exact, or from a full build's sorted ``quads``. Returns whether there was anything to
    do."""
    if store.path is None:
        return False
    root = Path(store.path) / MODEL
    previous = current(root, store.schema)
    if previous is not None and _fresh(store)(previous):
        return False
    if starting:
        starting()
    shutil.rmtree(root / VIEWS, ignore_errors=True)  # every view is stale now
    for left in root.glob(f"{SCRATCH}*"):  # (a model making killed: its scratch files)
        shutil.rmtree(left, ignore_errors=True)
    try:
        saved(root, store.schema, lambda scratch: _made(store, previous, change, scratch, quads),
              previous.folder if previous is not None else None, opening=False)
    except OSError:  # a read-only folder or a full disk: the next reader makes it again
        shutil.rmtree(root, ignore_errors=True)
    return True


def open_model(store, principal=None) -> GraphModel:
    """The model of ``store``'s current revision that serves ``principal`` (default: the
    unrestricted one): the saved one, or one made from the whole graph (from the store's
    quads sorted on disk: memory bounded at any size) and saved (kept in memory only where
    the store's folder cannot be written)."""
    root = Path(store.path) / MODEL if store.path else None
    model = opened(root, store.schema, _fresh(store),
                   lambda scratch: _made(store, None, None, scratch))
    if principal is None or model.serves(principal):
        return model
    key = view_key(principal)

    def view(_) -> tuple[dict, dict]:
        from ..graph.access import visible_graph

        return _whole(store, visible_graph(store.knowledge_graph(), principal), key)

    found = opened(root / VIEWS / key if root else None, store.schema, _fresh(store), view)
    if root is not None:
        prune(root / VIEWS)
    return found


def database_state(path: str | Path) -> list | None:
    """``CURRENT``, the identity record of the database it names and that database's files
    (name, size, modification time), or None when unreadable."""
    try:
        named = (Path(path) / "CURRENT").read_bytes()[:200].decode("utf-8", "replace")
        db = Path(path) / named.split()[0]
        record = db.with_name(db.name + ".id")
        identity = record.read_bytes()[:200].hex() if record.exists() else None
        with os.scandir(db) as it:
            files = sorted([e.name, e.stat().st_size, e.stat().st_mtime_ns] for e in it)
    except (OSError, IndexError, ValueError):  # (ValueError: a NUL in a garbage CURRENT)
        return None
    return [named, identity, files]


def saved_model(path: str | Path, schema, principal=None) -> GraphModel | None:
    """The store's saved model that serves ``principal`` (default: the unrestricted one; a
    principal's saved view where the whole model shows more), its database not opened, when
    a reader found it current for the database files as they still are; else None."""
    root = Path(path) / MODEL
    try:
        seen = json.loads((root / SEEN).read_bytes())
    except (OSError, ValueError):
        return None
    state = database_state(path)
    if not isinstance(seen, dict) or state is None or seen.get("database") != state:
        return None

    def fresh(m: GraphModel | None) -> bool:  # of the revision the reader checked
        return m is not None and m.meta.get("revision") == seen.get("revision") \
            and m.meta.get("schema") == schema.digest

    model = current(root, schema)
    if not fresh(model) or model.folder.name != seen.get("model"):
        return None
    if principal is None or model.serves(principal):
        return model
    view = current(root / VIEWS / view_key(principal), schema)
    return view if fresh(view) and view.serves(principal) else None


def checked_model(path: str | Path, schema, principal=None) -> GraphModel:
    """:func:`open_model` of the store at ``path`` opened read-only; when the unrestricted
    model was current and the database files did not change meanwhile, that is recorded for
    :func:`saved_model` (where the folder can be written)."""
    from .graphstore import GraphStore

    before = database_state(path)
    with GraphStore(path, schema, write=False) as store:
        model = open_model(store)
        if principal is not None and not model.serves(principal):
            model, whole = open_model(store, principal), model
        else:
            whole = model
    if before is not None and whole.folder is not None and database_state(path) == before:
        _seen(path, whole.folder.name, whole.meta.get("revision"), before)
    return model


def record_fresh(path: str | Path, revision: str) -> None:
    """What :func:`checked_model` records, recorded by a writer that committed ``revision``
    and has closed the database (its lock still held: nothing else can change it), when the
    current model is of that revision."""
    root = Path(path) / MODEL
    try:
        name = current_name(root)
        meta = json.loads((root / name / "meta.json").read_bytes()) if name else {}
    except (OSError, ValueError):
        return
    state = database_state(path)
    if isinstance(meta, dict) and meta.get("revision") == revision and state is not None:
        _seen(path, name, revision, state)


def _seen(path: str | Path, model: str, revision: str | None, state: list) -> None:
    try:
        atomic_write(Path(path) / MODEL / SEEN, json.dumps(
            {"model": model, "revision": revision, "database": state}), durable=False)
    except OSError:
        pass
