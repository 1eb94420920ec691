"""Validating a graph, a file or a store against the schema's SHACL shapes, with either engine."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable, Sequence

import pyoxigraph as ox
from rdflib import Graph, URIRef
from rdflib.namespace import PROV, RDF, SH

from ..errors import InputError
from ..graph.model import doc_from_iri, id_from_iri, iri_values
from ..graph.rdf import triples_to_rdflib
from ..graph.sparqlcheck import refuse_service
from ..io.rdffile import (
    FORMATS,
    OXIGRAPH,
    add_quads,
    file_format,
    from_oxigraph,
    load_graph,
    read_quads,
)
from ..schema.model import Schema
from .. import vocab
from ..schema.namespaces import KG, SOURCE_BASE
from ..schema.shapes import all_shapes
from ..schema.vocabulary import vocabulary
from .compiler import Unsupported, compile_shapes
from .engine import Data, Result, run
from .hygiene import HygieneOptions
from .hygiene import hygiene as run_hygiene
from .neighbourhood import neighbourhood
from .report import ValidationReport, Violation

ENGINES = ("fast", "pyshacl")


def shapes_for(schema: Schema, extra: Sequence[str | Path] = ()) -> Graph:
    """The schema's shapes, the provenance shapes and any user shape files (Turtle); a
    SPARQL constraint or target with a ``SERVICE`` clause is refused, for both engines."""
    g = all_shapes(schema)
    for path in extra:
        shapes = load_graph(path)
        for pred in (SH.select, SH.ask, SH.construct):
            for query in shapes.objects(None, pred):
                refuse_service(str(query), str(path))
        for t in shapes:
            g.add(t)
    return g


def validate_graph(data: Graph, schema: Schema, *, engine: str = "fast",
                   shapes: Graph | None = None) -> ValidationReport:
    """Validate an rdflib graph against ``shapes`` (default: :func:`shapes_for` the schema).

    ``engine`` "fast" compiles the shapes to SPARQL run by pyoxigraph (see
    :mod:`kgbuild.validate.engine`); shapes it cannot compile are validated by pyshacl, and
    the report's ``note`` says why. "pyshacl" is the reference engine."""
    shapes = shapes if shapes is not None else all_shapes(schema)
    plan, note = _plan(shapes, engine)
    if plan is None:
        return _pyshacl(data, shapes, schema, note)
    db = ox.Store()
    db.extend(ox.parse(data.serialize(format="nt", encoding="utf-8"),  # keeps blank node labels
                       format=ox.RdfFormat.N_TRIPLES))
    return _fast(plan, Data(db, vocabulary(schema)), schema)


def validate_file(path: str | Path, schema: Schema, *, engine: str = "fast",
                  shapes: Graph | None = None, hygiene: HygieneOptions | None = None
                  ) -> ValidationReport:
    """Load an RDF file and validate it; see :func:`validate_graph`. A file that yields no
    triples is an :class:`InputError`: an empty graph would "conform" and hide the mistake.
    The fast engine reads the file straight into pyoxigraph (named graphs merged).
    ``hygiene``: also run those hygiene checks (:mod:`kgbuild.validate.hygiene`)."""
    shapes = shapes if shapes is not None else all_shapes(schema)
    plan, note = _plan(shapes, engine)
    path = Path(path)
    db = ox.Store()
    if file_format(path) in OXIGRAPH:
        read_quads(path, db.extend)
    else:
        db.extend(ox.parse(load_graph(path).serialize(format="nt", encoding="utf-8"),
                           format=ox.RdfFormat.N_TRIPLES))
    _require_triples(len(db), path)
    data = Data(db, vocabulary(schema), union=True)
    if plan is None:
        graph = Graph()
        add_quads(graph, db)
        report = _pyshacl(graph, shapes, schema, note)
    else:
        report = _fast(plan, data, schema)
    if hygiene is not None:
        report.hygiene = run_hygiene(data, hygiene)
    return report


def validate_store(store, *, engine: str = "fast", shapes: Graph | None = None,
                   focus: Iterable[str] | None = None, hygiene: HygieneOptions | None = None
                   ) -> ValidationReport:
    """Validate a :class:`~kgbuild.store.graphstore.GraphStore` in place (its named graphs
    merged). ``focus`` (IRIs) restricts validation to those focus nodes: see
    :func:`~kgbuild.validate.incremental.validate_changed`. ``hygiene``: also run those
    hygiene checks (on the focus nodes only, when given)."""
    schema = store.schema
    shapes = shapes if shapes is not None else all_shapes(schema)
    plan, note = _plan(shapes, engine)
    focus = sorted(set(focus)) if focus is not None else None
    data = Data(_database(store), vocabulary(schema), union=True,
                focus=[f"<{f}>" for f in focus] if focus is not None else None)
    if plan is None:
        report = _pyshacl(triples_to_rdflib(set(store.triples()), schema), shapes, schema, note, focus)
    else:
        report = _fast(plan, data, schema, focus)
    if focus is not None:
        report.scope = f"validated {len(focus):,} focus node(s) touched by the change"
    if hygiene is not None:
        report.hygiene = run_hygiene(data, hygiene)
    return report


def _database(store) -> ox.Store:
    """The store's pyoxigraph database (read only here): the engine's :class:`Data` runs
    its queries on a pyoxigraph store, as for a file (:meth:`GraphStore.sparql` has another
    signature)."""
    return store._db.db


def _require_triples(n: int, path: Path) -> None:
    if n == 0:
        raise InputError(f"no triples read from this {FORMATS[path.suffix.lower()]} file: "
                         f"nothing to validate", str(path), code="no-triples")


def _plan(shapes: Graph, engine: str):
    """``(compiled shapes or None, note)``: None means run pyshacl."""
    if engine not in ENGINES:
        raise InputError(f"unknown validation engine {engine!r} (one of {', '.join(ENGINES)})")
    if engine == "pyshacl":
        return None, None
    try:
        return compile_shapes(shapes), None
    except Unsupported as exc:
        return None, f"validated with pyshacl: the fast engine cannot compile {exc}"


class _quiet:
    """rdflib logs a warning with a traceback for every ill-typed literal it reads (the very
    thing validation reports): silenced while validating."""

    def __enter__(self):
        self.logger = logging.getLogger("rdflib.term")
        self.level = self.logger.level
        self.logger.setLevel(logging.ERROR)

    def __exit__(self, *exc):
        self.logger.setLevel(self.level)


def _fast(plan, data: Data, schema: Schema, focus: Sequence[str] | None = None) -> ValidationReport:
    """The plan's results on ``data``; for ``focus`` (IRIs), run on their neighbourhood only
    (:mod:`~kgbuild.validate.neighbourhood`), its results kept for the focus nodes. Reports
    locate violations in ``data`` itself."""
    with _quiet():
        where = data if focus is None else Data(neighbourhood(data.db, focus), data.vocabulary,
                                                union=data.union)
        results = _in_focus(run(plan, where), focus)
        return _report(results, schema, _rows(data), "fast", None)


def _rows(data: Data):
    """A query function giving rows of rdflib terms."""
    return lambda q: ((tuple(from_oxigraph(t) if t is not None else None for t in row))
                      for row in data.rows(q))


def _in_focus(results: Iterable[Result], focus: Sequence[str] | None) -> list[Result]:
    """The results whose focus node is one of ``focus`` (IRIs; None: all), in order."""
    if focus is None:
        return list(results)
    keep = {URIRef(f) for f in focus}
    return [r for r in results if r.focus in keep]


def _pyshacl(data: Graph, shapes: Graph, schema: Schema, note: str | None,
             focus: Sequence[str] | None = None) -> ValidationReport:
    from pyshacl import validate as shacl_validate  # the reference engine: loaded when it runs

    with _quiet():
        _, graph, _ = shacl_validate(data, shacl_graph=shapes, ont_graph=vocabulary(schema),
                                     inference="none", abort_on_first=False, allow_warnings=True,
                                     advanced=True)
    results = {Result(*(graph.value(r, p) for p in (SH.focusNode, SH.resultPath,
                                                    SH.sourceConstraintComponent, SH.value,
                                                    SH.resultSeverity, SH.resultMessage,
                                                    SH.sourceShape)))
               for r in graph.subjects(RDF.type, SH.ValidationResult)}
    results = sorted(_in_focus(results, focus), key=lambda r: tuple(str(x) for x in r))
    select = lambda q: (tuple(row) for row in data.query(q))
    return _report(results, schema, select, "pyshacl", note)


def _report(results: list[Result], schema: Schema, select, engine: str,
            note: str | None) -> ValidationReport:
    """Results as readable violations, each with its focus node's type and source location."""
    short = {**_SHORT, schema.namespace: f"{schema.prefix}:"}
    focus = sorted({r.focus for r in results if isinstance(r.focus, URIRef)})
    types, where = _types(focus, schema, select), locate(results, select)
    violations = []
    for r in results:
        violations.append(Violation(
            focus=show(r.focus, short),
            rule=show(r.shape, short) if isinstance(r.shape, URIRef) else show(r.component, short),
            message=str(r.message) if r.message is not None else show(r.component, short),
            severity=str(r.severity).rsplit("#", 1)[-1] if r.severity is not None else "Violation",
            path=show(r.path, short) if r.path is not None else None,
            value=show(r.value, short) if r.value is not None else None,
            focus_type="/".join(types.get(r.focus, ())) or None,
            component=show(r.component, short), where=where.get(r)))
    violations.sort(key=lambda v: (v.rule, v.message, v.focus, v.path or "", v.value or ""))
    conforms = not any(v.severity == "Violation" for v in violations)
    return ValidationReport(conforms, violations, engine, note, results=results)


_LOCATE_LIMIT = 10_000  # violations located per report (each costs a lookup)


def _types(focus: list, schema: Schema, select) -> dict:
    out: dict = {}
    for values in iri_values(focus[:_LOCATE_LIMIT]):
        query = f"SELECT ?f ?t WHERE {{ VALUES ?f {{ {values} }} ?f <{RDF.type}> ?t }}"
        for f, t in select(query):
            name = schema.type_by_iri.get(str(t))
            if name:
                out.setdefault(f, set()).add(name)
    return {f: sorted(names) for f, names in out.items()}


def locate(results: list[Result], select) -> dict[Result, str]:
    """``file:line`` of the assertion behind each result: the assertion itself when it is the
    focus; else one stating the focus's edge to the result's value; else the first assertion
    about the focus (as subject, then as object). Results without any are left out."""
    focus = sorted({r.focus for r in results if isinstance(r.focus, URIRef)})[:_LOCATE_LIMIT]
    own: dict = {}
    about: dict = {}
    derived, path, line = PROV.wasDerivedFrom, KG.path, KG.line
    for values in iri_values(focus):
        for f, file, ln in select(
                f"SELECT ?f ?file ?line WHERE {{ VALUES ?f {{ {values} }} ?f <{derived}> ?d . "
                f"?d <{path}> ?file . OPTIONAL {{ ?f <{line}> ?line }} }}"):
            own[f] = min(own.get(f, (str(file), _int(ln))), (str(file), _int(ln)))
        for side, rank in ((RDF.subject, 0), (RDF.object, 1)):
            other = RDF.object if side == RDF.subject else RDF.subject
            for f, o, file, ln in select(
                    f"SELECT ?f ?o ?file ?line WHERE {{ VALUES ?f {{ {values} }} ?a <{side}> ?f ; "
                    f"<{other}> ?o ; <{derived}> ?d . ?d <{path}> ?file . "
                    f"OPTIONAL {{ ?a <{line}> ?line }} }}"):
                about.setdefault(f, []).append((rank, o, str(file), _int(ln)))
    out = {}
    for r in results:
        if r.focus in own:
            best = own[r.focus]
        else:
            cands = about.get(r.focus, [])
            edge = [c for c in cands if r.value is not None and c[1] == r.value and c[0] == 0]
            pick = min(edge or cands, key=lambda c: (c[0], c[2], c[3]), default=None)
            best = (pick[2], pick[3]) if pick else None
        if best is not None:
            out[r] = f"{best[0]}:{best[1]}" if best[1] else best[0]
    return out


def _int(term) -> int:
    try:
        return int(str(term)) if term is not None else 0
    except ValueError:
        return 0


_SHORT = {vocab.SH: "sh:", vocab.XSD: "xsd:", vocab.RDF: "rdf:", vocab.RDFS: "rdfs:",
          vocab.KG: "kg:", vocab.PROV: "prov:", vocab.DCTERMS: "dcterms:"}


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
