"""The front object: ``Project.open`` merges the project file, each verb runs with its
settings, overrides win, and the CLI's commands are the same calls (same bytes out)."""

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO

from kgbuild import KgbuildError, Principal, Project, TraversalSpec
from kgbuild.cli import main

RETRIEVAL_CATALOG = REPO / "fixtures" / "retrieval" / "catalog"


@pytest.fixture
def folder(tmp_path):
    shutil.copytree(FIXTURE_CATALOG, tmp_path / "catalog")
    shutil.copytree(RETRIEVAL_CATALOG, tmp_path / "restricted")
    (tmp_path / "kgbuild.toml").write_text('sources = ["catalog"]\nstore = "state"\n')
    (tmp_path / "deep" / "er").mkdir(parents=True)
    return tmp_path


def test_open_finds_the_project_upwards_and_its_settings_apply(folder, monkeypatch):
    monkeypatch.chdir(folder / "deep" / "er")  # anywhere below the root
    project = Project.open()
    assert project.root == folder and project.store_path == folder / "state"
    result = project.build(timestamp=0)  # no sources: the project's
    try:
        assert result.store.path == folder / "state"
        assert "catalog/apis/payments-api.yaml" in result.changes["added"]  # IDs from the root
    finally:
        result.store.close()
    assert Project.open(folder / "kgbuild.toml").root == folder  # a config file opens too


def test_overrides_win_and_an_unknown_setting_is_one_error(folder):
    project = Project.open(folder, store=folder / "other", sources=[folder / "restricted"])
    assert project.store_path == folder / "other"
    assert project.config.sources == (str(folder / "restricted"),)
    assert Project.open(folder).store_path == folder / "state"  # the file's, untouched
    with pytest.raises(KgbuildError) as err:
        Project.open(folder, stroe="x")
    assert err.value.code == "usage" and "stroe" in str(err.value)


def test_build_and_export_give_the_cli_s_bytes(folder, monkeypatch):
    monkeypatch.chdir(folder)
    project = Project.open()
    project.build(output=folder / "lib.ttl", timestamp=0).store.close()
    r = CliRunner().invoke(main, ["build", "--timestamp", "0", "-o", "cli.ttl"])
    assert r.exit_code == 0, r.output
    assert (folder / "lib.ttl").read_bytes() == (folder / "cli.ttl").read_bytes()
    exported = b"".join(project.export(fmt="nt"))
    r = CliRunner().invoke(main, ["export", "--format", "nt"])
    assert exported.decode() == r.stdout and exported
    assert project.export(folder / "g.nt", "nt") is True
    assert project.export(folder / "g.nt", "nt") is False  # already this state of the store


@pytest.mark.slow
def test_reading_verbs_see_only_what_the_principal_may(folder):
    project = Project.open(folder, sources=[folder / "restricted"])
    project.build(timestamp=0).store.close()
    spec = TraversalSpec(question="Who owns Fraud Scoring?", path="ownedBy")
    assert project.traverser(Principal.of()).run(spec).answers == []
    assert project.traverser(Principal.of("risk")).run(spec).answers
    public = {n["id"] for n in project.browser().nodes(None, 1000)["nodes"]}
    everyone = {n["id"] for n in project.browser(Principal.all_access()).nodes(None, 1000)["nodes"]}
    assert public < everyone and "group:default/risk-team" in everyone - public
    assert project.query("ASK { ?s ?p ?o }").boolean is True


def test_ingest_without_corpora_or_chunks_is_a_usage_error(folder):
    project = Project.open(folder)
    project.build(timestamp=0).store.close()
    with pytest.raises(KgbuildError) as err:
        project.ingest([], embed=False)
    assert err.value.code == "usage"


def test_verify_uses_the_store_only_once_it_is_built(folder, monkeypatch):
    calls = []
    import kgbuild.project.verifyfile as verifyfile

    monkeypatch.setattr(verifyfile, "verify_file", lambda *a, **k: calls.append(k["store"]))
    project = Project.open(folder)
    project.verify(folder / "edges.jsonl", folder / "docs")
    project.build(timestamp=0).store.close()
    project.verify(folder / "edges.jsonl", folder / "docs")
    project.verify(folder / "edges.jsonl", folder / "docs", use_store=False)
    assert calls == [None, folder / "state", None]


def test_the_json_summary_names_the_project_store(folder, monkeypatch):
    monkeypatch.chdir(folder / "deep")
    r = CliRunner().invoke(main, ["build", "--format", "json", "--timestamp", "0"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["store"] == str(folder / "state")
