"""Odd file systems: symlinks out of the scanned folder, loops, FIFOs, names that are not
UTF-8. Nothing outside the root is read, nothing hangs, no traceback."""

import os
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.project.pipeline import build_graph
from kgbuild.cli import main

SECRET = "component:default/pricing-sdk"  # defined only by the file outside the root


@pytest.fixture
def tree(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(FIXTURE_CATALOG / "components" / "pricing-sdk.yaml", outside / "secret.yaml")
    (outside / "CODEOWNERS").write_text("* @evil-team\n")
    root = tmp_path / "project" / "cat"
    root.mkdir(parents=True)
    shutil.copy(FIXTURE_CATALOG / "components" / "web-shop.yaml", root / "web-shop.yaml")
    (root / "package.json").write_text('{"name": "shop", "dependencies": {"left-pad": "1"}}')
    (root / "link.yaml").symlink_to(outside / "secret.yaml")
    (root / "linked-dir").symlink_to(outside, target_is_directory=True)
    (root / "loop-a").symlink_to(root / "loop-b")
    (root / "loop-b").symlink_to(root / "loop-a")
    (root / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (root / ".github").mkdir()
    (root / ".github" / "CODEOWNERS").symlink_to(outside / "CODEOWNERS")
    os.mkfifo(root / "catalog-info.yaml")
    return root


def build(root, **kw):
    return build_graph([root], store=None, timestamp=0, root=root.parent, validate=False, **kw)


def test_nothing_outside_the_root_is_read(tree):
    result = build(tree)
    kg = result.graph
    assert SECRET not in kg.nodes
    assert not any("evil" in n for n in kg.nodes)
    assert "component:default/web-shop" in kg.nodes and "pkg:npm/shop" in kg.nodes
    by_file = {p.file: p.code for p in result.problems}
    assert by_file["cat/link.yaml"] == "outside-root"
    assert by_file["cat/linked-dir"] == "outside-root"
    assert by_file["cat/.github/CODEOWNERS"] == "outside-root"
    assert by_file["cat/loop-a"] == by_file["cat/loop-b"] == "symlink-loop"
    assert by_file["cat/dangling.yaml"] == "unreadable"
    assert by_file["cat/catalog-info.yaml"] == "not-a-regular-file"  # a FIFO: never opened


def test_a_symlink_inside_the_root_is_read_under_its_own_name(tree):
    (tree / "alias.yaml").symlink_to(tree / "web-shop.yaml")
    docs = build(tree).graph.documents
    assert {"cat/alias.yaml", "cat/web-shop.yaml"} <= set(docs)


def test_names_that_are_not_utf8_are_carried_as_escaped_text(tmp_path):
    root = tmp_path / "cat"
    root.mkdir()
    data = (FIXTURE_CATALOG / "components" / "web-shop.yaml").read_bytes()
    with open(os.fsencode(root) + b"/caf\xe9-web.yaml", "wb") as fh:
        fh.write(data)
    result = build(root)
    assert list(result.graph.documents) == ["cat/caf\\xe9-web.yaml"]
    store = tmp_path / "store"
    again = build_graph([root], store=store, timestamp=0, root=tmp_path)
    assert "cat/caf\\xe9-web.yaml" in again.graph.documents
    again.store.close()


def test_the_cli_reports_and_exits_cleanly(tree, tmp_path):
    res = CliRunner().invoke(main, ["build", str(tree), "--no-store", "-o", str(tmp_path / "g.ttl"),
                                    "--timestamp", "0"], catch_exceptions=False)
    assert res.exit_code == 0
    assert "[symlink-loop]" in res.output and "[outside-root]" in res.output
    assert "pricing" not in (tmp_path / "g.ttl").read_text()


def test_a_fifo_or_a_loop_named_on_the_command_line_is_a_usage_error(tree):
    for arg in (tree / "catalog-info.yaml", tree / "loop-a"):
        res = CliRunner().invoke(main, ["build", str(arg), "--no-store", "-o", "x.ttl"],
                                 catch_exceptions=False)
        assert res.exit_code == 2 and "Traceback" not in res.output
