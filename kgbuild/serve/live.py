"""A store's graph held in memory for serving, following the store's updates.

A :class:`Snapshot` is one committed generation of the store: its graph and, per principal,
a :class:`~kgbuild.retrieve.traverse.Traverser` (visible graph, adjacency index, resolver)
built once. :class:`LiveIndex` checks the store every ``interval`` seconds in a background
thread: first a cheap fingerprint of the files (``CURRENT`` and the stat of the committed
database's files), and only when that changed the store's identity and revision; a new
revision is loaded and warmed in the background and then swapped in with one assignment.
A request takes the snapshot once and works on it to the end, so requests in flight finish on
the old index while new ones get the new one. A failed reload (a build replacing the database
at that moment, a damaged store) keeps the old snapshot and is reported by ``/health``.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

from ..graph.access import Principal
from ..graph.model import KnowledgeGraph
from ..resolve.aliases import AliasRegistry
from ..resolve.resolver import Resolver
from ..resolve.review import _visible_registry
from ..retrieve.traverse import Traverser
from ..schema.model import Schema
from ..store.graphstore import GraphStore

_DB = re.compile(rb"db-[0-9]{1,9}")


class View:
    """What one principal sees of one snapshot: its traverser and its resolver."""

    def __init__(self, kg: KnowledgeGraph, principal: Principal, cache_dir: Path | None,
                 registry: AliasRegistry | None, matcher=None):
        self.traverser = Traverser(kg, principal, cache_dir, matcher=matcher)
        self.view = self.traverser.view
        if registry is None:
            self.resolver = self.traverser.resolver
        else:  # as ``kgbuild resolve explain``: only aliases naming a visible entity
            self.resolver = Resolver.from_graph(
                self.view, registry if self.view is kg else _visible_registry(registry, self.view))


class Snapshot:
    """One generation of the store, with a :class:`View` per principal (built on first use)."""

    def __init__(self, kg: KnowledgeGraph, store_id: str, generation: str,
                 cache_dir: Path | None, registry: AliasRegistry | None, matcher=None):
        self.kg, self.store_id, self.generation = kg, store_id, generation
        self.matcher = matcher
        self.loaded_at = time.time()
        self.edges = len({(a.subject, a.predicate, a.object) for a in kg.assertions.values()}
                         | kg.untyped_edges)
        self._cache_dir, self._registry = cache_dir, registry
        self._views: dict[Principal, View] = {}
        self._lock = threading.Lock()

    def view(self, principal: Principal) -> View:
        with self._lock:
            if principal not in self._views:
                self._views[principal] = View(self.kg, principal, self._cache_dir, self._registry,
                                              self.matcher)
            return self._views[principal]


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
    """The store at ``path`` in memory, reloaded in the background when it changes."""

    def __init__(self, path: str | Path, schema: Schema, principals: list[Principal] = (),
                 aliases: Path | None = None, interval: float = 1.0,
                 embeddings: tuple[str, str] | None = None):
        self.path, self.schema, self.interval = Path(path), schema, interval
        self.matcher = None  # semantic seeds: one embeddings client, its vectors cached on disk
        if embeddings:
            from ..retrieve.embeddings import EmbeddingMatcher

            self.matcher = EmbeddingMatcher.from_env(*embeddings,
                                                     cache_dir=self.path / "embeddings")
        self.principals = list(principals) or [Principal()]
        self.aliases = aliases
        self.reloads = 0
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen = fingerprint(self.path)
        self.snapshot = self._load()  # raises KgbuildError: no store, a damaged one

    def _load(self) -> Snapshot:
        registry = AliasRegistry.load(self.aliases) if self.aliases else None
        with GraphStore(self.path, self.schema, write=False) as store:
            ident, generation = store.store_id(), store.generation()
            kg = store.knowledge_graph()
        snap = Snapshot(kg, ident, generation, self.path / "adjacency", registry, self.matcher)
        for p in self.principals:  # warm before anyone is served from it
            snap.view(p)
        return snap

    def _revision(self) -> tuple[str, str]:
        with GraphStore(self.path, self.schema, write=False) as store:
            return store.store_id(), store.generation()

    def check(self) -> bool:
        """Load a new generation if the store has one; True when one was swapped in."""
        seen = fingerprint(self.path)
        if seen == self._seen:
            return False
        snap = self.snapshot
        if self._revision() == (snap.store_id, snap.generation):
            self._seen = seen
            return False
        new = self._load()
        self.snapshot, self._seen = new, seen  # one assignment: requests see old or new
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
