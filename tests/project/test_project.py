"""Projects: kgbuild.toml / [tool.kgbuild] found upwards, document IDs relative to the root,
builds of some sources that keep the rest, excludes and .gitignore, file permissions."""

import os
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild import InputError
from kgbuild.project.pipeline import build_graph
from kgbuild.project.config import find_project, load_project
from kgbuild.cli import main


@pytest.fixture
def project(tmp_path):
    shutil.copytree(FIXTURE_CATALOG, tmp_path / "catalog")
    (tmp_path / "kgbuild.toml").write_text('sources = ["catalog"]\nstore = "state"\n')
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_config_is_found_upwards_and_paths_are_relative_to_it(project):
    (project / "catalog" / "deep").mkdir()
    found = find_project(project / "catalog" / "deep")
    assert found.root == project and found.config == project / "kgbuild.toml"
    assert found.source_paths() == [project / "catalog"] and found.store_path() == project / "state"


def test_pyproject_tool_table_counts_and_a_pyproject_without_it_does_not(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.kgbuild]\nschema = "schemas/mine.yaml"\n')
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    found = find_project(inner)
    assert found.config == tmp_path / "pyproject.toml"
    assert found.schema_ref() == str(tmp_path / "schemas" / "mine.yaml")
    nowhere = tmp_path.parent / f"{tmp_path.name}-no-config"
    assert find_project(nowhere).root == nowhere.resolve() and find_project(nowhere).config is None


@pytest.mark.parametrize("text, message, line", [
    ('sources = ["a"]\nschemas = "x"\n', "unknown setting 'schemas'", 2),
    ('store = 3\n', "store must be a str", 1),
    ('exclude = ["a", 1]\n', "exclude must be a list of strings", 1),
    ('max_file_size = 0\n', "max_file_size is in MiB", 1),
    ('sources = [\n', "TOML syntax error", None),
])
def test_bad_config_is_a_located_error(tmp_path, text, message, line):
    (tmp_path / "kgbuild.toml").write_text(text)
    with pytest.raises(InputError) as err:
        load_project(tmp_path / "kgbuild.toml")
    assert message in err.value.message and err.value.file == str(tmp_path / "kgbuild.toml")
    if line is not None:
        assert err.value.line == line


def test_bad_config_on_the_command_line_is_one_line_exit_2(project, monkeypatch):
    (project / "kgbuild.toml").write_text("stor = 'x'\n")
    monkeypatch.chdir(project)
    res = run("build")
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [f"Error: {project / 'kgbuild.toml'}:1: unknown setting "
                                               f"'stor' (did you mean store?) (known: access, aliases, backstage, embeddings, exclude, gitignore, "
                                               f"llm, max_file_size, rerank, schema, sources, store) [input]"]


def test_build_without_arguments_builds_the_project_from_any_subfolder(project, monkeypatch):
    monkeypatch.chdir(project / "catalog" / "components")
    res = run("build", "--timestamp", "0", "--format", "json")
    assert res.exit_code == 0, res.output
    assert (project / "state").is_dir() and not (project / "catalog" / "components" / ".kgbuild").exists()
    assert '"entities": 16' in res.output


def test_no_sources_and_no_project_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run("build")
    assert res.exit_code == 2 and "no SOURCES given" in res.output


def test_document_ids_do_not_depend_on_how_a_folder_was_named(project):
    whole = build_graph([project / "catalog"], store=None, timestamp=0, root=project, validate=False)
    part = build_graph([project / "catalog" / "components"], store=None, timestamp=0, root=project,
                       validate=False)
    assert "catalog/components/checkout-service.yaml" in whole.graph.documents
    assert set(part.graph.documents) <= set(whole.graph.documents)
    outside = build_graph([project / "catalog" / "components"], store=None, timestamp=0,
                          root=project / "elsewhere", validate=False)
    assert "components/checkout-service.yaml" in outside.graph.documents  # named from its folder


def test_building_some_sources_keeps_the_others_and_says_so(project):
    store = project / "state"
    first = build_graph([project / "catalog"], store=store, timestamp=0, root=project)
    total = len(first.graph.documents)
    first.store.close()
    part = build_graph([project / "catalog" / "org"], store=store, timestamp=0, root=project)
    s = part.summary()
    assert s["documents_changed"]["deleted"] == 0 and s["documents_kept"] == total - 2
    assert len(part.graph.documents) == total
    part.store.close()
    pruned = build_graph([project / "catalog" / "org"], store=store, timestamp=0, root=project,
                         prune=True)
    assert pruned.summary()["documents_changed"]["deleted"] == total - 2
    assert set(pruned.graph.documents) == {"catalog/org/systems.yaml", "catalog/org/teams.yaml"}
    pruned.store.close()


def test_cli_reports_kept_documents_and_prunes_on_request(project, monkeypatch):
    monkeypatch.chdir(project)
    assert run("build", "--timestamp", "0").exit_code == 0
    res = run("build", "catalog/org", "--timestamp", "0")
    assert "7 kept outside the given paths (--prune removes them)" in res.output
    res = run("build", "catalog/org", "--timestamp", "0", "--prune")
    assert "7 deleted" in res.output and "kept outside" not in res.output


def test_excludes_and_gitignore(project, monkeypatch):
    (project / "catalog" / ".gitignore").write_text("apis/\n/catalog-info.yaml\n")
    ids = set(build_graph([project / "catalog"], store=None, timestamp=0, root=project,
                          exclude=["catalog/org/**"], validate=False).graph.documents)
    assert not any(i.startswith(("catalog/org/", "catalog/apis/")) for i in ids)  # not even
    assert "catalog/catalog-info.yaml" not in ids  # through the Location, which is ignored
    assert "catalog/components/checkout-service.yaml" in ids
    ids = set(build_graph([project / "catalog"], store=None, timestamp=0, root=project,
                          gitignore=False, validate=False).graph.documents)
    assert "catalog/apis/payments-api.yaml" in ids
    (project / "kgbuild.toml").write_text('sources = ["catalog"]\nexclude = ["**/components/"]\n')
    monkeypatch.chdir(project)
    res = run("build", "--no-store", "-o", "g.ttl", "--format", "json", "--no-gitignore")
    assert '"entities": ' in res.output and "checkout-service.yaml" not in (project / "g.ttl").read_text()


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(project, monkeypatch, umask, mode):
    monkeypatch.chdir(project)
    old = os.umask(umask)
    try:
        assert run("build", "--no-store", "-o", "g.ttl", "--timestamp", "0").exit_code == 0
    finally:
        os.umask(old)
    assert (project / "g.ttl").stat().st_mode & 0o777 == mode


def test_gitignore_of_an_enclosing_folder_applies_to_a_scanned_subfolder(project):
    (project / ".gitignore").write_text("catalog/org/\n*.tmp\n")
    (project / "catalog" / "org" / "sub").mkdir()
    ids = set(build_graph([project / "catalog" / "org"], store=None, timestamp=0, root=project,
                          validate=False).graph.documents)
    assert ids == set()
    ids = set(build_graph([project / "catalog" / "components"], store=None, timestamp=0,
                          root=project, validate=False).graph.documents)
    assert "catalog/components/checkout-service.yaml" in ids


def test_embeddings_table_is_read_and_checked(tmp_path):
    path = tmp_path / "kgbuild.toml"
    path.write_text('[embeddings]\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "e5-passage"\n'
                    'query_model = "e5-query"\n')
    assert load_project(path).embeddings == {"base_url": "http://127.0.0.1:8000/v1",
                                             "model": "e5-passage", "query_model": "e5-query"}
    path.write_text('[embeddings]\nbase_url = "http://x/v1"\nmodle = "e5"\n')
    with pytest.raises(InputError, match=r"kgbuild.toml:3: unknown setting embeddings.modle"):
        load_project(path)
