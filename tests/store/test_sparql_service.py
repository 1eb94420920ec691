"""SPARQL federation never runs (kgbuild.graph.sparqlcheck): ``SERVICE`` is refused by the
query's tokens before the engine sees it, on every route (``kgbuild query``, ``serve``'s
``/query``, shape files for both engines, the remote client), and a server listening where
the clause points gets no request; the word elsewhere (strings, comments, IRIs, names) is
harmless."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG
from starlette.testclient import TestClient

from kgbuild.project.pipeline import build_graph
from kgbuild.cli.main import main
from kgbuild.graph.sparqlcheck import ServiceRefused, keywords, refuse_service
from kgbuild.remote.sparql import SparqlClient
from kgbuild.schema.loader import load_schema
from kgbuild.serve.app import create_app
from kgbuild.serve.config import load_serve_config

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
from helpers import ADMIN_TOKEN, bearer, write_config  # noqa: E402


@pytest.fixture(scope="module")
def listener():
    """A loopback SPARQL endpoint that answers every request with one row and counts them."""
    hits = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            hits.append(self.path)
            body = (b'{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri",'
                    b'"value":"http://leaked/row"}}]}}')
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/sparql", hits
    server.shutdown()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("service")
    build_graph([FIXTURE_CATALOG], load_schema(), store=folder / "store", timestamp=0).store.close()
    return folder


def federated(url: str) -> list[str]:
    return [
        f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        f"select * where {{ service silent <{url}> {{ ?s ?p ?o }} }}",
        f"ASK {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ {{ SELECT ?s WHERE {{ SeRvIcE <{url}> {{ ?s ?p ?o }} }} }} }}",
        f"SELECT * WHERE {{ ?a ?b ?c FILTER EXISTS {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
        f"SELECT * WHERE {{ BIND(<{url}> AS ?u) SERVICE ?u {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ ?a ?b ?c.SERVICE<{url}>{{?s ?p ?o}} }}",
        f"PREFIX e: <{url}#>\nSELECT * WHERE {{ # a comment\n SERVICE e: {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ \\u0053ERVICE <{url}> {{ ?s ?p ?o }} }}",
    ]


HARMLESS = [
    'SELECT * WHERE { ?s ?p "SERVICE <http://x/> { }" }',
    "SELECT * WHERE { ?s ?p '''multi\nSERVICE line''' }",
    'SELECT * WHERE { ?s ?p """a "SERVICE" b""" }',
    "SELECT * WHERE { ?s ?p 'it\\'s SERVICE' }",
    "SELECT * WHERE { ?s ?p ?o } # SERVICE <http://x/> { }",
    "SELECT * WHERE { <http://x/SERVICE> ?p ?o }",
    "PREFIX SERVICE: <http://x/>\nSELECT * WHERE { SERVICE:a ?p ?o }",
    "PREFIX ex: <http://x/>\nSELECT * WHERE { ex:SERVICE ex:payments.service ?service }",
    'SELECT * WHERE { ?s ?p "x"@en-service }',
    "SELECT ?service WHERE { ?service ?p ?o FILTER(?service < ?o) }",
]


@pytest.mark.parametrize("i", range(10))
def test_every_form_of_the_clause_is_refused(i):
    with pytest.raises(ServiceRefused):
        refuse_service(federated("http://127.0.0.1:9/sparql")[i])


@pytest.mark.parametrize("query", HARMLESS)
def test_the_word_elsewhere_is_harmless(query):
    assert refuse_service(query) == query
    assert "SERVICE" not in keywords(query)


def test_the_check_is_linear_on_hostile_text():
    # runs of dots and colons, unclosed strings and IRIs: each token is read once
    for text in ("a." * 200_000, "'" * 200_000, "<a" * 200_000, '"""' + "x" * 400_000):
        refuse_service(text)


def test_kgbuild_query_refuses_and_the_host_gets_nothing(store, listener):
    url, hits = listener
    before = len(hits)
    for query in federated(url):
        r = CliRunner().invoke(main, ["query", query, "--store", str(store / "store")])
        assert r.exit_code == 2, r.output
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith("[sparql-service]"), r.output
        assert "127.0.0.1" not in lines[0] and "leaked" not in r.output
    assert len(hits) == before


@pytest.mark.slow
def test_serve_query_refuses_and_the_host_gets_nothing(store, listener):
    url, hits = listener
    before = len(hits)
    config = load_serve_config(write_config(store))
    with TestClient(create_app(store / "store", load_schema(), config, watch=False),
                    raise_server_exceptions=False) as client:
        for query in federated(url):
            r = client.post("/query", json={"query": query}, headers=bearer(ADMIN_TOKEN))
            assert r.status_code == 400 and r.json()["code"] == "sparql-service", r.text
            assert "127.0.0.1" not in r.text and "leaked" not in r.text
        ok = client.post("/query", json={"query": HARMLESS[0]}, headers=bearer(ADMIN_TOKEN))
        assert ok.status_code == 200
    assert len(hits) == before


@pytest.mark.parametrize("engine", ["fast", "pyshacl"])
def test_a_shape_file_with_a_federated_constraint_is_refused(tmp_path, store, listener, engine):
    url, hits = listener
    before = len(hits)
    shapes = tmp_path / "extra.ttl"
    shapes.write_text(f"""@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix ex: <http://example.org/> .
ex:S a sh:NodeShape ; sh:targetNode ex:a ;
  sh:sparql [ sh:select "SELECT $this WHERE {{ SERVICE <{url}> {{ $this ?p ?o }} }}" ] .
""")
    r = CliRunner().invoke(main, ["validate", "--store", str(store / "store"), "--shapes",
                                  str(shapes), "--engine", engine])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip().endswith("[sparql-service]") and str(shapes) in r.stderr
    assert len(hits) == before


def test_the_remote_client_refuses_before_sending(listener):
    url, hits = listener
    before = len(hits)
    with SparqlClient(url) as client:
        for query in federated("http://127.0.0.1:9/other"):
            with pytest.raises(ServiceRefused):
                client.select(query)
            with pytest.raises(ServiceRefused):
                client.construct(query)
        assert client.select(HARMLESS[0])  # the listener answers one row
    assert len(hits) == before + 1
