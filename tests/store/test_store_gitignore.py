"""A store folder keeps itself out of git: it writes its own ``.gitignore`` (issue 26)."""

import shutil
import subprocess

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.cli.main import main
from kgbuild.store.folder import GITIGNORE
from kgbuild.store.graphstore import GraphStore

GIT = shutil.which("git")


def git(repo, *args) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.mark.slow
@pytest.mark.skipif(GIT is None, reason="needs git")
def test_a_build_in_a_git_checkout_leaves_nothing_for_git_status(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE_CATALOG, repo / "catalog")
    git(repo, "init", "-q")
    before = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert before and ".kgbuild" not in before
    monkeypatch.chdir(repo)
    r = CliRunner().invoke(main, ["build", "catalog", "--timestamp", "0", "--no-validate"])
    assert r.exit_code == 0, r.output
    assert (repo / ".kgbuild" / "CURRENT").is_file()
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == before
    assert git(repo, "check-ignore", ".kgbuild/CURRENT", ".kgbuild/.gitignore").split() == [
        ".kgbuild/CURRENT", ".kgbuild/.gitignore"]


def test_a_store_opened_for_writing_writes_a_missing_gitignore_and_keeps_a_changed_one(
        tmp_path, schema):
    store = tmp_path / "store"
    ignore = store / GITIGNORE
    GraphStore(store, schema).close()
    assert ignore.read_text().startswith("# ") and ignore.read_text().splitlines()[1:] == ["*"]
    ignore.unlink()
    GraphStore(store, schema, write=False).close()  # a reader writes nothing
    assert not ignore.exists()
    GraphStore(store, schema).close()
    assert ignore.read_text().splitlines()[1:] == ["*"]
    ignore.write_text("*\n!notes.md\n")
    GraphStore(store, schema).close()
    assert ignore.read_text() == "*\n!notes.md\n"
