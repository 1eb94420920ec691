"""Deterministic serialisation and atomic file writes.

The Turtle writer is kgbuild's own so that the output is byte-identical for the same graph:
fixed prefixes, subjects grouped (nodes, then assertions, then sources) and sorted, ``rdf:type``
first then predicates and objects sorted, every literal on one line. That makes the graph
diff-able in git: one changed edge is a few changed lines.
"""

from __future__ import annotations

import json
import re
from typing import Iterable, Iterator

from rdflib.namespace import XSD

from ..errors import InvalidValue
from ..schema.model import Schema
from ..schema.namespaces import ASSERTION_BASE, ID_BASE, SOURCE_BASE, prefixes
from .model import A, Triple
from .rdf import triples_to_rdflib

RDF_FORMATS = {"turtle": "ttl", "nt": "nt", "jsonld": "jsonld", "xml": "rdf"}
XSD_INTEGER = str(XSD.integer)
_PN_LOCAL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.:-]*[A-Za-z0-9_:-])?$")


class Terms:
    """Shortens N-Triples terms to Turtle, remembering which prefixes were used."""

    def __init__(self, prefixes: list[tuple[str, str]]):
        # longest namespace first so the most specific prefix wins
        self.prefixes = sorted(prefixes, key=lambda p: -len(p[1]))
        self.namespaces = tuple(ns for _, ns in self.prefixes)
        self.used: set[tuple[str, str]] = set()

    def iri(self, iri: str) -> str:
        if not iri.startswith(self.namespaces):  # (most node IRIs: one test)
            return f"<{iri}>"
        for prefix, ns in self.prefixes:
            if iri.startswith(ns) and _PN_LOCAL.match(iri[len(ns):]):
                self.used.add((prefix, ns))
                return f"{prefix}:{iri[len(ns):]}"
        return f"<{iri}>"

    def term(self, t: str) -> str:
        if t.startswith("<"):
            return self.iri(t[1:-1])
        if t.startswith("_:"):
            raise InvalidValue("kgbuild graphs contain no blank nodes", code="blank-node")
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


def grouped(triples: Iterable[Triple], schema: Schema
            ) -> tuple[list[tuple[str, list[tuple[str, list[str]]]]], list[tuple[str, str]]]:
    """Triples in Turtle's order with shortened terms: ``[(subject, [(predicate or "a",
    sorted objects)])]`` (duplicates dropped) and the prefixes used, sorted. Each distinct
    term is shortened once, so this is linear in the triples plus the sorts."""
    terms = Terms([(p, ns) for p, ns in prefixes(schema).items() if p != "id"])
    predicates: dict[str, str] = {A: "a"}  # (rdf:type is "a" as a predicate only)
    short: dict[str, str] = {}
    by_subject: dict[str, dict[str, set[str]]] = {}
    for s, p, o in triples:
        preds = by_subject.get(s)
        if preds is None:
            preds = by_subject[s] = {}
        key = predicates.get(p)
        if key is None:
            key = predicates[p] = terms.term(p)
        obj = short.get(o)
        if obj is None:
            obj = short[o] = terms.term(o)
        objs = preds.get(key)
        if objs is None:
            preds[key] = {obj}
        else:
            objs.add(obj)
    out = []
    for s in sorted(by_subject, key=_subject_key):
        preds = by_subject[s]
        out.append((terms.term(s), [(k, sorted(preds[k])) for k in
                                    sorted(preds, key=lambda k: (k != "a", k))]))
    return out, sorted(terms.used)


def turtle_pieces(triples: Iterable[Triple], schema: Schema) -> Iterator[str]:
    """:func:`to_turtle` as text pieces, one per subject (for writing as they come)."""
    subjects, used = grouped(triples, schema)
    if not subjects and not used:
        yield "\n"
    for p, ns in used:
        yield f"@prefix {p}: <{ns}> .\n"
    sep = ",\n        "
    for s, preds in subjects:
        yield "\n" + f"{s} " + " ;\n    ".join(f"{k} {sep.join(objs)}" for k, objs in preds) + " .\n"


def to_turtle(triples: Iterable[Triple], schema: Schema) -> str:
    """Deterministic Turtle for N-Triples term tuples (duplicates are dropped)."""
    return "".join(turtle_pieces(triples, schema))


_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_CHAR_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'",
                 "\\": "\\"}


def unescape(lexical: str) -> str:
    """The text of an N-Triples string body (ECHAR and UCHAR escapes decoded)."""
    if "\\" not in lexical:
        return lexical
    return _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)) if m.group(3) is None
                       else _CHAR_ESCAPES.get(m.group(3), m.group(0)), lexical)


def jsonld_iri(term: str) -> str:
    return term[1:-1] if term.startswith("<") else term


def jsonld_value(term: str, integer: str) -> object:
    """A shortened Turtle object (see :func:`grouped`) as a JSON-LD value."""
    if not term.startswith('"'):
        if term.startswith("<") or not term.lstrip("-").isdigit():
            return {"@id": jsonld_iri(term)}
        return {"@value": term, "@type": integer}
    body, _, suffix = term[1:].rpartition('"')
    text = unescape(body)
    if suffix.startswith("@"):
        return {"@value": text, "@language": suffix[1:]}
    if suffix.startswith("^^"):
        return {"@value": text, "@type": jsonld_iri(suffix[2:])}
    return text


def jsonld_pieces(triples: Iterable[Triple], schema: Schema) -> Iterator[str]:
    """:func:`to_jsonld` as text pieces, one per node object."""
    subjects, used = grouped(triples, schema)
    names = {**dict(used), "xsd": str(XSD)}  # integers are written as "xsd:integer" values
    integer = "xsd:integer"
    yield f'{{"@context": {json.dumps(dict(sorted(names.items())), ensure_ascii=False)},\n "@graph": [\n'
    for i, (s, preds) in enumerate(subjects):
        node: dict = {"@id": jsonld_iri(s)}
        for k, objs in preds:
            if k == "a":
                node["@type"] = [jsonld_iri(o) for o in objs]
            else:
                node[jsonld_iri(k)] = [jsonld_value(o, integer) for o in objs]
        yield (",\n" if i else "") + json.dumps(node, ensure_ascii=False)
    yield "\n]}\n"


def to_jsonld(triples: Iterable[Triple], schema: Schema) -> str:
    """Deterministic compacted JSON-LD: the used prefixes as the ``@context`` and one node
    object per subject in the Turtle writer's order, one per line."""
    return "".join(jsonld_pieces(triples, schema))


def to_ntriples(triples: Iterable[Triple]) -> str:
    """Sorted, de-duplicated N-Triples."""
    lines = {f"{s} {p} {o} ." for s, p, o in triples}
    return "\n".join(sorted(lines)) + ("\n" if lines else "")


def serialize(triples: Iterable[Triple], schema: Schema, fmt: str = "turtle") -> str:
    """Serialise to ``turtle``, ``nt`` or ``jsonld`` (kgbuild's deterministic writers) or,
    through rdflib, ``xml``."""
    if fmt == "turtle":
        return to_turtle(triples, schema)
    if fmt == "nt":
        return to_ntriples(triples)
    if fmt == "jsonld":
        return to_jsonld(triples, schema)
    if fmt not in RDF_FORMATS:
        raise InvalidValue(f"unknown format {fmt!r} (one of {', '.join(RDF_FORMATS)})", code="usage")
    g = triples_to_rdflib(triples, schema)
    return g.serialize(format={"jsonld": "json-ld"}.get(fmt, fmt))


