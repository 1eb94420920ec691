"""Read-only SPARQL over the store, bounded in rows and in time.

Each query runs in a child process (from a fork server, so starting one costs milliseconds)
that opens the store read-only: nothing it does can write the store, and a query still running
at the timeout is ended by killing its process, which no in-process query engine allows.
Results are SPARQL 1.1 JSON results (``head``/``results.bindings``, or ``boolean`` for ASK);
CONSTRUCT and DESCRIBE give ``triples`` as N-Triples terms; ``truncated`` says whether rows
were left out past ``max_rows``.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pyoxigraph as ox

from ..errors import KgbuildError
from ..schema.model import Schema
from ..store.graphstore import GraphStore

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["kgbuild.serve.sparql"])


def term_json(term) -> dict:
    """One RDF term as a SPARQL JSON results value."""
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
            out["datatype"] = term.datatype.value
        return out
    return {"type": "triple", "value": {"subject": term_json(term.subject),
                                        "predicate": term_json(term.predicate),
                                        "object": term_json(term.object)}}


def answer(store: GraphStore, query: str, max_rows: int) -> dict:
    """Run ``query`` on ``store`` (every graph as the default graph); at most ``max_rows``."""
    try:
        # (GraphStore has no query call of its own yet: the database's, every graph being
        # the default graph)
        result = store._db.db.query(query, use_default_graph_as_union=True)
    except SyntaxError as exc:
        raise KgbuildError(f"bad SPARQL query: {exc}", code="bad-query") from None
    if isinstance(result, ox.QueryBoolean):
        return {"head": {}, "boolean": bool(result)}
    rows, truncated = [], False
    if isinstance(result, ox.QuerySolutions):
        names = [v.value for v in result.variables]
        for solution in result:
            if len(rows) == max_rows:
                truncated = True
                break
            rows.append({n: term_json(solution[n]) for n in names if solution[n] is not None})
        return {"head": {"vars": names}, "results": {"bindings": rows}, "truncated": truncated}
    for triple in result:
        if len(rows) == max_rows:
            truncated = True
            break
        rows.append([str(triple.subject), str(triple.predicate), str(triple.object)])
    return {"triples": rows, "truncated": truncated}


def _child(conn, path: str, schema: Schema, query: str, max_rows: int) -> None:
    try:
        with GraphStore(path, schema, write=False) as store:
            conn.send(("ok", answer(store, query, max_rows)))
    except KgbuildError as exc:
        conn.send(("error", (str(exc), exc.code)))
    except Exception as exc:  # noqa: BLE001 - the query engine's own errors, one line
        conn.send(("error", (f"{type(exc).__name__}: {exc}", "bad-query")))
    finally:
        conn.close()


def run_query(path: str | Path, schema: Schema, query: str, max_rows: int,
              timeout: float) -> dict:
    """:func:`answer` for the store at ``path`` in a child process killed after ``timeout``
    seconds (a ``[query-timeout]`` error)."""
    parent, child = _CONTEXT.Pipe(duplex=False)
    proc = _CONTEXT.Process(target=_child, args=(child, str(path), schema, query, max_rows),
                            daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout):
            raise KgbuildError(f"the query ran longer than {timeout:g} s and was stopped",
                               code="query-timeout")
        try:
            status, value = parent.recv()
        except EOFError:
            raise KgbuildError("the query process ended without an answer",
                               code="query-failed") from None
    finally:
        parent.close()
        if proc.is_alive():
            proc.kill()
        proc.join(5)
    if status == "error":
        raise KgbuildError(value[0], code=value[1])
    return value
