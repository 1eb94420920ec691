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
from typing import NamedTuple

import pyoxigraph as ox

from ..graph.model import CLAIMS, lit
from ..io.atomic import atomic_write
from ..io.collector import gc_paused
from ..schema.namespaces import KG
from ..vocab import MANIFEST_GRAPH
from .guard import Guarded

PROBLEM = f"<{KG.problem}>"  # on a document's source: one JSON literal per problem
MANIFEST = f"<{KG.manifest}>"  # JSON literals, one per shard: its documents' DocumentState
SHARDS = 64
GENERATION = f"<{KG.generation}>"  # a counter bumped by every committed update
STORE_ID = f"<{KG.storeId}>"  # random, new with every database: the read model is keyed by it
SETTINGS = f"<{KG.buildSettings}>"  # one JSON literal: what the last build was made with
COUNTS = f"<{KG.counts}>"  # one JSON literal: nodes by type, distinct edges by type, assertions
INTERNAL = CLAIMS | {PROBLEM, MANIFEST, COUNTS, GENERATION, STORE_ID, SETTINGS}  # not exported
STATES = "states.marshal"  # in the store folder: the document states of one revision, marshalled


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


class Manifest:
    """The manifest's values, read from the store's database."""

    _db: Guarded
    path: Path | None
    _write: bool

    def document_states(self) -> dict[str, DocumentState]:
        """Hash, file stat, followed files and dependencies of every document.

        Kept in a few JSON literals (shards by document ID) updated in the same transaction as
        the documents, so that a rebuild of a large tree reads 64 values instead of scanning
        every graph, and rewrites only the shards it touched. A copy of the revision's states
        in :data:`STATES` (written by the commit that made it) is read instead when it names
        this revision: 100k documents' JSON took about 2 s, the copy 0.2 s."""
        revision = self.revision()
        cached = self._cached_states(revision)
        if cached is not None:
            return cached
        out: dict[str, DocumentState] = {}
        for q in self._db.quads_for_pattern(None, ox.NamedNode(MANIFEST[1:-1]), None,
                                            ox.NamedNode(MANIFEST_GRAPH)):
            out.update((doc, DocumentState(*state)) for doc, state in json.loads(q.object.value).items())
        if self._write:
            self.cache_states(revision, out)
        return out

    def _cached_states(self, revision: str) -> dict[str, DocumentState] | None:
        if self.path is None:
            return None
        try:
            with gc_paused():  # (400k containers: the collector's passes tripled the time)
                found, states = marshal.loads((self.path / STATES).read_bytes())
                if found != revision:
                    return None
                make = tuple.__new__  # (a namedtuple's own __new__ costs a Python call each)
                return {doc: make(DocumentState, state) for doc, state in states.items()}
        except (OSError, ValueError, EOFError, TypeError):
            return None

    def cache_states(self, revision: str, states: dict[str, DocumentState]) -> None:
        """Keep ``states``, the document states of ``revision``, for :meth:`document_states`
        (best effort: a folder that cannot be written reads the manifest's JSON)."""
        if self.path is None:
            return
        try:
            atomic_write(self.path / STATES, marshal.dumps(
                (revision, {doc: tuple(st) for doc, st in states.items()})), durable=False)
        except (OSError, ValueError):
            pass

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


def manifest_triples(states: dict[str, DocumentState], shards: set[int]) -> list[str]:
    """One JSON literal per requested shard (empty shards included, so they get replaced)."""
    data: dict[int, list] = {n: [] for n in shards}
    for doc, st in states.items():
        n = shard(doc)
        if n in data:
            data[n].append((doc, list(st)))
    return [f"<{shard_iri(n)}> {MANIFEST} "
            f"{lit(json.dumps(dict(sorted(d)), separators=(',', ':')))} ."
            for n, d in sorted(data.items())]


def generation_triple(previous: str) -> str:
    """The next revision: a counter (for people) and a random part, so that no two committed
    states of any database, even one rolled back by damage, share a name."""
    head = previous.split("-", 1)[0]
    number = int(head) + 1 if head.isdigit() and len(head) < 15 else 1
    return f"<{MANIFEST_GRAPH}> {GENERATION} {lit(f'{number}-{uuid.uuid4().hex[:16]}')} ."
