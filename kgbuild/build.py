"""The build pipeline: discover sources, extract, assemble a typed graph, validate, write.

``build_graph`` is the library call behind ``kgbuild build``; each step reports problems with
file and line instead of stopping, so one bad file never costs the rest of the catalog.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from . import sources  # noqa: F401  (registers the extractors)
from .errors import InputError, KgbuildError
from .export import atomic_write, to_turtle
from .model import Assertion, KnowledgeGraph, SourceDocument, utc_timestamp
from .schema import Schema, load_schema
from .sources.base import Context, EdgeRecord, Extraction, Problem, SourceFile
from .sources.registry import EXTRACTORS
from .validate import ValidationReport, validate_graph

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".kgbuild",
             ".tox", ".mypy_cache", ".pytest_cache", "dist", "build"}
HEAD_BYTES = 64 * 1024

Progress = Callable[[str, int, int], None]


@dataclass
class BuildResult:
    """The assembled graph, every problem found, and what was read."""

    graph: KnowledgeGraph
    problems: list[Problem] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # doc_id -> extractor name
    validation: ValidationReport | None = None
    output: str | None = None

    def summary(self) -> dict:
        """Entities by type, edges by type, documents and problems: JSON-ready."""
        counts = self.graph.counts()
        by_code: dict[str, int] = {}
        for p in self.problems:
            by_code[p.code] = by_code.get(p.code, 0) + 1
        extractors: dict[str, int] = {}
        for name in self.files.values():
            extractors[name] = extractors.get(name, 0) + 1
        return {
            "output": self.output,
            "schema": self.graph.schema.name,
            "documents": len(self.files),
            "documents_by_extractor": dict(sorted(extractors.items())),
            "entities": sum(counts["nodes"].values()),
            "entities_by_type": counts["nodes"],
            "edges": sum(counts["edges"].values()),
            "edges_by_type": counts["edges"],
            "assertions": counts["assertions"],
            "problems": len(self.problems),
            "problems_by_code": dict(sorted(by_code.items())),
            "problem_list": [p.to_dict() for p in self.problems],
            "conforms": None if self.validation is None else self.validation.conforms,
            "violations": None if self.validation is None else len(self.validation.violations),
        }


def discover(paths: Sequence[str | Path]) -> list[SourceFile]:
    """Every file under ``paths`` that some extractor claims, in a stable order.

    A directory ``D`` gives document IDs ``D.name/relative/path``; a file gives its name.
    """
    found: dict[str, SourceFile] = {}
    for arg in paths:
        p = Path(arg)
        if not p.exists():
            raise InputError("no such file or directory", str(arg))
        root = p.resolve() if p.is_dir() else p.resolve().parent
        label = root.name or "root"
        candidates = [p.resolve()] if p.is_file() else _walk(root)
        for path in candidates:
            rel = path.relative_to(root).as_posix()
            doc_id = f"{label}/{rel}" if p.is_dir() else path.name
            if doc_id in found and found[doc_id].path != path:
                doc_id = f"{doc_id}~{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
            if _extractor_for(path) is not None:
                found[doc_id] = SourceFile(path, doc_id, root)
    return [found[k] for k in sorted(found)]


def _walk(root: Path) -> Iterable[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                             and (not d.startswith(".") or d == ".github"))
        for name in sorted(filenames):
            yield Path(dirpath) / name


def _extractor_for(path: Path):
    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    for ex in EXTRACTORS:
        if ex.claims(path, head):
            return ex
    return None


def _timestamp(path: Path, fixed: float | None) -> str:
    if fixed is not None:
        return utc_timestamp(fixed)
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env and env.strip().isdigit():
        return utc_timestamp(int(env))
    return utc_timestamp(path.stat().st_mtime)


def extract_all(files: list[SourceFile], ctx: Context, progress: Progress | None = None
                ) -> tuple[dict[str, tuple[SourceFile, str, Extraction]], list[Problem]]:
    """Run the claiming extractor over every file, following Location-style targets."""
    done: dict[str, tuple[SourceFile, str, Extraction]] = {}
    problems: list[Problem] = []
    queue = list(files)
    seen = {f.path for f in files}
    total = len(queue)
    while queue:
        src = queue.pop(0)
        ex = _extractor_for(src.path)
        if ex is None:
            problems.append(Problem("warning", "unrecognised", "no extractor reads this file",
                                    src.doc_id))
            continue
        result = ex.extract(src, ctx)
        done[src.doc_id] = (src, ex.name, result)
        for target in result.follow:
            if target not in seen:
                seen.add(target)
                rel = target.relative_to(src.root).as_posix()
                queue.append(SourceFile(target, f"{src.doc_id.split('/')[0]}/{rel}"
                                        if "/" in src.doc_id else rel, src.root))
                total += 1
        if progress:
            progress(src.doc_id, len(done), total)
    return dict(sorted(done.items())), problems


def assemble(extractions: dict[str, tuple[SourceFile, str, Extraction]], schema: Schema,
             timestamp: float | None = None) -> tuple[KnowledgeGraph, list[Problem]]:
    """Turn extraction records into a typed graph: nodes first, then edges with assertions."""
    kg = KnowledgeGraph(schema)
    problems: list[Problem] = []
    for doc_id, (src, _, ex) in extractions.items():
        problems.extend(ex.problems)
        kg.add_document(SourceDocument(doc_id, doc_id, hashlib.sha256(src.read_bytes()).hexdigest()))
        for rec in ex.nodes:
            try:
                node = kg.add_node(rec.id, rec.type, rec.label, source=doc_id, **rec.attributes)
            except KgbuildError as exc:
                problems.append(Problem("error", "node-conflict", exc.message, doc_id, rec.line))
                continue
            node.aliases.update(a for a in rec.aliases if a != node.label)
            node.access.update(rec.access)
    for doc_id, (src, name, ex) in extractions.items():
        when = _timestamp(src.path, timestamp)
        for rec in ex.edges:
            problem = _add_edge(kg, rec, doc_id, name, when)
            if problem:
                problems.append(problem)
    return kg, problems


def _add_edge(kg: KnowledgeGraph, rec: EdgeRecord, doc_id: str, extractor: str,
              when: str) -> Problem | None:
    schema = kg.schema
    try:
        et, inverted = schema.predicate(rec.predicate)
    except KgbuildError as exc:
        return Problem("error", "unknown-edge", exc.message, doc_id, rec.line)
    s, o = (rec.object, rec.subject) if inverted else (rec.subject, rec.object)
    s_type, o_type = (rec.object_type, rec.subject_type) if inverted else (rec.subject_type, rec.object_type)
    s_label, o_label = (rec.object_label, rec.subject_label) if inverted else (rec.subject_label, rec.object_label)
    types = []
    for node_id, declared in ((s, s_type), (o, o_type)):
        existing = kg.nodes.get(node_id)
        if existing is None and declared is None:
            return Problem("error", "untyped-node", f"{node_id} is neither defined nor typed",
                           doc_id, rec.line)
        typ = existing.type if existing is not None else schema.node_type(declared).name
        if existing is not None and declared is not None:
            typ = schema.more_specific(existing.type, schema.node_type(declared).name) or existing.type
        types.append(typ)
    if not schema.allows(et.name, types[0], types[1]):
        return Problem("error", "schema-violation",
                       f"{s} ({types[0]}) {et.name} {o} ({types[1]}) is not allowed by schema "
                       f"{schema.name!r}: {et.name} goes from {'/'.join(et.domain)} to "
                       f"{'/'.join(et.range)}", doc_id, rec.line)
    for node_id, typ, label in ((s, types[0], s_label), (o, types[1], o_label)):
        kg.add_node(node_id, typ, label or _default_label(node_id))
    kg.add_assertion(Assertion(s, et.name, o, doc_id, extractor, when, rec.confidence, rec.line,
                               rec.pointer, rec.evidence, rec.span, rec.access))
    return None


def _default_label(node_id: str) -> str:
    return node_id.rsplit("/", 1)[-1].split(":", 1)[-1] if "/" in node_id else node_id


def build_graph(paths: Sequence[str | Path], schema: Schema | str | Path | None = None, *,
                timestamp: float | None = None, validate: bool = True,
                progress: Progress | None = None, max_file_bytes: int = 20 * 1024 * 1024) -> BuildResult:
    """Discover, extract and assemble a graph from files and folders; optionally SHACL-check it.

    ``timestamp`` fixes ``prov:generatedAtTime`` (seconds since the epoch); otherwise
    ``SOURCE_DATE_EPOCH`` or each source file's modification time is used, so the same
    inputs give the same graph.
    """
    schema = schema if isinstance(schema, Schema) else load_schema(schema or "software")
    files = discover(paths)
    roots = sorted({f.root for f in files})
    ctx = Context(schema, roots, max_file_bytes)
    extractions, problems = extract_all(files, ctx, progress)
    kg, more = assemble(extractions, schema, timestamp)
    result = BuildResult(kg, problems + more, {d: e[1] for d, e in extractions.items()})
    if validate:
        result.validation = validate_graph(kg.to_rdf(), schema)
    return result


def build(paths: Sequence[str | Path], output: str | Path, schema: Schema | str | Path | None = None,
          **kwargs) -> BuildResult:
    """:func:`build_graph`, then write deterministic Turtle to ``output`` atomically."""
    result = build_graph(paths, schema, **kwargs)
    atomic_write(output, to_turtle(result.graph.triples(), result.graph.schema))
    result.output = str(output)
    return result
