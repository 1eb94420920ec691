"""The store's manifest graph, mixed into :class:`~kgbuild.store.graphstore.GraphStore`: what
the store remembers about each document (in 64 JSON shards) and about itself (its generation,
its database's identity, the build settings, the counts), updated in the same transaction as
the documents."""

from __future__ import annotations

import json
import marshal
import uuid
import zlib
from pathlib import Path
from typing import Iterable, NamedTuple

import pyoxigraph as ox

from ..graph.model import CLAIMS, lit
from ..io.atomic import atomic_write
from ..io.collector import gc_paused
from ..vocab import KG, MANIFEST_GRAPH
from .guard import Guarded

PROBLEM = f"<{KG}problem>"  # on a document's source: one JSON literal per problem
MANIFEST = f"<{KG}manifest>"  # JSON literals, one per shard: its documents' DocumentState
SHARDS = 64
GENERATION = f"<{KG}generation>"  # a counter bumped by every committed update
STORE_ID = f"<{KG}storeId>"  # random, new with every database: the read model is keyed by it
SETTINGS = f"<{KG}buildSettings>"  # one JSON literal: what the last build was made with
COUNTS = f"<{KG}counts>"  # one JSON literal: nodes by type, distinct edges by type, assertions
NODES_MARK = f"<{KG}nodesRevision>"  # random, new whenever the nodes graph's triples change
INTERNAL = CLAIMS | {PROBLEM, MANIFEST, COUNTS, GENERATION, STORE_ID, SETTINGS, NODES_MARK}
STATES = "states"  # in the store folder: per shard its document states, marshalled
INDEX = "index"  # in STATES: the StatesIndex of the copies


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


_DEPENDS, _EXTRACTOR = DocumentState._fields.index("depends"), DocumentState._fields.index("extractor")


class StatesIndex(NamedTuple):
    """What the state copies hold, without reading them: per shard its documents by
    extractor tag, and for each file some document depends on, the shards holding such
    documents (a bit mask)."""

    extractors: list[dict[str, int]]
    depends: dict[str, int]

    def shards_depending(self, files: Iterable[str]) -> set[int]:
        """The shards holding a document that depends on one of ``files``."""
        mask = 0
        for f in files:
            mask |= self.depends.get(f, 0)
        return {n for n in range(SHARDS) if mask >> n & 1}

    def updated(self, parts: dict[int, dict[str, tuple]]) -> StatesIndex:
        """The index with the shards of ``parts`` (every document of each, as plain tuples:
        see :func:`_sharded`) replaced."""
        extractors, depends = list(self.extractors), dict(self.depends)
        clear = ~sum(1 << n for n in parts)
        depends = {f: m & clear for f, m in depends.items() if m & clear}
        for n, part in parts.items():
            tags: dict[str, int] = {}
            for state in part.values():
                tag = state[_EXTRACTOR]
                tags[tag] = tags.get(tag, 0) + 1
                for f in state[_DEPENDS]:
                    depends[f] = depends.get(f, 0) | 1 << n
            extractors[n] = dict(sorted(tags.items()))
        return StatesIndex(extractors, depends)


class Manifest:
    """The manifest's values, read from the store's database."""

    _db: Guarded
    path: Path | None
    _write: bool

    def document_states(self, shards: Iterable[int] | None = None) -> dict[str, DocumentState]:
        """Hash, file stat, followed files and dependencies of every document (``shards``:
        of the documents of those shards only, see :func:`shard`).

        Kept in a few JSON literals (shards by document ID) updated in the same transaction as
        the documents, so that a rebuild of a large tree reads 64 values instead of scanning
        every graph, and rewrites only the shards it touched. A marshalled copy of each shard
        in :data:`STATES` (rewritten by the commits that change it) is read instead while its
        ``revision`` file names the store's revision: 100k documents' JSON took about 2 s of
        CPU, the copies 0.3 s."""
        wanted = range(SHARDS) if shards is None else sorted(set(shards))
        revision = self.revision()
        cached = self._cached_states(revision, wanted)
        if cached is not None:
            return cached
        out: dict[str, DocumentState] = {}
        manifest = ox.NamedNode(MANIFEST[1:-1])
        graph = ox.NamedNode(MANIFEST_GRAPH)
        for subject in ([None] if shards is None else
                        [ox.NamedNode(shard_iri(n)) for n in wanted]):
            for q in self._db.quads_for_pattern(subject, manifest, None, graph):
                out.update((doc, DocumentState(*state))
                           for doc, state in json.loads(q.object.value).items())
        if self._write and shards is None:
            self.cache_states(revision, out)
        return out

    def _cached_states(self, revision: str, shards: Iterable[int] = range(SHARDS)
                       ) -> dict[str, DocumentState] | None:
        """The copies of ``shards``, when the ``revision`` file names ``revision`` before
        and after they are read (a commit empties it while it rewrites shards)."""
        if self.path is None:
            return None
        folder = self.path / STATES
        try:
            if (folder / "revision").read_text() != revision:
                return None
            with gc_paused():  # (400k containers: the collector's passes tripled the time)
                found: dict = {}
                for n in shards:
                    found.update(marshal.loads((folder / f"{n:02d}").read_bytes()))
                if (folder / "revision").read_text() != revision:
                    return None
                make = tuple.__new__  # (a namedtuple's own __new__ costs a Python call each)
                return {doc: make(DocumentState, state) for doc, state in found.items()}
        except (OSError, ValueError, EOFError, TypeError):
            return None

    def states_index(self) -> StatesIndex | None:
        """The documents by extractor of each shard, and the shards holding the documents
        that depend on each file: what a build told which files changed reads instead of
        every document's state (None when the copies in :data:`STATES` are not those of the
        store's revision: then :meth:`document_states` reads them all)."""
        if self.path is None:
            return None
        mark, revision = self.path / STATES / "revision", self.revision()
        try:
            if mark.read_text() != revision:
                return None
            index = self._index_file()
            return index if mark.read_text() == revision else None
        except OSError:
            return None

    def cache_states(self, revision: str, states: dict[str, DocumentState],
                     changed: Iterable[str] | None = None, previous: str | None = None, *,
                     whole: bool = True) -> None:
        """Keep ``states``, the document states of ``revision``, for :meth:`document_states`
        (and their :class:`StatesIndex`): only the shards of the ``changed`` documents when
        the copies were those of the ``previous`` revision, else every shard. ``whole``:
        ``states`` holds every document (False: only those of the changed documents'
        shards; copies of another revision are then left invalid, not rewritten). Best
        effort: a folder that cannot be written reads the manifest's JSON."""
        if self.path is None:
            return
        folder = self.path / STATES
        try:
            folder.mkdir(exist_ok=True)
            mark = folder / "revision"
            current = mark.read_text() if mark.exists() else None
            atomic_write(mark, "", durable=False)  # (a reader meanwhile reads the JSON)
            if changed is None or (current != previous and whole):
                shards, index = set(range(SHARDS)), None
            elif current != previous:
                return
            else:
                shards = {shard(d) for d in changed}
                index = self._index_file()
                if index is None:
                    return
            parts = _sharded(states, shards)
            for n, part in parts.items():
                atomic_write(folder / f"{n:02d}", marshal.dumps(part), durable=False)
            new = (index or StatesIndex([{}] * SHARDS, {})).updated(parts)
            if new != index:
                atomic_write(folder / INDEX, marshal.dumps(tuple(new)), durable=False)
            atomic_write(mark, revision, durable=False)
        except (OSError, ValueError):
            pass

    def _index_file(self) -> StatesIndex | None:
        """The :class:`StatesIndex` file as it is (whatever revision it was written for)."""
        try:
            extractors, depends = marshal.loads((self.path / STATES / INDEX).read_bytes())
            return StatesIndex(extractors, depends) if len(extractors) == SHARDS else None
        except (OSError, ValueError, EOFError, TypeError):
            return None

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

    def nodes_revision(self) -> str | None:
        """Names the nodes graph's content: a new random value whenever a commit changes its
        triples (None: a store made before kgbuild kept it, or by ``kgbuild load``)."""
        return self._manifest_value(NODES_MARK)

    def revision(self) -> str:
        """Names the committed content for the read model: database identity and generation."""
        return f"{self.store_id()}:{self.generation()}"

    def _manifest_value(self, pred: str) -> str | None:
        for q in self._db.quads_for_pattern(None, ox.NamedNode(pred[1:-1]), None,
                                            ox.NamedNode(MANIFEST_GRAPH)):
            return q.object.value
        return None


def json_triple(pred: str, value: object) -> str:
    """The manifest's triple of ``pred``: a string as it is, anything else as compact JSON."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    return f"<{MANIFEST_GRAPH}> {pred} {lit(text)} ."


def counts_triple(counts: dict) -> str:
    """The manifest's triple of :meth:`~kgbuild.store.reads.StoreReads.counts`."""
    return f"<{MANIFEST_GRAPH}> {COUNTS} {lit(json.dumps(counts, sort_keys=True, separators=(',', ':')))} ."


def shard(doc_id: str) -> int:
    """The manifest shard that holds a document's state."""
    return zlib.crc32(doc_id.encode()) % SHARDS


def shard_iri(n: int) -> str:
    return f"{MANIFEST_GRAPH}/shard-{n:02d}"


def _sharded(states: dict[str, DocumentState], shards: set[int]) -> dict[int, dict]:
    """The states of the documents of each of ``shards`` (as plain tuples), by shard."""
    data: dict[int, dict] = {n: {} for n in shards}
    crc, every = zlib.crc32, len(shards) == SHARDS
    for doc, st in states.items():
        n = crc(doc.encode()) % SHARDS
        if every or n in data:
            data[n][doc] = tuple(st)
    return data


def manifest_triples(states: dict[str, DocumentState], shards: set[int]) -> list[str]:
    """One JSON literal per requested shard (empty shards included, so they get replaced)."""
    return [f"<{shard_iri(n)}> {MANIFEST} "
            f"{lit(json.dumps(dict(sorted(d.items())), separators=(',', ':')))} ."
            for n, d in sorted(_sharded(states, shards).items())]


def generation_triple(previous: str) -> str:
    """The next revision: a counter (for people) and a random part, so that no two committed
    states of any database, even one rolled back by damage, share a name."""
    head = previous.split("-", 1)[0]
    number = int(head) + 1 if head.isdigit() and len(head) < 15 else 1
    return f"<{MANIFEST_GRAPH}> {GENERATION} {lit(f'{number}-{uuid.uuid4().hex[:16]}')} ."
