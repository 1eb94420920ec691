"""``kgbuild query``: SPARQL over the store's per-document graphs, bounded rows and time."""

import csv
import io
import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.project.pipeline import build_graph
from kgbuild.cli.main import main
from kgbuild.errors import KgbuildError
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore
from kgbuild.store.query import query_store, run_query

OWNED = "SELECT ?s ?o WHERE { ?s sw:ownedBy ?o } ORDER BY ?s ?o"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("query") / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    path = root.parent / "store"
    build_graph([root], store=path, timestamp=0, validate=False, resolve=False).store.close()
    return path


def run(*args, input=None):
    return CliRunner().invoke(main, ["query", *map(str, args)], input=input)


def test_select_sees_every_document_graph_and_their_union(store):
    with GraphStore(store, load_schema("software"), write=False) as s:
        edges = {(a, c) for a, b, c in s.triples() if b.endswith("#ownedBy>")}
        result = run_query(s, OWNED)
        assert result.kind == "select" and result.variables == ["s", "o"]
        assert {tuple(r) for r in result.rows} == edges and len(edges) > 3
        by_doc = run_query(s, "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s sw:ownedBy ?o } }")
        assert any(r[0].endswith("components/pricing-sdk.yaml>") for r in by_doc.rows)
        assert run_query(s, OWNED, union=False).rows == []  # the default graph itself is empty


def test_limit_ask_construct_and_formats(store):
    with GraphStore(store, load_schema("software"), write=False) as s:
        full = run_query(s, OWNED)
        cut = run_query(s, OWNED, limit=2)
        assert cut.rows == full.rows[:2] and cut.truncated and not full.truncated
        assert run_query(s, "ASK { ?s a sw:Service }").boolean is True
        built = run_query(s, "CONSTRUCT { ?o sw:owns ?s } WHERE { ?s sw:ownedBy ?o }")
        assert built.kind == "construct" and {(r[2], r[0]) for r in built.rows} == set(map(tuple, full.rows))
    data = json.loads(run(OWNED, "--store", store, "--format", "json").output)
    assert [[r["s"], r["o"]] for r in data["rows"]] == full.rows
    rows = list(csv.reader(io.StringIO(run(OWNED, "--store", store, "--format", "csv").output)))
    assert rows[0] == ["s", "o"] and rows[1] == [t[1:-1] for t in full.rows[0]]
    table = run(OWNED, "--store", store, "--limit", 1)
    assert table.exit_code == 0 and "1 row(s) (truncated" in table.output
    assert run("ASK { ?s a sw:NoSuchType }", "--store", store).exit_code == 1
    assert run("-", "--store", store, "--format", "json", input="ASK { ?s ?p ?o }").exit_code == 0


def test_literal_values_in_csv(store):
    out = run('SELECT ?l WHERE { ?s rdfs:label ?l } ORDER BY ?l LIMIT 1', "--store", store,
              "--format", "csv").output
    value = out.splitlines()[1]
    assert value and not value.startswith('"')


def test_bad_queries_are_one_line_errors(store, tmp_path):
    r = run("SELEC ?s WHERE { ?s ?p ?o }", "--store", store)
    assert r.exit_code == 2 and "does not parse" in r.output and "[query]" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = run("INSERT DATA { <x:a> <x:b> <x:c> }", "--store", store)
    assert r.exit_code == 2 and "[query]" in r.output
    assert run("  ", "--store", store).exit_code == 2
    r = run("ASK { ?s ?p ?o }", "--store", tmp_path / "none")
    assert r.exit_code == 2 and "no kgbuild store" in r.output


def test_timeout_stops_a_runaway_query(store):
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
    with pytest.raises(KgbuildError) as err:
        query_store(store, load_schema("software"), slow, timeout=0.5)
    assert err.value.code == "query-timeout"
    answer = query_store(store, load_schema("software"), "ASK { ?s ?p ?o }", timeout=30)
    assert answer.boolean is True


def test_a_query_from_a_threaded_process_runs_in_a_forkserver_child(store):
    # a server's worker thread: the child comes from the forkserver, not a fork of this
    # multi-threaded process, and is still bounded by the timeout
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from kgbuild.store import query
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
    hold = threading.Event()
    with ThreadPoolExecutor(2) as pool:
        pool.submit(hold.wait, 60)  # another thread alive beside the query's
        assert pool.submit(query._context).result().get_start_method() == "forkserver"
        answer = pool.submit(query_store, store, load_schema("software"), OWNED, timeout=60).result()
        with pytest.raises(KgbuildError) as err:
            pool.submit(query_store, store, load_schema("software"), slow, timeout=0.5).result()
        hold.set()
    assert err.value.code == "query-timeout"
    with GraphStore(store, load_schema("software"), write=False) as gs:
        assert answer.rows == run_query(gs, OWNED).rows and answer.rows
