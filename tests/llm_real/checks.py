"""What every accepted LLM assertion must satisfy, checked against the document text itself
(not through kgbuild's verifier): the evidence is a verbatim span of the document, both ends
are named in the passage it came from, the predicate is the schema's and the endpoint types
fit its domain and range."""

from __future__ import annotations

import re
from pathlib import Path

_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def norm(text: str) -> str:
    """Lower case, camelCase humps and punctuation as spaces, whitespace collapsed."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", _HUMP.sub(" ", text).lower()).split())


def names(node) -> set[str]:
    """Every name an entity goes by: its label, its aliases, its ID's name part."""
    out = {node.label, *node.aliases, node.id.rsplit("/", 1)[-1].replace("-", " ")}
    return {n for n in out if n and n.strip()}


def named_in(node, text: str) -> bool:
    haystack = f" {norm(text)} "
    return any(f" {norm(n)} " in haystack for n in names(node) if norm(n))


def problems(kg, root: Path, schema, extractor: str) -> list[str]:
    """Why accepted assertions of ``extractor`` break the rules (empty: none do)."""
    out = []
    texts: dict[str, str] = {}
    found = 0
    for (s, p, o), assertions in sorted(kg.edges().items()):
        for a in assertions:
            if a.extractor != extractor:
                continue
            found += 1
            doc = texts.setdefault(a.source, (root / a.source).read_text())
            where = f"{s} {p} {o} ({a.source}, evidence {a.evidence!r})"
            out.extend(f"{where}: {why}" for why in _assertion_problems(a, doc, kg, s, o))
            if p not in schema.edge_types:
                out.append(f"{where}: {p} is not an edge type of the schema")
                continue
            edge = schema.edge_types[p]
            if not any(schema.is_a(kg.nodes[s].type, t) for t in edge.domain):
                out.append(f"{where}: subject type {kg.nodes[s].type} is outside {edge.domain}")
            if not any(schema.is_a(kg.nodes[o].type, t) for t in edge.range):
                out.append(f"{where}: object type {kg.nodes[o].type} is outside {edge.range}")
    for a in kg.attribute_assertions.values():
        if a.extractor != extractor:
            continue
        found += 1
        doc = texts.setdefault(a.source, (root / a.source).read_text())
        where = f"{a.subject} {a.predicate} {a.object!r} ({a.source})"
        if a.predicate not in schema.attributes:
            out.append(f"{where}: {a.predicate} is not an attribute of the schema")
        out.extend(f"{where}: {why}" for why in _assertion_problems(a, doc, kg, a.subject, None))
    return out


def _assertion_problems(a, doc: str, kg, subject: str, obj: str | None) -> list[str]:
    out = []
    if not a.evidence or a.span is None:
        return ["no evidence or no span"]
    start, end = a.span
    quoted = doc[start:end]
    if " ".join(quoted.split()).lower() != " ".join(a.evidence.split()).lower():
        out.append(f"the document at {start}:{end} reads {quoted!r}, not the evidence")
    if " ".join(a.evidence.split()).lower() not in " ".join(doc.split()).lower():
        out.append("the evidence is not verbatim in the document")
    passage = kg.passages.get(a.chunk)
    text = doc[passage.start:passage.end] if passage else doc
    if not named_in(kg.nodes[subject], text):
        out.append(f"the subject ({names(kg.nodes[subject])}) is not named in its passage")
    if obj is not None and not named_in(kg.nodes[obj], text):
        out.append(f"the object ({names(kg.nodes[obj])}) is not named in its passage")
    return out
