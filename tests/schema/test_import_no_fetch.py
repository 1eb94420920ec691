"""``schema import|infer`` read files through the one RDF path: a JSON-LD ``@context`` on
another host is never fetched (rdflib's JSON-LD parser, used before, fetched it)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kgbuild.errors import InputError
from kgbuild.schema.importer import import_ontology, infer_schema


@pytest.fixture
def context_server():
    hits = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            body = json.dumps({"@context": {"label": "http://www.w3.org/2000/01/rdf-schema#label"}})
            self.send_response(200)
            self.send_header("Content-Type", "application/ld+json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/ctx.jsonld", hits
    server.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("read", [import_ontology, infer_schema])
def test_a_remote_context_is_refused_and_never_fetched(tmp_path, context_server, read):
    url, hits = context_server
    path = tmp_path / "onto.jsonld"
    path.write_text(json.dumps({"@context": url, "@id": "http://x/A",
                                "@type": "http://www.w3.org/2002/07/owl#Class", "label": "A"}))
    with pytest.raises(InputError) as info:
        read(path)
    assert str(path) in str(info.value)
    assert hits == []
