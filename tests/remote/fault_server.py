"""A SPARQL server on 127.0.0.1 that fails its writes on demand, for tests of what a failed
push leaves behind.

It serves an in-memory pyoxigraph Store with Oxigraph's layout, what kgbuild's SparqlClient
uses: ``POST /query`` (form-encoded SELECT/ASK answered as SPARQL JSON, CONSTRUCT as
N-Triples), ``POST /update`` (form-encoded SPARQL Update, one transaction; an error is a 400)
and ``POST /store`` (graph store: N-Quads added in one transaction). Writes (updates and
graph-store POSTs) are counted from 1; :meth:`FaultServer.fail` makes write ``at`` (or the
first write naming ``when``) fail in one of the ways of ``HOWS`` and, when ``sticky``, every
later one too (a server gone bad; after an ``apply-close``, later writes are refused with a
500), until :meth:`FaultServer.heal`. Queries always answer.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pyoxigraph as ox

HOWS = {
    "500": "answer 500, nothing written",
    "close": "close the connection without an answer, nothing written",
    "apply-close": "write, then close the connection without an answer",
}


class FaultServer:
    """See the module doc. ``writes`` counts the writes since the last ``fail`` or ``reset``."""

    def __init__(self):
        self.store = ox.Store()
        self.lock = threading.Lock()  # one request at a time: each one a transaction
        self.writes = 0
        self.heal()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.lock:
                    owner.handle(self, urlsplit(self.path).path, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/query"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fail(self, at: int | None = None, how: str = "500", sticky: bool = True,
             when: str | None = None) -> None:
        """Fail write number ``at`` (counted from now: the next write is 1), or the first
        write whose body holds ``when`` (e.g. ``"MOVE"``), and, when ``sticky``, every later
        write."""
        assert how in HOWS and (at is None) != (when is None), (how, at, when)
        self.writes, self.fail_at, self.how, self.sticky, self.when = 0, at, how, sticky, when

    def heal(self) -> None:
        self.fail_at, self.how, self.sticky, self.when = None, "500", False, None

    def reset(self, quads) -> None:
        """Hold exactly ``quads``, healed, with no write counted."""
        self.store.clear()
        self.store.extend(quads)
        self.writes = 0
        self.heal()

    def graphs(self, prefix: str = "") -> set[str]:
        """The named graphs holding a triple whose IRI starts with ``prefix``."""
        return {q.graph_name.value for q in self.store
                if isinstance(q.graph_name, ox.NamedNode) and q.graph_name.value.startswith(prefix)}

    # -- requests ----------------------------------------------------------------------------
    def handle(self, req: BaseHTTPRequestHandler, path: str, body: bytes) -> None:
        if path == "/query":
            return self._query(req, parse_qs(body.decode())["query"][0])
        if path not in ("/update", "/store"):
            return _answer(req, 404, b"no such service", "text/plain")
        self.writes += 1
        if self.when is not None and self.when in body.decode("utf-8", "replace"):
            self.fail_at, self.when = self.writes, None
        how = None
        if self.fail_at is not None and self.writes == self.fail_at:
            how = self.how
        elif self.fail_at is not None and self.sticky and self.writes > self.fail_at:
            how = "500" if self.how == "apply-close" else self.how
        if how == "500":
            return _answer(req, 500, b"injected failure", "text/plain")
        if how == "close":
            req.close_connection = True
            return
        try:
            if path == "/update":
                self.store.update(parse_qs(body.decode())["update"][0])
            else:
                self.store.load(body, format=ox.RdfFormat.N_QUADS)
        except (RuntimeError, SyntaxError, ValueError) as exc:
            return _answer(req, 400, str(exc).encode(), "text/plain")
        if how:  # apply-close: written, but the client never hears so
            req.close_connection = True
            return
        _answer(req, 204, b"", "text/plain")

    def _query(self, req: BaseHTTPRequestHandler, query: str) -> None:
        try:
            result = self.store.query(query)
        except (RuntimeError, SyntaxError, ValueError) as exc:
            return _answer(req, 400, str(exc).encode(), "text/plain")
        if isinstance(result, ox.QueryTriples):
            return _answer(req, 200, result.serialize(format=ox.RdfFormat.N_TRIPLES),
                           "application/n-triples")
        _answer(req, 200, result.serialize(format=ox.QueryResultsFormat.JSON),
                "application/sparql-results+json")


def _answer(req: BaseHTTPRequestHandler, status: int, data: bytes, ctype: str) -> None:
    req.send_response(status)
    req.send_header("Content-Type", ctype)
    req.send_header("Content-Length", str(len(data)))
    req.end_headers()
    req.wfile.write(data)
