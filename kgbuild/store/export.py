"""Writing a store's graph in every supported RDF format, streamed from the store's own
serialisation.

pyoxigraph writes each named graph's triples as N-Triples text (terms decoded in Rust) and,
for TriG, serialises each sorted graph; it releases the GIL while it reads, so worker threads
dump the next graphs while Python handles the current one. Python only filters, sorts and
groups that text (for Turtle and JSON-LD each distinct term shortened once), so no quad
becomes a Python RDF object, and the output is written as it is produced. Memory is bounded:

* ``nquads`` and ``trig`` hold one graph at a time (graphs in name order, each graph's lines
  sorted);
* ``nt``, ``turtle`` and ``jsonld`` put the triples of every graph in one order: N-Triples
  lines (for Turtle and JSON-LD, records with the terms already shortened) are sorted in
  memory up to :data:`SORT_BUDGET` characters; beyond that sorted runs are spilled to
  temporary files and merged.

The bytes are those of kgbuild's writers (:mod:`kgbuild.graph.turtle`) over the same triples
and, for the quad formats, of pyoxigraph's writers over the sorted quads
(``tests/store/test_export_store.py`` compares them).
"""

from __future__ import annotations

import json
import os
import queue
import sys
import tempfile
import threading
from bisect import bisect_right
from contextlib import contextmanager, suppress
from itertools import compress, islice
from json.encoder import encode_basestring
from operator import ne
from pathlib import Path
from typing import Iterable, Iterator

import pyoxigraph as ox
from rdflib.namespace import XSD

from ..errors import InvalidValue, KgbuildError
from ..graph.model import A
from ..graph.turtle import Terms, jsonld_iri, jsonld_value, unescape
from ..io.atomic import atomic_write
from ..schema.namespaces import ASSERTION_BASE, ID_BASE, SOURCE_BASE, prefixes
from .formats import EXPORT_FORMATS
from .graphstore import INTERNAL, GraphStore

SORT_BUDGET = 64 << 20  # characters of lines (records) sorted in memory before a run is spilled
AHEAD = 32  # graphs each worker dumps ahead of the one being handled
WORKERS = min(2, os.cpu_count() or 1)  # threads dumping graphs (0: none, this thread)
SWITCH_INTERVAL = 2e-4  # seconds: the GIL's switch interval while they run
_CACHE = 1 << 18  # shortened terms remembered (objects are mostly distinct literals)
_RANKS = tuple((f"<{base}", str(rank)) for rank, base in
               enumerate((ID_BASE, ASSERTION_BASE, SOURCE_BASE)))


def export_store(store: GraphStore, fmt: str = "turtle") -> str:
    """Serialise a store, deterministically: triple formats merge the documents' graphs
    (duplicates dropped); ``trig`` and ``nquads`` keep one named graph per source document
    (plus the resolved-nodes graph). ``jsonld`` is compacted with the prefixes as context."""
    return b"".join(export_chunks(store, fmt)).decode("utf-8")


def export_chunks(store: GraphStore, fmt: str = "turtle") -> Iterator[bytes]:
    """:func:`export_store` as UTF-8 pieces, produced while the store is read."""
    if fmt == "nquads":
        for _, piece in _nquads(store):
            yield piece
    elif fmt == "trig":
        yield from _trig(store)
    elif fmt == "nt":
        lines = _Sorted()
        for _, text in _graphs(store):
            lines.add(_lines(text), len(text))
        for block in lines.blocks():
            if block:
                yield ("\n".join(block) + "\n").encode("utf-8")
    elif fmt in ("turtle", "jsonld"):
        records = _Records(store.schema)
        for _, text in _graphs(store):
            records.add(text)
        write = _turtle if fmt == "turtle" else _jsonld
        for piece in write(records):
            yield piece.encode("utf-8")
    else:
        raise InvalidValue(f"unknown format {fmt!r} (one of {', '.join(EXPORT_FORMATS)})", code="usage")


def _graphs(store: GraphStore) -> Iterator[tuple[str, str]]:
    """(graph name as an N-Triples term, the N-Triples text of its triples, bookkeeping
    included, grouped by subject) for every named graph, in name order (the default graph,
    which kgbuild leaves empty, was never exported)."""
    for name, data in graph_dumps(store, store.graph_names()):
        yield name, data.decode("utf-8")


def graph_dumps(store: GraphStore, names: list[str]) -> Iterator[tuple[str, bytes]]:
    """(name, :meth:`~kgbuild.store.reads.StoreReads.dump_graph` of it) for each graph
    ``names`` gives (N-Triples terms), in that order.

    ``WORKERS`` threads dump the graphs (pyoxigraph holds no GIL while it reads the store
    and writes the text), each every ``WORKERS``-th one, at most ``AHEAD`` graphs ahead of
    this thread, which takes them in turn; while they run, the interpreter hands the GIL
    over sooner, so a dump that has finished waits less to hand its text over."""
    if WORKERS < 1 or len(names) < 2:
        for name in names:
            yield name, store.dump_graph(name)
        return
    queues = [queue.Queue(maxsize=AHEAD) for _ in range(WORKERS)]
    stop = threading.Event()

    def dump(k: int) -> None:
        for name in names[k::WORKERS]:
            try:
                item = store.dump_graph(name)
            except BaseException as exc:  # raised in the reading thread
                item = exc
            while not stop.is_set():
                with suppress(queue.Full):
                    queues[k].put(item, timeout=0.1)
                    break
            if stop.is_set() or isinstance(item, BaseException):
                return

    workers = [threading.Thread(target=dump, args=(k,), name="kgbuild-export", daemon=True)
               for k in range(WORKERS)]
    with _quick_switches():
        try:
            for w in workers:
                w.start()
            for i, name in enumerate(names):
                item = queues[i % WORKERS].get()
                if isinstance(item, BaseException):
                    raise item
                yield name, item
        finally:
            stop.set()
            for w in workers:
                w.join()


_switching = threading.Lock()
_exporting = [0, 0.0]  # exports running, the switch interval before the first


@contextmanager
def _quick_switches():
    """A GIL switch interval of 0.2 ms (5 ms by default) while graphs are dumped (restored
    by the last export that ends)."""
    with _switching:
        if not _exporting[0]:
            _exporting[1] = sys.getswitchinterval()
            sys.setswitchinterval(min(_exporting[1], SWITCH_INTERVAL))
        _exporting[0] += 1
    try:
        yield
    finally:
        with _switching:
            _exporting[0] -= 1
            if not _exporting[0]:
                sys.setswitchinterval(_exporting[1])


def _lines(text: str) -> list[str]:
    """The exported lines of N-Triples text (split at ``\\n`` only: ``str.splitlines``
    also splits at U+2028, U+0085 and other separators a literal holds unescaped),
    store-internal triples left out."""
    lines = text.split("\n")
    lines.pop()  # the text ends with a newline (or is empty)
    return [line for line in lines if line.split(" ", 2)[1] not in INTERNAL]


def _nquads(store: GraphStore) -> Iterator[tuple[str, bytes]]:
    """(graph name, its N-Quads, lines sorted) per graph with exported triples, in name order
    (every kgbuild quad is in a named graph)."""
    for name, text in _graphs(store):
        lines = _lines(text)
        if lines:
            lines.sort()  # "s p o <g> ." sorts as "s p o ." does: one graph
            yield name, ("\n".join(lines) + "\n").replace(" .\n", f" {name} .\n").encode("utf-8")


def _trig(store: GraphStore) -> Iterator[bytes]:
    """TriG, one graph at a time: pyoxigraph serialises each sorted graph; the prefix lines
    every piece starts with are written once."""
    names = {p: ns for p, ns in sorted(prefixes(store.schema).items())
             if p not in ("id", "owl")}  # data graphs use neither
    head = None
    for _, piece in _nquads(store):
        out = ox.serialize(ox.parse(piece, format=ox.RdfFormat.N_QUADS), format=ox.RdfFormat.TRIG,
                           prefixes=names)
        if head is None:
            head = 0
            while out.startswith(b"@prefix ", head):
                head = out.index(b"\n", head) + 1
            yield out
        else:
            yield out[head:]


class _Sorted:
    """Strings without a newline, given in any order, read back sorted without duplicates:
    held in memory up to :data:`SORT_BUDGET` characters, beyond that spilled as sorted runs
    to temporary files, merged block by block."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.size = 0
        self.runs: list[Path] = []
        self.folder: tempfile.TemporaryDirectory | None = None

    def add(self, items: list[str], size: int) -> None:
        """Add items of about ``size`` characters in all."""
        self.items += items
        self.size += size
        if self.size > SORT_BUDGET:
            self._spill()

    def _spill(self) -> None:
        run, self.items, self.size = _unique_sorted(self.items), [], 0
        if self.folder is None:
            self.folder = tempfile.TemporaryDirectory(prefix="kgbuild-export-")
        path = Path(self.folder.name) / f"run{len(self.runs)}"
        with open(path, "wb") as fh:
            for i in range(0, len(run), 1 << 16):
                fh.write(("\n".join(run[i:i + (1 << 16)]) + "\n").encode("utf-8"))
        self.runs.append(path)

    def blocks(self) -> Iterator[list[str]]:
        """The items in order, as lists."""
        try:
            if not self.runs:
                items, self.items = self.items, []
                yield _unique_sorted(items)
                return
            if self.items:
                self._spill()
            yield from _merge([_run_blocks(p) for p in self.runs])
        finally:
            if self.folder is not None:
                self.folder.cleanup()
                self.folder = None


def _unique_sorted(items: list[str]) -> list[str]:
    """The items sorted, each once (a repeat is dropped where it equals the next item)."""
    items.sort()
    if len(items) < 2:
        return items
    out = list(compress(items, map(ne, items, islice(items, 1, None))))
    out.append(items[-1])
    return out


def _run_blocks(path: Path) -> Iterator[list[str]]:
    """A spilled run's items in blocks of about 4 MB (cut at newlines, so never inside a
    UTF-8 sequence)."""
    with open(path, "rb") as fh:
        rest = b""
        while chunk := fh.read(1 << 22):
            chunk = rest + chunk
            cut = chunk.rfind(b"\n") + 1
            rest = chunk[cut:]
            if cut:
                yield chunk[:cut - 1].decode("utf-8").split("\n")


def _merge(runs: list[Iterator[list[str]]]) -> Iterator[list[str]]:
    """Sorted runs merged into sorted blocks without duplicates: each round takes, from every
    run, its items up to the smallest of the runs' current last items (so at least one run's
    block is used up, and equal items are always taken in the same round) and sorts them
    (in C: timsort merges the sorted pieces)."""
    heads = []  # [block, position, run]
    for run in runs:
        block = next(run, None)
        if block:
            heads.append([block, 0, run])
    while heads:
        pivot = min(h[0][-1] for h in heads)
        chunk: list[str] = []
        for h in heads:
            end = bisect_right(h[0], pivot, h[1])
            chunk += h[0][h[1]:end]
            h[1] = end
        yield _unique_sorted(chunk)
        for h in heads:
            if h[1] == len(h[0]):
                h[0], h[1] = next(h[2], None) or [], 0
        heads = [h for h in heads if h[0]]


class _Records:
    """Each graph's triples about one subject as one string that sorts in Turtle's order:
    ``rank subject \\0 predicates`` (rank: nodes, assertions, sources, anything else) where
    the predicates are ``predicate \\1 object \\3 object \\2 predicate \\1 object ...``
    with the terms shortened, ``rdf:type`` (``a``) first, then predicates and their objects
    sorted: the order and the terms of :func:`kgbuild.graph.turtle.grouped`. A subject in
    several graphs (a node: its document's graph and the nodes graph) has several records,
    merged when read back; one in a single graph (nearly every other) is written as it is."""

    def __init__(self, schema) -> None:
        self.terms = Terms([(p, ns) for p, ns in prefixes(schema).items() if p != "id"])
        self.predicates: dict[str, str] = {A: ""}  # rdf:type: "" sorts first, written "a"
        self.objects: dict[str, str] = {}
        self.sorted = _Sorted()

    def add(self, text: str) -> None:
        """One graph's N-Triples text (its lines come grouped by subject)."""
        out: list[str] = []
        term, preds, objs = self.terms.term, self.predicates, self.objects
        if len(objs) > _CACHE:
            objs.clear()
        subject, pairs = None, []
        lines = text.split("\n")
        lines.pop()
        for line in lines:
            s, p, o = line.split(" ", 2)
            if p in INTERNAL:
                continue
            if s != subject:
                if pairs:
                    out.append(self._record(subject, pairs))
                subject, pairs = s, []
            k = preds.get(p)
            if k is None:
                k = preds[p] = term(p)
            o = o[:-2]
            if o[-1] != '"' or o[0] != '"':  # anything but a plain string may be shortened
                v = objs.get(o)
                if v is None:
                    v = objs[o] = term(o)
                o = v
            pairs.append((k, o))
        if pairs:
            out.append(self._record(subject, pairs))
        self.sorted.add(out, len(text))

    def _record(self, s: str, pairs: list[tuple[str, str]]) -> str:
        self.terms.term(s)  # a blank node is refused; the prefix a subject uses is recorded
        rank = next((rank for base, rank in _RANKS if s.startswith(base)), "3")
        return rank + s + "\0" + _joined(pairs)

    def prefixes(self) -> list[tuple[str, str]]:
        """The prefixes the shortened terms use, sorted (known once every graph is added)."""
        return sorted(self.terms.used)

    def subjects(self) -> Iterator[tuple[str, str]]:
        """``(subject, predicates)`` in order, the subject shortened, the predicates as in a
        record (``a`` for ``rdf:type``)."""
        term = self.terms.term
        subject, parts = None, []
        for block in self.sorted.blocks():
            for record in block:
                cut = record.index("\0")
                s = record[:cut]
                if s != subject:
                    if parts:
                        yield term(subject[1:]), _merged(parts)
                    subject, parts = s, []
                parts.append(record[cut + 1:])
        if parts:
            yield term(subject[1:]), _merged(parts)


def _joined(pairs: list[tuple[str, str]]) -> str:
    """Sorted (predicate, object) pairs (``""`` for ``rdf:type``) as a record's predicates."""
    pairs.sort()
    out, last = [], None
    for k, o in pairs:
        if k == last:
            out.append("\3" + o)
        else:
            out.append(("\2" if out else "") + (k or "a") + "\1" + o)
            last = k
    return "".join(out)


def _merged(parts: list[str]) -> str:
    """The predicates of one subject's records (from several graphs) as one: the union,
    sorted."""
    if len(parts) == 1:
        return parts[0]
    objects: dict[str, set[str]] = {}
    for part in parts:
        for group in part.split("\2"):
            k, objs = group.split("\1", 1)
            objects.setdefault("" if k == "a" else k, set()).update(objs.split("\3"))
    return _joined([(k, o) for k, objs in objects.items() for o in objs])


def _turtle(records: _Records) -> Iterator[str]:
    """:func:`kgbuild.graph.turtle.turtle_pieces` over the records, a block of subjects at
    a time."""
    subjects = records.subjects()
    first = next(subjects, None)  # every record read: the prefixes used are known
    used = records.prefixes()
    if first is None and not used:
        yield "\n"
    yield "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in used)
    if first is None:
        return
    out: list[str] = []
    for s, preds in _chain(first, subjects):
        out.append(f"\n{s} {preds} .\n")
        if len(out) >= 4096:
            yield _turtle_text("".join(out))
            out.clear()
    yield _turtle_text("".join(out))


def _turtle_text(records: str) -> str:
    return records.replace("\1", " ").replace("\3", ",\n        ").replace("\2", " ;\n    ")


def _jsonld(records: _Records) -> Iterator[str]:
    """:func:`kgbuild.graph.turtle.jsonld_pieces` over the records: the same node objects,
    written as :func:`json.dumps` writes them, one per line."""
    subjects = records.subjects()
    first = next(subjects, None)
    names = {**dict(records.prefixes()), "xsd": str(XSD)}
    yield f'{{"@context": {json.dumps(dict(sorted(names.items())), ensure_ascii=False)},\n "@graph": [\n'
    out: list[str] = []
    if first is not None:
        for i, (s, preds) in enumerate(_chain(first, subjects)):
            out.append((",\n" if i else "") + _node(s, preds))
            if len(out) >= 4096:
                yield "".join(out)
                out.clear()
    yield "".join(out) + "\n]}\n"


def _node(s: str, preds: str) -> str:
    """One node object as ``json.dumps(node, ensure_ascii=False)`` writes it."""
    parts = ['{"@id": ', encode_basestring(s[1:-1] if s[0] == "<" else s)]
    keys = []
    groups = [group.split("\1", 1) for group in preds.split("\2")]
    for k, objs in groups:
        if k == "a":
            parts += (', "@type": [', ", ".join(encode_basestring(jsonld_iri(o))
                                                for o in objs.split("\3")), "]")
        else:
            key = _JSON_KEYS.get(k)
            if key is None:
                key = _JSON_KEYS[k] = f", {encode_basestring(jsonld_iri(k))}: ["
            keys.append(key)
            parts += (key, ", ".join(map(_json_value, objs.split("\3"))), "]")
    if len(set(keys)) < len(keys):  # two predicates written alike (<kg:x> and kg:x): as before
        node: dict = {"@id": jsonld_iri(s)}
        for k, objs in groups:
            if k == "a":
                node["@type"] = [jsonld_iri(o) for o in objs.split("\3")]
            else:
                node[jsonld_iri(k)] = [jsonld_value(o, "xsd:integer") for o in objs.split("\3")]
        return json.dumps(node, ensure_ascii=False)
    parts.append("}")
    return "".join(parts)


_JSON_KEYS: dict[str, str] = {}  # a shortened predicate -> its key, as written


def _json_value(term: str) -> str:
    """``json.dumps(jsonld_value(term, "xsd:integer"), ensure_ascii=False)``, directly."""
    if term[0] == '"':
        if term[-1] == '"':  # a plain string
            body = term[1:-1]
            return encode_basestring(unescape(body) if "\\" in body else body)
        body, _, suffix = term[1:].rpartition('"')
        text = encode_basestring(unescape(body))
        if suffix.startswith("@"):
            return '{"@value": ' + text + ', "@language": ' + encode_basestring(suffix[1:]) + "}"
        if suffix.startswith("^^"):
            return '{"@value": ' + text + ', "@type": ' + encode_basestring(jsonld_iri(suffix[2:])) + "}"
        return text
    if term[0] == "<" or not term.lstrip("-").isdigit():
        return '{"@id": ' + encode_basestring(jsonld_iri(term)) + "}"
    return '{"@value": ' + encode_basestring(term) + ', "@type": "xsd:integer"}'


def _chain(first, rest: Iterable):
    yield first
    yield from rest


EXPORT_FORMAT_VERSION = 2  # bump when a writer's output changes: recorded exports are rewritten
# (2: rdf:type as an object is written rdf:type, not a)
EXPORTS = "exports.json"  # in the store folder: output path -> what was last written there


def write_export(store: GraphStore, output: str | Path, fmt: str = "turtle") -> bool:
    """Write :func:`export_store` to ``output`` atomically, unless the file already holds it.

    A persistent store records each file it wrote (``exports.json``: the store's revision,
    the schema, the format and the file's size and modification time); a file that still
    matches its record is current and left alone, so re-exporting an unchanged store does no
    work proportional to the graph. Returns whether the file was written."""
    path = Path(output)
    key = [EXPORT_FORMAT_VERSION, store.revision(), store.schema.digest, fmt]
    records = _records(store)
    name = str(path.resolve())
    record = records.get(name) if records is not None else None
    if isinstance(record, dict) and record.get("key") == key and record.get("stat") == _stat(path):
        return False
    atomic_write(path, export_chunks(store, fmt))
    if records is not None:  # files changed or gone since are forgotten: the record stays small
        records = {n: r for n, r in records.items() if isinstance(r, dict)
                   and r.get("stat") == _stat(Path(n))}
        records[name] = {"key": key, "stat": _stat(path)}
        try:
            atomic_write(store.path / EXPORTS, json.dumps(records, sort_keys=True), durable=False)
        except (OSError, KgbuildError):  # a read-only store: the file is written again next time
            pass
    return True


def _records(store: GraphStore) -> dict | None:
    """The store's export records (None: an in-memory store, which keeps none)."""
    if store.path is None:
        return None
    try:
        records = json.loads((store.path / EXPORTS).read_bytes()[:1 << 20])
    except (OSError, ValueError):
        return {}
    return records if isinstance(records, dict) else {}


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]
