"""The store's read model served, following the store's commits.

A :class:`Generation` is one committed revision of the store: per principal, the read model
of their view (:meth:`~kgbuild.store.graphstore.GraphStore.read_model`, memory-mapped) with a
:class:`~kgbuild.retrieve.traverse.Traverser` and a resolver over it, opened once.
:class:`LiveIndex` checks the store every ``interval`` seconds in a background thread: first a
cheap fingerprint of the files (``CURRENT`` and the stat of the committed database's files),
and only when that changed the store's identity and revision; a new revision is opened in the
background and then swapped in with one assignment. A request takes the generation once and
works on it to the end, so requests in flight finish on the old one while new ones get the new
one. A failed reload (a build replacing the database at that moment, a damaged store) keeps
the old generation and is reported by ``/health``.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from functools import cached_property
from pathlib import Path

from ..errors import KgbuildError
from ..graph.access import Principal
from ..resolve.aliases import AliasRegistry
from ..resolve.review import visible_registry
from ..retrieve.browse import Browser
from ..retrieve.sources import OpenModel
from ..retrieve.traverse import open_traverser
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from ..store.readmodel import GraphModel
from .viewstore import write_view_store

_DB = re.compile(rb"db-[0-9]{1,9}")


class View:
    """What one principal sees of one generation: their read model, its traverser and the
    resolver (with the registry's aliases of visible entities, as ``kgbuild resolve
    explain``)."""

    def __init__(self, model: GraphModel, principal: Principal,
                 registry: AliasRegistry | None, matcher=None):
        self.model = model
        self.traverser = open_traverser(OpenModel(model), model.schema, principal,
                                        matcher=matcher)
        self.resolver = self.traverser.resolver if registry is None else model.resolver(
            registry if model.view is None else visible_registry(registry, model))
        self.principal = principal

    @cached_property
    def browser(self) -> Browser:
        """Node pages and neighbourhoods (``kgbuild show``'s) over this view."""
        return Browser(OpenModel(self.model), self.principal)


class Generation:
    """One committed revision of the store, with a :class:`View` per principal (those given
    are opened with the store at once; another one, on first use, from the store then)."""

    def __init__(self, store: GraphStore, principals: list[Principal],
                 registry: AliasRegistry | None, matcher=None):
        self.store_id, self.generation = store.store_id(), store.generation()
        self.loaded_at = time.time()
        self.whole = store.read_model()
        ix = self.whole.index
        self.nodes = int((ix.node_type != ix.type_names.index("")).sum())
        self.edges = len(ix.src)
        self._path, self._schema = store.path, store.schema
        self._registry, self._matcher = registry, matcher
        self._views = {p: self._view(p, store) for p in principals}
        self._lock = threading.Lock()
        self._sparql: dict[Principal, tempfile.TemporaryDirectory] = {}  # views' stores
        self._sparql_lock = threading.Lock()

    def _view(self, principal: Principal, store: GraphStore | None = None) -> View:
        if self.whole.serves(principal):
            model = self.whole
        elif store is not None:
            model = store.read_model(principal)
        else:
            with GraphStore(self._path, self._schema, write=False) as opened:
                model = opened.read_model(principal)
        return View(model, principal, self._registry, self._matcher)

    def view(self, principal: Principal) -> View:
        with self._lock:
            if principal not in self._views:
                self._views[principal] = self._view(principal)
            return self._views[principal]

    def sparql_store(self, principal: Principal) -> Path:
        """The store SPARQL reads for ``principal``: this one when they see all of it, else a
        store of their view (:mod:`kgbuild.serve.viewstore`) written to a temporary folder on
        first use (removed with the generation)."""
        if self.whole.serves(principal):
            return self._path
        with self._sparql_lock:
            if principal not in self._sparql:
                folder = tempfile.TemporaryDirectory(prefix="kgbuild-view-")
                with GraphStore(self._path, self._schema, write=False) as store:
                    if (store.store_id(), store.generation()) != (self.store_id,
                                                                  self.generation):
                        folder.cleanup()
                        raise KgbuildError("the store changed while its view was read; ask "
                                           "again", str(self._path), code="store-changed")
                    write_view_store(store, principal, Path(folder.name) / "store")
                self._sparql[principal] = folder
            return Path(self._sparql[principal].name) / "store"


def fingerprint(store: Path) -> tuple | None:
    """What changes whenever the store commits: ``CURRENT`` and its database's file stats."""
    try:
        current = (store / "CURRENT").read_bytes()[:200]
        name = current.split()[0] if current.split() else b""
        if not _DB.fullmatch(name):
            return (current,)
        with os.scandir(store / name.decode()) as it:
            files = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in it)
    except OSError:
        return None
    return current, tuple(files)


class LiveIndex:
    """The store at ``path`` served from its read model, reopened in the background when it
    changes."""

    def __init__(self, path: str | Path, schema: Schema, principals: list[Principal] = (),
                 aliases: Path | None = None, interval: float = 1.0,
                 embeddings: tuple[str, str] | None = None):
        self.path, self.schema, self.interval = Path(path), schema, interval
        self.matcher = None  # semantic seeds: one embeddings client, its vectors cached on disk
        if embeddings:
            from ..retrieve.embeddings import EmbeddingMatcher

            self.matcher = EmbeddingMatcher.from_env(*embeddings,
                                                     cache_dir=self.path / "embeddings")
        self.principals = list(dict.fromkeys(principals)) or [Principal()]
        self.aliases = aliases
        self.reloads = 0
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen = fingerprint(self.path)
        self.current = self._load()  # raises KgbuildError: no store, a damaged one

    def _load(self) -> Generation:
        registry = AliasRegistry.load(self.aliases) if self.aliases else None
        with GraphStore(self.path, self.schema, write=False) as store:
            return Generation(store, self.principals, registry, self.matcher)

    def _revision(self) -> tuple[str, str]:
        with GraphStore(self.path, self.schema, write=False) as store:
            return store.store_id(), store.generation()

    def check(self) -> bool:
        """Open a new generation if the store has one; True when one was swapped in."""
        seen = fingerprint(self.path)
        if seen == self._seen:
            return False
        snap = self.current
        if self._revision() == (snap.store_id, snap.generation):
            self._seen = seen
            return False
        new = self._load()
        self.current, self._seen = new, seen  # one assignment: requests see old or new
        self.reloads += 1
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
                self.last_error = None
            except Exception as exc:  # noqa: BLE001 - keep serving the last good generation
                self.last_error = f"{type(exc).__name__}: {exc}"[:2000]

    def start(self) -> None:
        """Watch the store in a background (daemon) thread."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="kgbuild-serve-watch",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
