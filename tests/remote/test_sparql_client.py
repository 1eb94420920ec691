"""The SPARQL client against a scripted loopback HTTP server: what goes on the wire."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from kgbuild.remote.push import _batches, replace_graph
from kgbuild.remote.sparql import Auth, RemoteError, SparqlClient, service_urls


class Scripted:
    """A server answering each request with the next (status, body) and recording requests."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.seen = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.seen.append((self.command, self.path, dict(self.headers), body))
                status, text = owner.answers.pop(0) if owner.answers else (200, "")
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_PUT = do_GET = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/query"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted():
    made = []

    def make(*answers):
        made.append(Scripted(answers))
        return made[-1]

    yield make
    for s in made:
        s.close()


EMPTY = json.dumps({"head": {"vars": []}, "results": {"bindings": []}})


def test_query_is_form_encoded_post_with_no_dataset_parameters(scripted):
    srv = scripted((200, EMPTY))
    with SparqlClient(srv.url, auth=Auth(token="t0k")) as client:
        assert client.select("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }") == []
    [(method, path, headers, body)] = srv.seen
    assert method == "POST" and path == "/query"
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert headers["Accept"] == "application/sparql-results+json"
    assert headers["Authorization"] == "Bearer t0k"
    form = parse_qs(body.decode())
    assert list(form) == ["query"] and "default-graph-uri" not in body.decode()


def test_5xx_is_retried_then_succeeds_and_4xx_is_not(scripted):
    srv = scripted((503, "busy"), (502, "busy"), (200, EMPTY))
    with SparqlClient(srv.url, backoff=0.01) as client:
        assert client.select("ASK {}") == [] and client.requests == 3
    srv = scripted((400, "syntax error at line 1"))
    with SparqlClient(srv.url, backoff=0.01) as client, pytest.raises(RemoteError) as err:
        client.select("nonsense")
    assert "answered 400: syntax error at line 1" in str(err.value) and len(srv.seen) == 1
    srv = scripted(*[(500, "down")] * 3)
    with SparqlClient(srv.url, retries=2, backoff=0.01) as client, pytest.raises(RemoteError) as err:
        client.update("CLEAR ALL")
    assert "after 3 attempts" in str(err.value)


def test_auth_refusal_is_a_remote_auth_error(scripted):
    srv = scripted((401, "no"))
    with SparqlClient(srv.url, auth=Auth("u", "p")) as client, pytest.raises(RemoteError) as err:
        client.update("CLEAR ALL")
    assert err.value.code == "remote-auth" and "refused the credentials" in str(err.value)
    assert srv.seen[0][2]["Authorization"].startswith("Basic ")


def test_replace_graph_uploads_in_bounded_batches_then_moves(scripted):
    srv = scripted()
    lines = [f"<http://e/s{i}> <http://e/p> \"{'x' * 50}\" .".encode() for i in range(100)]
    with SparqlClient(srv.url) as client:
        replace_graph(client, "https://kgbuild.dev/source/a.yaml", lines, batch_bytes=1000)
    puts = [s for s in srv.seen if s[0] in ("PUT", "POST") and urlsplit(s[1]).path == "/store"]
    assert puts[0][0] == "PUT" and {s[0] for s in puts[1:]} == {"POST"}
    assert all(len(s[3]) <= 1000 for s in puts) and sum(len(s[3]) for s in puts) == \
        sum(len(line) + 1 for line in lines)
    tmp = parse_qs(urlsplit(puts[0][1]).query)["graph"][0]
    assert tmp.startswith("urn:kgbuild:upload:")
    assert all(parse_qs(urlsplit(s[1]).query)["graph"] == [tmp] for s in puts)
    [move] = [parse_qs(s[3].decode())["update"][0] for s in srv.seen if urlsplit(s[1]).path == "/update"]
    assert move == f"MOVE GRAPH <{tmp}> TO <https://kgbuild.dev/source/a.yaml>"
    assert all(s[2].get("Content-Type") == "application/n-triples" for s in puts)


def test_batches_keep_whole_lines():
    lines = [b"a" * 10, b"b" * 10, b"c" * 25]
    assert list(_batches(lines, 23)) == [b"a" * 10 + b"\n" + b"b" * 10 + b"\n", b"c" * 25 + b"\n"]


def test_service_urls():
    assert service_urls("http://h:7878/query") == ("http://h:7878/query", "http://h:7878/update",
                                                   "http://h:7878/store")
    assert service_urls("http://h:8890/sparql-auth") == ("http://h:8890/sparql-auth",) * 2 + (None,)
    with pytest.raises(RemoteError):
        service_urls("ftp://h/query")
