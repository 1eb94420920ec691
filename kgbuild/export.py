"""Deterministic serialisation and atomic file writes.

The Turtle writer is kgbuild's own so that the output is byte-identical for the same graph:
fixed prefixes, subjects grouped (nodes, then assertions, then sources) and sorted, ``rdf:type``
first then predicates and objects sorted, every literal on one line. That makes the graph
diff-able in git: one changed edge is a few changed lines.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Iterable

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from .model import ASSERTION_BASE, ID_BASE, SOURCE_BASE, bind_prefixes
from .schema import Schema

RDF_FORMATS = {"turtle": "ttl", "nt": "nt", "jsonld": "jsonld", "trig": "trig", "xml": "rdf"}
_PN_LOCAL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_.:-]*[A-Za-z0-9_:-])?$")


def atomic_write(path: str | Path, data: str | bytes) -> None:
    """Write to a temporary file beside ``path``, fsync, then rename over it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _nt_literal(lit: Literal) -> str:
    s = str(lit).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    s = s.replace("\t", "\\t")
    return f'"{s}"'


class _Terms:
    def __init__(self, prefixes: list[tuple[str, str]]):
        # longest namespace first so the most specific prefix wins
        self.prefixes = sorted(prefixes, key=lambda p: -len(p[1]))
        self.used: set[tuple[str, str]] = set()

    def iri(self, iri: str) -> str:
        for prefix, ns in self.prefixes:
            if iri.startswith(ns) and _PN_LOCAL.match(iri[len(ns):]):
                self.used.add((prefix, ns))
                return f"{prefix}:{iri[len(ns):]}"
        return "<" + iri.replace(">", "%3E").replace(" ", "%20") + ">"

    def term(self, t) -> str:
        if isinstance(t, URIRef):
            return self.iri(str(t))
        if isinstance(t, Literal):
            if t.language:
                return f"{_nt_literal(t)}@{t.language}"
            if t.datatype is None or t.datatype == XSD.string:
                return _nt_literal(t)
            if t.datatype == XSD.integer and re.fullmatch(r"-?[0-9]+", str(t)):
                return str(t)
            return f"{_nt_literal(t)}^^{self.iri(str(t.datatype))}"
        if isinstance(t, BNode):
            raise ValueError("kgbuild graphs contain no blank nodes")
        return str(t)


def _subject_key(s: str) -> tuple[int, str]:
    for rank, base in enumerate((ID_BASE, ASSERTION_BASE, SOURCE_BASE)):
        if s.startswith(base):
            return rank, s
    return 3, s


def to_turtle(triples: Iterable[tuple], schema: Schema) -> str:
    """Deterministic Turtle for a set of triples (duplicates are dropped)."""
    g = Graph()
    bind_prefixes(g, schema)
    terms = _Terms([(p, str(ns)) for p, ns in g.namespaces() if p != "id"])
    by_subject: dict[str, dict[str, set[str]]] = {}
    for s, p, o in triples:
        preds = by_subject.setdefault(str(s), {})
        key = "a" if p == RDF.type else terms.iri(str(p))
        preds.setdefault(key, set()).add(terms.term(o))
    body = []
    for s in sorted(by_subject, key=_subject_key):
        preds = by_subject[s]
        order = sorted(preds, key=lambda k: (k != "a", k))
        parts = [f"{k} {(',' + chr(10) + '        ').join(sorted(preds[k]))}" for k in order]
        body.append("")
        body.append(f"{terms.iri(s)} " + " ;\n    ".join(parts) + " .")
    head = [f"@prefix {p}: <{ns}> ." for p, ns in sorted(terms.used)]
    return "\n".join(head + body) + "\n"


def to_ntriples(triples: Iterable[tuple]) -> str:
    """Sorted, de-duplicated N-Triples."""
    lines = {f"{s.n3()} {p.n3()} {o.n3()} ." for s, p, o in triples}
    return "\n".join(sorted(lines)) + ("\n" if lines else "")


def serialize(triples: Iterable[tuple], schema: Schema, fmt: str = "turtle") -> str:
    """Serialise to ``turtle`` or ``nt`` (kgbuild's deterministic writers) or, through rdflib,
    ``jsonld``, ``trig`` or ``xml``."""
    if fmt == "turtle":
        return to_turtle(triples, schema)
    if fmt == "nt":
        return to_ntriples(triples)
    if fmt not in RDF_FORMATS:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(RDF_FORMATS)})")
    g = Graph()
    bind_prefixes(g, schema)
    for t in triples:
        g.add(t)
    return g.serialize(format={"jsonld": "json-ld"}.get(fmt, fmt))
