"""The SPARQL 1.1 Protocol's query operation: reading a request, choosing and writing a format.

A query comes as ``GET ?query=``, a ``POST`` of ``application/sparql-query`` or a ``POST`` of
a form with ``query=``. The answer's format follows the ``Accept`` header (``q`` weights and
wildcards; none: the first listed): SPARQL results JSON, XML, CSV or TSV for SELECT and ASK,
N-Triples, Turtle, RDF/XML or JSON-LD for CONSTRUCT and DESCRIBE, and ``text/html`` (the
browser's page) for both. Results come from :func:`~kgbuild.store.query.query_store`, as
N-Triples terms, and are written from those terms here.
"""

from __future__ import annotations

import csv
import io
import json
import re
from urllib.parse import parse_qsl
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

import pyoxigraph as ox

from ..graph.model import parse_literal
from ..graph.sparqlcheck import keywords
from ..store.query import QueryResult
from ..vocab import XSD_STRING
from .spec import ApiError

RESULTS = {  # media type -> writer, for SELECT and ASK (the standard types first)
    "application/sparql-results+json": "json", "application/sparql-results+xml": "xml",
    "text/csv": "csv", "text/tab-separated-values": "tsv", "text/html": "html",
    "application/json": "json", "application/xml": "xml", "text/xml": "xml"}
GRAPHS = {  # media type -> pyoxigraph format (or html), for CONSTRUCT and DESCRIBE
    "text/turtle": ox.RdfFormat.TURTLE, "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/plain": ox.RdfFormat.N_TRIPLES, "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD, "text/html": "html"}
UPDATE_WORDS = {"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD"}
FORM = "application/x-www-form-urlencoded"
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+$|^\*/\*$")


def accepted(header: str | None) -> list[tuple[str, float, int]]:
    """The media ranges of an ``Accept`` header: (range, q, order), lower case, q > 0."""
    out = []
    for i, part in enumerate((header or "*/*").split(",")[:100]):
        media, *params = (x.strip() for x in part.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
                q = q if 0.0 <= q <= 1.0 else 0.0
        media = media.lower()
        if _TOKEN.match(media) and q > 0:
            out.append((media, q, i))
    return out


def negotiate(header: str | None, offered: list[str]) -> str | None:
    """The offered media type the ``Accept`` header prefers (highest q, then the more specific
    range, then the header's order, then ours), or None when it accepts none."""
    best: tuple | None = None
    for rank, media in enumerate(offered):
        kind = media.split("/")[0]
        for accept, q, order in accepted(header):
            specific = 2 if accept == media else 1 if accept == f"{kind}/*" else \
                0 if accept == "*/*" else -1
            if specific < 0:
                continue
            key = (-q, -specific, order, rank)
            if best is None or key < best[0]:
                best = (key, media)
    return None if best is None else best[1]


_KIN = {  # the other kind's format a client asking only for this one gets: JSON, XML alike
    "application/sparql-results+json": "application/ld+json",
    "application/json": "application/ld+json",
    "application/sparql-results+xml": "application/rdf+xml",
    "application/xml": "application/rdf+xml", "text/xml": "application/rdf+xml",
    "application/ld+json": "application/sparql-results+json",
    "application/rdf+xml": "application/sparql-results+xml"}


def answer_type(header: str | None, kind: str) -> str | None:
    """The media type of a ``kind`` result (``select``, ``ask`` or ``construct``) for the
    ``Accept`` header: the preferred one of that kind's formats, else the kin of the preferred
    format of the other kind (a client asking for SPARQL JSON gets a graph as JSON-LD, one
    asking for SPARQL XML gets RDF/XML, as rdflib's ``SPARQLStore`` expects), else None."""
    own, other = (GRAPHS, RESULTS) if kind == "construct" else (RESULTS, GRAPHS)
    media = negotiate(header, list(own))
    if media is None:
        media = _KIN.get(negotiate(header, [m for m in other if m in _KIN]) or "")
    return media if media in own else None


def check_accept(header: str | None) -> None:
    """406 before any work when the client accepts no format of either kind of result."""
    if negotiate(header, [*RESULTS, *GRAPHS]) is None:
        raise ApiError(406, "none of the accepted types is served: SPARQL results as "
                            "application/sparql-results+json, +xml, text/csv or "
                            "text/tab-separated-values; graphs as text/turtle, "
                            "application/n-triples, application/rdf+xml or application/ld+json",
                       "not-acceptable")


def query_text(method: str, content_type: str | None, params: list[tuple[str, str]],
               body: bytes = b"") -> str:
    """The query of a protocol request (``params``: the URL's query parameters; ``body``: a
    POST's body). Refuses an update (403 ``read-only``), a POST body of another type (415),
    ``default-graph-uri`` and ``named-graph-uri`` (400: the dataset is the store's)."""
    media = (content_type or "").split(";")[0].strip().lower()
    fields = list(params)
    if method == "POST":
        if media == "application/sparql-update":
            raise ApiError(403, "this endpoint is read-only: SPARQL Update is refused",
                           "read-only")
        if media not in ("application/sparql-query", FORM):
            raise ApiError(415, f"a POST body must be application/sparql-query or {FORM}, "
                                f"not {media or 'untyped'!r}", "unsupported-media-type")
        try:
            text = body.decode("utf-8")
            fields += [("query", text)] if media != FORM else parse_qsl(
                text, keep_blank_values=True, max_num_fields=100)
        except UnicodeDecodeError:
            raise ApiError(400, "the body is not UTF-8", "usage") from None
        except ValueError as exc:
            raise ApiError(400, f"the form is not readable: {exc}", "usage") from None
    names = {k for k, _ in fields}
    if "update" in names:
        raise ApiError(403, "this endpoint is read-only: SPARQL Update is refused", "read-only")
    if names & {"default-graph-uri", "named-graph-uri"}:
        raise ApiError(400, "default-graph-uri and named-graph-uri are not supported: the "
                            "dataset is the store's (every document a named graph, their union "
                            "the default graph)", "usage")
    queries = [v for k, v in fields if k == "query"]
    if len(queries) != 1:
        raise ApiError(400, "give exactly one query (the 'query' parameter)", "usage")
    text = queries[0]
    if not text.strip():
        raise ApiError(400, "the query is empty", "usage")
    words = keywords(text)
    first = next((w for w in words if w not in ("PREFIX", "BASE")), "")
    if first in UPDATE_WORDS or (first == "WITH" and UPDATE_WORDS & set(words)):
        raise ApiError(403, "this endpoint is read-only: SPARQL Update is refused", "read-only")
    return text


# -- writing results -------------------------------------------------------------------------
def _term_json(term: str) -> dict:
    if term.startswith("<"):
        return {"type": "uri", "value": term[1:-1]}
    if term.startswith("_:"):
        return {"type": "bnode", "value": term[2:]}
    value, datatype, lang = parse_literal(term)
    out = {"type": "literal", "value": value}
    if lang:
        out["xml:lang"] = lang
    elif datatype and datatype != XSD_STRING:
        out["datatype"] = datatype
    return out


def results_json(result: QueryResult) -> str:
    if result.kind == "ask":
        return json.dumps({"head": {}, "boolean": bool(result.boolean)})
    return json.dumps({"head": {"vars": result.variables}, "results": {"bindings": [
        {v: _term_json(t) for v, t in zip(result.variables, row) if t is not None}
        for row in result.rows]}}, ensure_ascii=False)


def results_xml(result: QueryResult) -> str:
    out = ['<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">',
           "<head>"]
    if result.kind == "ask":
        out.append(f"</head>\n<boolean>{'true' if result.boolean else 'false'}</boolean>")
        return "\n".join(out) + "\n</sparql>\n"
    out += [f"<variable name={quoteattr(v)}/>" for v in result.variables]
    out.append("</head>\n<results>")
    for row in result.rows:
        out.append("<result>")
        for v, t in zip(result.variables, row):
            if t is None:
                continue
            j = _term_json(t)
            if j["type"] == "literal":
                extra = (f" xml:lang={quoteattr(j['xml:lang'])}" if "xml:lang" in j else
                         f" datatype={quoteattr(j['datatype'])}" if "datatype" in j else "")
                cell = f"<literal{extra}>{xml_escape(_xml_text(j['value']))}</literal>"
            else:
                cell = f"<{j['type']}>{xml_escape(_xml_text(j['value']))}</{j['type']}>"
            out.append(f"<binding name={quoteattr(v)}>{cell}</binding>")
        out.append("</result>")
    return "\n".join(out) + "\n</results>\n</sparql>\n"


def _xml_text(text: str) -> str:
    """XML 1.0 allows no control characters but tab, newline, return: others as U+FFFD."""
    return re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "\ufffd", text)


def results_tsv(result: QueryResult) -> str:
    if result.kind == "ask":
        return "?boolean\n" + ("true" if result.boolean else "false") + "\n"
    lines = ["\t".join(f"?{v}" for v in result.variables)]
    lines += ["\t".join("" if t is None else t.replace("\t", "\\t") for t in row)
              for row in result.rows]
    return "\n".join(lines) + "\n"


def results_csv(result: QueryResult) -> str:
    if result.kind == "ask":
        return result.to_csv()
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(result.variables)
    writer.writerows([[_csv_value(t) for t in row] for row in result.rows])
    return buf.getvalue()


def _csv_value(term: str | None) -> str:
    if term is None:
        return ""
    if term.startswith("<"):
        return term[1:-1]
    return term if term.startswith("_:") else parse_literal(term)[0]


def graph_bytes(result: QueryResult, fmt: ox.RdfFormat, prefixes: dict[str, str]) -> bytes:
    """The triples of a CONSTRUCT or DESCRIBE result in ``fmt`` (Turtle with ``prefixes``)."""
    text = "".join(f"{s} {p} {o} .\n" for s, p, o in result.rows)
    triples = ox.parse(text.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    if fmt == ox.RdfFormat.TURTLE:
        return ox.serialize(triples, format=fmt, prefixes=prefixes)
    return ox.serialize(triples, format=fmt)


def write_result(result: QueryResult, media: str, prefixes: dict[str, str]) -> bytes:
    """``result`` in the format of ``media`` (one of :data:`RESULTS` or :data:`GRAPHS`)."""
    if result.kind == "construct":
        return graph_bytes(result, GRAPHS[media], prefixes)
    writer = {"json": results_json, "xml": results_xml, "csv": results_csv,
              "tsv": results_tsv}[RESULTS[media]]
    return writer(result).encode("utf-8")


def content_type(media: str) -> str:
    """The ``Content-Type`` header of an answer in ``media``."""
    return f"{media}; charset=utf-8" if media.startswith("text/") or media in (
        "application/n-triples",) else media
