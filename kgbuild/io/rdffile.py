"""Reading RDF files: the one path every command takes (validate, ``--graph``, shapes files,
``schema import|infer``, ``eval``).

Every format but N3 is read by pyoxigraph: linear in the input (rdflib's N-Triples reader is
quadratic in a literal's length), strict, and it never fetches anything (a remote JSON-LD
``@context`` is an error). N3 goes to rdflib. An XML-based file (RDF/XML, OWL) first passes
:func:`~kgbuild.io.xmlguard.check_entities`: entity expansion is bounded. Only a regular file
is opened: a FIFO or a device is refused, never read. Every failure is an
:class:`~kgbuild.errors.InputError` naming the file (and the line, when the parser gives one).
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from pathlib import Path
from typing import Callable, Iterable

import pyoxigraph as ox
from rdflib import BNode, Graph, Literal, URIRef

from ..errors import InputError, InvalidValue
from ..vocab import XSD_STRING
from .text import file_kind
from .xmlguard import check_entities

FORMATS = {".ttl": "turtle", ".nt": "nt", ".nq": "nquads", ".trig": "trig", ".jsonld": "json-ld",
           ".json": "json-ld", ".rdf": "xml", ".owl": "xml", ".n3": "n3"}
OXIGRAPH = {"turtle": ox.RdfFormat.TURTLE, "nt": ox.RdfFormat.N_TRIPLES,
            "nquads": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG,
            "json-ld": ox.RdfFormat.JSON_LD, "xml": ox.RdfFormat.RDF_XML}
_MAX_PREFIXES = 1000
_POSITION = re.compile(r"^Parser error at line \d+ (?:between columns (\d+) and \d+|column (\d+))"
                       r"(?: \(byte \d+\))?: ")


def file_format(path: Path) -> str:
    """The format of an RDF file by its extension; an unknown one is an :class:`InputError`."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"unknown RDF file extension {path.suffix!r} "
                         f"(one of {', '.join(sorted(FORMATS))})", str(path))
    return fmt


def read_quads(path: str | Path, sink: Callable[[Iterable], object], fmt: str | None = None
               ) -> dict[str, str]:
    """Parse a file pyoxigraph reads (``fmt``, else by its extension), handing the quad
    iterator to ``sink`` (TriG and N-Quads: every graph; the others: the default graph);
    the file's prefixes."""
    path = Path(path)
    fmt = fmt or file_format(path)
    with open_regular(path) as fh:
        if fmt == "xml":
            check_entities(fh, str(path))
        try:
            parser = ox.parse(fh, format=OXIGRAPH[fmt], base_iri=path.absolute().as_uri())
            sink(parser)
        except SyntaxError as exc:
            raise InputError(f"cannot parse as {fmt}: {_syntax_message(exc)}", str(path),
                             exc.lineno if isinstance(exc.lineno, int) else None) from None
        except ValueError as exc:  # a term rdflib cannot hold (an RDF 1.2 triple term)
            raise InputError(f"cannot read as {fmt}: {exc}", str(path)) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    return parser.prefixes


def load_graph(path: str | Path, fmt: str | None = None, graph: Graph | None = None) -> Graph:
    """Parse an RDF file (``fmt``, else the format of its extension) into one rdflib graph
    (``graph``, else a new one), its prefixes bound; TriG and N-Quads give the union of their
    graphs, as ``kgbuild export`` writes one named graph per source document."""
    path = Path(path)
    fmt = fmt or file_format(path)
    g = Graph() if graph is None else graph
    if fmt not in OXIGRAPH:
        with open_regular(path) as fh:
            _parse_rdflib(g, fh, path, fmt)
        return g
    bind_file_prefixes(g, read_quads(path, lambda quads: add_quads(g, quads), fmt))
    return g


def bind_file_prefixes(g: Graph, prefixes: dict[str, str]) -> None:
    """Bind a file's prefixes (the first :data:`_MAX_PREFIXES` by name) in ``g``, keeping
    those already bound, as rdflib's own parsers do."""
    for prefix, namespace in sorted(prefixes.items())[:_MAX_PREFIXES]:
        g.bind(prefix, namespace, override=False)


def from_oxigraph(term):
    """The rdflib term of a pyoxigraph term (a simple literal has no datatype, as in rdflib);
    raises :class:`InvalidValue` (a ValueError) for an RDF 1.2 triple term, which rdflib cannot
    hold."""
    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return Literal(term.value, lang=term.language)
        dt = term.datatype.value
        return Literal(term.value) if dt == XSD_STRING else Literal(term.value, datatype=URIRef(dt))
    raise triple_term_error(term)


def triple_term_error(term) -> InvalidValue:
    """The error for a term kgbuild does not read: an RDF 1.2 triple term (neither rdflib nor
    the read model holds one)."""
    return InvalidValue(f"unsupported RDF term {type(term).__name__} (triple terms are not "
                        f"supported)", code="triple-term")


def add_quads(g: Graph, quads: Iterable) -> int:
    """Add pyoxigraph quads or triples to ``g`` (named graphs merged); how many were read."""
    n = 0

    def rows():
        nonlocal n
        for q in quads:
            n += 1
            yield from_oxigraph(q.subject), from_oxigraph(q.predicate), from_oxigraph(q.object), g

    g.addN(rows())
    return n


def _syntax_message(exc: SyntaxError) -> str:
    """pyoxigraph's message on one line, the line number left to the location."""
    lines = str(exc.msg or exc).strip().splitlines() or [type(exc).__name__]
    text = lines[0]
    m = _POSITION.match(text)
    if m:
        text = f"{text[m.end():]} (column {m.group(1) or m.group(2)})"
    return text[:300]


class open_regular:
    """Open ``path`` for reading only when it is a regular file (a FIFO would block, a device
    never end): ``O_NONBLOCK`` first, then ``fstat``; else ``not-a-regular-file``."""

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
            raise InputError(f"not a regular file ({file_kind(mode)}); not read", where,
                             code="not-a-regular-file")
        os.set_blocking(fd, True)
        self.fh = os.fdopen(fd, "rb")
        return self.fh

    def __exit__(self, *exc) -> None:
        self.fh.close()


def _parse_rdflib(g: Graph, fh, path: Path, fmt: str) -> None:
    try:
        with warnings.catch_warnings():  # rdflib's own deprecations, nothing a user can act on
            warnings.simplefilter("ignore", DeprecationWarning)
            g.parse(fh, format=fmt, publicID=path.absolute().as_uri())
    except Exception as exc:  # rdflib raises many parser-specific types
        msg = str(exc).strip().splitlines()
        line = getattr(exc, "lines", None)
        raise InputError(f"cannot parse as {fmt}: {msg[0][:300] if msg else type(exc).__name__}",
                         str(path), line if isinstance(line, int) else None) from None
