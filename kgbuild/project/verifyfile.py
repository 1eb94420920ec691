"""``kgbuild verify``: relations another extractor produced, checked like kgbuild's own.

Each line of the edges file is one JSON object: the output contract's fields
(:mod:`kgbuild.extract.text.contract`) plus ``source``, the path of the document the relation
was read from, relative to the sources folder. Every relation is verified
(:func:`~kgbuild.extract.text.verify.verify_relations`) with its whole source document as
the chunk; the names resolve through the resolver of a store (the catalog's entities) when
one is given. The accepted relations become a kgbuild graph, one named graph per source
document, through the same records -> assemble -> Turtle path as ``kgbuild build``
(extractor ``verify:<edges file name>``); the others, and every line that is no relation, go
to the rejection report with a reason code.

With ``write`` the verified documents go into the store as `kgbuild extract`'s do (the same
edge records and provenance), incrementally: a document is replaced only when its text or
its relation lines changed, and removed when the edges file no longer has lines for it. They
are documents of their own kind (neither `kgbuild build` nor `kgbuild extract` touches
them), and a document another command stored under the same ID is left alone. The names a
document's relations found ambiguous join the store's review queue for that document.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, KgbuildError, Problem
from ..extract.assemble import document_triples
from ..extract.discover import SourceTimes, sha256_file
from ..extract.records import Extraction
from ..extract.text.chunking import document_title, section_marks
from ..extract.text.contract import relation_from_dict
from ..extract.text.extractor import WithoutOwn, edge_records
from ..extract.text.verify import REASONS, TextChunk, VerifiedEdge, verify_relations
from ..graph.model import DECLARED_LABEL, SourceDocument, Triple, id_from_iri, source_iri, utc_timestamp
from ..graph.turtle import to_turtle
from ..io.atomic import atomic_write
from ..io.text import LineIndex, read_text, split_lines
from ..resolve.aliases import AliasRegistry
from ..llm.cache import digest as json_digest
from ..resolve.resolver import Resolver
from ..resolve.review import QUEUE_FILE, ambiguous_items, queue_sources
from ..schema.loader import load_schema
from ..schema.model import Schema
from ..store.graphstore import DocumentUpdate, GraphStore

MAX_EDGES_BYTES = 256 * 1024 * 1024  # the edges file
MAX_LINE_CHARS = 1_000_000  # one relation line
VERIFY_PREFIX = "verify:"  # the extractor tag of a verified document: verify:<edges file>@...
VERSION = 1  # of the verified documents' graphs: a change re-verifies them into a store


@dataclass
class VerifyFileResult:
    """What :func:`verify_file` did: accepted edges per document, rejections (each a dict
    with ``line``, ``source``, ``reason``, ``detail`` and the relation), the graph's
    triples, and problems (bad lines, unreadable sources) located at ``file:line``."""

    schema: Schema
    edges_file: str
    accepted: dict[str, list[VerifiedEdge]] = field(default_factory=dict)
    rejected: list[dict] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    lines: int = 0
    output: str | None = None
    report: str | None = None
    store: str | None = None  # the store written (``write``)
    changes: dict[str, list[str]] = field(default_factory=dict)  # its documents, by change
    queued: int = 0  # ambiguous names queued for review

    def counts(self) -> dict:
        by_reason = Counter(r["reason"] for r in self.rejected)
        return {"relations": self.lines,
                "accepted": sum(len(v) for v in self.accepted.values()),
                "rejected": len(self.rejected),
                "rejected_by_reason": dict(sorted(by_reason.items())),
                "documents": len(self.accepted)}

    def summary(self) -> dict:
        out = {**self.counts(), "edges_file": self.edges_file, "output": self.output,
               "report": self.report, "problems": [p.to_dict() for p in self.problems],
               "reasons": REASONS}
        if self.store is not None:
            out.update(store=self.store, changes=self.changes, queued=self.queued)
        return out

    def render(self) -> str:
        c = self.counts()
        out = []
        if self.store is not None:
            ch = self.changes
            out.append(f"store {self.store}: {len(ch['added'])} document(s) added, "
                       f"{len(ch['changed'])} changed, {len(ch['deleted'])} removed, "
                       f"{len(ch['unchanged'])} unchanged; {self.queued} ambiguous name(s) "
                       f"queued for review (kgbuild resolve review)")
        if self.output:
            out.append(f"wrote {self.output}: {c['accepted']} accepted relation(s) from "
                       f"{c['documents']} document(s)")
        out.append(f"relations: {c['relations']}; accepted {c['accepted']}, rejected {c['rejected']}")
        if c["rejected_by_reason"]:
            out.append("rejected: " + ", ".join(f"{k} {v}" for k, v in c["rejected_by_reason"].items()))
        if self.report:
            out.append(f"rejections written to {self.report}")
        out.extend(str(p) for p in self.problems[:20])
        if len(self.problems) > 20:
            out.append(f"... and {len(self.problems) - 20} more problem(s)")
        return "\n".join(out)


def _source_path(sources: Path, name: object) -> tuple[Path | None, str]:
    """The file a ``source`` names inside ``sources``, or None and why not."""
    if not isinstance(name, str) or not name.strip():
        return None, "'source' must be the document's path relative to --sources"
    rel = name.strip().replace("\\", "/")
    if rel.startswith("/") or os.path.isabs(rel) or "\x00" in rel:
        return None, f"source {name!r} must be relative to --sources"
    path = (sources / rel).resolve()
    try:
        path.relative_to(sources.resolve())
    except ValueError:
        return None, f"source {name!r} is outside --sources"
    if not path.is_file():
        return None, f"source {name!r} is not a file under {sources}"
    return path, ""


def verify_file(edges: str | Path, sources: str | Path, schema: Schema | str | Path | None = None,
                *, output: str | Path | None = None, report: str | Path | None = None,
                store: str | Path | None = None, write: bool = False,
                registry: str | Path | None = None, timestamp: float | None = None,
                max_file_bytes: int = 20 * 1024 * 1024) -> VerifyFileResult:
    """Verify the relations of ``edges`` (JSON lines) against the documents under ``sources``.

    ``store`` (a kgbuild store folder) and ``registry`` (``aliases.yaml``) give the known
    entities names resolve to; with ``write`` the verified documents go into ``store`` (made
    when missing; see the module docstring), else it is only read. ``output`` receives the
    accepted relations as deterministic Turtle, ``report`` the rejections as JSON lines.
    ``timestamp`` fixes ``prov:generatedAtTime`` (default ``$SOURCE_DATE_EPOCH``, else the
    last commit touching a document git tracks unmodified, else its mtime). Bad lines and unreadable sources are reported (``result.problems``),
    never raised."""
    schema = schema if isinstance(schema, Schema) else load_schema(schema or "software")
    edges_path, sources = Path(edges), Path(sources)
    if not sources.is_dir():
        raise InputError("--sources must be a folder", str(sources))
    if write and store is None:
        raise InputError("verify writes into a store: give one", str(edges_path), code="usage")
    name = edges_path.name
    result = VerifyFileResult(schema, str(edges_path))
    text = read_text(edges_path, MAX_EDGES_BYTES, str(edges_path))
    reg = AliasRegistry.load(registry, missing_ok=True) if registry else None
    # what names resolve to is part of what a document's stored edges depend on
    aliases = sha256_file(registry) if registry and Path(registry).is_file() else ""
    per_doc: dict[str, list[tuple[int, dict]]] = {}
    paths: dict[str, Path] = {}
    # JSON Lines: only \n ends a line (U+2028, U+0085, ... may sit unescaped in a string)
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        result.lines += 1
        bad = _read_line(line, number, sources, per_doc, paths)
        if bad is not None:
            detail, raw = bad
            result.problems.append(Problem("error", "bad-relation", detail, str(edges_path), number))
            result.rejected.append({"line": number, "source": raw.get("source") if isinstance(raw, dict) else None,
                                    "reason": "malformed", "detail": detail, "relation": raw})
    gs = GraphStore(store, schema, write=write) if store is not None else None
    try:
        resolver = gs.read_model().resolver(reg) if gs is not None else Resolver(schema, reg)
        states = gs.document_states() if write else {}
        updates: dict[str, DocumentUpdate] = {}
        stored: dict[str, DocumentUpdate | None] = {}
        times = timestamp if timestamp is not None else SourceTimes(paths.values())
        for doc_id in sorted(per_doc):
            state = states.get(doc_id)
            mine = state is None or state.extractor.startswith(VERIFY_PREFIX)
            if not mine:
                result.problems.append(Problem(
                    "warning", "other-kind", f"not stored: {state.extractor.split('@')[0]} "
                    f"stored this document; verify does not replace it", doc_id))
            tag = f"{VERIFY_PREFIX}{name}@{VERSION}-" + json_digest(
                {"schema": schema.digest, "aliases": aliases,
                 "lines": [raw for _, raw in per_doc[doc_id]]})[:16]
            own = declared_entities(gs, doc_id) if gs is not None and state is not None \
                and mine else set()
            update = _verify_document(doc_id, paths[doc_id], per_doc[doc_id], schema,
                                      WithoutOwn(resolver, own) if own else resolver, name,
                                      times, max_file_bytes, edges_path, result, tag)
            if update is None:
                continue
            if doc_id in result.accepted:
                updates[doc_id] = update
            if write and mine and not (state is not None and state.sha256 == update.sha256
                                       and state.extractor == tag):
                stored[doc_id] = update
        if write:
            assert gs is not None
            gone = sorted(d for d, st in states.items() if d not in per_doc
                          and st.extractor.startswith(f"{VERIFY_PREFIX}{name}@"))
            stored.update({d: None for d in gone})
            result.store = str(store)
            result.changes = {
                "added": sorted(d for d in stored if d not in states),
                "changed": sorted(d for d in stored if d in states and stored[d] is not None),
                "deleted": gone,
                "unchanged": sorted(d for d in per_doc if d not in stored and d in states
                                    and states[d].extractor.startswith(VERIFY_PREFIX))}
            if stored:
                result.problems.extend(gs.apply(stored, states))
            reviews = {d: ambiguous_items([r for r in result.rejected if r.get("source") == d], d)
                       for d in (*per_doc, *gone)}
            result.queued = sum(len(v) for v in reviews.values())
            queue_sources(Path(store) / QUEUE_FILE, reviews)
    finally:
        if gs is not None:
            gs.close()
    # one named graph per document in a store of its own: node types and labels resolved
    # across the documents exactly as a build resolves them
    with GraphStore(None, schema) as graph:
        result.problems.extend(graph.apply(updates))
        result.triples = list(graph.triples())
    result.rejected.sort(key=lambda r: r["line"])
    if output is not None:
        atomic_write(Path(output), to_turtle(result.triples, schema))
        result.output = str(output)
    if report is not None:
        atomic_write(Path(report), "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                                           for r in result.rejected))
        result.report = str(report)
    return result


def declared_entities(store: GraphStore, doc_id: str) -> set[str]:
    """The entities the document's stored graph introduced (its node records)."""
    label = DECLARED_LABEL.strip("<>")
    return {id_from_iri(q.subject.value) for q in store.graph_quads(source_iri(doc_id))
            if q.predicate.value == label}


def _read_line(line: str, number: int, sources: Path, per_doc: dict, paths: dict):
    """File one line under its document; (detail, raw) when it is no relation."""
    if len(line) > MAX_LINE_CHARS:
        return f"line longer than {MAX_LINE_CHARS} characters", {}
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return f"not JSON: {str(exc)[:200]}", {"text": line[:200]}
    if not isinstance(raw, dict):
        return f"expected a JSON object, got {type(raw).__name__}", {"value": raw}
    rel, err = relation_from_dict(raw)
    if err:
        return err, raw
    path, why = _source_path(sources, raw.get("source"))
    if path is None:
        return why, raw
    doc_id = path.resolve().relative_to(sources.resolve()).as_posix()
    paths[doc_id] = path
    per_doc.setdefault(doc_id, []).append((number, raw))
    return None


def _verify_document(doc_id: str, path: Path, items: list[tuple[int, dict]], schema: Schema,
                     resolver: Resolver, name: str, times: SourceTimes | float, max_file_bytes: int,
                     edges_path: Path, result: VerifyFileResult, tag: str
                     ) -> DocumentUpdate | None:
    """The document's graph (none when its source cannot be read); its accepted edges in
    ``result.accepted``, the rest in ``result.rejected``."""
    try:
        text = read_text(path, max_file_bytes, doc_id)
        digest = sha256_file(path)
    except (KgbuildError, OSError) as exc:
        detail = f"cannot read source {doc_id}: {getattr(exc, 'message', None) or exc}"
        for number, raw in items:
            result.rejected.append({"line": number, "source": doc_id, "reason": "evidence-not-found",
                                    "detail": detail, "relation": raw})
        result.problems.append(Problem("error", "unreadable-source", detail, str(edges_path),
                                       items[0][0]))
        return None
    # the whole document is the chunk; its header is its title (a heading, never the file
    # name) and the section path where the quote is, as extract's chunks have it
    chunk = TextChunk(text, doc_id, "", 0, document_title(text, ""), (), section_marks(text))
    lines = LineIndex(text)
    extraction = Extraction()
    defined: set[str] = set()
    accepted: list[VerifiedEdge] = []
    seen: set[tuple] = set()
    for number, raw in items:
        out = verify_relations([raw], chunk, schema, resolver)
        for rej in out.rejected:
            result.rejected.append({"line": number, "source": doc_id, **rej.to_dict()})
        for edge in out.accepted:
            nodes, rec = edge_records(edge, chunk, lines, schema, resolver, defined)
            key = (rec.subject, rec.predicate, rec.object, rec.span, rec.literal)
            if key not in seen:
                seen.add(key)
                extraction.nodes.extend(nodes)
                extraction.edges.append(rec)
            accepted.append(edge)
    if accepted:
        result.accepted[doc_id] = accepted
    when = _when(path, times)
    doc = SourceDocument(doc_id, doc_id, digest)
    triples, problems = document_triples(doc, extraction, f"verify:{name}", schema, when,
                                         resolver.type_of)
    result.problems.extend(problems)
    return DocumentUpdate(triples, problems, sha256=digest, source=(str(path), "", ""),
                          extractor=tag)


def _when(path: Path, times: SourceTimes | float) -> str:
    """The --timestamp (a number), else ``$SOURCE_DATE_EPOCH``, else the source's commit time
    or mtime (see :class:`~kgbuild.extract.discover.SourceTimes`)."""
    if not isinstance(times, SourceTimes):
        return utc_timestamp(times)
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env and env.strip().isdigit():
        return utc_timestamp(int(env))
    return utc_timestamp(times.epoch(path))


__all__ = ["VerifyFileResult", "declared_entities", "verify_file"]
