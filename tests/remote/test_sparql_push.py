"""kgbuild push / pull / traverse --endpoint against real Oxigraph and Virtuoso servers."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest
from rdflib import Dataset
from rdflib.compare import isomorphic
from servers import build_store, oxigraph, run, virtuoso, virtuoso_server  # noqa: F401

from kgbuild.graph.access import Principal
from kgbuild.graph.model import source_iri
from kgbuild.remote.push import BOOKKEEPING, kgbuild_graphs
from kgbuild.remote.sparql import Auth, SparqlClient
from kgbuild.retrieve.traverse import TraversalSpec, Traverser, open_traverser
from kgbuild.schema.loader import load_schema
from kgbuild.schema.namespaces import NODES_GRAPH
from kgbuild.store.graphstore import MANIFEST_GRAPH, GraphStore

pytestmark = pytest.mark.server
SCHEMA = load_schema("software")
AUTH = {"oxigraph": [], "virtuoso": ["--digest", "--user", "dba", "--password", "dba"]}
CLIENT_AUTH = {"oxigraph": Auth(), "virtuoso": Auth("dba", "dba", digest=True)}


@pytest.fixture(params=["oxigraph", "virtuoso"])
def server(request):
    """(name, URL, auth options) of a fresh server of each kind."""
    return request.param, request.getfixturevalue(request.param), AUTH[request.param]


def push(store, url, auth, *extra):
    r = run("push", "--endpoint", url, "--store", store, "--format", "json", *auth, *extra)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def store_dataset(store) -> Dataset:
    """What a push must leave on the server: every graph but the bookkeeping."""
    ds = Dataset()
    with GraphStore(store, SCHEMA, write=False) as st:
        quads = [q for q in st._db.quads_for_pattern(None, None, None, None)
                 if str(q.predicate) not in BOOKKEEPING and q.graph_name.value != MANIFEST_GRAPH]
    ds.parse(data=ox.serialize(quads, format=ox.RdfFormat.N_QUADS).decode(), format="nquads")
    return ds


def pulled_dataset(url, auth, tmp_path) -> Dataset:
    out = tmp_path / "pulled.nq"
    r = run("pull", "--endpoint", url, "-o", out, *auth)
    assert r.exit_code == 0, r.output
    ds = Dataset()
    ds.parse(out, format="nquads")
    return ds


def assert_same(a: Dataset, b: Dataset) -> None:
    """Graph by graph isomorphic (rdflib compares literals by value: Virtuoso writes the
    double 1.0 as 1)."""
    names = lambda ds: {str(g.identifier) for g in ds.graphs() if len(g)}  # noqa: E731
    assert names(a) == names(b)
    for g in names(a):
        assert isomorphic(a.graph(g), b.graph(g)), g


def test_push_then_pull_round_trips_every_graph(server, tmp_path):
    name, url, auth = server
    store = build_store(tmp_path)
    report = push(store, url, auth)
    with GraphStore(store, SCHEMA, write=False) as st:
        docs = sorted(st.documents())
    assert sorted(report["pushed"]) == sorted([source_iri(d) for d in docs] + [NODES_GRAPH])
    assert report["deleted"] == [] and report["bytes_sent"] > 0
    assert_same(pulled_dataset(url, auth, tmp_path), store_dataset(store))
    with SparqlClient(url, auth=CLIENT_AUTH[name]) as client:  # no temporary upload graph is left behind
        rows = client.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } "
                             "FILTER(STRSTARTS(STR(?g), 'urn:kgbuild:')) }")
    assert rows == []


def test_second_push_sends_nothing_and_a_change_sends_one_graph(server, tmp_path):
    name, url, auth = server
    store = build_store(tmp_path)
    full = push(store, url, auth)
    again = push(store, url, auth)
    assert again["pushed"] == [] and again["bytes_sent"] == 0 and again["requests"] == 0
    assert again["unchanged"] == len(full["pushed"])

    doc = tmp_path / "catalog" / "components" / "pricing-sdk.yaml"
    doc.write_text(doc.read_text().replace("lifecycle: production", "lifecycle: deprecated"))
    build_store(tmp_path)
    one = push(store, url, auth)
    assert one["pushed"] == [source_iri("catalog/components/pricing-sdk.yaml")]
    assert 0 < one["bytes_sent"] < full["bytes_sent"] / 4
    assert_same(pulled_dataset(url, auth, tmp_path), store_dataset(store))


def test_a_renamed_node_sends_the_nodes_graph_again(server, tmp_path):
    """The nodes graph is digested by the mark its changes record, not read whole: a new
    title (the node's label) sends it again, a description edit does not."""
    name, url, auth = server
    store = build_store(tmp_path)
    push(store, url, auth)
    doc = tmp_path / "catalog" / "components" / "pricing-sdk.yaml"
    doc.write_text(doc.read_text().replace("title: Pricing SDK", "title: Pricing Kit"))
    build_store(tmp_path)
    renamed = push(store, url, auth)
    assert sorted(renamed["pushed"]) == sorted(
        [source_iri("catalog/components/pricing-sdk.yaml"), NODES_GRAPH])
    assert_same(pulled_dataset(url, auth, tmp_path), store_dataset(store))
    doc.write_text(doc.read_text().replace("computes prices", "computes the prices"))
    build_store(tmp_path)
    assert push(store, url, auth)["pushed"] == [source_iri("catalog/components/pricing-sdk.yaml")]


def test_removed_document_graph_is_dropped(server, tmp_path):
    name, url, auth = server
    store = build_store(tmp_path)
    push(store, url, auth)
    (tmp_path / "catalog" / "components" / "web-shop.yaml").unlink()
    build_store(tmp_path)
    report = push(store, url, auth)
    assert report["deleted"] == [source_iri("catalog/components/web-shop.yaml")]
    assert_same(pulled_dataset(url, auth, tmp_path), store_dataset(store))


def test_full_push_into_one_named_graph(oxigraph, tmp_path):  # noqa: F811
    store = build_store(tmp_path)
    report = push(store, oxigraph, [], "--graph-iri", "https://kgbuild.dev/graph/all")
    assert report["pushed"] == ["https://kgbuild.dev/graph/all"]
    assert push(store, oxigraph, [], "--graph-iri", "https://kgbuild.dev/graph/all")["pushed"] == []
    out = tmp_path / "all.nt"
    assert run("pull", "--endpoint", oxigraph, "--graph-iri", "https://kgbuild.dev/graph/all",
               "-o", out).exit_code == 0
    exported = tmp_path / "export.nt"
    assert run("export", "--store", store, "--format", "nt", "-o", exported).exit_code == 0
    assert set(out.read_text().splitlines()) == set(exported.read_text().splitlines())


SPECS = [
    TraversalSpec(seeds=("api:default/payments-api",), path="ownedBy:out/ownerOf:out/dependsOn:in"),
    TraversalSpec(seeds=("group:default/commerce-platform",), follow=("ownerOf",), hops=1),
    TraversalSpec(seeds=("group:default/commerce-platform",), hops=2),
    TraversalSpec(seeds=("group:default/commerce-platform",), hops=3, cap=2),
    TraversalSpec(seeds=("component:default/payments-service",), hops=2, types=("Group",)),
]


def test_remote_traversal_equals_local(server, tmp_path):
    name, url, auth = server
    store = build_store(tmp_path)
    push(store, url, auth)
    with GraphStore(store, SCHEMA, write=False) as st:
        kg = st.knowledge_graph()
    with SparqlClient(url, auth=CLIENT_AUTH[name]) as client:
        for principal in (Principal(), Principal.of("pci"), Principal.all_access()):
            local = Traverser(kg, principal)
            for spec in SPECS:
                want = local.run(spec).to_dict()
                assert open_traverser(client, SCHEMA, principal).run(spec).to_dict() == want
    # the restricted principal sees less than everyone: the comparison covers access
    spec = SPECS[2]
    assert Traverser(kg, Principal()).run(spec).to_dict()["nodes"] != \
        Traverser(kg, Principal.all_access()).run(spec).to_dict()["nodes"]


def test_traverse_cli_endpoint(oxigraph, tmp_path):  # noqa: F811
    store = build_store(tmp_path)
    push(store, oxigraph, [])
    args = ["--seed", "api:default/payments-api", "--path", "ownedBy:out/ownerOf:out/dependsOn:in",
            "--format", "json"]
    remote = run("traverse", "--endpoint", oxigraph, *args)
    local = run("traverse", "--store", store, *args)
    assert remote.exit_code == local.exit_code == 0
    assert json.loads(remote.output) == json.loads(local.output)
    assert json.loads(remote.output)["answers"] == ["component:default/checkout-service",
                                                    "component:default/payments-service"]


def test_wrong_password_is_one_line(virtuoso, tmp_path):  # noqa: F811
    store = build_store(tmp_path)
    r = run("push", "--endpoint", virtuoso, "--store", store, "--digest", "--user", "dba",
            "--password", "wrong")
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and "401" in r.output and "[remote-auth]" in r.output


def test_no_server_is_one_line(tmp_path):
    from conftest import free_port

    store = build_store(tmp_path)
    r = run("push", "--endpoint", f"http://127.0.0.1:{free_port()}/query", "--store", store,
            "--retries", 1, "--timeout", 5)
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert "cannot reach" in r.output and "after 2 attempts" in r.output


def test_graphs_listed_are_kgbuild_ones(oxigraph, tmp_path):  # noqa: F811
    store = build_store(tmp_path)
    push(store, oxigraph, [])
    with SparqlClient(oxigraph) as client:
        client.update("INSERT DATA { GRAPH <http://example.org/other> { <http://e/a> <http://e/b> <http://e/c> } }")
        graphs = kgbuild_graphs(client)
    assert "http://example.org/other" not in graphs and NODES_GRAPH in graphs


def test_full_push_makes_the_server_equal_the_store(server, tmp_path):
    name, url, auth = server
    store = build_store(tmp_path)
    push(store, url, auth)
    (tmp_path / "catalog" / "components" / "web-shop.yaml").unlink()
    build_store(tmp_path)
    (store / "remote").rename(tmp_path / "forgotten")  # what was pushed is not remembered
    report = push(store, url, auth, "--full")
    assert report["deleted"] == [source_iri("catalog/components/web-shop.yaml")]
    assert_same(pulled_dataset(url, auth, tmp_path), store_dataset(store))


def test_traverse_endpoint_usage_errors(tmp_path):
    url = "http://127.0.0.1:9/query"  # never contacted: the arguments are refused first
    r = run("traverse", "--endpoint", url, "--name", "Payments API", "--path", "ownedBy")
    assert r.exit_code == 2 and "seeded by --seed ID only" in r.output
    graph = tmp_path / "g.ttl"
    graph.write_text("")
    r = run("traverse", "--endpoint", url, "--graph", graph, "--seed", "x", "--path", "ownedBy")
    assert r.exit_code == 2 and "takes neither --graph" in r.output


@pytest.mark.slow
def test_a_graph_of_many_thousand_triples_goes_to_virtuoso(virtuoso, tmp_path):  # noqa: F811
    """Regression: one document's graph of more than about 5,000 triples in one INSERT DATA
    block ran Virtuoso's SPARQL parser out of stack ('SP030 ... memory exhausted')."""
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "all.yaml").write_text("".join(
        f"---\napiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n"
        f"  name: svc-{i}\n  description: Service number {i}\nspec:\n  type: service\n"
        f"  lifecycle: production\n  owner: team-a\n  dependsOn: [component:svc-{i + 1}]\n"
        for i in range(800)))
    store = build_store(tmp_path, catalog)
    with GraphStore(store, SCHEMA, write=False) as st:
        biggest = max(sum(1 for _ in st._db.quads_for_pattern(None, None, None, g))
                      for g in st._db.named_graphs())
    assert biggest > 6000
    push(store, virtuoso, AUTH["virtuoso"])
    assert_same(store_dataset(store), pulled_dataset(virtuoso, AUTH["virtuoso"], tmp_path))
