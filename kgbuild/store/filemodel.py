"""Graph files (Turtle, N-Triples, ...) read for traversal and browsing, and their read models.

A file's read model (:mod:`kgbuild.store.readmodel`) is saved once per content in the file
cache, ``$XDG_CACHE_HOME/kgbuild/graphs/<digest>/`` (default ``~/.cache/kgbuild/graphs``),
keyed by the file's path and content (SHA-256; a file whose stat is unchanged since it was
hashed is not read again: ``graphs-stat/`` beside the cache) and the schema, with the file's
reading warnings beside it; the views of label sets beside it too, as in a store. At most
:data:`FILE_CACHE_ENTRIES` files stay cached (the least recently used go); where the cache
cannot be written the model is kept in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import time
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import KgbuildError, Problem
from ..graph.access import Principal, visible_graph
from ..io.atomic import atomic_write
from ..io.collector import gc_paused
from .modelfiles import VIEWS, opened, prune
from .readmodel import FORMAT, GraphModel, graph_tables, model_arrays, view_key, with_names

if TYPE_CHECKING:  # (a walk of a cached file reads no RDF: no parser, no rdflib)
    from ..graph.model import KnowledgeGraph

FILE_CACHE_ENTRIES = 8  # graph files kept in the file cache (least recently used go)


def file_graph_cache() -> Path:
    """Where the read models of graph files are cached: ``$XDG_CACHE_HOME/kgbuild/graphs``
    (default ``~/.cache/kgbuild/graphs``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kgbuild" / "graphs"


def read_graph_file(path: str | Path, schema) -> tuple[KnowledgeGraph, list[Problem]]:
    """The graph of an RDF file and what reading it skipped: pyoxigraph's quads read as they
    are parsed (N3, which it does not read, through rdflib)."""
    from ..graph.rdf import from_oxigraph_quads, from_rdf
    from ..io.rdffile import OXIGRAPH, file_format, load_graph, read_quads

    problems: list[Problem] = []
    fmt = file_format(Path(path))
    if fmt not in OXIGRAPH:
        return from_rdf(load_graph(path, fmt), schema, problems, source=str(path)), problems
    read: list[KnowledgeGraph] = []
    read_quads(path, lambda quads: read.append(
        from_oxigraph_quads(quads, schema, problems, str(path))), fmt)
    return read[0], problems


def _columns(kg: KnowledgeGraph, meta: dict) -> tuple[dict, dict]:
    tables = graph_tables(kg, meta)
    return with_names(model_arrays(tables, kg.schema), tables.meta, kg.schema)


def file_model(path: str | Path, schema, principal: Principal | None = None,
               cache: Path | None = None) -> tuple[GraphModel, list[Problem], Path | None]:
    """The read model of the graph file ``path`` that ``principal`` (public items only when
    None) may see, the file's reading warnings (see the module's text) and its cache entry's
    folder (None where there is none), where what else is cached for the file may go."""
    principal = principal or Principal()
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode):  # reading says what is wrong; a FIFO is
        kg, problems = read_graph_file(path, schema)  # never opened here
        return GraphModel.of_graph(visible_graph(kg, principal)), problems, None
    cache = cache or file_graph_cache()
    key = f"{FORMAT}:file:{_content_digest(path, st, cache)}:{schema.digest}"
    folder = cache / hashlib.sha256(key.encode()).hexdigest()[:32]
    read: list = []

    def graph() -> KnowledgeGraph:
        if not read:
            read.append(read_graph_file(path, schema))
        return read[0][0]

    def fresh(model: GraphModel) -> bool:
        return model.meta.get("file") == key

    def whole() -> tuple[dict, dict]:
        kg = graph()
        return _columns(kg, {"file": key, "labelled": visible_graph(kg, Principal()) is not kg})

    root = _entry(folder)
    with gc_paused():  # (a model made makes millions of acyclic objects: 256k triples 7.3 s
        # of CPU with the collector, 5.2 s without)
        model = opened(root / "model" if root else None, schema, fresh, lambda _: whole())
        if not model.serves(principal):
            view = view_key(principal)
            model = opened(root / "model" / VIEWS / view if root else None, schema, fresh,
                           lambda _: _columns(visible_graph(graph(), principal),
                                              {"file": key, "labelled": True, "view": view}))
            if root is not None:
                prune(root / "model" / VIEWS)
    problems = read[0][1] if read else None
    if root is not None:
        try:
            if problems is None:
                problems = [Problem(**p) for p in json.loads((root / "problems.json").read_bytes())]
            else:
                atomic_write(root / "problems.json", json.dumps([p.to_dict() for p in problems]),
                             durable=False)
            os.utime(root)  # recently used
            _bound(root.parent)
        except (OSError, ValueError, TypeError, KgbuildError):
            if problems is None:  # the warnings are lost: read the file again
                problems = read_graph_file(path, schema)[1]
    return model, problems or [], root


STAT_RECORDS = 256  # files whose stat and digest are remembered (the least recently used go)
RACY_NS = 2_000_000_000  # a file changed this close to its hashing is hashed again


def _content_digest(path: str | Path, st: os.stat_result, cache: Path) -> str:
    """SHA-256 of the file's resolved path and content (``st``: its stat, taken by the
    caller). A file whose stat (size, mtime,
    ctime, inode, device) is what it was when it was last hashed is not read again (git's
    index rule), unless it changed within :data:`RACY_NS` of that hashing (a write in the
    same timestamp tick could keep the stat)."""
    resolved = str(Path(path).resolve())
    now = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]
    stats = cache.with_name(cache.name + "-stat")
    record = stats / (hashlib.sha256(resolved.encode("utf-8", "replace")).hexdigest()[:32]
                      + ".json")
    try:
        seen = json.loads(record.read_bytes())
        if seen["stat"] == now and seen["hashed"] - max(now[1], now[2]) > RACY_NS:
            return seen["digest"]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    hashed = time.time_ns()
    digest = hashlib.sha256(resolved.encode("utf-8", "replace") + b"\0")
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if os.stat(path).st_mtime_ns == st.st_mtime_ns:  # not changed while it was read
        try:
            stats.mkdir(parents=True, exist_ok=True)
            atomic_write(record, json.dumps({"stat": now, "digest": digest.hexdigest(),
                                             "hashed": hashed}), durable=False)
            records = sorted(stats.glob("*.json"), key=lambda r: r.stat().st_mtime, reverse=True)
            for old in records[STAT_RECORDS:]:
                old.unlink(missing_ok=True)
        except (OSError, KgbuildError):
            pass  # (the cache cannot be written: hash every time)
    return digest.hexdigest()


def _entry(folder: Path) -> Path | None:
    """The cache entry's folder, made if need be; None where the cache cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return folder if folder.is_dir() and os.access(folder, os.W_OK) else None
    except OSError:
        return None


def _bound(cache: Path) -> None:
    """Keep the :data:`FILE_CACHE_ENTRIES` most recently used entries."""
    entries = sorted((e for e in cache.iterdir() if e.is_dir() and not e.is_symlink()),
                     key=lambda e: e.stat().st_mtime, reverse=True)
    for old in entries[FILE_CACHE_ENTRIES:]:
        shutil.rmtree(old, ignore_errors=True)
