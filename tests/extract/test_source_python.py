"""pyproject.toml and requirements*.txt: every requirement an edge to its PEP 503 purl, at its line."""

import tomllib
from pathlib import Path

import pytest
from conftest import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from kgbuild.extract.manifests.python import (
    PyprojectExtractor,
    RequirementsExtractor,
    SetupCfgExtractor,
)
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

CATALOGS = REPO.parent / "shared" / "corpora" / "catalogs"
FLASK = CATALOGS / "manifests" / "pallets-flask" / "pyproject.toml"
VOTE = CATALOGS / "compose" / "dockersamples-example-voting-app" / "vote" / "requirements.txt"
PYPROJECT, REQUIREMENTS = PyprojectExtractor(), RequirementsExtractor()


def run(ex, path: Path, root: Path = CATALOGS):
    return ex.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(load_schema(), [root]))


def pypi(req: str) -> str:
    return "pkg:pypi/" + canonicalize_name(Requirement(req).name)


@pytest.mark.corpus
def test_flask_every_requirement_is_an_edge_at_its_line():
    data = tomllib.loads(FLASK.read_text())
    expected = [("project.dependencies", r) for r in data["project"]["dependencies"]]
    expected += [(f"project.optional-dependencies.{g}", r)
                 for g, reqs in data["project"]["optional-dependencies"].items() for r in reqs]
    expected += [(f"dependency-groups.{g}", r)
                 for g, reqs in data["dependency-groups"].items() for r in reqs]
    expected += [("build-system.requires", r) for r in data["build-system"]["requires"]]
    result = run(PYPROJECT, FLASK)
    assert len(result.edges) == len(expected) == 32
    assert sorted((e.evidence.split(": ")[0], e.object) for e in result.edges) == sorted(
        (scope, pypi(r)) for scope, r in expected)
    lines = FLASK.read_text().splitlines()
    assert len({e.line for e in result.edges}) == len(result.edges)  # one requirement per line
    for e in result.edges:
        scope, text = e.evidence.split(": ", 1)
        assert text == lines[e.line - 1].strip()
        assert any(f'"{req}"' in text and pypi(req) == e.object for s, req in expected if s == scope)
    assert result.problems == []


@pytest.mark.corpus
def test_flask_project_node():
    [node] = run(PYPROJECT, FLASK).nodes
    assert (node.id, node.label, node.line) == ("pkg:pypi/flask", "Flask", 2)
    assert node.attributes["version"] == "3.2.0.dev"
    assert node.aliases == ("manifests/pallets-flask#python",)


def test_poetry_tables_and_private_projects(tmp_path):
    path = tmp_path / "svc" / "pyproject.toml"
    path.parent.mkdir()
    path.write_text(
        '[tool.poetry]\nname = "Acme_Svc"\nclassifiers = ["Private :: Do Not Upload"]\n\n'
        '[tool.poetry.dependencies]\npython = "^3.11"\nFlask_SQLAlchemy = "^3"\n'
        'requests = { version = "^2", extras = ["socks"] }\n\n'
        '[tool.poetry.group.test.dependencies]\n"Py.Test" = "*"\n\n'
        '[tool.poetry.dev-dependencies]\nblack = "*"\n')
    result = run(PYPROJECT, path, tmp_path)
    assert result.nodes[0].id == "svc#python" and result.nodes[0].label == "Acme_Svc"
    assert [(e.object, e.line, e.evidence) for e in result.edges] == [
        ("pkg:pypi/flask-sqlalchemy", 7, 'tool.poetry.dependencies: Flask_SQLAlchemy = "^3"'),
        ("pkg:pypi/requests", 8,
         'tool.poetry.dependencies: requests = { version = "^2", extras = ["socks"] }'),
        ("pkg:pypi/black", 14, 'tool.poetry.dev-dependencies: black = "*"'),
        ("pkg:pypi/py-test", 11, 'tool.poetry.group.test.dependencies: "Py.Test" = "*"')]


def test_toml_positions_survive_comments_inline_tables_and_include_groups(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '[project]\nname = "x"\ndependencies = [  # runtime\n  # "commented-out",\n'
        '  "a>=1", \'b\',\n  "c[extra] ; python_version < \'3.12\'",\n]\n'
        'optional-dependencies = { fast = ["d"] }\n\n'
        '[dependency-groups]\ndev = [{include-group = "docs"}, "e"]\ndocs = ["docs"]\n')
    result = run(PYPROJECT, path, tmp_path)
    assert [(e.object, e.line) for e in result.edges] == [
        ("pkg:pypi/a", 5), ("pkg:pypi/b", 5), ("pkg:pypi/c", 6), ("pkg:pypi/d", 8),
        ("pkg:pypi/e", 11), ("pkg:pypi/docs", 12)]
    assert result.problems == []


def test_pyproject_bad_entries(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\ndependencies = [\n  "ok",\n  "not valid!",\n  3,\n]\n'
                    '[project.optional-dependencies]\nall = "ok"\n')
    result = run(PYPROJECT, path, tmp_path)
    assert [e.object for e in result.edges] == ["pkg:pypi/ok"]
    assert sorted((p.line, p.code) for p in result.problems) == [
        (3, "bad-dependency"), (5, "bad-requirement"), (9, "bad-dependency")]


def test_unnamed_pyproject_is_the_directory_project(tmp_path):
    path = tmp_path / "tools" / "pyproject.toml"
    path.parent.mkdir()
    path.write_text('[dependency-groups]\nlint = ["ruff"]\n')
    result = run(PYPROJECT, path, tmp_path)
    assert result.nodes[0].id == "tools#python"
    assert [(e.subject, e.object) for e in result.edges] == [("tools#python", "pkg:pypi/ruff")]


@pytest.mark.corpus
def test_vote_requirements():
    result = run(REQUIREMENTS, VOTE)
    expected = [pypi(line) for line in VOTE.read_text().splitlines()]
    assert [(e.object, e.line) for e in result.edges] == [(x, i) for i, x in enumerate(expected, 1)]
    assert {e.subject for e in result.edges} == {result.nodes[0].id} == {
        "compose/dockersamples-example-voting-app/vote#python"}
    assert result.nodes[0].label == "vote" and result.problems == []


def test_requirements_syntax(tmp_path):
    (tmp_path / "base.txt").write_text("Django>=4  # web\n-r nested.txt\n")
    (tmp_path / "nested.txt").write_text("Celery\n-r base.txt\n")
    path = tmp_path / "requirements-dev.txt"
    path.write_text(
        "# comment\n"
        "requests[socks]>=2.31 ; python_version >= '3.8' --hash=sha256:abc\n"
        "pytest \\\n  >= 8\n"
        "-r base.txt\n"
        "-c constraints.txt\n"
        "--index-url https://pypi.example.com/simple\n"
        "-e git+https://github.com/acme/lib.git#egg=Acme_Lib\n"
        "-e .\n"
        "https://example.com/wheels/My_Pkg-1.0-py3-none-any.whl\n"
        "./vendor/other-2.0.tar.gz\n"
        "pkg @ https://example.com/pkg.zip\n"
        "-r ../outside.txt\n"
        "-r missing.txt\n"
        "not a requirement\n")
    result = run(REQUIREMENTS, path, tmp_path)
    assert [(e.object, e.line) for e in result.edges] == [
        ("pkg:pypi/requests", 2), ("pkg:pypi/pytest", 3), ("pkg:pypi/django", 5),
        ("pkg:pypi/celery", 5), ("pkg:pypi/acme-lib", 8), ("pkg:pypi/my-pkg", 10),
        ("pkg:pypi/other", 11), ("pkg:pypi/pkg", 12)]
    assert result.edges[2].evidence == "-r base.txt: Django>=4  # web"
    assert [(p.line, p.code) for p in result.problems] == [  # "-e ." (line 9) is the project
        (5, "bad-include"), (13, "bad-include"), (14, "bad-include"), (15, "bad-requirement")]
    assert "cycle" in result.problems[0].message


@pytest.mark.parametrize("name, claimed", [
    ("requirements.txt", True), ("requirements-dev.txt", True), ("dev-requirements.txt", True),
    ("requirements.in", False), ("constraints.txt", False)])
def test_claims(name, claimed):
    assert REQUIREMENTS.claims(Path(name), b"") is claimed
    assert PYPROJECT.claims(Path("pyproject.toml"), b"")


# -- one project per folder ---------------------------------------------------------------
REQUESTS = REPO / "fixtures" / "packages" / "requests-2.32.3"


def test_the_manifests_of_an_sdist_are_one_component():
    root = REQUESTS.parent
    pyproject = run(PYPROJECT, REQUESTS / "pyproject.toml", root)
    reqs = run(REQUIREMENTS, REQUESTS / "requirements-dev.txt", root)
    for result in (pyproject, reqs):  # pyproject.toml names nothing: setup.cfg does
        [me] = result.nodes
        assert (me.id, me.label, me.attributes["purl"]) == (
            "pkg:pypi/requests", "requests", "pkg:pypi/requests")
        assert {p.name for p in result.depends} >= {"setup.cfg", "PKG-INFO"}
    assert reqs.nodes[0].attributes["extras"] == ["socks"]  # -e .[socks]: no edge to itself
    assert {e.subject for e in reqs.edges} == {"pkg:pypi/requests"}
    assert "pkg:pypi/requests" not in {e.object for e in reqs.edges}
    assert [e.object for e in reqs.edges][:2] == ["pkg:pypi/pytest", "pkg:pypi/pytest-cov"]
    assert reqs.problems == []


def _project(tmp_path, files: dict) -> Path:
    for name, text in files.items():
        (tmp_path / "p" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "p" / name).write_text(text)
    return tmp_path / "p"


def test_a_projects_requirement_of_itself_is_its_extras(tmp_path):
    folder = _project(tmp_path, {"pyproject.toml": (
        '[project]\nname = "My_Pkg"\ndependencies = ["idna"]\n'
        '[project.optional-dependencies]\nall = ["my-pkg[socks,HTTP2]", "my.pkg[cli]"]\n'),
        "requirements.txt": "my_pkg[dev]>=1\n./[docs]\nrich\n"})
    py = run(PYPROJECT, folder / "pyproject.toml", tmp_path)
    assert [(e.subject, e.object) for e in py.edges] == [("pkg:pypi/my-pkg", "pkg:pypi/idna")]
    assert py.nodes[0].attributes["extras"] == ["cli", "http2", "socks"]
    reqs = run(REQUIREMENTS, folder / "requirements.txt", tmp_path)
    assert [(e.subject, e.object) for e in reqs.edges] == [("pkg:pypi/my-pkg", "pkg:pypi/rich")]
    assert reqs.nodes[0].attributes["extras"] == ["dev", "docs"] and reqs.problems == []


@pytest.mark.parametrize("files, expected", [
    ({"setup.cfg": "[metadata]\nname = Cfg.Name\n", "PKG-INFO": "Name: other\n"}, "pkg:pypi/cfg-name"),
    ({"PKG-INFO": "Metadata-Version: 2.1\nName: from-pkg-info\nVersion: 1.0\n"},
     "pkg:pypi/from-pkg-info"),
    ({"pyproject.toml": '[tool.poetry]\nname = "po"\n', "setup.cfg": "[metadata]\nname = cfg\n"},
     "pkg:pypi/po"),
    ({"pyproject.toml": '[project]\nname = "secret"\nclassifiers = ["Private :: Do Not Upload"]\n',
      "setup.cfg": "[metadata]\nname = cfg\n"}, "p#python"),
    ({"setup.cfg": "[metadata\nname = broken\n", "PKG-INFO": "Name: ok\n"}, "pkg:pypi/ok"),
    ({"setup.cfg": "[metadata]\nname = not a name!\n"}, "p#python"),
    ({}, "p#python")])
def test_the_folder_project_is_named_by_its_sibling_manifests(tmp_path, files, expected):
    folder = _project(tmp_path, {**files, "requirements.txt": "rich\n"})
    [me] = run(REQUIREMENTS, folder / "requirements.txt", tmp_path).nodes
    assert me.id == expected
    assert me.label == ("p" if expected == "p#python" else me.label)


@pytest.mark.slow
def test_naming_the_project_later_moves_the_requirements_onto_it(tmp_path):
    from kgbuild.project.pipeline import build_graph

    folder = _project(tmp_path, {"requirements.txt": "rich\n"})
    kw = dict(store=tmp_path / "store", timestamp=0, validate=False, root=tmp_path, resolve=False)
    first = build_graph([folder], **kw)
    try:
        assert ("p#python", "dependsOn", "pkg:pypi/rich") in first.graph.edges()
    finally:
        first.store.close()
    (folder / "setup.cfg").write_text("[metadata]\nname = p-tools\n")
    again = build_graph([folder], **kw)
    try:
        assert again.changes["changed"] == ["p/requirements.txt"]  # setup.cfg is a dependency
        assert set(again.graph.edges()) == {("pkg:pypi/p-tools", "dependsOn", "pkg:pypi/rich")}
        assert again.graph.nodes["pkg:pypi/p-tools"].label == "p-tools"
    finally:
        again.store.close()


def test_setup_cfg_requirements_are_edges_of_the_folder_project(tmp_path):
    folder = _project(tmp_path, {"setup.cfg": (
        "[metadata]\nname = Legacy_Pkg\n\n[options]\npackages = find:\n"
        "install_requires =\n    requests>=2  # http\n    colorama; platform_system == \"Windows\"\n"
        "setup_requires = setuptools_scm\n"
        "tests_require =\n\tpytest\n\tnot valid!!\n"
        "\n[options.extras_require]\nsocks = PySocks>=1.5\nall =\n    legacy-pkg[socks]\n"
        "\n[flake8]\ninstall_requires = ignored\n"),
        "requirements.txt": "rich\n"})
    result = SetupCfgExtractor().extract(SourceFile(folder / "setup.cfg", "p/setup.cfg", tmp_path),
                                         Context(load_schema(), [tmp_path]))
    [me] = result.nodes
    assert (me.id, me.label, me.attributes["extras"]) == ("pkg:pypi/legacy-pkg", "Legacy_Pkg", ["socks"])
    assert [(e.object, e.line, e.qualifiers) for e in result.edges] == [
        ("pkg:pypi/requests", 7, ()), ("pkg:pypi/colorama", 8, ()),
        ("pkg:pypi/setuptools-scm", 9, ("build",)), ("pkg:pypi/pytest", 11, ("test",)),
        ("pkg:pypi/pysocks", 15, ("optional:socks",))]
    assert result.edges[0].evidence == "options.install_requires: requests>=2  # http"
    assert [(p.line, p.code) for p in result.problems] == [(12, "bad-requirement")]
    [other] = run(REQUIREMENTS, folder / "requirements.txt", tmp_path).nodes
    assert other.id == me.id  # one project, whichever manifest names it
    assert SetupCfgExtractor().claims(Path("setup.cfg"), b"")
