"""The API in process (Starlette's TestClient): same answers as the CLI, access, errors,
new store generations, SPARQL bounds."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG
from embeddings_server import EmbeddingsServer
from helpers import ADMIN_TOKEN, PCI_TOKEN, SPECS, bearer, cli_json, word_vector, write_config
from starlette.testclient import TestClient

from kgbuild.project.pipeline import build_graph
from kgbuild.cli.main import main
from kgbuild.errors import InputError
from kgbuild.schema.loader import load_schema
from kgbuild.serve.app import create_app
from kgbuild.serve.config import load_serve_config

HIDDEN = "resource:default/payments-db"  # labelled pci in fixtures/catalog


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    result = build_graph([FIXTURE_CATALOG], load_schema(), store=folder / "store", timestamp=0)
    result.store.close()
    return folder


@pytest.fixture(scope="module")
def client(store):
    config = load_serve_config(write_config(store, max_body_bytes=2000, max_query_chars=200,
                                            max_rows=3, query_timeout=1))
    with TestClient(create_app(store / "store", load_schema(), config, watch=False),
                    raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("spec", SPECS, ids=range(len(SPECS)))
def test_traverse_answers_what_the_cli_prints(client, store, spec):
    public = client.post("/traverse", json=spec)
    assert public.status_code == 200 and public.json() == cli_json(store / "store", spec)
    pci = client.post("/traverse", json=spec, headers=bearer(PCI_TOKEN))
    assert pci.json() == cli_json(store / "store", spec, "--principal", "pci")
    admin = client.post("/traverse", json=spec, headers=bearer(ADMIN_TOKEN))
    assert admin.json() == cli_json(store / "store", spec, "--all-access")


def test_public_sees_nothing_hidden_and_a_token_sees_its_labels(client):
    spec = {"seeds": ["component:default/payments-service"], "follow": ["dependsOn"], "hops": 1}
    public = client.post("/traverse", json=spec).text
    assert HIDDEN not in public and "Payments DB" not in public
    assert HIDDEN in client.post("/traverse", json=spec, headers=bearer(PCI_TOKEN)).text
    assert client.get("/node", params={"id": HIDDEN}).status_code == 404
    hidden = client.get("/node", params={"id": HIDDEN}, headers=bearer(PCI_TOKEN)).json()
    assert hidden["label"] == "Payments DB" and hidden["documents"] == [
        "fixtures/catalog/components/payments.yaml"]
    # the edge to the hidden node is not even counted for the public
    assert client.get("/node", params={"id": "component:default/payments-service"}).json()[
        "edges"]["dependsOn"] == {"out": 1}
    assert client.get("/resolve", params={"mention": "Payments DB"}).json()["id"] is None
    assert client.get("/resolve", params={"mention": "Payments DB"},
                      headers=bearer(PCI_TOKEN)).json()["id"] == HIDDEN


def test_a_bad_token_is_refused(client):
    for path in ("/health", "/node?id=x", "/resolve?mention=x"):
        r = client.get(path, headers=bearer("wrong"))
        assert r.status_code == 401 and r.json() == {"error": "unknown bearer token",
                                                     "code": "unauthorized"}
    assert client.get("/health", headers={"Authorization": "Basic abc"}).status_code == 401


@pytest.mark.parametrize("mention, type_name", [("payments api", "API"), ("Payments DB", None),
                                                 ("paymnts", None), ("Commerce Platform", "Group")])
def test_resolve_answers_what_resolve_explain_prints(client, store, mention, type_name):
    typed = ["--type", type_name] if type_name else []
    for headers, principal in (({}, []), (bearer(PCI_TOKEN), ["--principal", "pci"])):
        r = CliRunner().invoke(main, ["resolve", "explain", mention, *typed, "--store",
                                      str(store / "store"), *principal, "--format", "json"])
        params = {"mention": mention, **({"type": type_name} if type_name else {})}
        assert client.get("/resolve", params=params, headers=headers).json() == json.loads(r.stdout)


def test_resolve_and_node_lookup(client):
    explained = client.get("/resolve", params={"mention": "payments api", "type": "API"}).json()
    assert explained["id"] == "api:default/payments-api" and explained["candidates"]
    node = client.get("/node", params={"id": "component:default/checkout-service"}).json()
    assert node["type"] == "Service" and node["edges"]["dependsOn"] == {"in": 1, "out": 2}
    assert client.get("/resolve", params={"mention": "x", "type": "Nope"}).status_code == 400


@pytest.mark.parametrize("body, status, code", [
    (b"{", 400, "bad-json"),
    (b"[1]", 400, "usage"),
    (b'{"seeds": ["a"], "hops": 0}', 400, "error"),
    (b'{"seeds": ["a"], "hops": "2"}', 400, "usage"),
    (b'{"seeds": ["a"], "cap": true}', 400, "usage"),
    (b'{"seeds": "a"}', 400, "usage"),
    (b'{"seeds": ["a"], "colour": 1}', 400, "usage"),
    (b'{"hops": 1}', 400, "usage"),
    (b'{"seeds": ["a"], "path": "ownedBy:sideways"}', 400, "error"),
    (b'{"seeds": ["a"], "path": " "}', 400, "usage"),
    (b'{"seeds": ["a"], "types": ["Spaceship"]}', 400, "schema"),
    (b'{"seeds": ["a"], "semantic": 3, "question": "q"}', 400, "usage"),  # no embeddings here
    (b'{"seeds": ["a"], "max_nodes": null}', 400, "usage"),
    (b'{"seeds": ["a"], "min_confidence": "high"}', 400, "usage"),
    (b'{"seeds": ["a"], "min_confidence": 2}', 400, "error"),
    (b'{"seeds": ["' + b"x" * 3000 + b'"]}', 413, "too-large"),
    (b"\xff\xfe", 400, "bad-json"),
])
def test_bad_requests_get_a_one_line_json_error(client, body, status, code):
    r = client.post("/traverse", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    err = r.json()
    assert err["code"] == code and "\n" not in err["error"] and "Traceback" not in r.text


def test_a_mistyped_edge_gets_a_suggestion(client):
    """Regression: /traverse answered a mistyped edge with the list of every edge name."""
    r = client.post("/traverse", json={"seeds": ["a"], "follow": ["dependsOm"]})
    assert r.status_code == 400 and "did you mean dependsOn?" in r.json()["error"]
    r = client.post("/traverse", json={"seeds": ["a"], "follow": ["zzzz"]})
    assert r.status_code == 400 and "known: " in r.json()["error"]


def test_unknown_routes_and_methods(client):
    assert client.get("/nope").json() == {"error": "GET /nope: Not Found", "code": "not-found"}
    assert client.get("/traverse").status_code == 405
    assert client.get("/node").json()["code"] == "usage"


@pytest.mark.slow
def test_sparql_is_for_all_access_tokens_and_bounded(client, store):
    query = {"query": "SELECT ?s WHERE { ?s a sw:Service } ORDER BY ?s"}
    assert client.post("/query", json=query).status_code == 403
    assert client.post("/query", json=query, headers=bearer(PCI_TOKEN)).status_code == 403
    admin = bearer(ADMIN_TOKEN)
    served = client.post("/query", json=query, headers=admin).json()
    r = CliRunner().invoke(main, ["query", query["query"], "--store", str(store / "store"),
                                  "--format", "json"])
    assert served == json.loads(r.stdout) and len(served["rows"]) == 2
    many = client.post("/query", json={"query": "SELECT * WHERE { ?s ?p ?o }"}, headers=admin)
    assert len(many.json()["rows"]) == 3 and many.json()["truncated"] is True
    assert client.post("/query", json={"query": "ASK { ?s ?p ?o }"},
                       headers=admin).json()["boolean"] is True
    bad = client.post("/query", json={"query": "DELETE WHERE { ?s ?p ?o }"}, headers=admin)
    assert bad.status_code == 400 and bad.json()["code"] == "query"
    long = client.post("/query", json={"query": "#" * 201}, headers=admin)
    assert long.status_code == 400 and "at most 200" in long.json()["error"]
    slow = client.post("/query", headers=admin, json={"query": "SELECT (COUNT(*) AS ?n) WHERE "
                       "{ ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"})
    assert slow.status_code == 503 and slow.json()["code"] == "query-timeout"


def test_openapi_describes_every_route(client):
    doc = client.get("/openapi.json").json()
    routes = {r.path for r in client.app.routes}
    assert doc["openapi"].startswith("3.") and set(doc["paths"]) == routes
    spec = doc["components"]["schemas"]["TraversalSpec"]["properties"]
    assert spec["hops"] == {"type": "integer", "minimum": 1, "maximum": 10**6, "default": 2}


def test_a_new_generation_is_picked_up(tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, catalog)
    schema = load_schema()
    build_graph([catalog], schema, store=tmp_path / "store", timestamp=0).store.close()
    app = create_app(tmp_path / "store", schema, watch=False)
    live = app.state.live
    spec = {"seeds": ["component:default/checkout-service"], "follow": ["dependsOn"], "hops": 1}
    with TestClient(app) as c:
        before = c.post("/traverse", json=spec).json()
        assert "component:default/payments-service" not in {n["id"] for n in before["nodes"]}
        assert live.check() is False  # nothing changed: no reload
        f = catalog / "components" / "checkout-service.yaml"
        f.write_text(f.read_text().replace("dependsOn:", "dependsOn:\n    - component:payments-service", 1))
        build_graph([catalog], schema, store=tmp_path / "store", timestamp=0).store.close()
        old = live.current
        assert live.check() is True and live.reloads == 1
        after = c.post("/traverse", json=spec)
        assert "component:default/payments-service" in {n["id"] for n in after.json()["nodes"]}
        assert after.headers["x-kgbuild-generation"] != old.generation
        assert old.view(live.principals[0]).traverser.run(  # the old snapshot is intact
            __import__("kgbuild").TraversalSpec(**{**spec, "seeds": tuple(spec["seeds"])})
        ).to_dict()["nodes"] == before["nodes"]


@pytest.mark.parametrize("text, message", [
    ("tokens: {a: 1}\n", "'tokens' must be a list"),
    ("tokens:\n  - name: a\n    sha256: abc\n", "64 hex digits"),
    ("tokens:\n  - name: a\n    sha256: " + "a" * 64 + "\n    labels: ['bad label']\n",
     "invalid access label"),
    ("tokens:\n  - name: a\n    sha256: " + "a" * 64 + "\n    secret: x\n", "unknown key 'secret'"),
    ("limits:\n  workers: 0\n", "workers must be above 0"),
    ("limits:\n  speed: 3\n", "unknown key 'speed'"),
    ("colour: red\n", "unknown key 'colour'"),
    ("embeddings: {model: m}\n", "needs exactly 'model' and 'url'"),
    ("embeddings: {model: m, url: 'ftp://x'}\n", "not an http(s) URL"),
    ("embeddings: {model: m, url: 'http://x:99999/v1'}\n", "not an http(s) URL"),
])
def test_config_errors_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "serve.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_serve_config(path)
    assert message in str(info.value) and str(path) in str(info.value) and info.value.line


def test_limits_read_numbers_with_an_exponent(tmp_path):
    path = tmp_path / "serve.yaml"
    path.write_text("limits:\n  query_timeout: 2.5e1\n  reload_interval: 5e-1\n  max_rows: 1e3\n")
    with pytest.raises(InputError, match="max_rows must be an integer, got 1000.0") as info:
        load_serve_config(path)
    assert info.value.line == 4
    path.write_text("limits:\n  query_timeout: 2.5e1\n  reload_interval: 5e-1\n")
    limits = load_serve_config(path).limits
    assert (limits.query_timeout, limits.reload_interval) == (25.0, 0.5)


def test_a_token_maps_to_its_principal(tmp_path):
    config = load_serve_config(write_config(tmp_path))
    assert config.principal(None).labels == frozenset()
    assert config.principal(f"Bearer {PCI_TOKEN}").labels == {"pci"}
    assert config.principal(f"bearer  {PCI_TOKEN} ").labels == {"pci"}
    assert config.principal(f"Bearer {ADMIN_TOKEN}").everyone
    for bad in ("Bearer", "Bearer ", f"Basic {PCI_TOKEN}", f"Bearer {PCI_TOKEN}x", PCI_TOKEN):
        assert config.principal(bad) is None
    assert hashlib.sha256(PCI_TOKEN.encode()).hexdigest() in (tmp_path / "serve.yaml").read_text()
    assert PCI_TOKEN not in (tmp_path / "serve.yaml").read_text()


def test_the_command_checks_its_config_before_serving(tmp_path, store):
    bad = tmp_path / "serve.yaml"
    bad.write_text("tokens:\n  - name: a\n    sha256: nothex\n")
    r = CliRunner().invoke(main, ["serve", "--store", str(store / "store"), "--config", str(bad)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert f"{bad}:3:" in r.output and r.output.strip().endswith("[input]")
    r = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "none")])
    assert r.exit_code == 2 and r.output.strip().endswith("[no-store]")


def test_semantic_seeds_through_the_configured_embeddings_endpoint(store, tmp_path):
    embeddings = EmbeddingsServer(word_vector)
    try:
        config = tmp_path / "serve.yaml"
        config.write_text(f"embeddings:\n  model: toy\n  url: {embeddings.url}\n")
        app = create_app(store / "store", load_schema(), load_serve_config(config), watch=False)
        spec = {"question": "Which thing charges cards and refunds orders?", "semantic": 2,
                "semantic_min": 0.1, "follow": ["ownedBy"], "hops": 1}
        with TestClient(app) as c:
            served = c.post("/traverse", json=spec).json()
        assert [s["via"] for s in served["seeds"]] == ["semantic", "semantic"]
        assert served == cli_json(store / "store", spec, "--embeddings-url", embeddings.url,
                                  "--embeddings-model", "toy")
    finally:
        embeddings.close()


def test_a_request_past_its_time_is_a_503(store, tmp_path):
    config = load_serve_config(write_config(tmp_path, request_timeout="0.0000001"))
    with TestClient(create_app(store / "store", load_schema(), config, watch=False)) as c:
        r = c.post("/traverse", json=SPECS[0])
        assert r.status_code == 503 and r.json() == {
            "error": "the request took longer than 1e-07 s", "code": "timeout"}
        assert c.get("/health").status_code == 200  # the server itself still answers
