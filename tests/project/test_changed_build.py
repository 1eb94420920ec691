"""Builds told what changed (``changed=``, ``kgbuild build --changed``): the same store as a
build that scans every file, from only the listed files and the documents depending on them."""

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO

from kgbuild.cli import main
from kgbuild.errors import KgbuildError
from kgbuild.project.pipeline import build_graph
from kgbuild.schema.loader import load_schema
from kgbuild.store.export import export_store
from kgbuild.store.graphstore import GraphStore
from kgbuild.store.manifest import INDEX, STATES, SHARDS, StatesIndex, _sharded

NPM = REPO / "fixtures" / "sources" / "npm-lock" / "currencyservice"


@pytest.fixture
def tree(tmp_path):
    """The fixture catalog and an npm project (its lock depends on its package.json)."""
    root = tmp_path / "src"
    shutil.copytree(FIXTURE_CATALOG, root / "catalog")
    shutil.copytree(NPM, root / "npm")
    return root


def build(root, store, **kw):
    result = build_graph([root], store=store, timestamp=0, validate=False, resolve=False,
                         registry=root / "aliases.yaml", root=root.parent, **kw)
    summary = result.summary()
    state = {"nquads": export_store(result.store, "nquads"),
             "states": result.store.document_states(), "counts": result.store.counts(),
             "index": result.store.states_index()}
    result.store.close()
    return summary, state


def told_and_scanned(root, tmp_path, edit, listed):
    """The store after ``edit()``, rebuilt told ``listed`` and rebuilt by a scan (a copy
    of the same store): both summaries and states."""
    store = tmp_path / "store"
    build(root, store)
    shutil.copytree(store, tmp_path / "copy")
    edit()
    told = build(root, store, changed=listed)
    scanned = build(root, tmp_path / "copy")
    return told, scanned


def index_of(states):
    """The states index computed from scratch."""
    return StatesIndex([{}] * SHARDS, {}).updated(_sharded(states, set(range(SHARDS))))


def assert_same(told, scanned):
    (s1, st1), (s2, st2) = told, scanned
    assert st1 == st2
    assert st1["index"] == index_of(st1["states"])
    for key in ("entities", "edges", "assertions", "documents", "problems_by_code"):
        assert s1[key] == s2[key], key
    for key in ("changed", "added", "deleted"):
        assert s1["documents_changed"][key] == s2["documents_changed"][key], key


def test_one_edited_file_is_all_a_told_build_reads(tree, tmp_path):
    f = tree / "catalog" / "components" / "pricing-sdk.yaml"
    told, scanned = told_and_scanned(tree, tmp_path, lambda: f.write_text(
        f.read_text().replace("owner: commerce-platform", "owner: storefront")), [f])
    assert_same(told, scanned)
    summary = told[0]
    assert summary["documents_changed"]["changed"] == 1
    assert summary["documents_unlisted"] == summary["documents"] - 1  # only that one looked at
    assert scanned[0]["documents_unlisted"] == 0
    assert "storefront" in told[1]["nquads"]


def test_added_and_deleted_files(tree, tmp_path):
    new = tree / "catalog" / "components" / "ledger.yaml"
    gone = tree / "catalog" / "components" / "web-shop.yaml"

    def edit():
        new.write_text((tree / "catalog" / "components" / "payments.yaml").read_text()
                       .replace("name: payments", "name: ledger"))
        gone.unlink()
    told, scanned = told_and_scanned(tree, tmp_path, edit, [new, gone])
    assert_same(told, scanned)
    assert told[0]["documents_changed"]["added"] == 1
    assert told[0]["documents_changed"]["deleted"] == 1


@pytest.mark.slow
def test_a_listed_dependency_re_reads_the_documents_depending_on_it(tree, tmp_path):
    manifest = tree / "npm" / "package.json"
    data = json.loads(manifest.read_text())

    def edit():
        data["name"] = "currencyservice-renamed"
        manifest.write_text(json.dumps(data, indent=2))
    told, scanned = told_and_scanned(tree, tmp_path, edit, [manifest])
    assert_same(told, scanned)
    # the lock (depending on package.json) was looked at as well as package.json itself
    assert told[0]["documents_changed"]["changed"] == 2
    assert told[0]["documents_unlisted"] == told[0]["documents"] - 2


def test_a_listed_file_a_scan_would_skip_is_not_read(tree, tmp_path):
    hidden = tree / "node_modules" / "x" / "catalog-info.yaml"
    ignored = tree / "catalog" / "skipped.yaml"

    def edit():
        hidden.parent.mkdir(parents=True)
        shutil.copy(tree / "catalog" / "components" / "payments.yaml", hidden)
        (tree / "catalog" / ".gitignore").write_text("skipped.yaml\n")
        shutil.copy(tree / "catalog" / "components" / "payments.yaml", ignored)
    told, scanned = told_and_scanned(
        tree, tmp_path, edit, [hidden, ignored, tree / "catalog" / ".gitignore"])
    assert_same(told, scanned)
    assert told[0]["documents_changed"]["added"] == 0


def test_a_file_outside_the_sources_is_left_out(tree, tmp_path):
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("x: 1\n")
    told, scanned = told_and_scanned(tree, tmp_path, lambda: None, [outside])
    assert_same(told, scanned)
    assert told[0]["documents_unlisted"] == told[0]["documents"]


def test_a_change_not_listed_is_not_seen(tree, tmp_path):
    """The caller vouches for the rest: what it does not list is not even stat'ed."""
    store = tmp_path / "store"
    build(tree, store)
    a = tree / "catalog" / "components" / "pricing-sdk.yaml"
    b = tree / "catalog" / "components" / "payments.yaml"
    a.write_text(a.read_text().replace("owner: commerce-platform", "owner: storefront"))
    b.write_text(b.read_text() + "\n# an edit nobody listed\n")
    summary, _ = build(tree, store, changed=[a])
    assert summary["documents_changed"]["changed"] == 1
    summary, _ = build(tree, store)  # a scan finds the other one
    assert summary["documents_changed"]["changed"] == 1


def test_changed_settings_make_a_full_scan_with_a_warning(tree, tmp_path):
    store = tmp_path / "store"
    build(tree, store)
    f = tree / "catalog" / "components" / "pricing-sdk.yaml"
    f.write_text(f.read_text().replace("owner: commerce-platform", "owner: storefront"))
    summary, state = build(tree, store, changed=[f], max_file_bytes=1 << 20)
    assert summary["problems_by_code"].get("full-scan") == 1
    assert summary["documents_unlisted"] == 0
    warning = next(p for p in summary["problem_list"] if p["code"] == "full-scan")
    assert "build settings changed" in warning["message"]
    assert "storefront" in state["nquads"]


def test_a_store_without_the_index_scans_then_has_it(tree, tmp_path):
    store = tmp_path / "store"
    build(tree, store)
    (store / STATES / INDEX).unlink()  # as a store made by an older kgbuild
    f = tree / "catalog" / "components" / "pricing-sdk.yaml"
    f.write_text(f.read_text().replace("owner: commerce-platform", "owner: storefront"))
    summary, _ = build(tree, store, changed=[f])
    assert summary["problems_by_code"].get("full-scan") == 1
    assert summary["documents_changed"]["changed"] == 1
    schema = load_schema("software")
    with GraphStore(store, schema) as st:  # the next read of every state writes the index
        st.document_states()
    with GraphStore(store, schema, write=False) as st:
        assert st.states_index() == index_of(st.document_states())
    f.write_text(f.read_text().replace("owner: storefront", "owner: commerce-platform"))
    summary, _ = build(tree, store, changed=[f])
    assert "full-scan" not in summary["problems_by_code"]


def test_a_told_build_cannot_also_be_full(tree, tmp_path):
    with pytest.raises(KgbuildError, match="told what changed"):
        build_graph([tree], store=tmp_path / "s", changed=[tree], full=True)


def test_cli_reads_the_changed_paths_from_standard_input(tree, tmp_path, monkeypatch):
    monkeypatch.chdir(tree.parent)
    store = tmp_path / "store"
    run = CliRunner().invoke
    args = ["build", "src", "--store", str(store), "--timestamp", "0", "--no-validate"]
    assert run(main, args).exit_code == 0
    f = tree / "catalog" / "components" / "pricing-sdk.yaml"
    f.write_text(f.read_text().replace("owner: commerce-platform", "owner: storefront"))
    out = run(main, [*args, "--changed-from", "-", "--format", "json"],
              input="src/catalog/components/pricing-sdk.yaml\n\n")
    assert out.exit_code == 0, out.output
    summary = json.loads(out.output)
    assert summary["documents_changed"]["changed"] == 1
    assert summary["documents_unlisted"] == summary["documents"] - 1
    text = run(main, [*args, "--changed", "src/catalog/components/payments.yaml"])
    assert text.exit_code == 0 and "not looked at (not among the changed files)" in text.output
    bad = run(main, [*args, "--changed", "x", "--full"])
    assert bad.exit_code == 2 and "cannot be combined" in bad.output
    missing = run(main, [*args, "--changed-from", str(tmp_path / "nope.txt")])
    assert missing.exit_code == 2 and "nope.txt" in missing.output
