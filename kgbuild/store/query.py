"""SPARQL 1.1 queries over a store, bounded in rows and time.

Every source document's named graph is visible to ``GRAPH ?g { ... }``; with ``union``
(the default) a pattern outside ``GRAPH`` matches any graph, as if the store were one graph
(kgbuild writes nothing to the default graph itself). The prefixes of every serialisation
(the schema's, ``kg:``, ``id:``, ``src:``, ``rdf:``, ``xsd:`` ...) are declared. pyoxigraph cannot interrupt a query, so
:func:`query_store` runs it in a child process that is killed at the deadline: forked from
a process that runs one thread (the CLI), else from the forkserver (a server's worker threads:
a child forked beside other threads may inherit a lock one of them held).
"""

from __future__ import annotations

import csv
import io
import multiprocessing
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from ..errors import KgbuildError
from ..schema.model import Schema
from ..schema.namespaces import prefixes
from .graphstore import GraphStore

QUERY_FORMATS = ("table", "json", "csv")
MAX_ROWS = 10_000_000
MAX_QUERY_CHARS = 1_000_000


@dataclass
class QueryResult:
    """``kind`` ``select`` (rows of N-Triples terms, None where unbound), ``ask`` (``boolean``)
    or ``construct`` (rows of subject, predicate, object). ``truncated``: more rows existed
    than the limit."""

    kind: str
    variables: list[str] = field(default_factory=list)
    rows: list[list[str | None]] = field(default_factory=list)
    boolean: bool | None = None
    truncated: bool = False

    def to_dict(self) -> dict:
        out: dict = {"kind": self.kind, "truncated": self.truncated}
        if self.kind == "ask":
            out["boolean"] = self.boolean
        else:
            out["variables"] = self.variables
            out["rows"] = [dict(zip(self.variables, r)) for r in self.rows]
        return out

    def render(self) -> str:
        """An aligned table of terms (N-Triples syntax) for people."""
        if self.kind == "ask":
            return "true" if self.boolean else "false"
        table = [self.variables] + [[t if t is not None else "" for t in r] for r in self.rows]
        widths = [min(max(len(r[i]) for r in table), 80) for i in range(len(self.variables))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines.append(f"{len(self.rows)} row(s)" + (" (truncated: raise --limit)" if self.truncated else ""))
        return "\n".join(lines)

    def to_csv(self) -> str:
        """SPARQL 1.1 CSV: the header, then plain values (IRIs and literals' lexical forms)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\r\n")
        if self.kind == "ask":
            writer.writerow(["boolean"])
            writer.writerow(["true" if self.boolean else "false"])
        else:
            writer.writerow(self.variables)
            writer.writerows([["" if t is None else _plain(t) for t in r] for r in self.rows])
        return buf.getvalue()


def _plain(term: str) -> str:
    """An N-Triples term's value: the IRI, or the literal's text."""
    if term.startswith("<"):
        return term[1:-1]
    if term.startswith('"'):
        parsed = next(iter(ox.parse(f"<x:s> <x:p> {term} .", format=ox.RdfFormat.N_TRIPLES)))
        return parsed.object.value
    return term


def run_query(store: GraphStore, sparql: str, *, limit: int = 1000, union: bool = True) -> QueryResult:
    """Run ``sparql`` (SELECT, ASK, CONSTRUCT or DESCRIBE) on ``store`` in this process; at
    most ``limit`` rows are kept. A malformed query is a :class:`KgbuildError` with
    pyoxigraph's message, ``[query]``."""
    if len(sparql) > MAX_QUERY_CHARS:
        raise KgbuildError(f"the query has {len(sparql):,} characters; at most "
                           f"{MAX_QUERY_CHARS:,} are read", code="query")
    try:
        results = store.sparql(sparql, union=union, prefixes=prefixes(store.schema))
        if isinstance(results, ox.QueryBoolean):
            return QueryResult("ask", boolean=bool(results))
        rows: list[list[str | None]] = []
        if isinstance(results, ox.QuerySolutions):
            names = [v.value for v in results.variables]
            kind = "select"
            for solution in results:
                if len(rows) == limit:
                    return QueryResult(kind, names, rows, truncated=True)
                rows.append([None if t is None else str(t) for t in solution])
        else:
            names, kind = ["subject", "predicate", "object"], "construct"
            for t in results:
                if len(rows) == limit:
                    return QueryResult(kind, names, rows, truncated=True)
                rows.append([str(t.subject), str(t.predicate), str(t.object)])
    except SyntaxError as exc:
        raise KgbuildError(f"the query does not parse: {_one_line(exc)}", code="query") from None
    except (OSError, RuntimeError) as exc:  # evaluation errors
        raise KgbuildError(f"the query failed: {_one_line(exc)}", code="query") from None
    return QueryResult(kind, names, rows)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text or type(exc).__name__)[:300]


def query_store(path: str | Path, schema: Schema, sparql: str, *, limit: int = 1000,
                union: bool = True, timeout: float = 30.0) -> QueryResult:
    """:func:`run_query` on the store folder ``path`` (opened read-only) in a child process,
    killed after ``timeout`` seconds (a :class:`KgbuildError` ``[query-timeout]``)."""
    with GraphStore(path, schema, write=False):  # a missing or damaged store: its own error
        pass
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(send, str(path), schema, sparql, limit, union),
                        daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(timeout):
            raise KgbuildError(f"the query ran for more than {timeout:g} s and was stopped "
                               f"(--timeout)", str(path), code="query-timeout")
        try:
            ok, value = receive.recv()
        except EOFError:
            raise KgbuildError("the query process ended without an answer (out of memory?)",
                               str(path), code="query") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if not ok:
        raise KgbuildError(value[0], code=value[1])
    return value


def _context():
    """``fork`` in a process that runs one thread, else the ``forkserver`` (kgbuild preloaded:
    started once, it forks each query's child from its own single thread)."""
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _child(send, path: str, schema: Schema, sparql: str, limit: int, union: bool) -> None:
    try:
        with GraphStore(path, schema, write=False) as store:
            send.send((True, run_query(store, sparql, limit=limit, union=union)))
    except KgbuildError as exc:
        send.send((False, (str(exc), exc.code)))
    finally:
        send.close()
