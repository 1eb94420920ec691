"""SHACL validation (pyshacl) of a graph against its schema's shapes, with readable reports."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox
from pyshacl import validate as shacl_validate
from rdflib import Graph, URIRef
from rdflib.namespace import RDF, SH

from ..errors import InputError
from ..graph.model import doc_from_iri, id_from_iri
from ..graph.rdf import add_quads
from ..schema.model import Schema
from ..schema.namespaces import SOURCE_BASE
from ..schema.shapes import all_shapes
from ..schema.vocabulary import vocabulary

FORMATS = {".ttl": "turtle", ".nt": "nt", ".nq": "nquads", ".trig": "trig", ".jsonld": "json-ld",
           ".json": "json-ld", ".rdf": "xml", ".owl": "xml", ".n3": "n3"}


@dataclass(frozen=True)
class Violation:
    """One SHACL result: the node, the rule it breaks, and the message."""

    focus: str
    rule: str
    message: str
    severity: str
    path: str | None = None
    value: str | None = None
    focus_type: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class ValidationReport:
    conforms: bool
    violations: list[Violation] = field(default_factory=list)

    def groups(self) -> dict[str, list[Violation]]:
        """Violations grouped by rule message, largest group first, then by message."""
        out: dict[str, list[Violation]] = {}
        for v in self.violations:
            out.setdefault(f"{v.rule}: {v.message}", []).append(v)
        return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    def to_dict(self) -> dict:
        return {"conforms": self.conforms, "violations": len(self.violations),
                "groups": [{"problem": k, "count": len(vs), "results": [v.to_dict() for v in vs]}
                           for k, vs in self.groups().items()]}

    def render(self, limit: int = 10) -> str:
        """Text report: one block per problem, listing up to ``limit`` nodes each."""
        if self.conforms:
            return "conforms: the graph satisfies every shape"
        lines = [f"does not conform: {len(self.violations)} violation(s) "
                 f"in {len(self.groups())} group(s)"]
        for problem, vs in self.groups().items():
            lines.append(f"\n{problem}  ({len(vs)})")
            for v in vs[:limit]:
                extra = f" {v.path}" if v.path else ""
                extra += f" -> {v.value}" if v.value and v.value != v.focus else ""
                typ = f" (a {v.focus_type})" if v.focus_type else ""
                lines.append(f"  - {v.focus}{typ}{extra}")
            if len(vs) > limit:
                lines.append(f"  ... and {len(vs) - limit} more")
        return "\n".join(lines)


def load_graph(path: str | Path) -> Graph:
    """Parse an RDF file (format from its extension) into one graph; raises
    :class:`InputError` located at the file and line.

    TriG and N-Quads give the union of their graphs (the default graph and every named one),
    as ``kgbuild export`` writes one named graph per source document. Every format but N3 is
    read by pyoxigraph: linear in the input (rdflib's N-Triples reader is quadratic in a
    literal's length), strict, and it never fetches anything (a remote JSON-LD ``@context``
    is an error). Only a regular file is opened: a FIFO or a device is refused, never read.
    """
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"unknown RDF file extension {path.suffix!r} "
                         f"(one of {', '.join(sorted(FORMATS))})", str(path))
    g = Graph()
    with _open_regular(path) as fh:
        if fmt not in _OXIGRAPH:
            _parse_rdflib(g, fh, path, fmt)
            return g
        try:
            parser = ox.parse(fh, format=_OXIGRAPH[fmt], base_iri=path.absolute().as_uri())
            add_quads(g, parser)
        except SyntaxError as exc:
            raise InputError(f"cannot parse as {fmt}: {_syntax_message(exc)}", str(path),
                             exc.lineno if isinstance(exc.lineno, int) else None) from None
        except ValueError as exc:  # a term rdflib cannot hold (an RDF 1.2 triple term)
            raise InputError(f"cannot read as {fmt}: {exc}", str(path)) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    for prefix, namespace in sorted(parser.prefixes.items())[:_MAX_PREFIXES]:
        g.bind(prefix, namespace, override=False)  # as rdflib's own parsers do
    return g


_OXIGRAPH = {"turtle": ox.RdfFormat.TURTLE, "nt": ox.RdfFormat.N_TRIPLES,
             "nquads": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG,
             "json-ld": ox.RdfFormat.JSON_LD, "xml": ox.RdfFormat.RDF_XML}
_MAX_PREFIXES = 1000
_POSITION = re.compile(r"^Parser error at line \d+ (?:between columns (\d+) and \d+|column (\d+))"
                       r"(?: \(byte \d+\))?: ")


def _syntax_message(exc: SyntaxError) -> str:
    """pyoxigraph's message on one line, the line number left to the location."""
    lines = str(exc.msg or exc).strip().splitlines() or [type(exc).__name__]
    text = lines[0]
    m = _POSITION.match(text)
    if m:
        text = f"{text[m.end():]} (column {m.group(1) or m.group(2)})"
    return text[:300]


class _open_regular:
    """Open ``path`` for reading only when it is a regular file (a FIFO would block, a device
    never end): ``O_NONBLOCK`` first, then ``fstat``."""

    def __init__(self, path: Path):
        self.path = path
        self.fh = None

    def __enter__(self):
        where = str(self.path)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise InputError("no such file", where) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", where) from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "a device")
            raise InputError(f"not a regular file ({kind}); not read", where, code="not-regular")
        os.set_blocking(fd, True)
        self.fh = os.fdopen(fd, "rb")
        return self.fh

    def __exit__(self, *exc) -> None:
        self.fh.close()


def _parse_rdflib(g: Graph, fh, path: Path, fmt: str) -> None:
    try:
        g.parse(fh, format=fmt, publicID=path.absolute().as_uri())
    except Exception as exc:  # rdflib raises many parser-specific types
        msg = str(exc).strip().splitlines()
        line = getattr(exc, "lines", None)
        raise InputError(f"cannot parse as {fmt}: {msg[0][:300] if msg else type(exc).__name__}",
                         str(path), line if isinstance(line, int) else None) from None


def validate_graph(data: Graph, schema: Schema) -> ValidationReport:
    """Validate ``data`` against the schema's shapes and the provenance shapes."""
    vocab = vocabulary(schema)
    conforms, results, _ = shacl_validate(
        data, shacl_graph=all_shapes(schema), ont_graph=vocab, inference="none",
        abort_on_first=False, allow_warnings=True, advanced=True)
    violations = []
    types = {URIRef(iri): name for iri, name in schema.type_by_iri.items()}
    short = {**_SHORT, schema.namespace: f"{schema.prefix}:"}

    def _show(term) -> str:
        return show(term, short)

    for r in results.subjects(RDF.type, SH.ValidationResult):
        focus = results.value(r, SH.focusNode)
        shape = results.value(r, SH.sourceShape)
        comp = results.value(r, SH.sourceConstraintComponent)
        path = results.value(r, SH.resultPath)
        value = results.value(r, SH.value)
        msg = results.value(r, SH.resultMessage)
        sev = results.value(r, SH.resultSeverity)
        focus_types = [types[t] for t in data.objects(focus, RDF.type) if t in types]
        violations.append(Violation(
            focus=_show(focus),
            rule=_show(shape) if isinstance(shape, URIRef) else _show(comp),
            message=str(msg) if msg is not None else _show(comp),
            severity=str(sev).rsplit("#", 1)[-1] if sev is not None else "Violation",
            path=_show(path) if path is not None else None,
            value=_show(value) if value is not None else None,
            focus_type="/".join(sorted(focus_types)) or None))
    violations.sort(key=lambda v: (v.rule, v.message, v.focus, v.path or "", v.value or ""))
    return ValidationReport(bool(conforms), violations)


def validate_file(path: str | Path, schema: Schema) -> ValidationReport:
    """Load an RDF file and validate it; see :func:`validate_graph`. A file that yields no
    triples is an :class:`InputError`: an empty graph would "conform" and hide the mistake."""
    data = load_graph(path)
    if len(data) == 0:
        raise InputError(f"no triples read from this {FORMATS[Path(path).suffix.lower()]} file: "
                         f"nothing to validate", str(path), code="no-triples")
    return validate_graph(data, schema)


_SHORT = {"http://www.w3.org/ns/shacl#": "sh:", "http://www.w3.org/2001/XMLSchema#": "xsd:",
          "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf:",
          "http://www.w3.org/2000/01/rdf-schema#": "rdfs:", "https://kgbuild.dev/ns#": "kg:",
          "http://www.w3.org/ns/prov#": "prov:", "http://purl.org/dc/terms/": "dcterms:"}


def show(term, short: dict[str, str] = _SHORT) -> str:
    """A readable name: node IDs for kgbuild nodes, local names for shapes, short prefixes."""
    s = str(term)
    if isinstance(term, URIRef):
        ident = id_from_iri(s)
        if ident != s:
            return ident
        if s.startswith(SOURCE_BASE):
            return doc_from_iri(s)
        if "/shapes#" in s:
            return s.rsplit("#", 1)[1]
        for ns, prefix in short.items():
            if s.startswith(ns):
                return prefix + s[len(ns):]
    return s
