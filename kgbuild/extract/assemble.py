"""From one document's extraction records to the triples of its named graph.

Pure and per document: the same records always give the same triples, whatever else is in
the store, which is what lets a rebuild replace one document's graph and nothing else.
Edge direction is canonicalised through the schema, endpoint types come from the records
(or, for an endpoint a record leaves untyped, from ``known_type``), and edges that break the
schema's domain or range are reported instead of written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..errors import KgbuildError, Problem
from ..graph.model import (
    Assertion,
    KnowledgeGraph,
    Node,
    SourceDocument,
    Triple,
    assertion_triples,
    claim_triples,
    node_fact_triples,
    source_triples,
)
from ..schema.model import Schema
from .records import EdgeRecord, Extraction

Canonical = Callable[[str, str, str], str | None]


def document_triples(doc: SourceDocument, extraction: Extraction, extractor: str, schema: Schema,
                     generated_at: str, known_type: Callable[[str], str | None] = lambda _: None,
                     canonical: Canonical | None = None) -> tuple[list[Triple], list[Problem]]:
    """Triples for ``doc``'s named graph, and the problems found on the way.

    ``canonical(id, type, label)`` may rename an entity the document mentions without defining
    it (the alias registry's curated aliases and accepted decisions).
    """
    problems = list(extraction.problems)
    triples: list[Triple] = []
    local = KnowledgeGraph(schema)  # merges this document's records: types, attributes
    for rec in extraction.nodes:
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
    for rec in extraction.edges:
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
    for node_id, type_name, label in sorted(mentioned, key=lambda m: (m[0], m[1], m[2] or "")):
        triples.extend(claim_triples(node_id, type_name, label, False, schema))
    return triples, problems


def _edge(rec: EdgeRecord, doc: SourceDocument, extractor: str, schema: Schema, when: str,
          defined: dict[str, Node], known_type: Callable[[str], str | None],
          canonical: Canonical | None):
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
                          frozenset(rec.qualifiers))
    mentions = {(n, t, lbl) for n, t, lbl in typed if n not in defined}
    return assertion, mentions


def _default_label(node_id: str) -> str:
    return node_id.rsplit("/", 1)[-1] if "/" in node_id else node_id.split(":", 1)[-1]
