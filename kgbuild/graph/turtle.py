"""Deterministic serialisation and atomic file writes.

The Turtle writer is kgbuild's own so that the output is byte-identical for the same graph:
fixed prefixes, subjects grouped (nodes, then assertions, then sources) and sorted, ``rdf:type``
first then predicates and objects sorted, every literal on one line. That makes the graph
diff-able in git: one changed edge is a few changed lines.
"""

from __future__ import annotations

import re
from typing import Iterable

from rdflib.namespace import XSD

from ..schema.model import Schema
from ..schema.namespaces import ASSERTION_BASE, ID_BASE, SOURCE_BASE, prefixes
from .model import A, Triple
from .rdf import triples_to_rdflib

RDF_FORMATS = {"turtle": "ttl", "nt": "nt", "jsonld": "jsonld", "xml": "rdf"}
XSD_INTEGER = str(XSD.integer)
_PN_LOCAL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.:-]*[A-Za-z0-9_:-])?$")


class _Terms:
    """Shortens N-Triples terms to Turtle, remembering which prefixes were used."""

    def __init__(self, prefixes: list[tuple[str, str]]):
        # longest namespace first so the most specific prefix wins
        self.prefixes = sorted(prefixes, key=lambda p: -len(p[1]))
        self.used: set[tuple[str, str]] = set()

    def iri(self, iri: str) -> str:
        for prefix, ns in self.prefixes:
            if iri.startswith(ns) and _PN_LOCAL.match(iri[len(ns):]):
                self.used.add((prefix, ns))
                return f"{prefix}:{iri[len(ns):]}"
        return f"<{iri}>"

    def term(self, t: str) -> str:
        if t.startswith("<"):
            return self.iri(t[1:-1])
        if t.startswith("_:"):
            raise ValueError("kgbuild graphs contain no blank nodes")
        if t.endswith(">") and '"^^<' in t:
            lexical, dt = t[:-1].rsplit('"^^<', 1)
            if dt == XSD_INTEGER and re.fullmatch(r'"-?[0-9]+', lexical):
                return lexical[1:]
            return f'{lexical}"^^{self.iri(dt)}'
        return t


def _subject_key(s: str) -> tuple[int, str]:
    for rank, base in enumerate((ID_BASE, ASSERTION_BASE, SOURCE_BASE)):
        if s.startswith("<" + base):
            return rank, s
    return 3, s


def to_turtle(triples: Iterable[Triple], schema: Schema) -> str:
    """Deterministic Turtle for N-Triples term tuples (duplicates are dropped)."""
    terms = _Terms([(p, ns) for p, ns in prefixes(schema).items() if p != "id"])
    by_subject: dict[str, dict[str, set[str]]] = {}
    for s, p, o in triples:
        preds = by_subject.setdefault(s, {})
        key = "a" if p == A else terms.term(p)
        preds.setdefault(key, set()).add(terms.term(o))
    body = []
    for s in sorted(by_subject, key=_subject_key):
        preds = by_subject[s]
        order = sorted(preds, key=lambda k: (k != "a", k))
        parts = [f"{k} {(',' + chr(10) + '        ').join(sorted(preds[k]))}" for k in order]
        body.append("")
        body.append(f"{terms.term(s)} " + " ;\n    ".join(parts) + " .")
    head = [f"@prefix {p}: <{ns}> ." for p, ns in sorted(terms.used)]
    return "\n".join(head + body) + "\n"


def to_ntriples(triples: Iterable[Triple]) -> str:
    """Sorted, de-duplicated N-Triples."""
    lines = {f"{s} {p} {o} ." for s, p, o in triples}
    return "\n".join(sorted(lines)) + ("\n" if lines else "")


def serialize(triples: Iterable[Triple], schema: Schema, fmt: str = "turtle") -> str:
    """Serialise to ``turtle`` or ``nt`` (kgbuild's deterministic writers) or, through rdflib,
    ``jsonld``, ``trig`` or ``xml``."""
    if fmt == "turtle":
        return to_turtle(triples, schema)
    if fmt == "nt":
        return to_ntriples(triples)
    if fmt not in RDF_FORMATS:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(RDF_FORMATS)})")
    g = triples_to_rdflib(triples, schema)
    return g.serialize(format={"jsonld": "json-ld"}.get(fmt, fmt))


