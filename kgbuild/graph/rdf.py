"""Reading RDF (rdflib graphs, store quads) into a :class:`KnowledgeGraph`, and back to rdflib.

Any RDF graph can be read, not only the ones kgbuild writes. Nodes are the IRIs typed with a
schema type (or, when the schema has a node type whose IRI is ``rdfs:Resource``, every IRI
without another schema type). A node's ID is its ``dcterms:identifier`` when it has one, else
the ID its IRI encodes: the part after ``<base>id/`` for kgbuild's own IRIs, the full IRI for
any other. Edges and assertions are mapped through those IRIs, so a graph whose nodes have
their own IRIs (``http://example.org/person/42``) and identifiers (``"p42"``) keeps its edges.
Anything that cannot be read (an assertion without ``rdf:subject``, an unknown predicate, two
nodes claiming one ID) is skipped with a one-line warning, never an exception.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable
from urllib.parse import unquote

import pyoxigraph as ox

from ..errors import Problem
from ..schema.model import Schema
from ..vocab import (
    ASSERTION_BASE,
    CATCH_ALL,
    DCTERMS,
    KG,
    PROV,
    RDF,
    RDFS,
    SKOS,
    SOURCE_BASE,
    XSD_STRING,
)
from .model import (
    PASSAGE_BASE,
    SECTION_SEPARATOR,
    Assertion,
    KnowledgeGraph,
    Node,
    Passage,
    SourceDocument,
    Triple,
    doc_from_iri,
    id_from_iri,
    lit,
)

if TYPE_CHECKING:  # (rdflib is imported by the functions that read or make its graphs)
    from rdflib import Graph


_RDF_TYPE, _LABEL, _IDENT, _ALT = RDF + "type", RDFS + "label", DCTERMS + "identifier", SKOS + "altLabel"
_ACCESS, _DECLARED, _QUALIFIER = KG + "accessLabel", KG + "declaredLabel", KG + "qualifier"
_SUBJECT, _PREDICATE, _OBJECT = RDF + "subject", RDF + "predicate", RDF + "object"
_ASSERTION = KG + "Assertion"
# what an assertion says besides its type: read from foreign (non assertion/ IRI) statements too
_STATEMENT = frozenset({_SUBJECT, _PREDICATE, _OBJECT, PROV + "wasDerivedFrom", KG + "extractor",
                        PROV + "generatedAtTime", KG + "confidence", KG + "line",
                        KG + "jsonPointer", KG + "evidence", KG + "spanStart", KG + "spanEnd",
                        KG + "chunk"})


def triples_to_rdflib(triples: Iterable[Triple], schema: Schema) -> Graph:
    """Parse N-Triples term tuples into an rdflib graph.

    Parsed by pyoxigraph, whose reader is linear in the input: rdflib's own N-Triples reader
    takes time quadratic in a literal's length (minutes for one 4 MB literal)."""
    from rdflib import Graph

    from ..io.rdffile import add_quads
    from ..schema.namespaces import bind_prefixes

    g = Graph()
    bind_prefixes(g, schema)
    data = "\n".join(f"{s} {p} {o} ." for s, p, o in triples).encode("utf-8")
    add_quads(g, ox.parse(data, format=ox.RdfFormat.N_TRIPLES, lenient=True))
    return g


def from_rdf(g: Graph, schema: Schema, problems: list[Problem] | None = None,
             source: str = "graph") -> KnowledgeGraph:
    """Read an rdflib graph (a kgbuild export or any other RDF) into a model.

    Warnings about what was skipped are appended to ``problems`` (when given), located at
    ``source``. Blank nodes are read as ``_:label``; a triple whose predicate is an edge type
    but whose object is a literal is not an edge and is skipped (counted per predicate).
    """
    from rdflib import BNode, Literal

    def plain(term) -> str:
        return f"_:{term}" if isinstance(term, BNode) else str(term)

    return _from_terms(((plain(s), str(p), plain(o), isinstance(o, Literal)) for s, p, o in g),
                       schema, problems, source)


def from_oxigraph_quads(quads: Iterable, schema: Schema, problems: list[Problem] | None = None,
                        source: str = "graph") -> KnowledgeGraph:
    """:func:`from_rdf` of pyoxigraph's quads or triples (named graphs merged), read as
    they are parsed, no rdflib term made; an RDF 1.2 triple term raises
    :class:`~kgbuild.errors.InvalidValue`."""
    def plain(term) -> str:
        if isinstance(term, (ox.NamedNode, ox.Literal)):
            return term.value
        if isinstance(term, ox.BlankNode):
            return f"_:{term.value}"
        from ..io.rdffile import triple_term_error

        raise triple_term_error(term)

    return _from_terms(((plain(q.subject), q.predicate.value, plain(q.object),
                         isinstance(q.object, ox.Literal)) for q in quads),
                       schema, problems, source)


def _from_terms(terms: Iterable[tuple[str, str, str, bool]], schema: Schema,
                problems: list[Problem] | None, source: str) -> KnowledgeGraph:
    """The model of plain triples ``(subject, predicate, object, object is a literal)``."""
    edge_iris = set(schema.edge_by_iri) | {e.inverse_iri for e in schema.edge_types.values()
                                           if e.inverse_iri}
    literal_edges: dict[str, int] = {}

    def rows():
        for s, pred, o, literal in terms:
            if literal and pred in edge_iris:
                literal_edges[pred] = literal_edges.get(pred, 0) + 1
                continue
            yield s, pred, o, ""

    kg = from_quads(rows(), schema, problems, source)
    if problems is not None:
        for pred, n in sorted(literal_edges.items()):
            problems.append(_warning("literal-edge", f"<{pred}>: {n} triple(s) with a literal "
                                     f"object skipped (an edge links two nodes)", source))
    return kg


def rdflib_term(term) -> str:
    """An rdflib term as an N-Triples term string (blank nodes keep rdflib's ``_:`` form)."""
    from rdflib import Literal, URIRef

    if isinstance(term, Literal):
        if term.language:
            return f"{lit(str(term))}@{term.language}"
        dt = str(term.datatype) if term.datatype and str(term.datatype) != XSD_STRING else None
        return lit(str(term), dt)
    if isinstance(term, URIRef):
        return f"<{term}>"
    return term.n3()


def _warning(code: str, message: str, source: str) -> Problem:
    return Problem("warning", code, message, source)


def from_quads(rows: Iterable[tuple[str, str, str, str]], schema: Schema,
               problems: list[Problem] | None = None, source: str = "graph") -> KnowledgeGraph:
    """Build a model from quads as plain values ``(subject, predicate, object, graph)``: IRIs
    without brackets (blank nodes as ``_:label``), literals as their lexical form (the
    predicate says which). Each quad is looked at once, with no term parsing.

    ``defined_in`` comes from the documents' label claims (a store's graphs; a file has none).
    Edges between typed nodes that have no assertion are kept in ``untyped_edges``: they can
    be walked but carry no evidence. A triple using an edge type's inverse IRI is read as the
    stored edge, flipped. What cannot be read is skipped with a warning appended to
    ``problems`` (when given).
    """
    warn = problems.append if problems is not None else (lambda p: None)
    types, preds = schema.type_by_iri, schema.edge_by_iri
    inverse = {e.inverse_iri: e.name for e in schema.edge_types.values() if e.inverse_iri}
    catch_all = types.get(CATCH_ALL)
    attrs = {a.iri: a.name for a in schema.attributes.values()}
    node_rows: dict[str, dict] = {}
    assertion_rows: dict[str, dict] = {}
    doc_rows: dict[str, dict] = {}
    passage_rows: dict[str, dict] = {}
    for s, p, o, g in rows:
        if s.startswith(PASSAGE_BASE):  # a text unit (never a node, whatever the schema)
            rec = passage_rows.setdefault(s, {})
            if p == _ACCESS:
                rec.setdefault("access", set()).add(o)
            else:
                rec[p] = o
        elif s.startswith(ASSERTION_BASE):
            rec = assertion_rows.setdefault(s, {})
            if p in (_ACCESS, _QUALIFIER):
                rec.setdefault(p, set()).add(o)
            else:
                rec[p] = o
        elif s.startswith(SOURCE_BASE):
            rec = doc_rows.setdefault(s, {})
            if p == _ACCESS:
                rec.setdefault("access", set()).add(o)
            else:
                rec[p] = o
        else:  # a node (any IRI typed with a schema type counts, foreign ones included)
            rec = node_rows.setdefault(s, {})
            if p == _RDF_TYPE:
                if o in types:
                    rec.setdefault("types", set()).add(types[o])
                elif o == _ASSERTION:
                    rec["assertion"] = True
            elif p == _LABEL:
                rec.setdefault("labels", set()).add(o)
            elif p == _IDENT:
                rec.setdefault("ids", set()).add(o)
            elif p in preds:
                rec.setdefault("edges", []).append((preds[p], o))
            elif p in attrs:
                rec.setdefault("attrs", {}).setdefault(attrs[p], set()).add(o)
            elif p == _ALT:
                rec.setdefault("aliases", set()).add(o)
            elif p == _ACCESS:
                rec.setdefault("access", set()).add(o)
            elif p == _DECLARED:
                rec.setdefault("defined_in", set()).add(doc_from_iri(g))
            elif p in inverse:
                rec.setdefault("inverse_edges", []).append((inverse[p], o))
            elif p in _STATEMENT:
                rec.setdefault("statement", {})[p] = o
            elif p == _QUALIFIER:
                rec.setdefault(_QUALIFIER, set()).add(o)

    # statements typed kg:Assertion outside kgbuild's assertion/ IRIs are assertions too
    for iri in [i for i, rec in node_rows.items() if rec.get("assertion")]:
        rec = node_rows.pop(iri)
        assertion_rows[iri] = {**rec.get("statement", {}), _ACCESS: rec.get("access", set()),
                               _QUALIFIER: rec.get(_QUALIFIER, set())}
    if catch_all is not None:  # edge objects are nodes even when nothing else is said of them
        for rec in list(node_rows.values()):
            for _, obj in (*rec.get("edges", ()), *rec.get("inverse_edges", ())):
                node_rows.setdefault(obj, {})

    kg = KnowledgeGraph(schema)
    typed = _node_types(node_rows, schema, catch_all, warn, source)
    ids = _node_ids(node_rows, typed, warn, source)
    for iri, nid in ids.items():
        rec = node_rows[iri]
        labels = rec.get("labels")
        kg.nodes[nid] = Node(nid, typed[iri], min(labels) if labels else nid, rec.get("attrs", {}),
                             rec.get("access", set()), rec.get("defined_in", set()),
                             rec.get("aliases", set()))
    for iri, rec in doc_rows.items():
        if rec.get(_RDF_TYPE) == KG + "SourceDocument":
            count = rec.get(KG + "assertionCount")
            kg.add_document(SourceDocument(doc_from_iri(iri), rec.get(KG + "path", ""),
                                           rec.get(KG + "sha256", ""), frozenset(rec.get("access", ())),
                                           int(count) if count is not None else None))
    for iri, rec in passage_rows.items():
        p = _passage(rec)
        if p is not None:
            kg.passages[p.id] = p
    chunk_ids = {iri: rec.get(KG + "chunkId") for iri, rec in passage_rows.items()}
    for iri, rec in assertion_rows.items():
        a = _assertion(iri, rec, ids, preds, inverse, warn, source, chunk_ids, attrs)
        if a is not None:
            (kg.attribute_assertions if a.literal else kg.assertions)[a.key] = a
    covered = {a.edge for a in kg.assertions.values()}
    for iri, rec in node_rows.items():
        nid = ids.get(iri)
        if nid is None:
            continue
        for pred, obj in rec.get("edges", ()):
            edge = (nid, pred, ids.get(obj))
            if edge[2] is not None and edge not in covered:
                kg.untyped_edges.add(edge)
        for pred, subj in rec.get("inverse_edges", ()):
            edge = (ids.get(subj), pred, nid)
            if edge[0] is not None and edge not in covered:
                kg.untyped_edges.add(edge)
    return kg


def _node_types(node_rows: dict[str, dict], schema: Schema, catch_all: str | None, warn,
                source: str) -> dict[str, str]:
    """IRI -> schema type of every node. Several types on one branch give the most specific;
    types on different branches give the first by name, with a warning."""
    out: dict[str, str] = {}
    blank = 0
    for iri, rec in node_rows.items():
        names = rec.get("types")
        if iri.startswith("_:") and "ids" not in rec:
            blank += bool(names or catch_all is not None)
            continue
        if not names:
            if catch_all is not None and not iri.startswith("_:"):
                out[iri] = catch_all
            continue
        if len(names) == 1:
            out[iri] = next(iter(names))
            continue
        ordered = sorted(names)
        best, conflicting = ordered[0], []
        for t in ordered[1:]:
            merged = schema.more_specific(best, t)
            if merged is None:
                conflicting.append(t)
            else:
                best = merged
        if conflicting:
            warn(_warning("conflicting-types", f"node <{iri}> is typed {', '.join(ordered)} "
                          f"(different branches); read as {best}", source))
        out[iri] = best
    if blank:
        warn(_warning("blank-node", f"{blank} blank node(s) without dcterms:identifier skipped "
                      f"(a node needs a stable ID)", source))
    return out


def _node_ids(node_rows: dict[str, dict], typed: dict[str, str], warn, source: str
              ) -> dict[str, str]:
    """IRI -> node ID, in ``node_rows`` order. Two nodes wanting one ID: the one with a
    ``dcterms:identifier``, then the first by IRI, keeps it; the others use their full IRI."""
    wanted: dict[str, str] = {}
    claims: dict[str, list[str]] = {}
    for iri in typed:
        idents = node_rows[iri].get("ids")
        if idents and len(idents) > 1:
            warn(_warning("several-ids", f"node <{iri}> has {len(idents)} dcterms:identifier "
                          f"values; using {min(idents)!r}", source))
        nid = min(idents) if idents else id_from_iri(iri)
        wanted[iri] = nid
        claims.setdefault(nid, []).append(iri)
    for nid, iris in list(claims.items()):
        if len(iris) == 1:
            continue
        iris.sort(key=lambda i: ("ids" not in node_rows[i], i))
        for iri in iris[1:]:
            fallback = iri if iri not in claims and not iri.startswith("_:") else None
            if fallback is None:
                warn(_warning("duplicate-id", f"node <{iri}> has ID {nid!r} like <{iris[0]}> and "
                              f"no other usable ID; skipped", source))
                del wanted[iri]
                continue
            warn(_warning("duplicate-id", f"node <{iri}> has ID {nid!r} like <{iris[0]}>; "
                          f"read with ID {fallback!r}", source))
            wanted[iri] = fallback
            claims[fallback] = [iri]
    return wanted


def _passage(rec: dict) -> Passage | None:
    """The passage a record describes, or None when it lacks its ID, document or span."""
    chunk, doc = rec.get(KG + "chunkId"), rec.get(PROV + "wasDerivedFrom")
    start, end = rec.get(KG + "spanStart"), rec.get(KG + "spanEnd")
    if chunk is None or doc is None or start is None or end is None:
        return None
    try:
        span = int(start), int(end)
    except ValueError:
        return None
    section = rec.get(KG + "section")
    return Passage(chunk, doc_from_iri(doc), *span, rec.get(KG + "text", ""),
                   rec.get(KG + "title", ""), tuple(section.split(SECTION_SEPARATOR)) if section else (),
                   frozenset(rec.get("access", ())))


# an assertion record's keys (predicate IRIs) by local name
_FIELDS = {**{n: KG + n for n in ("line", "spanStart", "spanEnd", "extractor", "confidence",
                                       "jsonPointer", "evidence", "chunk")},
           **{n: PROV + n for n in ("wasDerivedFrom", "generatedAtTime")}}


def _assertion(iri: str, rec: dict, ids: dict[str, str], preds: dict[str, str],
               inverse: dict[str, str], warn, source: str,
               chunk_ids: dict[str, str | None] | None = None,
               attrs: dict[str, str] | None = None) -> Assertion | None:
    """The assertion a record describes, or None (with a warning) when it is malformed. An
    attribute IRI as predicate makes it an attribute value's assertion (``literal``)."""
    missing = [name for name, key in (("rdf:subject", _SUBJECT), ("rdf:predicate", _PREDICATE),
                                      ("rdf:object", _OBJECT)) if key not in rec]
    if missing:
        warn(_warning("malformed-assertion", f"assertion <{iri}> has no {' or '.join(missing)}; "
                      f"skipped", source))
        return None
    subj, pred, obj = rec[_SUBJECT], rec[_PREDICATE], rec[_OBJECT]
    name = preds.get(pred)
    literal = False
    if name is None and pred in inverse:
        name, subj, obj = inverse[pred], obj, subj
    if name is None and attrs and pred in attrs:
        name, literal = attrs[pred], True
    if name is None:
        warn(_warning("unknown-predicate", f"assertion <{iri}>: predicate <{pred}> is not an edge "
                      f"type of the schema; skipped", source))
        return None
    f = _FIELDS
    line, start, end = rec.get(f["line"]), rec.get(f["spanStart"]), rec.get(f["spanEnd"])
    try:
        return Assertion(ids.get(subj) or id_from_iri(subj), name,
                         obj if literal else ids.get(obj) or id_from_iri(obj),
                         doc_from_iri(rec.get(f["wasDerivedFrom"], "")),
                         rec.get(f["extractor"], ""), rec.get(f["generatedAtTime"], ""),
                         float(rec.get(f["confidence"], 1.0)),
                         int(line) if line is not None else None, rec.get(f["jsonPointer"]),
                         rec.get(f["evidence"]),
                         (int(start), int(end)) if start is not None and end is not None else None,
                         frozenset(rec.get(_ACCESS, ())), frozenset(rec.get(_QUALIFIER, ())),
                         _chunk_id(rec.get(f["chunk"]), chunk_ids or {}), literal)
    except ValueError as exc:
        warn(_warning("malformed-assertion", f"assertion <{iri}>: {exc}; skipped", source))
        return None


def _chunk_id(iri: str | None, chunk_ids: dict[str, str | None]) -> str | None:
    if iri is None:
        return None
    return chunk_ids.get(iri) or (unquote(iri[len(PASSAGE_BASE):]) if iri.startswith(PASSAGE_BASE)
                                  else iri)


def to_rdflib(kg: KnowledgeGraph) -> Graph:
    """An rdflib :class:`Graph` holding ``kg.triples()``, with the standard prefixes bound."""
    return triples_to_rdflib(kg.triples(), kg.schema)
