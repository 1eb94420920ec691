"""kgbuild push --bulk-dir: the graphs Virtuoso lacks through its bulk loader (a real
Virtuoso and its isql), the rest over SPARQL; a failed load is repaired by the next push."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import free_port
from servers import build_store, run, virtuoso, virtuoso_server  # noqa: F401
from test_sparql_push import AUTH, assert_same, pulled_dataset, store_dataset

from kgbuild.graph.model import source_iri

pytestmark = pytest.mark.server


@pytest.fixture
def bulk(virtuoso, virtuoso_server, tmp_path_factory):  # noqa: F811
    """(the /sparql-auth URL, the push options of a bulk load into a folder Virtuoso reads)."""
    folder = tmp_path_factory.mktemp("load", numbered=True)
    inside = virtuoso_server.folder / folder.name  # (DirsAllowed: its working directory)
    inside.mkdir()
    return virtuoso, [*AUTH["virtuoso"], "--bulk-dir", inside, "--isql", virtuoso_server.isql]


def push(store, url, options, ok=True):
    r = run("push", "--endpoint", url, "--store", store, "--format", "json", *options)
    assert (r.exit_code == 0) is ok, r.output
    return json.loads(r.output) if ok else r


def listed(isql: str) -> int:
    """How many of kgbuild's files Virtuoso's loader still lists (it must forget them)."""
    out = subprocess.run(["isql-vt", isql, "dba", "dba", "VERBOSE=OFF", "BANNER=OFF",
                          "PROMPT=OFF"], input="SELECT 'n', COUNT(*) FROM DB.DBA.LOAD_LIST "
                         "WHERE ll_file LIKE '%/kgbuild-%';\n", capture_output=True, text=True,
                         check=True).stdout
    return int(next(line.split()[1] for line in out.splitlines() if line.startswith("n ")))


def test_a_first_push_goes_through_the_bulk_loader(bulk, tmp_path):
    url, options = bulk
    store = build_store(tmp_path)
    report = push(store, url, options)
    assert report["bulk_graphs"] == len(report["pushed"]) >= 10 and report["bulk_bytes"] > 0
    assert report["requests"] < 10  # the graphs went as files, not requests
    assert_same(pulled_dataset(url, AUTH["virtuoso"], tmp_path), store_dataset(store))
    assert os.listdir(options[options.index("--bulk-dir") + 1]) == []  # its files removed
    assert listed(options[-1]) == 0
    again = push(store, url, options)
    assert again["pushed"] == [] and again["bulk_graphs"] == 0 and again["requests"] == 0


def test_after_a_bulk_load_a_changed_graph_is_replaced_over_sparql(bulk, tmp_path):
    url, options = bulk
    store = build_store(tmp_path)
    push(store, url, options)
    doc = tmp_path / "catalog" / "components" / "pricing-sdk.yaml"
    doc.write_text(doc.read_text().replace("lifecycle: production", "lifecycle: deprecated"))
    added = tmp_path / "catalog" / "components" / "new-service.yaml"
    added.write_text("apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n"
                     "  name: new-service\nspec:\n  type: service\n  lifecycle: production\n"
                     "  owner: group:default/team-a\n")
    build_store(tmp_path)
    report = push(store, url, options)
    changed = source_iri("catalog/components/pricing-sdk.yaml")
    new = source_iri("catalog/components/new-service.yaml")
    assert changed in report["pushed"] and new in report["pushed"]
    assert report["bulk_graphs"] == 1  # the new document's graph; the changed one: MOVEd in
    assert_same(pulled_dataset(url, AUTH["virtuoso"], tmp_path), store_dataset(store))


@pytest.fixture
def denied():
    """A folder Virtuoso may not read: outside its working directory and /tmp (which it
    always allows)."""
    base = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else Path.home()
    folder = Path(tempfile.mkdtemp(prefix="kgbuild-denied-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_folder_virtuoso_may_not_read_is_one_line_and_the_next_push_repairs(
        virtuoso, virtuoso_server, denied, tmp_path):  # noqa: F811
    outside = denied
    store = build_store(tmp_path)
    r = push(store, virtuoso, [*AUTH["virtuoso"], "--bulk-dir", outside,
                               "--isql", virtuoso_server.isql], ok=False)
    assert r.exit_code == 2 and "[bulk-load]" in r.output and "denied" in r.output
    assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output
    report = push(store, virtuoso, AUTH["virtuoso"])  # nothing was recorded as sent
    assert report["bulk_graphs"] == 0 and len(report["pushed"]) >= 10
    assert_same(pulled_dataset(virtuoso, AUTH["virtuoso"], tmp_path), store_dataset(store))


def test_no_isql_and_no_virtuoso_at_the_sql_port_are_one_line(bulk, tmp_path, monkeypatch):
    url, options = bulk
    store = build_store(tmp_path)
    r = push(store, url, [*options[:-1], f"127.0.0.1:{free_port()}"], ok=False)
    assert r.exit_code == 2 and "[bulk-load]" in r.output and "Connect failed" in r.output
    assert len(r.output.strip().splitlines()) == 1
    monkeypatch.setenv("PATH", str(tmp_path))  # no isql on it
    r = push(store, url, options, ok=False)
    assert r.exit_code == 2 and "[bulk-load]" in r.output and "isql" in r.output


def test_bulk_dir_needs_an_endpoint_and_credentials(tmp_path):
    store = build_store(tmp_path)
    r = run("push", "--falkordb", "redis://127.0.0.1:1", "--store", store, "--bulk-dir", tmp_path)
    assert r.exit_code == 2 and "--endpoint" in r.output
    r = run("push", "--endpoint", "http://127.0.0.1:1/sparql", "--store", store,
            "--bulk-dir", tmp_path)
    assert r.exit_code == 2 and "--user and --password" in r.output



def test_a_first_push_is_loaded_in_batches_each_recorded_once_loaded(bulk, tmp_path,
                                                                       monkeypatch):
    """--bulk-batch-bytes bounds the N-Quads on disk: the graphs are written, loaded and
    removed a batch at a time. When a load fails after the first, the first batch's graphs
    are recorded as sent; the next push sends only the rest, and the server equals the
    store."""
    from kgbuild.remote import virtuoso as loader

    url, options = bulk
    store = build_store(tmp_path)
    folder = Path(options[options.index("--bulk-dir") + 1])
    loads, isql = [], loader.BulkLoader._isql

    def second_fails(self, program, run):
        loads.append(len(os.listdir(run)))
        if len(loads) == 2:
            raise loader.BulkLoadError("the second load failed")
        isql(self, program, run)

    monkeypatch.setattr(loader.BulkLoader, "_isql", second_fails)
    small = [*options, "--bulk-batch-bytes", "4000"]
    switches = sys.getswitchinterval()
    r = push(store, url, small, ok=False)
    assert "[bulk-load]" in r.output and len(loads) == 2 and os.listdir(folder) == []
    assert sys.getswitchinterval() == switches  # (the dump stopped with the failed load)
    monkeypatch.setattr(loader.BulkLoader, "_isql", isql)
    again = push(store, url, small)
    assert again["unchanged"] > 0 and again["bulk_graphs"] == len(again["pushed"]) > 0
    assert again["bulk_batches"] >= 2 and os.listdir(folder) == []
    assert_same(pulled_dataset(url, AUTH["virtuoso"], tmp_path), store_dataset(store))
