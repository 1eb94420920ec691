"""prov:generatedAtTime is the same in every checkout of the same files: a file tracked and
unmodified in git gets the time of the last commit that touched it (docs/sources.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kgbuild.extract.discover import SourceTimes
from kgbuild.project.pipeline import build

CATALOG = Path(__file__).resolve().parents[2] / "fixtures" / "catalog"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def git(folder: Path, *args: str, when: str = "2024-05-06T07:08:09Z") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", "-C", str(folder), *args], env=env, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """fixtures/catalog committed in two commits: the second touches one component."""
    repo = tmp_path / "origin"
    shutil.copytree(CATALOG, repo)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "catalog", when="2024-05-06T07:08:09Z")
    (repo / "components" / "pricing-sdk.yaml").write_text(
        (repo / "components" / "pricing-sdk.yaml").read_text() + "# touched\n")
    git(repo, "commit", "-qam", "touch", when="2025-01-02T03:04:05Z")
    return repo


def clone(origin: Path, where: Path, mtime: int) -> Path:
    git(origin.parent, "clone", "-q", str(origin), str(where))
    for path in where.rglob("*.yaml"):  # checkouts made at different times
        os.utime(path, (mtime, mtime))
    return where


def turtle(folder: Path, out: Path) -> bytes:
    build([folder], out, root=folder).store.close()
    return out.read_bytes()


@pytest.mark.slow
def test_two_clones_give_byte_identical_turtle(origin, tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    one = clone(origin, tmp_path / "one", 1_600_000_000)
    two = clone(origin, tmp_path / "elsewhere" / "two", 1_700_000_000)
    a, b = turtle(one, tmp_path / "a.ttl"), turtle(two, tmp_path / "b.ttl")
    assert a == b
    times = {line.strip() for line in a.decode().splitlines() if "generatedAtTime" in line}
    assert times == {'prov:generatedAtTime "2024-05-06T07:08:09Z"^^xsd:dateTime ;',
                     'prov:generatedAtTime "2025-01-02T03:04:05Z"^^xsd:dateTime ;'}
    # a modified file: its mtime (the commit no longer describes it)
    edited = two / "components" / "pricing-sdk.yaml"
    edited.write_text(edited.read_text() + "# local edit\n")
    os.utime(edited, (1_650_000_000, 1_650_000_000))
    assert "2022-04-15T05:20:00Z" in turtle(two, tmp_path / "c.ttl").decode()


def test_times_follow_commits_unless_modified_or_untracked(origin, tmp_path):
    repo = clone(origin, tmp_path / "one", 1_600_000_000)
    sdk, system = repo / "components" / "pricing-sdk.yaml", repo / "catalog-info.yaml"
    other = repo / "components" / "untracked.yaml"
    other.write_text("x: 1\n")
    os.utime(other, (1_610_000_000, 1_610_000_000))
    times = SourceTimes([sdk, system, other])
    assert times.epoch(sdk) == 1735787045  # 2025-01-02T03:04:05Z, the commit touching it
    assert times.epoch(system) == 1714979289  # 2024-05-06T07:08:09Z
    assert times.epoch(other) == 1_610_000_000
    system.write_text(system.read_text() + "# edit\n")
    os.utime(system, (1_620_000_000, 1_620_000_000))
    assert SourceTimes([system]).epoch(system) == 1_620_000_000
    assert SourceTimes().epoch(sdk) == 1735787045  # asked alone, later


def test_outside_git_or_without_git_the_mtime(tmp_path, monkeypatch, origin):
    plain = tmp_path / "plain.yaml"
    plain.write_text("a: 1\n")
    os.utime(plain, (1_234_567_890, 1_234_567_890))
    assert SourceTimes([plain]).epoch(plain) == 1_234_567_890
    tracked = origin / "catalog-info.yaml"
    os.utime(tracked, (1_234_567_890, 1_234_567_890))
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))  # no git binary
    assert SourceTimes([tracked]).epoch(tracked) == 1_234_567_890


@pytest.mark.slow
def test_incremental_rebuild_notices_a_change_the_commit_time_does_not_show(origin, tmp_path,
                                                                            monkeypatch):
    from kgbuild.project.pipeline import build_graph

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    repo = clone(origin, tmp_path / "one", 1_600_000_000)
    store = tmp_path / "store"
    build_graph([repo], store=store, root=repo, validate=False, resolve=False).store.close()
    sdk = repo / "components" / "pricing-sdk.yaml"
    sdk.write_text(sdk.read_text().replace("pricing-sdk", "pricing-kit"))
    os.utime(sdk, (1_600_000_100, 1_600_000_100))  # as a pull writes it
    git(repo, "commit", "-qam", "rename", when="2025-01-02T03:04:05Z")  # the same commit time
    result = build_graph([repo], store=store, root=repo, validate=False, resolve=False)
    result.store.close()
    assert result.changes["changed"] == ["components/pricing-sdk.yaml"]


def test_verify_stamps_a_committed_document_with_its_commit_time(tmp_path, monkeypatch):
    import json

    from kgbuild.project.verifyfile import verify_file

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "design.md").write_text("Checkout Service depends on Pricing SDK.\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "docs", when="2024-05-06T07:08:09Z")
    os.utime(repo / "docs" / "design.md", (1_600_000_000, 1_600_000_000))
    edges = tmp_path / "edges.jsonl"
    edges.write_text(json.dumps({
        "subject": "Checkout Service", "predicate": "dependsOn", "object": "Pricing SDK",
        "evidence": "Checkout Service depends on Pricing SDK.", "source": "design.md"}) + "\n")
    out = tmp_path / "v.ttl"
    verify_file(edges, repo / "docs", "software", output=out)
    assert '"2024-05-06T07:08:09Z"^^xsd:dateTime' in out.read_text()
