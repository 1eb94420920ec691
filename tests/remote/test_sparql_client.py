"""The SPARQL client against a scripted loopback HTTP server: what goes on the wire."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pyoxigraph as ox
import pytest

from kgbuild.errors import KgbuildError
from kgbuild.remote.push import Uploader
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


def test_uploads_are_bounded_batches_of_quads_then_one_update_of_moves(scripted):
    srv = scripted()
    graphs = {f"https://kgbuild.dev/source/{k}.yaml": [
        f"<http://e/{k}{i}> <http://e/p> \"{'x' * 50}\" .".encode() for i in range(30)]
        for k in "abc"}
    with SparqlClient(srv.url) as client:
        up = Uploader(client, batch_bytes=1000)
        for g, lines in graphs.items():
            up.add(g, lines)
        up.add("https://kgbuild.dev/source/gone.yaml", [])
        up.flush()
    posts = [s for s in srv.seen if urlsplit(s[1]).path == "/store"]
    assert {s[0] for s in posts} == {"POST"} and len(posts) > 3  # 90 lines over 1000-byte requests
    assert all(s[2]["Content-Type"] == "application/n-quads" and len(s[3]) <= 1000
               for s in posts)
    sent = ox.Dataset(ox.parse(b"".join(s[3] for s in posts), format=ox.RdfFormat.N_QUADS))
    tmps = sorted({q.graph_name.value for q in sent})
    assert len(tmps) == 3 and all(t.startswith("urn:kgbuild:upload:") for t in tmps)
    [update] = [parse_qs(s[3].decode())["update"][0] for s in srv.seen
                if urlsplit(s[1]).path == "/update"]
    ops = update.split(" ;\n")
    assert ops[-1] == "DROP SILENT GRAPH <https://kgbuild.dev/source/gone.yaml>"
    moves = dict(re.fullmatch(r"MOVE GRAPH <(.*)> TO <(.*)>", op).groups() for op in ops[:-1])
    assert sorted(moves) == tmps and sorted(moves.values()) == sorted(graphs)
    for tmp, g in moves.items():
        got = sorted(f"{q.subject} {q.predicate} {q.object} .".encode() for q in sent
                     if q.graph_name.value == tmp)
        assert got == sorted(graphs[g])
    assert up.done == [*graphs, "https://kgbuild.dev/source/gone.yaml"]


def test_service_urls():
    assert service_urls("http://h:7878/query") == ("http://h:7878/query", "http://h:7878/update",
                                                   "http://h:7878/store")
    assert service_urls("http://h:8890/sparql-auth") == ("http://h:8890/sparql-auth",) * 2 + (None,)
    for bad in ("ftp://h/query", "http://[::1", "http://h:99999/query", "http://h/q\n", "http://"):
        with pytest.raises(KgbuildError, match="not an http"):  # found by the CLI fuzz
            service_urls(bad)


def test_a_graph_the_server_lacks_is_written_in_place_in_one_request(scripted):
    srv = scripted()
    lines = [b"<http://e/s> <http://e/p> \"v\" ."]
    with SparqlClient(srv.url) as client:
        up = Uploader(client, batch_bytes=1000)
        up.add("https://kgbuild.dev/source/new.yaml", lines, fresh=True)
        assert up.done == []  # not sent yet
        up.flush()
    [(method, path, headers, body)] = srv.seen  # no temporary graph, no MOVE
    assert urlsplit(path).path == "/store"
    assert body == b"<http://e/s> <http://e/p> \"v\" <https://kgbuild.dev/source/new.yaml> .\n"
    assert up.done == ["https://kgbuild.dev/source/new.yaml"]


def test_an_answer_over_the_limit_is_refused(scripted):
    srv = scripted((200, EMPTY + " " * 5000))
    with SparqlClient(srv.url, max_response_bytes=4096) as client, pytest.raises(RemoteError) as err:
        client.select("SELECT * WHERE { ?s ?p ?o }")
    assert err.value.code == "remote-too-large" and "more than 4096 bytes" in str(err.value)
