"""From one document's extraction records to the triples of its named graph.

Pure and per document: the same records always give the same triples, whatever else is in
the store, which is what lets a rebuild replace one document's graph and nothing else.
Edge direction is canonicalised through the schema, endpoint types come from the records
(or, for an endpoint a record leaves untyped, from ``known_type``), and edges that break the
schema's domain or range are reported instead of written.

Every document is bounded here, whatever its extractor did: at most
:data:`~kgbuild.extract.records.MAX_RECORDS` records (``too-many-records``), IDs of at most
:data:`MAX_ID_CHARS` characters (longer ones cannot be cut without merging distinct
entities: the record is left out, ``id-too-long``), string values (labels, attributes,
aliases) of at most :data:`~kgbuild.io.text.MAX_LITERAL_CHARS` (cut, ``literal-too-long``)
and evidence of at most :data:`~kgbuild.io.text.MAX_EVIDENCE_CHARS` (cut with a marker).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..errors import KgbuildError, Problem
from ..graph.model import (
    Assertion,
    KnowledgeGraph,
    Node,
    Passage,
    SourceDocument,
    Triple,
    assertion_triples,
    claim_triples,
    node_fact_triples,
    passage_triples,
    source_triples,
)
from ..io.text import MAX_EVIDENCE_CHARS, MAX_LITERAL_CHARS, clip, one_line
from ..schema.model import Schema
from .records import MAX_RECORDS, EdgeRecord, Extraction, NodeRecord

MAX_ID_CHARS = 2048  # an entity ID (a ref, a purl, a document-scoped name)
MAX_PROBLEMS = 1000  # problems reported for one document (then one saying how many more)
MAX_MESSAGE_CHARS = 500

Canonical = Callable[[str, str, str], str | None]


def document_triples(doc: SourceDocument, extraction: Extraction, extractor: str, schema: Schema,
                     generated_at: str, known_type: Callable[[str], str | None] = lambda _: None,
                     canonical: Canonical | None = None) -> tuple[list[Triple], list[Problem]]:
    """Triples for ``doc``'s named graph, and the problems found on the way.

    ``canonical(id, type, label)`` may rename an entity the document mentions without defining
    it (the alias registry's curated aliases and accepted decisions).
    """
    problems = list(extraction.problems)
    nodes, edges = _bounded(extraction, doc.id, problems)
    triples: list[Triple] = []
    local = KnowledgeGraph(schema)  # merges this document's records: types, attributes
    for rec in nodes:
        try:
            node = local.add_node(rec.id, rec.type, rec.label, source=doc.id, **rec.attributes)
        except KgbuildError as exc:
            problems.append(Problem("error", "node-conflict", exc.message, doc.id, rec.line))
            continue
        node.aliases.update(a for a in rec.aliases if a and a != rec.label)
        node.access.update(rec.access | doc.access)
    defined = local.nodes
    for node in sorted(defined.values(), key=lambda n: n.id):
        triples.extend(claim_triples(node.id, node.type, node.label, True, schema))
        triples.extend(node_fact_triples(node, schema))
    mentioned: set[tuple[str, str, str | None]] = set()
    own: set[str] = set()
    for rec in edges:
        out = _edge(rec, doc, extractor, schema, generated_at, defined, known_type, canonical)
        if isinstance(out, Problem):
            problems.append(out)
            continue
        assertion, mentions = out
        triples.extend(assertion_triples(assertion, schema))
        mentioned.update(mentions)
        if assertion.source == doc.id:
            own.add(assertion.key)
    triples[:0] = source_triples(replace(doc, assertions=len(own) if extraction.exhaustive else None))
    for p in extraction.passages:  # the text units an LLM read (see kgbuild.extract.text)
        triples.extend(passage_triples(Passage(p.id, doc.id, p.start, p.end,
                                               clip(p.text, MAX_LITERAL_CHARS), p.title,
                                               p.section, doc.access)))
    for node_id, type_name, label in sorted(mentioned, key=lambda m: (m[0], m[1], m[2] or "")):
        triples.extend(claim_triples(node_id, type_name, label, False, schema))
    return triples, _reported(problems, doc.id)


def _edge(rec: EdgeRecord, doc: SourceDocument, extractor: str, schema: Schema, when: str,
          defined: dict[str, Node], known_type: Callable[[str], str | None],
          canonical: Canonical | None):
    if rec.literal:
        return _attribute(rec, doc, extractor, schema, when, defined, known_type)
    try:
        et, inverted = schema.predicate(rec.predicate)
    except KgbuildError as exc:
        return Problem("error", "unknown-edge", exc.message, doc.id, rec.line)
    ends = [(rec.subject, rec.subject_type, rec.subject_label),
            (rec.object, rec.object_type, rec.object_label)]
    if inverted:
        ends.reverse()
    typed = []
    for node_id, declared, label in ends:
        local = defined[node_id].type if node_id in defined else None
        try:
            declared = schema.node_type(declared).name if declared else None
        except KgbuildError as exc:
            return Problem("error", "unknown-type", exc.message, doc.id, rec.line)
        candidates = [t for t in (local, declared) if t] or [t for t in (known_type(node_id),) if t]
        if not candidates:
            return Problem("error", "untyped-node", f"{node_id} is neither defined nor typed",
                           doc.id, rec.line)
        typ = candidates[0]
        for other in candidates[1:]:
            typ = schema.more_specific(typ, other) or typ
        label = label or _default_label(node_id)
        if canonical is not None and local is None:
            renamed = canonical(node_id, typ, label)
            if renamed and renamed != node_id:
                node_id, label = renamed, None
                typ = (defined[node_id].type if node_id in defined else known_type(node_id)) or typ
        typed.append((node_id, typ, label))
    (s, s_type, _), (o, o_type, _) = typed
    if not schema.allows(et.name, s_type, o_type):
        return Problem("error", "schema-violation",
                       f"{s} ({s_type}) {et.name} {o} ({o_type}) is not allowed by schema "
                       f"{schema.name!r}: {et.name} goes from {'/'.join(et.domain)} to "
                       f"{'/'.join(et.range)}", doc.id, rec.line)
    if not 0.0 <= rec.confidence <= 1.0:
        return Problem("error", "bad-confidence", f"confidence {rec.confidence} outside [0, 1]",
                       doc.id, rec.line)
    assertion = Assertion(s, et.name, o, rec.source or doc.id, extractor, when, rec.confidence, rec.line,
                          rec.pointer, rec.evidence, rec.span, frozenset(rec.access | doc.access),
                          frozenset(rec.qualifiers), rec.chunk)
    mentions = {(n, t, lbl) for n, t, lbl in typed if n not in defined}
    return assertion, mentions


def _attribute(rec: EdgeRecord, doc: SourceDocument, extractor: str, schema: Schema, when: str,
               defined: dict[str, Node], known_type: Callable[[str], str | None]):
    """An attribute value stated about an entity (any document's): the value triple and its
    assertion, the literal as ``rdf:object``."""
    if rec.predicate not in schema.attributes:
        return Problem("error", "unknown-attribute", f"unknown attribute {rec.predicate!r} for "
                       f"schema {schema.name!r}", doc.id, rec.line)
    local = defined[rec.subject].type if rec.subject in defined else None
    try:
        declared = schema.node_type(rec.subject_type).name if rec.subject_type else None
    except KgbuildError as exc:
        return Problem("error", "unknown-type", exc.message, doc.id, rec.line)
    typ = local or declared or known_type(rec.subject)
    if typ is None:
        return Problem("error", "untyped-node", f"{rec.subject} is neither defined nor typed",
                       doc.id, rec.line)
    if not 0.0 <= rec.confidence <= 1.0:
        return Problem("error", "bad-confidence", f"confidence {rec.confidence} outside [0, 1]",
                       doc.id, rec.line)
    assertion = Assertion(rec.subject, rec.predicate, clip(rec.object, MAX_LITERAL_CHARS),
                          rec.source or doc.id, extractor, when, rec.confidence, rec.line,
                          rec.pointer, rec.evidence, rec.span, frozenset(rec.access | doc.access),
                          frozenset(rec.qualifiers), rec.chunk, literal=True)
    mentions = set() if rec.subject in defined else {
        (rec.subject, typ, rec.subject_label or _default_label(rec.subject))}
    return assertion, mentions


def _default_label(node_id: str) -> str:
    return node_id.rsplit("/", 1)[-1] if "/" in node_id else node_id.split(":", 1)[-1]


def _bounded(extraction: Extraction, doc_id: str, problems: list[Problem]
             ) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """The records of one document within the bounds (see the module's docstring); one
    problem per kind of bound hit, at the first record that hit it, with the count."""
    nodes, edges = extraction.nodes, extraction.edges
    if len(nodes) + len(edges) > MAX_RECORDS:
        first = nodes[MAX_RECORDS] if len(nodes) > MAX_RECORDS else edges[MAX_RECORDS - len(nodes)]
        if not extraction.capped:
            problems.append(Problem("error", "too-many-records",
                                    f"the file yields more than {MAX_RECORDS:,} entities and "
                                    f"relations; the rest is left out", doc_id, first.line))
        nodes = nodes[:MAX_RECORDS]
        edges = edges[:MAX_RECORDS - len(nodes)]
    hits: dict[str, list] = {}  # code -> [first line, count]

    def hit(code: str, line: int | None) -> None:
        if code in hits:
            hits[code][1] += 1
        else:
            hits[code] = [line, 1]

    def text(value: object, line: int | None) -> object:
        if isinstance(value, str) and len(value) > MAX_LITERAL_CHARS:
            hit("literal-too-long", line)
            return clip(value, MAX_LITERAL_CHARS)
        return value

    kept_nodes = []
    for rec in nodes:
        if len(rec.id) > MAX_ID_CHARS:
            hit("id-too-long", rec.line)
            continue
        if len(rec.label) > MAX_LITERAL_CHARS or any(
                len(a) > MAX_LITERAL_CHARS for a in rec.aliases) or any(
                len(v) > MAX_LITERAL_CHARS if isinstance(v, str) else
                any(isinstance(x, str) and len(x) > MAX_LITERAL_CHARS for x in v)
                for v in rec.attributes.values() if isinstance(v, (str, list, tuple))):
            attrs = {k: text(v, rec.line) if isinstance(v, str) else
                     [text(x, rec.line) for x in v] if isinstance(v, (list, tuple)) else v
                     for k, v in rec.attributes.items()}
            aliases = tuple(a for a in rec.aliases if len(a) <= MAX_LITERAL_CHARS)
            if len(aliases) < len(rec.aliases):
                hit("literal-too-long", rec.line)
            rec = replace(rec, label=text(rec.label, rec.line), attributes=attrs, aliases=aliases)
        kept_nodes.append(rec)
    kept_edges = []
    for rec in edges:
        if len(rec.subject) > MAX_ID_CHARS or len(rec.object) > MAX_ID_CHARS:
            hit("id-too-long", rec.line)
            continue
        if (rec.evidence is not None and len(rec.evidence) > MAX_EVIDENCE_CHARS) or any(
                len(x) > MAX_LITERAL_CHARS for x in (rec.subject_label or "", rec.object_label or "")):
            rec = replace(rec, evidence=None if rec.evidence is None else clip(rec.evidence),
                          subject_label=text(rec.subject_label, rec.line),
                          object_label=text(rec.object_label, rec.line))
        kept_edges.append(rec)
    for code, (line, count) in hits.items():
        many = f" ({count:,} in this file; this is the first)" if count > 1 else ""
        if code == "id-too-long":
            problems.append(Problem("error", code, f"an entity ID is longer than {MAX_ID_CHARS:,} "
                                    f"characters: left out{many}", doc_id, line))
        else:
            problems.append(Problem("warning", code, f"a value longer than {MAX_LITERAL_CHARS:,} "
                                    f"characters was cut{many}", doc_id, line))
    return kept_nodes, kept_edges


def _reported(problems: list[Problem], doc_id: str) -> list[Problem]:
    """The problems of one document as reported: each message one line of at most
    :data:`MAX_MESSAGE_CHARS`, at most :data:`MAX_PROBLEMS` of them and then one that counts
    the rest (a file of a million bad lines must not make a million-line report)."""
    out = []
    for p in problems[:MAX_PROBLEMS]:
        if len(p.message) > MAX_MESSAGE_CHARS or "\n" in p.message or "\r" in p.message:
            p = replace(p, message=one_line(p.message, MAX_MESSAGE_CHARS))
        out.append(p)
    if len(problems) > MAX_PROBLEMS:
        rest = problems[MAX_PROBLEMS:]
        errors = sum(p.severity == "error" for p in rest)
        out.append(Problem("error" if errors else "warning", "too-many-problems",
                           f"{len(rest):,} more problems in this file are not listed "
                           f"({errors:,} errors)", doc_id, rest[0].line))
    return out
