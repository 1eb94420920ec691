"""Writing a store's graph in every supported RDF format, from the store's own serialisation.

pyoxigraph serialises the quads (N-Triples / N-Quads text, terms decoded in Rust); the
deterministic formats are sorted and, for Turtle and JSON-LD, grouped by subject in Python
from that text, so no term becomes a Python RDF object.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pyoxigraph as ox

from ..errors import InvalidValue, KgbuildError
from ..graph.turtle import jsonld_pieces, turtle_pieces
from ..io.atomic import atomic_write
from ..schema.namespaces import prefixes
from .formats import EXPORT_FORMATS
from .graphstore import GraphStore


def export_store(store: GraphStore, fmt: str = "turtle") -> str:
    """Serialise a store, deterministically: triple formats merge the documents' graphs
    (duplicates dropped); ``trig`` and ``nquads`` keep one named graph per source document
    (plus the resolved-nodes graph). ``jsonld`` is compacted with the prefixes as context."""
    return "".join(export_pieces(store, fmt))


def export_pieces(store: GraphStore, fmt: str = "turtle") -> Iterator[str]:
    """:func:`export_store` as text pieces, for writing as they come."""
    if fmt == "nquads":
        yield from store.nquads()
    elif fmt == "trig":
        names = {p: ns for p, ns in sorted(prefixes(store.schema).items())
                 if p not in ("id", "owl")}  # data graphs use neither
        quads = (q for piece in store.nquads()
                 for q in ox.parse(piece, format=ox.RdfFormat.N_QUADS))
        yield ox.serialize(quads, format=ox.RdfFormat.TRIG, prefixes=names).decode("utf-8")
    elif fmt == "nt":
        yield from (f"{line}\n" for line in sorted(set(store.ntriples())))
    elif fmt in ("turtle", "jsonld"):
        triples = (line[:-2].split(" ", 2) for line in store.ntriples())
        yield from (turtle_pieces if fmt == "turtle" else jsonld_pieces)(triples, store.schema)
    else:
        raise InvalidValue(f"unknown format {fmt!r} (one of {', '.join(EXPORT_FORMATS)})", code="usage")


EXPORT_FORMAT_VERSION = 1  # bump when a writer's output changes: recorded exports are rewritten
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
    atomic_write(path, export_pieces(store, fmt))
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
