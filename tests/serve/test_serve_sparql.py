"""``/sparql``, the SPARQL 1.1 Protocol endpoint, in process: the three ways to send a query,
every result format read back by a parser, the refusals, and the caller's view: a public
query over a store with a hidden document answers exactly what it answers over the store built
without that document."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import pyoxigraph as ox
import pytest
import rdflib
from helpers import ADMIN_TOKEN, access_stores, bearer, cli_query, write_config
from starlette.testclient import TestClient

from kgbuild.schema.loader import load_schema
from kgbuild.serve.app import create_app
from kgbuild.serve.config import load_serve_config

FINANCE_TOKEN = "finance-token"
SELECT = "SELECT ?s ?label WHERE { ?s a sw:Service ; rdfs:label ?label } ORDER BY ?s"
CONSTRUCT = "CONSTRUCT { ?s ?p ?o } WHERE { ?s a sw:System ; ?p ?o }"
# every quad but the manifest's (a store's identity, generation and file paths are its own)
ALL_QUADS = ('SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } '
             'FILTER(!STRSTARTS(STR(?g), "https://kgbuild.dev/graph/manifest")) }')
VIEW_QUERIES = [
    ALL_QUADS,
    "SELECT ?s ?label WHERE { ?s rdfs:label ?label } ORDER BY ?s",
    "SELECT ?a ?b WHERE { ?a sw:dependsOn ?b } ORDER BY ?a ?b",
    "SELECT ?type (COUNT(?s) AS ?n) WHERE { ?s a ?type } GROUP BY ?type ORDER BY ?type",
    ("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } FILTER(!STRSTARTS(STR(?g), "
     '"https://kgbuild.dev/graph/manifest")) } GROUP BY ?g ORDER BY ?g'),
    "ASK { ?s ?p ?o FILTER(CONTAINS(LCASE(STR(?o)), 'ledger')) }",
    "SELECT ?e ?quote WHERE { ?e kg:evidence ?quote } ORDER BY ?e",
]


def _config(folder, **limits):
    path = write_config(folder, **limits)
    import hashlib

    path.write_text(path.read_text().replace("tokens:\n", (
        "tokens:\n  - name: finance\n"
        f"    sha256: {hashlib.sha256(FINANCE_TOKEN.encode()).hexdigest()}\n"
        "    labels: [finance, pci]\n"), 1))
    return load_serve_config(path)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    return access_stores(tmp_path_factory.mktemp("sparql"))


@pytest.fixture(scope="module")
def clients(stores):
    with_doc, without = stores
    config = _config(with_doc.parent, max_rows=500, max_query_chars=2000)
    with TestClient(create_app(with_doc, load_schema(), config, watch=False),
                    raise_server_exceptions=False) as a, \
            TestClient(create_app(without, load_schema(), config, watch=False),
                       raise_server_exceptions=False) as b:
        yield a, b


def _rows(answer: dict) -> list[dict]:
    """SPARQL JSON bindings as N-Triples terms, the way ``kgbuild query --format json`` has them."""
    def term(b: dict) -> str:
        if b["type"] == "uri":
            return f"<{b['value']}>"
        if b["type"] == "bnode":
            return f"_:{b['value']}"
        value = json.dumps(b["value"], ensure_ascii=False)  # (the same escapes for this data)
        return value + (f"@{b['xml:lang']}" if "xml:lang" in b else
                        f"^^<{b['datatype']}>" if "datatype" in b else "")
    names = answer["head"]["vars"]
    return [{v: term(row[v]) if v in row else None for v in names}
            for row in answer["results"]["bindings"]]


@pytest.mark.slow  # (queries in child processes)
def test_get_post_and_form_answer_what_kgbuild_query_answers(clients, stores):
    client = clients[0]
    expected = json.loads(cli_query(stores[0], SELECT))
    admin = bearer(ADMIN_TOKEN)
    answers = [
        client.get("/sparql", params={"query": SELECT}, headers=admin),
        client.post("/sparql", content=SELECT, headers={
            **admin, "content-type": "application/sparql-query"}),
        client.post("/sparql", data={"query": SELECT}, headers=admin)]
    for r in answers:
        assert r.status_code == 200 and r.headers["content-type"] == \
            "application/sparql-results+json"
        assert _rows(r.json()) == expected["rows"] and len(expected["rows"]) == 3
    csv_answer = client.get("/sparql", params={"query": SELECT},
                            headers={**admin, "accept": "text/csv"})
    assert csv_answer.text.replace("\r\n", "\n") == cli_query(stores[0], SELECT, "csv")


@pytest.mark.slow  # (queries in child processes)
def test_every_results_format_reads_back(clients):
    client = clients[0]
    get = lambda q, accept: client.get("/sparql", params={"query": q},
                                       headers={"accept": accept})
    ref = _rows(get(SELECT, "application/sparql-results+json").json())
    ns = {"r": "http://www.w3.org/2005/sparql-results#"}
    root = ET.fromstring(get(SELECT, "application/sparql-results+xml").content)
    labels = [b.find("r:literal", ns).text for b in root.iterfind(".//r:binding[@name='label']", ns)]
    assert labels == [json.loads(r["label"]) for r in ref] == ["Checkout Service",
                                                                "Payments Service"]
    tsv = get(SELECT, "text/tab-separated-values").text.splitlines()
    assert tsv[0] == "?s\t?label" and [line.split("\t") for line in tsv[1:]] == [
        [r["s"], r["label"]] for r in ref]
    rows = list(csv.reader(io.StringIO(get(SELECT, "text/csv").text)))
    assert rows[1:] == [[r["s"][1:-1], json.loads(r["label"])] for r in ref]
    assert get("ASK { ?s a sw:Service }", "application/sparql-results+json").json() == {
        "head": {}, "boolean": True}
    ask = ET.fromstring(get("ASK { ?s a sw:Nothing }", "application/sparql-results+xml").content)
    assert ask.find("r:boolean", ns).text == "false"


@pytest.mark.parametrize("accept,fmt", [("text/turtle", "turtle"),
                                        ("application/n-triples", "nt"),
                                        ("application/rdf+xml", "xml"),
                                        ("application/ld+json", "json-ld")])
def test_construct_in_every_rdf_format(clients, accept, fmt):
    client = clients[0]
    r = client.get("/sparql", params={"query": CONSTRUCT}, headers={"accept": accept})
    assert r.status_code == 200 and r.headers["content-type"].startswith(accept)
    graph = rdflib.Graph().parse(data=r.content, format=fmt)
    nt = client.get("/sparql", params={"query": CONSTRUCT},
                    headers={"accept": "application/n-triples"}).content
    expected = {(t.subject.value, t.predicate.value, t.object.value)
                for t in ox.parse(nt, format=ox.RdfFormat.N_TRIPLES)}
    assert {tuple(str(x) for x in t) for t in graph} == expected and len(expected) > 20


@pytest.mark.parametrize("accept,answer", [
    ("application/sparql-results+json", "application/ld+json"),
    ("application/sparql-results+xml, application/rdf+xml", "application/rdf+xml"),
    ("application/sparql-results+xml", "application/rdf+xml"),
    ("text/turtle;q=0.5, application/sparql-results+json", "text/turtle")])
def test_a_graph_for_a_client_asking_for_sparql_results(clients, accept, answer):
    r = clients[0].get("/sparql", params={"query": CONSTRUCT}, headers={"accept": accept})
    assert r.status_code == 200 and r.headers["content-type"].split(";")[0] == answer


def test_the_browser_gets_a_page(clients):
    r = clients[0].get("/sparql", params={"query": SELECT},
                       headers={"accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert '<table id="answer">' in r.text and "Payments Service" in r.text
    assert "script-src" not in r.headers["content-security-policy"]  # (default-src 'none')


@pytest.mark.parametrize("call,status,code", [
    (lambda c: c.get("/sparql", params={"query": "SELEC ?s WHERE {}"}), 400, "query"),
    (lambda c: c.get("/sparql"), 400, "usage"),
    (lambda c: c.get("/sparql", params={"query": "SELECT * {}", "default-graph-uri": "x:g"}),
     400, "usage"),
    (lambda c: c.get("/sparql", params={"query": "x" * 2001}), 400, "usage"),
    (lambda c: c.get("/sparql", params={
        "query": "SELECT * { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"}), 400,
     "sparql-service"),
    (lambda c: c.get("/sparql", params={"query": "INSERT DATA { <x:a> <x:b> <x:c> }"}), 403,
     "read-only"),
    (lambda c: c.post("/sparql", data={"update": "CLEAR ALL"}), 403, "read-only"),
    (lambda c: c.post("/sparql", content="CLEAR ALL",
                      headers={"content-type": "application/sparql-update"}), 403, "read-only"),
    (lambda c: c.post("/sparql", content=SELECT, headers={"content-type": "text/plain"}), 415,
     "unsupported-media-type"),
    (lambda c: c.put("/sparql", content=SELECT), 405, "method-not-allowed"),
    (lambda c: c.get("/sparql", params={"query": SELECT}, headers={"accept": "image/png"}), 406,
     "not-acceptable"),
    (lambda c: c.get("/sparql", params={"query": CONSTRUCT},
                     headers={"accept": "text/csv"}), 406, "not-acceptable"),
    (lambda c: c.get("/sparql", params={"query": SELECT}, headers=bearer("wrong")), 401,
     "unauthorized"),
])
def test_refusals_are_one_line_with_their_status(clients, call, status, code):
    r = call(clients[0])
    assert r.status_code == status and r.json()["code"] == code, r.text
    assert "\n" not in r.json()["error"]


def test_nothing_is_written(clients, stores):
    before = cli_query(stores[0], ALL_QUADS)
    clients[0].get("/sparql", params={"query": "INSERT DATA { <x:a> <x:b> <x:c> }"})
    clients[0].post("/sparql", data={"update": "CLEAR ALL"})
    assert cli_query(stores[0], ALL_QUADS) == before


@pytest.mark.slow  # (the first one writes the view's store)
@pytest.mark.parametrize("query", VIEW_QUERIES, ids=range(len(VIEW_QUERIES)))
def test_a_public_query_answers_as_over_the_store_without_the_hidden_document(clients, query):
    with_doc, without = clients
    accept = {"accept": "application/sparql-results+json"}
    hidden = with_doc.get("/sparql", params={"query": query}, headers=accept)
    plain = without.get("/sparql", params={"query": query}, headers=accept)
    assert hidden.status_code == 200 and hidden.json() == plain.json()
    assert "ledger" not in hidden.text.lower() and "payments-db" not in hidden.text


@pytest.mark.slow  # (queries in child processes)
def test_a_token_sees_its_labels_and_all_access_sees_the_store(clients, stores):
    client = clients[0]
    q = "SELECT ?s WHERE { ?s rdfs:label ?l FILTER(?l IN ('General Ledger', 'Payments DB')) }"
    seen = lambda headers: sorted(r["s"] for r in _rows(client.get(
        "/sparql", params={"query": q}, headers=headers).json()))
    assert seen({}) == []
    both = ["<https://kgbuild.dev/id/component:default/general-ledger>",
            "<https://kgbuild.dev/id/resource:default/payments-db>"]
    assert seen(bearer(FINANCE_TOKEN)) == seen(bearer(ADMIN_TOKEN)) == both
    quads = ('SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } '
             'FILTER(CONTAINS(STR(?g), "finance/") || CONTAINS(STR(?g), "payments")) }')
    admin = _rows(client.get("/sparql", params={"query": quads}, headers=bearer(ADMIN_TOKEN)).json())
    assert admin == json.loads(cli_query(stores[0], quads))["rows"] and 100 < len(admin) < 500


def test_rows_are_bounded(clients):
    r = clients[0].get("/sparql", params={"query": ALL_QUADS}, headers=bearer(ADMIN_TOKEN))
    assert len(r.json()["results"]["bindings"]) == 500
    assert r.headers["x-kgbuild-truncated"] == "500"


@pytest.mark.parametrize("header,kind,expected", [
    (None, "select", "application/sparql-results+json"),
    ("*/*", "construct", "text/turtle"),
    ("text/*", "select", "text/csv"),
    ("text/csv;q=0.4, text/tab-separated-values;q=0.9", "select", "text/tab-separated-values"),
    ("application/sparql-results+xml;q=0.5, application/*;q=0.9", "ask",
     "application/sparql-results+json"),
    ("application/n-triples, text/turtle", "construct", "application/n-triples"),
    ("text/html;q=0, */*;q=0.1", "select", "application/sparql-results+json"),
    ("text/csv;q=bogus, text/turtle", "select", None),
    ("image/png, not a type, ;;;", "select", None),
])
def test_accept_is_read_as_http_says(header, kind, expected):
    from kgbuild.serve.sparql import answer_type

    assert answer_type(header, kind) == expected
