"""The embedded graph store: one named graph per source document, in pyoxigraph.

Layout of a store folder (default ``.kgbuild/``)::

    lock          held (flock) by the one process allowed to write
    CURRENT       name of the active database folder, replaced atomically
    db-N/         a pyoxigraph (RocksDB) database
    model/        the read model of the committed revision (node table, ranked adjacency,
                  edge records, names), brought up to date by every commit
                  (:mod:`kgbuild.store.storemodel`)

Each source document owns the named graph ``<source IRI>``: its source triple (path, hash),
the facts and type/label claims about the nodes it defines or mentions, its edges and their
assertions, its problems. The graph ``NODES_GRAPH`` holds each node's resolved type, label and
ID, recomputed only for the nodes a change touches. An incremental update is one SPARQL
update, hence one transaction: a crash leaves the previous state. A full rebuild loads a new
database folder and switches ``CURRENT`` only when it is complete.

pyoxigraph is used because, measured on this machine, re-opening a 510k-quad store and
replacing one document took 0.03-0.08 s against 17 s to re-parse the same data into rdflib,
and parsing/serialising 1M triples was 10-100x faster. rdflib stays where pyshacl needs it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import shutil
import time
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, NamedTuple

import pyoxigraph as ox

from ..errors import KgbuildError, Problem
from ..graph.model import (
    CLAIMS,
    A,
    KnowledgeGraph,
    Triple,
    doc_from_iri,
    id_from_iri,
    iri_value,
    lit,
    node_iri,
    node_triples,
    resolve_node,
    source_iri,
)
from ..graph.rdf import from_quads
from ..graph.sparqlcheck import refuse_service
from ..io.atomic import atomic_write
from ..io.collector import gc_paused
from ..schema.model import Schema
from ..schema.namespaces import KG, NODES_GRAPH
from .splice import MAX_CHANGED
from .storemodel import Change, open_model, refresh_model

DEFAULT_STORE = ".kgbuild"
PROBLEM = f"<{KG.problem}>"
MANIFEST = f"<{KG.manifest}>"  # JSON literals, one per shard: its documents' DocumentState
SHARDS = 64
GENERATION = f"<{KG.generation}>"  # a counter bumped by every committed update
STORE_ID = f"<{KG.storeId}>"  # random, new with every database: the read model is keyed by it
SETTINGS = f"<{KG.buildSettings}>"  # one JSON literal: what the last build was made with
COUNTS = f"<{KG.counts}>"  # one JSON literal: nodes by type, distinct edges by type, assertions
MANIFEST_GRAPH = "https://kgbuild.dev/graph/manifest"
INTERNAL = CLAIMS | {PROBLEM, MANIFEST, COUNTS, GENERATION, STORE_ID, SETTINGS}
ASSERTION_TYPE = f"<{KG.Assertion}>"


class DocumentState(NamedTuple):
    """What the store remembers about a document between builds (a tuple: 10k of them are
    read on every rebuild)."""

    sha256: str
    stat: str = ""
    follows: list[str] = []
    depends: dict[str, str] = {}
    path: str = ""  # the file (absolute), so the document can be re-extracted from anywhere
    root: str = ""  # the folder it was scanned under
    base: str = ""  # the folder its ID is relative to
    extractor: str = ""  # "name@version"
    labels: list[str] = []  # access labels its rules gave it


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


def _nt(term: ox.NamedNode | ox.Literal) -> str:
    return str(term)


REBUILD_HINT = "run `kgbuild build --full` to rebuild it from the sources"
BUILDING = ".building"  # beside db-N while it is loaded: never committed if still there
IDENTITY = ".id"  # beside db-N: the random identity it must hold (CURRENT keeps its old format)
_CURRENT = re.compile(r"(db-[0-9]{1,9})(?: ([0-9a-f]{32}))?")  # an identity after it: read too
_ID = re.compile(r"[0-9a-f]{32}")
_DB_ERRORS = (OSError, RuntimeError)  # pyoxigraph: OSError for I/O, RuntimeError("Corruption...")
READ_ATTEMPTS = 30  # read-only opens of a database a build keeps changing, before giving up


def _db_files(db: Path) -> frozenset[str]:
    try:
        return frozenset(os.listdir(db))
    except OSError:
        return frozenset()


def _listing(store: Path) -> tuple:
    """What a build's commit, compaction or switch changes: ``CURRENT`` and every database
    folder's files (name, size, modification time); a fresh object when unreadable."""
    try:
        out: list = [(store / "CURRENT").read_bytes()[:200]]
        for name in sorted(n for n in os.listdir(store) if n.startswith("db-")):
            if (store / name).is_dir():
                with os.scandir(store / name) as it:
                    out.append((name, sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns)
                                             for e in it)))
    except OSError:
        return (object(),)
    return tuple(out)


class _Damaged(Exception):
    """Internal: the database cannot be trusted (the message says why)."""


def _detail(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


def _is_permission(exc: BaseException) -> bool:
    return isinstance(exc, PermissionError) or getattr(exc, "errno", None) in (
        errno.EACCES, errno.EPERM, errno.EROFS) or any(
        s in str(exc) for s in ("Permission denied", "Read-only file system"))


class _Guarded:
    """A pyoxigraph store whose errors, raised on a call or while iterating its results,
    become the owning :class:`GraphStore`'s one-line errors (see ``GraphStore._on_error``)."""

    __slots__ = ("db", "owner")

    def __init__(self, db: ox.Store, owner: "GraphStore"):
        self.db = db
        self.owner = owner

    def quads_for_pattern(self, *args):
        return self._reading(lambda db: db.quads_for_pattern(*args))

    def query(self, query: str):
        return self._reading(lambda db: db.query(query))

    def named_graphs(self):
        return self._reading(lambda db: db.named_graphs())

    def dump(self, **kwargs) -> bytes:
        return self._bytes(lambda db: db.dump(**kwargs))

    def _bytes(self, call) -> bytes:
        try:
            return call(self.db)
        except _DB_ERRORS as exc:
            self.owner._on_error(exc, reading=True)
            return call(self.owner._db.db)

    def _reading(self, start):
        try:
            it = start(self.db)
        except _DB_ERRORS as exc:
            self.owner._on_error(exc, reading=True)  # raises, or set the database aside
            return iter(start(self.owner._db.db))
        return self._iterate(it, start)

    def _iterate(self, it, start):
        yielded = False
        try:
            for item in it:
                yielded = True
                yield item
        except _DB_ERRORS as exc:
            self.owner._on_error(exc, reading=True)
            if not yielded:
                yield from start(self.owner._db.db)

    def _writing(self, call):
        try:
            return call()
        except _DB_ERRORS as exc:
            self.owner._on_error(exc, reading=False)

    def update(self, update: str) -> None:
        self._writing(lambda: self.db.update(update))

    def bulk_load(self, data: bytes, **kwargs) -> None:
        self._writing(lambda: self.db.bulk_load(data, **kwargs))

    def flush(self) -> None:
        self._writing(self.db.flush)

    def clear(self) -> None:
        self._writing(self.db.clear)


class GraphStore:
    """A persistent (``path``) or in-memory (``path=None``) kgbuild graph store.

    ``write=False`` opens the database read-only (no lock, nothing written but the read model,
    which is kept in memory where the folder cannot be written); an open that meets a build's commit (the
    files it lists replaced while it reads them) is tried again, so a reader sees the state
    before or after the commit, never "damaged". ``rebuild=True`` (``build --full``) opens
    a damaged store too: the damage is reported as a warning of the rebuild, the store reads as
    empty, and :meth:`replace_all` loads a fresh database that replaces the damaged one only
    once complete. Otherwise damage found on opening or on any later read is a one-line
    :class:`~kgbuild.errors.KgbuildError` naming the store and the way out.
    """

    def __init__(self, path: str | Path | None, schema: Schema, *, write: bool = True,
                 rebuild: bool = False):
        self.schema = schema
        self.path = Path(path) if path is not None else None
        self._lock_fh = None
        self._write = write
        self._rebuild = rebuild and write
        self._damage: str | None = None  # what was wrong with the database being rebuilt
        self._current_name: str | None = None
        self._graph: tuple[str, KnowledgeGraph] | None = None  # (revision, its graph)
        self._opened: frozenset[str] = frozenset()  # the database's files when opened
        self._db: _Guarded
        if self.path is None:
            self._db = _Guarded(ox.Store(), self)
            return
        try:
            self._open(write)
        except BaseException:
            self.close()
            raise

    def _open(self, write: bool) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise self._error("is not a folder (a file is in its place): pass --store DIR, or "
                              "move the file away", "store-not-folder")
        if write:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise self._translate(exc, writing=True) from None
            self._lock()
        elif not self.path.is_dir():
            raise KgbuildError(f"no kgbuild store at {self.path} (run kgbuild build first)",
                               code="no-store")
        for attempt in range(1 if write else READ_ATTEMPTS):
            before = None if write else _listing(self.path)
            try:
                self._open_current(write)
                return
            except _Damaged as exc:
                # a read-only open that met a build's commit, compaction or switch (a file
                # listed one moment and removed the next) opens again: only damage that stays
                # while nothing changes is reported
                if write or attempt + 1 == READ_ATTEMPTS or _listing(self.path) == before:
                    if not self._rebuild:
                        raise self._damaged(str(exc)) from None
                    self._set_aside(str(exc))
                    return
            time.sleep(0.002 * (attempt + 1))

    def _open_current(self, write: bool) -> None:
        """Open the database ``CURRENT`` names (a new one when there is none and ``write``);
        raises _Damaged when it cannot be trusted."""
        current, expected_id = self._current()
        if write:
            self._collect_garbage(current)
        if current is None:
            if not write:
                raise KgbuildError(f"no kgbuild store at {self.path} (run kgbuild build first)",
                                   code="no-store")
            self._db = _Guarded(self._new_database("db-1"), self)
            self._set_current("db-1")
            self._finish_new("db-1")
            self._current_name = "db-1"
            return
        db = self.path / current
        self._current_name = current
        if not (db / "CURRENT").is_file():  # RocksDB's own; opening would create an empty db
            raise _Damaged(f"the database folder {current} is empty or incomplete")
        try:
            raw = ox.Store(str(db)) if write else ox.Store.read_only(str(db))
        except (OSError, RuntimeError) as exc:
            if _is_permission(exc):
                raise self._translate(exc, writing=write) from None
            raise _Damaged(_detail(exc)) from None
        self._db = _Guarded(raw, self)
        self._opened = _db_files(db)
        try:
            found = next((q.object.value for q in raw.quads_for_pattern(
                None, ox.NamedNode(STORE_ID[1:-1]), None, ox.NamedNode(MANIFEST_GRAPH))), None)
        except _DB_ERRORS as exc:
            raise _Damaged(_detail(exc)) from None
        if expected_id and found != expected_id:
            raise _Damaged(f"{current} does not hold the database CURRENT names (identity "
                           f"{found or 'missing'}, expected {expected_id}): it was truncated "
                           f"or replaced")

    # -- errors ----------------------------------------------------------------------------------
    def _error(self, message: str, code: str) -> KgbuildError:
        return KgbuildError(message, str(self.path) if self.path else "(memory store)", code=code)

    def _damaged(self, detail: str) -> KgbuildError:
        return self._error(f"the store is damaged ({detail}); {REBUILD_HINT}", "store-damaged")

    def _translate(self, exc: BaseException, writing: bool = False) -> KgbuildError:
        """A one-line error for what the database or the file system raised."""
        if _is_permission(exc):
            if writing:
                return self._error(f"cannot write the store ({_detail(exc)}): building needs "
                                   f"write access to the store folder; pass --store DIR to build "
                                   f"elsewhere", "store-permission")
            return self._error(f"cannot read the store ({_detail(exc)}): check the folder's "
                               f"permissions", "store-permission")
        if getattr(exc, "errno", None) == errno.ENOSPC or "No space left" in str(exc):
            return self._error(f"no space left to write the store ({_detail(exc)})", "store-full")
        if self._replaced():
            return self._error(f"the store was replaced by a build while this command read it "
                               f"({_detail(exc)}); run the command again", "store-changed")
        return self._damaged(_detail(exc))

    def _replaced(self) -> bool:
        """Whether ``CURRENT`` now names another database than the one this store opened, or
        (read-only) a build's compaction removed a file the database had when opened."""
        if self.path is None or self._current_name is None:
            return False
        try:
            named = (self.path / "CURRENT").read_bytes()[:200].decode("utf-8", "replace").split()
        except OSError:
            return False
        if named and named[0] != self._current_name and (self.path / named[0]).is_dir():
            return True
        return not self._write and not self._opened <= _db_files(self.path / self._current_name)

    def _on_error(self, exc: BaseException, reading: bool) -> bool:
        """Called by the guarded database: raises the one-line error, or (a read during a full
        rebuild) sets the damaged database aside and returns True: read again, from nothing."""
        if reading and self._rebuild and self._damage is None and not _is_permission(exc):
            self._set_aside(_detail(exc))
            return True
        raise self._translate(exc, writing=not reading) from None

    def _set_aside(self, detail: str) -> None:
        """Rebuild mode: forget the damaged database (left on disk until the new one is
        complete) and read as an empty store."""
        self._damage = detail
        self._db = _Guarded(ox.Store(), self)

    @property
    def damage(self) -> str | None:
        """What was wrong with the store a full rebuild is replacing (None: nothing)."""
        return self._damage

    # -- lifecycle -------------------------------------------------------------------------------
    def _lock(self) -> None:
        try:
            fh = open(self.path / "lock", "a+", encoding="utf-8", errors="replace")
        except OSError as exc:
            if _is_permission(exc):
                raise self._translate(exc, writing=True) from None
            raise self._error(f"cannot open the store's lock file ({_detail(exc)}): remove "
                              f"{self.path / 'lock'} if it is not a file", "store-lock") from None
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read(40).strip() or "?"
            fh.close()
            raise KgbuildError(f"another kgbuild process (pid {holder}) is writing the store "
                               f"{self.path}; wait for it to finish", code="store-locked") from None
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(str(os.getpid()))
            fh.flush()
        except OSError as exc:
            fh.close()
            raise self._translate(exc, writing=True) from None
        self._lock_fh = fh

    def _current(self) -> tuple[str | None, str | None]:
        """The committed database's folder (from ``CURRENT``) and the identity it must hold
        (from ``db-N.id``, when recorded); (None, None) when nothing was ever committed.
        Raises _Damaged when ``CURRENT`` is unreadable, malformed or names a missing folder,
        or is missing while databases remain, or the identity record is unreadable."""
        try:
            raw = (self.path / "CURRENT").read_bytes()[:200]
        except FileNotFoundError:
            left = sorted(p.name for p in self.path.glob("db-*") if p.is_dir() and
                          not (self.path / f"{p.name}{BUILDING}").exists())
            if left:
                raise _Damaged(f"CURRENT is missing but database folder(s) {', '.join(left[:3])} "
                               f"remain") from None
            return None, None
        except OSError as exc:
            if _is_permission(exc):
                raise self._translate(exc) from None
            raise _Damaged(f"CURRENT cannot be read: {_detail(exc)}") from None
        text = raw.decode("utf-8", "replace").strip()
        m = _CURRENT.fullmatch(text)
        if not m:
            raise _Damaged("CURRENT is empty" if not text else
                           f"CURRENT holds {text[:40]!r}, not a database name")
        name = m.group(1)
        if not (self.path / name).is_dir():
            raise _Damaged(f"CURRENT names {name}, which is missing")
        record = self.path / f"{name}{IDENTITY}"
        try:
            ident = record.read_bytes()[:100].decode("ascii", "replace").strip()
        except FileNotFoundError:
            return name, m.group(2)  # None: made by an older kgbuild
        except OSError as exc:
            if _is_permission(exc):
                raise self._translate(exc) from None
            raise _Damaged(f"{record.name} cannot be read: {_detail(exc)}") from None
        if not _ID.fullmatch(ident):
            raise _Damaged(f"{record.name} holds {ident[:40]!r}, not a database identity")
        return name, ident

    def _set_current(self, name: str, store_id: str | None = None) -> None:
        """Make ``name`` the committed database (its identity recorded first)."""
        try:
            if store_id:
                self._record_identity(name, store_id)
            current = self.path / "CURRENT"
            if current.is_dir() and not current.is_symlink():  # damage a rebuild replaces
                shutil.rmtree(current)
            atomic_write(current, f"{name}\n")
        except OSError as exc:
            raise self._translate(exc, writing=True) from None

    def _record_identity(self, name: str, store_id: str) -> None:
        record = self.path / f"{name}{IDENTITY}"
        if record.is_dir() and not record.is_symlink():
            shutil.rmtree(record)
        atomic_write(record, store_id + "\n")

    def _new_database(self, name: str) -> ox.Store:
        """Create database folder ``name``, marked as being built until :meth:`_finish_new`."""
        try:
            (self.path / f"{name}{BUILDING}").touch()
            shutil.rmtree(self.path / name, ignore_errors=True)
            return ox.Store(str(self.path / name))
        except (OSError, RuntimeError) as exc:
            raise self._translate(exc, writing=True) from None

    def _finish_new(self, name: str) -> None:
        (self.path / f"{name}{BUILDING}").unlink(missing_ok=True)

    def _collect_garbage(self, current: str | None) -> None:
        """Remove databases that were never committed or were replaced: with a ``CURRENT``,
        every other one; without, only those still marked as being built."""
        for p in self.path.glob("db-*"):
            if p.name.endswith(BUILDING):
                if p.name[:-len(BUILDING)] != current:
                    shutil.rmtree(self.path / p.name[:-len(BUILDING)], ignore_errors=True)
                    (self.path / f"{p.name[:-len(BUILDING)]}{IDENTITY}").unlink(missing_ok=True)
                p.unlink(missing_ok=True)
            elif current is not None and p.name not in (current, f"{current}{IDENTITY}"):
                _remove(p)

    def close(self) -> None:
        """Release the database and the write lock (committed writes are already durable)."""
        self.__dict__.pop("_db", None)
        if self._lock_fh is not None:
            self._lock_fh.close()
            self._lock_fh = None

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------------
    def documents(self) -> dict[str, str]:
        """Document ID → content hash of every document in the store."""
        return {doc: state.sha256 for doc, state in self.document_states().items()}

    def document_states(self) -> dict[str, DocumentState]:
        """Hash, file stat, followed files and dependencies of every document.

        Kept in a few JSON literals (shards by document ID) updated in the same transaction as
        the documents, so that a rebuild of a large tree reads 64 values instead of scanning
        every graph, and rewrites only the shards it touched."""
        out: dict[str, DocumentState] = {}
        for q in self._db.quads_for_pattern(None, ox.NamedNode(MANIFEST[1:-1]), None,
                                            ox.NamedNode(MANIFEST_GRAPH)):
            out.update((doc, DocumentState(*state)) for doc, state in json.loads(q.object.value).items())
        return out

    def problems(self) -> list[Problem]:
        """Every problem recorded by the documents now in the store."""
        out = []
        for q in self._db.quads_for_pattern(None, ox.NamedNode(PROBLEM[1:-1]), None, None):
            out.append(Problem(**json.loads(q.object.value)))
        return sorted(out, key=lambda p: (p.file, p.line or 0, p.code, p.message))

    def node_type(self, node_id: str) -> str | None:
        """Resolved schema type of a node, or None."""
        for q in self._db.quads_for_pattern(ox.NamedNode(node_iri(node_id)), ox.NamedNode(A[1:-1]),
                                            None, ox.NamedNode(NODES_GRAPH)):
            return self.schema.type_by_iri.get(q.object.value)
        return None

    def quads(self) -> Iterator[ox.Quad]:
        """Every exported quad (graph = source document or the nodes graph), in store order."""
        for q in self._db.quads_for_pattern(None, None, None, None):
            if str(q.predicate) not in INTERNAL:
                yield q

    def graph_quads(self, graph: str) -> Iterator[ox.Quad]:
        """Every quad of the named graph ``graph`` (an IRI), bookkeeping included."""
        yield from self._db.quads_for_pattern(None, None, None, ox.NamedNode(graph))

    def rows_about(self, iri: str) -> Iterator[tuple[str, str, str, str]]:
        """Every quad with subject ``iri`` in any graph, as plain values (subject, predicate,
        object, graph: the form :func:`~kgbuild.graph.rdf.from_quads` reads)."""
        return map(_row, self._db.quads_for_pattern(ox.NamedNode(iri), None, None, None))

    def has_triple(self, s: str, p: str, o: str) -> bool:
        """Whether some graph holds the triple of three IRIs."""
        return any(True for _ in self._db.quads_for_pattern(ox.NamedNode(s), ox.NamedNode(p),
                                                            ox.NamedNode(o), None))

    def graph_names(self) -> list[str]:
        """The named graphs (every kgbuild quad is in one) as N-Triples terms, sorted."""
        return sorted(str(g) for g in self._db.named_graphs())

    def dump_graph(self, graph: str) -> bytes:
        """One named graph (an N-Triples term) as N-Triples, bookkeeping included, in store
        order (grouped by subject): the store's own serialisation, terms decoded in Rust with
        the GIL released, so several threads may dump at once (``store/export.py``)."""
        name = ox.NamedNode(graph[1:-1]) if graph.startswith("<") else ox.BlankNode(graph[2:])
        return self._db.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=name)

    def triples(self) -> Iterator[Triple]:
        """The exported graph: every graph's triples minus store-internal ones (may repeat)."""
        for q in self.quads():
            yield _nt(q.subject), _nt(q.predicate), _nt(q.object)

    def generation(self) -> str:
        """Names the store's content: it changes with every committed update."""
        for q in self._db.quads_for_pattern(None, ox.NamedNode(GENERATION[1:-1]), None,
                                            ox.NamedNode(MANIFEST_GRAPH)):
            return q.object.value
        return "empty"

    def store_id(self) -> str:
        """Names the database: a new random value whenever one is created."""
        return self._manifest_value(STORE_ID) or "none"

    def settings(self) -> dict | None:
        """The build settings recorded by the last build (None: made by an older kgbuild)."""
        value = self._manifest_value(SETTINGS)
        return json.loads(value) if value else None

    def _manifest_value(self, pred: str) -> str | None:
        for q in self._db.quads_for_pattern(None, ox.NamedNode(pred[1:-1]), None,
                                            ox.NamedNode(MANIFEST_GRAPH)):
            return q.object.value
        return None

    def knowledge_graph(self) -> KnowledgeGraph:
        """The store's graph as an in-memory :class:`KnowledgeGraph` (``defined_in`` holds the
        documents that define each node).

        Materialising walks every quad (about 10 s per million in pyoxigraph's Python API): what
        reads by ID, by name, browsing and serving need is the read model (:meth:`read_model`).
        The graph is kept in memory for the revision it was made of (one process's builds,
        validation and reports read it once); nothing is written."""
        if self._damage is not None:
            return self._materialise()
        revision = self.revision()
        if self._graph is None or self._graph[0] != revision:
            self._graph = (revision, self._materialise())
        return self._graph[1]

    def read_model(self, principal=None):
        """The read model that serves ``principal`` (default: the unrestricted one), made
        from the whole graph only when no commit kept it current (see
        :mod:`kgbuild.store.storemodel`)."""
        return open_model(self, principal)

    def _materialise(self) -> KnowledgeGraph:
        with gc_paused():
            return self._from_quads()

    def _from_quads(self) -> KnowledgeGraph:
        return from_quads(map(_row, self._db.quads_for_pattern(None, None, None, None)),
                          self.schema)

    def sparql(self, query: str, union: bool = False, prefixes: dict[str, str] | None = None):
        """pyoxigraph's own result of a SPARQL query (booleans, solutions or triples, read
        lazily); ``union``: patterns outside ``GRAPH`` match every graph; ``prefixes`` are
        declared for the query. See store/query.py. A ``SERVICE`` clause is refused
        (:func:`~kgbuild.graph.sparqlcheck.refuse_service`)."""
        return self._db.db.query(refuse_service(query), use_default_graph_as_union=union,
                                 prefixes=prefixes)

    def revision(self) -> str:
        """Names the committed content for the read model: database identity and generation."""
        return f"{self.store_id()}:{self.generation()}"

    def triple_count(self) -> int:
        """How many distinct triples :meth:`triples` yields (counted inside the store)."""
        internal = ", ".join(sorted(INTERNAL))
        [row] = list(self._db.query(
            f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?s ?p ?o WHERE {{ GRAPH ?g "
            f"{{ ?s ?p ?o }} FILTER(?p NOT IN ({internal})) }} }}"))
        return int(row["n"].value)

    def node_count(self) -> int:
        """How many nodes the graph has (cheap: one aggregate over the nodes graph)."""
        [row] = list(self._db.query(
            f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{NODES_GRAPH}> {{ ?s a ?t }} }}"))
        return int(row["n"].value)

    def counts(self) -> dict:
        """Nodes by type, distinct edges by type and assertions, as kept up to date by every
        update (see :meth:`recount` for the same figures computed from scratch)."""
        for q in self._db.quads_for_pattern(None, ox.NamedNode(COUNTS[1:-1]), None,
                                            ox.NamedNode(MANIFEST_GRAPH)):
            return json.loads(q.object.value)
        return self.recount()

    def recount(self) -> dict:
        """Nodes by type, distinct edges by type and assertions (aggregated inside the store)."""
        by_iri, by_edge = self.schema.type_by_iri, self.schema.edge_by_iri
        nodes = {by_iri[r["t"].value]: int(r["n"].value) for r in self._db.query(
            f"SELECT ?t (COUNT(*) AS ?n) WHERE {{ GRAPH <{NODES_GRAPH}> {{ ?s a ?t }} }} GROUP BY ?t")
            if r["t"].value in by_iri}
        values = " ".join(f"<{iri}>" for iri in by_edge)
        edges = {by_edge[r["p"].value]: int(r["n"].value) for r in self._db.query(
            f"SELECT ?p (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?s ?p ?o WHERE {{ "
            f"VALUES ?p {{ {values} }} GRAPH ?g {{ ?s ?p ?o }} }} }} GROUP BY ?p")}
        [row] = list(self._db.query(f"SELECT (COUNT(DISTINCT ?a) AS ?n) WHERE {{ GRAPH ?g {{ "
                                    f"?a a <{KG.Assertion}> }} }}"))
        return {"nodes": dict(sorted(nodes.items())), "edges": dict(sorted(edges.items())),
                "assertions": int(row["n"].value)}

    # -- writing ---------------------------------------------------------------------------------
    def apply(self, changes: dict[str, DocumentUpdate | None],
              states: dict[str, DocumentState] | None = None,
              settings: dict | None = None, *,
              indexing: Callable[[], None] | None = None) -> list[Problem]:
        """Replace (or, for ``None``, delete) documents' graphs in one transaction, then bring
        the read model to the new revision (``indexing()`` is called when that starts).

        Nodes claimed by the old or new content of a changed document are re-resolved against
        every other document's claims; a node nobody claims any more disappears. ``states``
        is :meth:`document_states` when the caller already read it (it is updated in place).
        """
        if self._damage is None:
            revision = self.revision()
            merge = self.path is not None and len(changes) <= MAX_CHANGED  # (else made whole)
            used = self._used_iris(changes) if merge else set()
            problems = self._apply(changes, states, settings)
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
            for q in self._db.quads_for_pattern(None, None, None, ox.NamedNode(_source_graph(doc))):
                if isinstance(q.subject, ox.NamedNode):
                    found.add(q.subject.value)
                if isinstance(q.object, ox.NamedNode) and q.predicate.value != A[1:-1]:
                    found.add(q.object.value)
        return found - own

    def _apply(self, changes: dict[str, DocumentUpdate | None],
               states: dict[str, DocumentState] | None, settings: dict | None) -> list[Problem]:
        if not changes and (settings is None or settings == self.settings()):
            return []
        changed_graphs = {_source_graph(d) for d in changes}
        affected: set[str] = set()
        for g in changed_graphs:
            for pred in CLAIMS:
                for q in self._db.quads_for_pattern(None, ox.NamedNode(pred[1:-1]), None, ox.NamedNode(g)):
                    affected.add(_nt(q.subject))
        new_claims: dict[str, list[tuple[str, str, str]]] = {}
        for doc_id, upd in changes.items():
            if upd is None:
                continue
            g = _source_graph(doc_id)
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
                        claims.append((q.graph_name.value, pred, _nt(q.object)))
            node_id = _node_id(s)
            resolved = self._resolve(node_id, claims, problems)
            delete_nodes.extend(f"{s} {_nt(q.predicate)} {_nt(q.object)} ." for q in
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
        shards = sorted({_shard(d) for d in changes})
        parts = [f"DROP SILENT GRAPH <{g}>" for g in sorted(changed_graphs)]
        meta_preds = [COUNTS, GENERATION] + ([SETTINGS] if settings is not None else [])
        for subject, pred in [(_shard_iri(n), MANIFEST) for n in shards] + [
                (MANIFEST_GRAPH, p) for p in meta_preds]:
            parts.append(f"DELETE WHERE {{ GRAPH <{MANIFEST_GRAPH}> {{ <{subject}> {pred} ?v }} }}")
        if delete_nodes:
            parts.append(f"DELETE DATA {{ GRAPH <{NODES_GRAPH}> {{\n" + "\n".join(delete_nodes) + "\n} }")
        meta = [*_manifest_triples(states, set(shards)), _counts_triple(counts),
                _generation_triple(self.generation())]
        if settings is not None:
            meta.append(_json_triple(SETTINGS, settings))
        new_id = uuid.uuid4().hex if self._manifest_value(STORE_ID) is None else None
        if new_id:
            meta.append(_json_triple(STORE_ID, new_id))
        inserts = [f"GRAPH <{MANIFEST_GRAPH}> {{\n" + "\n".join(meta) + "\n}"]
        for doc_id, upd in sorted(changes.items()):
            if upd is not None:
                inserts.append(f"GRAPH <{_source_graph(doc_id)}> {{\n" +
                               "\n".join(f"{s} {p} {o} ." for s, p, o in _with_meta(doc_id, upd)) + "\n}")
        if insert_nodes:
            inserts.append(f"GRAPH <{NODES_GRAPH}> {{\n" + "\n".join(insert_nodes) + "\n}")
        parts.append("INSERT DATA {\n" + "\n".join(inserts) + "\n}")
        self._db.update(" ;\n".join(parts))
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
                    old_items.add((_nt(q.subject), iri, _nt(q.object)))
            for q in self._db.quads_for_pattern(None, ox.NamedNode(A[1:-1]),
                                                ox.NamedNode(ASSERTION_TYPE[1:-1]), graph):
                old_items.add((_nt(q.subject), A, ASSERTION_TYPE))
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
                    indexing: Callable[[], None] | None = None) -> list[Problem]:
        """A full rebuild: the store afterwards holds exactly ``documents``; its read model is
        made from the whole graph (``indexing()`` is called when that starts).

        A persistent store is loaded into a fresh database folder and switched to only once
        complete, so a crash leaves the previous store usable. A damaged database (see
        ``rebuild``) is removed only after its replacement is complete.
        """
        store_id = uuid.uuid4().hex
        if self.path is None:
            self._db.clear()
            target = self._db
        else:
            taken = [int(p.name[3:]) for p in self.path.glob("db-*")
                     if p.name[3:].isdigit() and p.is_dir()]
            name = f"db-{max(taken, default=0) + 1}"
            target = _Guarded(self._new_database(name), self)
        problems = self._load(target, documents, settings, store_id)
        if self.path is not None:
            target.flush()
            old, damaged = self._current_name, self._damage
            self._db = target
            self._set_current(name, store_id)
            self._finish_new(name)
            self._current_name, self._damage = name, None
            for p in self.path.glob("db-*"):  # the replaced (or damaged) database, leftovers
                if p.name not in (name, f"{name}{IDENTITY}"):
                    _remove(p)
            if damaged is not None:
                problems.insert(0, Problem(
                    "warning", "store-rebuilt", f"the store was damaged ({damaged}); it was "
                    f"rebuilt from the sources{f' (the damaged {old} removed)' if old else ''}; "
                    f"documents it held outside the given paths are not kept", str(self.path)))
            refresh_model(self, None, indexing)
        return problems

    def _load(self, target: _Guarded, documents: dict[str, DocumentUpdate],
              settings: dict | None, store_id: str) -> list[Problem]:
        claims: dict[str, list[tuple[str, str, str]]] = {}
        lines: list[str] = []
        for doc_id, upd in sorted(documents.items()):
            g = _source_graph(doc_id)
            for s, p, o in _with_meta(doc_id, upd):
                lines.append(f"{s} {p} {o} <{g}> .")
                if p in CLAIMS:
                    claims.setdefault(s, []).append((g, p, o))
        states = {doc_id: upd.state() for doc_id, upd in documents.items()}
        lines.extend(f"{t[:-2]} <{MANIFEST_GRAPH}> ." for t in
                     _manifest_triples(states, set(range(SHARDS))))
        lines.append(f"{_generation_triple(self.generation())[:-2]} <{MANIFEST_GRAPH}> .")
        lines.append(f"{_json_triple(STORE_ID, store_id)[:-2]} <{MANIFEST_GRAPH}> .")
        if settings is not None:
            lines.append(f"{_json_triple(SETTINGS, settings)[:-2]} <{MANIFEST_GRAPH}> .")
        edge_names = _edge_terms(self.schema)
        items = {(s, p, o) for upd in documents.values() for s, p, o in upd.triples
                 if p in edge_names or (p == A and o == ASSERTION_TYPE)}
        counts: dict = {"nodes": {}, "edges": {}, "assertions": 0}
        for s, p, o in items:
            if p in edge_names:
                counts["edges"][edge_names[p]] = counts["edges"].get(edge_names[p], 0) + 1
            else:
                counts["assertions"] += 1
        problems: list[Problem] = []
        for s, node_claims in sorted(claims.items()):
            node_id = _node_id(s)
            resolved = self._resolve(node_id, node_claims, problems)
            if resolved is not None:
                lines.extend(f"{a} {b} {c} <{NODES_GRAPH}> ." for a, b, c in
                             node_triples(node_id, resolved[0], resolved[1], self.schema))
                counts["nodes"][resolved[0]] = counts["nodes"].get(resolved[0], 0) + 1
        for key in ("nodes", "edges"):
            counts[key] = dict(sorted(counts[key].items()))
        lines.append(f"{_counts_triple(counts)[:-2]} <{MANIFEST_GRAPH}> .")
        target.bulk_load("\n".join(lines).encode("utf-8"), format=ox.RdfFormat.N_QUADS)
        return problems


def _row(q: ox.Quad) -> tuple[str, str, str, str]:
    """A quad as the plain values :func:`~kgbuild.graph.rdf.from_quads` reads."""
    return q.subject.value, q.predicate.value, q.object.value, q.graph_name.value


def _edge_terms(schema: Schema) -> dict[str, str]:
    """``<edge IRI>`` (N-Triples form) -> edge name."""
    return {f"<{iri}>": name for iri, name in schema.edge_by_iri.items()}


def _source_graph(doc_id: str) -> str:
    return source_iri(doc_id)


def _node_id(term: str) -> str:
    return id_from_iri(iri_value(term))


def _with_meta(doc_id: str, upd: DocumentUpdate) -> Iterable[Triple]:
    src = f"<{source_iri(doc_id)}>"
    yield from upd.triples
    for p in upd.problems:
        yield src, PROBLEM, lit(json.dumps(p.to_dict(), sort_keys=True))


def _json_triple(pred: str, value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    return f"<{MANIFEST_GRAPH}> {pred} {lit(text)} ."


def _counts_triple(counts: dict) -> str:
    return f"<{MANIFEST_GRAPH}> {COUNTS} {lit(json.dumps(counts, sort_keys=True, separators=(',', ':')))} ."


def _shard(doc_id: str) -> int:
    return zlib.crc32(doc_id.encode()) % SHARDS


def _shard_iri(n: int) -> str:
    return f"{MANIFEST_GRAPH}/shard-{n:02d}"


def _manifest_triples(states: dict[str, DocumentState], shards: set[int]) -> list[str]:
    """One JSON literal per requested shard (empty shards included, so they get replaced)."""
    data: dict[int, dict] = {n: {} for n in shards}
    for doc, st in sorted(states.items()):
        n = _shard(doc)
        if n in data:
            data[n][doc] = list(st)
    return [f"<{_shard_iri(n)}> {MANIFEST} {lit(json.dumps(d, separators=(',', ':')))} ."
            for n, d in sorted(data.items())]


def _generation_triple(previous: str) -> str:
    """The next revision: a counter (for people) and a random part, so that no two committed
    states of any database, even one rolled back by damage, share a name."""
    head = previous.split("-", 1)[0]
    number = int(head) + 1 if head.isdigit() and len(head) < 15 else 1
    return f"<{MANIFEST_GRAPH}> {GENERATION} {lit(f'{number}-{uuid.uuid4().hex[:16]}')} ."


def _remove(path: Path) -> None:
    """Remove a leftover database folder or bookkeeping file (errors ignored)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


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
