"""What a failed push leaves on a SPARQL server and what reads it, against a server that fails
at each write of a push (fault_server.py), then is healed: the old graphs keep answering, no
temporary upload graph is read or left behind, and the next push makes the server equal the
store."""

from __future__ import annotations

import contextlib
import fcntl
import json

import pyoxigraph as ox
import pytest
from fault_server import HOWS, FaultServer
from servers import build_store, oxigraph, run  # noqa: F401

from kgbuild.errors import KgbuildError
from kgbuild.graph.access import Principal
from kgbuild.graph.model import source_iri
from kgbuild.remote import push as push_module
from kgbuild.remote.push import BOOKKEEPING, push_store
from kgbuild.remote.sparql import RemoteError, SparqlClient
from kgbuild.retrieve.traverse import TraversalSpec, Traverser, open_traverser
from kgbuild.schema.loader import load_schema
from kgbuild.schema.namespaces import BASE
from kgbuild.store.graphstore import MANIFEST_GRAPH, GraphStore

SCHEMA = load_schema("software")
UPLOAD = "urn:kgbuild:upload:"
ALL = "https://kgbuild.dev/graph/all"
SPECS = [
    TraversalSpec(seeds=("component:default/checkout-service",), follow=("dependsOn",), hops=1),
    TraversalSpec(seeds=("group:default/commerce-platform",), hops=2),
    TraversalSpec(seeds=("api:default/payments-api",), path="ownedBy:out/ownerOf:out/dependsOn:in"),
]
WALK = ["--seed", "component:default/checkout-service", "--follow", "dependsOn", "--hops", 1,
        "--format", "json"]


@pytest.fixture
def faulty():
    srv = FaultServer()
    yield srv
    srv.close()


def push(store, url, retries=0, **kw):
    with SparqlClient(url, retries=retries, backoff=0) as client:
        return push_store(store, SCHEMA, client, batch_bytes=4096, **kw)


def cli_push(store, url, *extra):
    r = run("push", "--endpoint", url, "--store", store, "--retries", 0, "--format", "json",
            *extra)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def local_quads(store, graph_iri: str | None = None) -> set[ox.Quad]:
    """What a push must leave on the server: the store's graphs but the bookkeeping (or, with
    ``graph_iri``, the exported triples in that one graph)."""
    with GraphStore(store, SCHEMA, write=False) as st:
        if graph_iri is not None:
            return {ox.Quad(q.subject, q.predicate, q.object, ox.NamedNode(graph_iri))
                    for q in st.quads()}
        return {q for q in st._db.quads_for_pattern(None, None, None, None)
                if str(q.predicate) not in BOOKKEEPING and q.graph_name.value != MANIFEST_GRAPH}


def remote_quads(srv: FaultServer) -> set[ox.Quad]:
    """The server's kgbuild graphs."""
    return {q for q in srv.store if isinstance(q.graph_name, ox.NamedNode)
            and q.graph_name.value.startswith(BASE)}


def local_walks(store) -> list[dict]:
    with GraphStore(store, SCHEMA, write=False) as st:
        traverser = Traverser(st.knowledge_graph(), Principal.all_access())
    return [traverser.run(spec).to_dict() for spec in SPECS]


def remote_walks(url) -> list[dict]:
    with SparqlClient(url) as client:
        walker = open_traverser(client, SCHEMA, Principal.all_access())
        return [walker.run(spec).to_dict() for spec in SPECS]


def edit(tmp_path, doc: str, old: str, new: str) -> None:
    path = tmp_path / "catalog" / doc
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def second_version(tmp_path) -> None:
    """An incremental change: one document edited (an edge gone), one removed, one added."""
    edit(tmp_path, "components/checkout-service.yaml", "    - resource:orders-db\n", "")
    (tmp_path / "catalog" / "components" / "web-shop.yaml").unlink()
    (tmp_path / "catalog" / "components" / "search.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: search\n"
        "spec:\n  type: service\n  lifecycle: production\n  owner: storefront\n"
        "  dependsOn: [component:checkout-service]\n")
    build_store(tmp_path)


def state_files(store) -> dict:
    return {p: p.read_bytes() for p in (store / "remote").glob("push-*.json")}


VARIANTS = [  # (how write N fails, later writes fail too, client retries)
    ("500", True, 0),  # the server goes bad: the swap and the cleanup's DROP fail too
    ("500", False, 0),  # only that write fails: the cleanup's DROP works
    ("close", True, 0),  # connections dropped without an answer
    ("apply-close", True, 0),  # written, but the answer lost; later writes refused
    ("apply-close", False, 1),  # ... and retried (a MOVE done twice finds no source)
]


@pytest.mark.slow
@pytest.mark.parametrize("how,sticky,retries", VARIANTS)
def test_a_push_failing_at_any_write_is_repaired_by_the_next(faulty, tmp_path, how, sticky,
                                                            retries):
    store = build_store(tmp_path)
    push(store, faulty.url)
    old_quads, old_walks = remote_quads(faulty), local_walks(store)
    old_state = state_files(store)
    snapshot = set(faulty.store)
    second_version(tmp_path)
    new_quads, new_walks = local_quads(store), local_walks(store)
    assert new_walks != old_walks  # the walks tell the versions apart

    faulty.writes = 0
    push(store, faulty.url)  # how many writes a push of the change makes
    writes = faulty.writes
    assert writes >= 4 and remote_quads(faulty) == new_quads

    for n in range(1, writes + 1):
        faulty.reset(snapshot)
        for path, data in old_state.items():
            path.write_bytes(data)
        faulty.fail(n, how, sticky)
        try:
            push(store, faulty.url, retries=retries)
        except RemoteError:
            failed = True
        else:
            failed = False
        assert failed or how == "apply-close", n
        if how != "apply-close":  # nothing reached the server: the old graphs answer
            assert remote_quads(faulty) == old_quads, n
            assert remote_walks(faulty.url) == old_walks, n
        else:  # each graph whole, old or new
            for g in {q.graph_name for q in old_quads | new_quads}:
                got = {q for q in remote_quads(faulty) if q.graph_name == g}
                assert got in ({q for q in old_quads if q.graph_name == g},
                               {q for q in new_quads if q.graph_name == g}), (n, g)
        if sticky:  # the next push fails at its first write too (the cleanup's DROP, if any)
            faulty.fail(1, how, sticky)
            with contextlib.suppress(RemoteError):
                push(store, faulty.url, retries=retries)
        faulty.heal()
        push(store, faulty.url)
        assert faulty.graphs(UPLOAD) == set(), n
        assert remote_quads(faulty) == new_quads, n
        assert remote_walks(faulty.url) == new_walks, n


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["incremental", "full", "graph-iri"])
def test_every_mode_removes_the_leftovers_of_a_failed_push(faulty, tmp_path, mode):
    store = build_store(tmp_path)
    kw = {"full": mode == "full", "graph_iri": ALL if mode == "graph-iri" else None}
    push(store, faulty.url, **kw)
    edit(tmp_path, "components/pricing-sdk.yaml", "lifecycle: production", "lifecycle: deprecated")
    build_store(tmp_path)
    faulty.fail(when="MOVE")  # the swap fails, and the cleanup's DROP
    with pytest.raises(RemoteError):
        push(store, faulty.url, **kw)
    assert faulty.graphs(UPLOAD)  # left behind
    faulty.heal()
    report = push(store, faulty.url, **kw)
    assert report.requests > 0 and faulty.graphs(UPLOAD) == set()
    assert remote_quads(faulty) == local_quads(store, kw["graph_iri"])
    again = push(store, faulty.url, **kw)
    assert (mode == "full" or again.requests == 0) and faulty.graphs(UPLOAD) == set()


@pytest.mark.slow
def test_a_push_after_a_failure_with_nothing_changed_still_cleans(faulty, tmp_path):
    """Only a push that ended cleanly lets the next one with nothing changed send nothing."""
    store = build_store(tmp_path)
    push(store, faulty.url)
    for i, how in enumerate(HOWS):
        old, new = ("production", "deprecated") if i % 2 == 0 else ("deprecated", "production")
        edit(tmp_path, "components/pricing-sdk.yaml", f"lifecycle: {old}", f"lifecycle: {new}")
        build_store(tmp_path)
        faulty.fail(when="MOVE", how=how)  # the swap fails, then the cleanup's DROP
        with contextlib.suppress(RemoteError):
            push(store, faulty.url)
        faulty.heal()
        assert push(store, faulty.url).requests > 0, how  # though the store is as it was
        assert faulty.graphs(UPLOAD) == set() and remote_quads(faulty) == local_quads(store)
        assert push(store, faulty.url).requests == 0, how


@pytest.mark.slow
def test_the_reported_leftover_neither_answers_nor_survives_a_full_push(faulty, tmp_path):
    """A failed push's temporary graph holds an edge the store no longer has: `traverse
    --endpoint` and `pull` do not read it, and `push --full` removes it."""
    store = build_store(tmp_path)
    cli_push(store, faulty.url)
    dep = "    - component:pricing-sdk\n"
    edit(tmp_path, "components/checkout-service.yaml", dep, dep + "    - component:web-shop\n")
    build_store(tmp_path)
    faulty.fail(when="MOVE")  # the MOVE fails, then the cleanup's DROP
    r = run("push", "--endpoint", faulty.url, "--store", store, "--retries", 0)
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "answered 500" in r.output
    [tmp] = faulty.graphs(UPLOAD)
    assert any(q.object.value.endswith("web-shop") for q in faulty.store
               if q.graph_name.value == tmp)
    faulty.heal()
    edit(tmp_path, "components/checkout-service.yaml", "    - component:web-shop\n", "")
    build_store(tmp_path)

    remote = run("traverse", "--endpoint", faulty.url, *WALK)
    local = run("traverse", "--store", store, *WALK)
    assert remote.exit_code == local.exit_code == 0
    assert json.loads(remote.output) == json.loads(local.output)
    assert "component:default/web-shop" not in json.loads(remote.output)["answers"]
    pulled = tmp_path / "pulled.nq"
    assert run("pull", "--endpoint", faulty.url, "-o", pulled).exit_code == 0
    assert tmp not in pulled.read_text() and UPLOAD not in pulled.read_text()

    cli_push(store, faulty.url, "--full")
    assert faulty.graphs(UPLOAD) == set() and remote_quads(faulty) == local_quads(store)


@pytest.mark.slow
def test_other_uploads_are_left_alone_and_never_read(faulty, tmp_path):
    """Another store's upload (another key) may be in flight: no push removes it; one named
    the way pushes did before keys is removed by `push --full`. Neither is read."""
    store = build_store(tmp_path)
    push(store, faulty.url)
    dep = "    - component:pricing-sdk\n"
    edit(tmp_path, "components/checkout-service.yaml", dep, dep + "    - component:web-shop\n")
    build_store(tmp_path)
    faulty.fail(when="MOVE")
    with pytest.raises(RemoteError):
        push(store, faulty.url)
    faulty.heal()
    [tmp] = faulty.graphs(UPLOAD)  # holds the edge to web-shop
    other, legacy = f"{UPLOAD}0123456789abcdef:{'a' * 32}", f"{UPLOAD}{'b' * 32}"
    faulty.store.update(f"COPY GRAPH <{tmp}> TO <{other}> ; COPY GRAPH <{tmp}> TO <{legacy}>")
    edit(tmp_path, "components/checkout-service.yaml", "    - component:web-shop\n", "")
    build_store(tmp_path)
    assert remote_walks(faulty.url) == local_walks(store)  # not one of the three is read
    push(store, faulty.url)  # finds its own leftover
    assert faulty.graphs(UPLOAD) == {other, legacy}
    push(store, faulty.url, full=True)
    assert faulty.graphs(UPLOAD) == {other}
    assert remote_quads(faulty) == local_quads(store)
    assert remote_walks(faulty.url) == local_walks(store)


@pytest.mark.slow
def test_a_push_killed_midway_is_cleaned_by_the_next(faulty, tmp_path, monkeypatch):
    """The state file says a push may leave uploads before the first is written, so a push
    that never reaches its end (killed: neither its cleanup nor its last save runs) is
    followed by a search for them."""
    store = build_store(tmp_path)
    push(store, faulty.url)
    edit(tmp_path, "components/pricing-sdk.yaml", "lifecycle: production", "lifecycle: deprecated")
    build_store(tmp_path)
    killed = []
    real_save = push_module._save_state

    def flush_and_die(self):
        self._send_data()
        killed.append(True)  # nothing the process would do from here on runs
        raise KeyboardInterrupt

    monkeypatch.setattr(push_module, "_save_state",
                        lambda *a, **kw: "" if killed else real_save(*a, **kw))
    monkeypatch.setattr(push_module.Uploader, "flush", flush_and_die)
    with pytest.raises(KeyboardInterrupt):
        push(store, faulty.url)
    monkeypatch.undo()
    assert faulty.graphs(UPLOAD)
    push(store, faulty.url)
    assert faulty.graphs(UPLOAD) == set() and remote_quads(faulty) == local_quads(store)


@pytest.mark.slow
def test_one_push_of_a_store_to_a_server_at_a_time(faulty, tmp_path):
    store = build_store(tmp_path)
    push(store, faulty.url)
    [state] = (store / "remote").glob("push-*.json")
    with open(state.with_suffix(".lock"), "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(KgbuildError) as err:
            push(store, faulty.url, full=True)
    assert err.value.code == "push-locked" and "another kgbuild push" in str(err.value)
    push(store, faulty.url, full=True)


@pytest.mark.server
def test_leftovers_on_a_real_server(oxigraph, tmp_path):  # noqa: F811
    """On Oxigraph: temporary graphs (this store's, another's, one named before keys) holding
    an edge the store no longer has are read by neither traverse --endpoint nor pull; push
    --full removes this store's and the unkeyed one."""
    dep = "    - component:pricing-sdk\n"
    build_store(tmp_path)
    edit(tmp_path, "components/checkout-service.yaml", dep, dep + "    - component:web-shop\n")
    store = build_store(tmp_path)
    with GraphStore(store, SCHEMA, write=False) as st:
        stale = b"\n".join(push_module._graph_lines(
            st, source_iri("catalog/components/checkout-service.yaml"))).decode()
    assert "web-shop" in stale
    edit(tmp_path, "components/checkout-service.yaml", "    - component:web-shop\n", "")
    build_store(tmp_path)
    cli_push(store, oxigraph)
    [state] = (store / "remote").glob("push-*.json")
    key = json.loads(state.read_text())["upload"]
    graphs = [f"{UPLOAD}{key}:{'c' * 32}", f"{UPLOAD}0123456789abcdef:{'a' * 32}",
              f"{UPLOAD}{'b' * 32}"]
    with SparqlClient(oxigraph) as client:
        client.update("INSERT DATA { " + " ".join(f"GRAPH <{g}> {{ {stale} }}" for g in graphs)
                      + " }")
    remote = run("traverse", "--endpoint", oxigraph, *WALK)
    local = run("traverse", "--store", store, *WALK)
    assert remote.exit_code == local.exit_code == 0
    assert json.loads(remote.output) == json.loads(local.output)
    pulled = tmp_path / "pulled.nq"
    assert run("pull", "--endpoint", oxigraph, "-o", pulled).exit_code == 0
    assert UPLOAD not in pulled.read_text()
    cli_push(store, oxigraph, "--full")
    with SparqlClient(oxigraph) as client:
        left = client.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } "
                             f"FILTER(STRSTARTS(STR(?g), '{UPLOAD}')) }}")
    assert [r["g"]["value"] for r in left] == [graphs[1]]
