"""Malformed structured sources: reported with file and line, skipped; the rest goes on."""


import pytest
from conftest import REPO

from kgbuild.project.pipeline import build_graph
from kgbuild.extract.manifests.codeowners import read_codeowners

MALFORMED = REPO / "fixtures" / "malformed"

# file -> (severity, line) of every problem it must produce
EXPECTED = {
    "sbom/bom.json": [("error", 6)],  # truncated JSON
    "sbom-deep/bom.json": [("error", 1)],  # nested past the parser's recursion limit
    "compose-bomb/docker-compose.yml": [("error", 9)],  # YAML alias bomb
    "compose-shape/compose.yaml": [("error", 1)],  # services is a list
    "compose-shape/docker-compose.override.yml": [("warning", 4), ("warning", 7), ("warning", 8)],
    "pyproject/pyproject.toml": [("error", 4)],  # TOML syntax error
    "requirements/requirements.txt": [("warning", n) for n in (3, 4, 5, 6, 7)],
    "npm-binary/package.json": [("error", 3)],  # binary content with a manifest's name
    "npm-shape/package.json": [("warning", 3), ("warning", 5), ("warning", 6)],
    "gomod/go.mod": [("warning", 5), ("warning", 7), ("warning", 9)],
    "openapi/openapi.yaml": [("error", 6)],  # truncated YAML
    "codeowners/.github/CODEOWNERS": [("warning", 2), ("warning", 3), ("warning", 4)],
}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    good = tmp_path_factory.mktemp("good")
    (good / "package.json").write_text('{"name": "good", "dependencies": {"left-pad": "^1"}}')
    return build_graph([MALFORMED, good], validate=False, timestamp=0, root=MALFORMED.parent)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_each_malformed_file_is_reported_with_file_and_line(result, rel):
    found = sorted((p.severity, p.line) for p in result.problems if p.file == f"malformed/{rel}")
    assert found == sorted(EXPECTED[rel])


def test_every_problem_is_located_and_one_line(result):
    mine = [p for p in result.problems if p.file.startswith("malformed/")]
    assert len(mine) == sum(map(len, EXPECTED.values()))
    assert all(p.line is not None and "\n" not in p.message for p in mine)


def test_the_rest_continues(result):
    edges = {(s, o) for s, p, o in result.graph.edges() if p == "dependsOn"}
    assert ("pkg:npm/good", "pkg:npm/left-pad") in edges  # a good file beside the bad ones
    # good entries of partly bad files are kept
    assert {("malformed/requirements#python", f"pkg:pypi/{n}") for n in ("requests", "flask", "numpy")
            } <= edges
    assert ("pkg:npm/shape", "pkg:npm/eslint") in edges
    assert {("pkg:golang/example.com/broken", f"pkg:golang/{m}")
            for m in ("github.com/spf13/cobra", "golang.org/x/text")} <= edges
    assert ("compose:compose-shape/worker", "compose:compose-shape/cache") in edges


def test_codeowners_problems():
    co = read_codeowners(MALFORMED / "codeowners/.github/CODEOWNERS", 1 << 20, "CODEOWNERS")
    assert [r.pattern for r in co.rules] == ["*", "/api/"]
    assert [(p.file, p.line, p.severity) for p in co.problems] == [
        ("CODEOWNERS", 2, "warning"), ("CODEOWNERS", 3, "warning"), ("CODEOWNERS", 4, "warning")]
