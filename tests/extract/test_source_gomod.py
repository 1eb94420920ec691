"""go.mod: every requirement an edge to its case-kept Go purl, at its line."""

from pathlib import Path

import pytest
from conftest import REPO

from kgbuild.extract.manifests.gomod import GoModExtractor
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

CATALOGS = REPO.parent / "shared" / "corpora" / "catalogs"
FILES = sorted(CATALOGS.glob("manifests/**/go.mod"))
EX = GoModExtractor()


def run(path: Path, root: Path = CATALOGS):
    return EX.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(load_schema(), [root]))


def requirements(text: str) -> list[tuple[int, str]]:
    """(line, module path) of each requirement, read independently of the extractor."""
    out, block = [], False
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split("//")[0].split()
        if words == ["require", "("]:
            block = True
        elif words == [")"]:
            block = False
        elif block and words:
            out.append((n, words[0]))
        elif words[:1] == ["require"]:
            out.append((n, words[1]))
    return out


@pytest.mark.corpus
def test_corpus_has_go_modules():
    assert len(FILES) == 2


@pytest.mark.corpus
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name)
def test_every_requirement_is_an_edge(path):
    text = path.read_text()
    module = text.split()[1]
    result = run(path)
    assert [(n.id, n.label, n.line) for n in result.nodes] == [
        (f"pkg:golang/{module}", module, 1)]
    assert [(e.line, e.object) for e in result.edges] == [
        (n, f"pkg:golang/{m}") for n, m in requirements(text)]
    lines = text.splitlines()
    assert all(e.evidence == lines[e.line - 1].strip() for e in result.edges)
    assert result.problems == []


@pytest.mark.corpus
def test_indirect_requirements_stay_visible():
    result = run(CATALOGS / "manifests/docker-awesome-compose/nginx-golang-postgres/backend/go.mod")
    indirect = [e for e in result.edges if "// indirect" in e.evidence]
    assert [(e.object, e.line) for e in indirect] == [("pkg:golang/github.com/gorilla/context", 11)]


def test_syntax_variants_and_errors(tmp_path):
    path = tmp_path / "go.mod"
    path.write_text(
        "// Module comment\nmodule \"example.com/Acme/App\"\n\ngo 1.22\ntoolchain go1.22.1\n\n"
        "require (\n\tgithub.com/BurntSushi/toml v1.3.2 // indirect\n\n\t\"golang.org/x/text\" v0.14.0\n"
        "\tbroken\n)\n\nreplace github.com/old/x => github.com/new/x v1.0.0\n"
        "exclude golang.org/x/net v1.2.3\nfrobnicate\nrequire (\n\tgithub.com/x/y v1\n")
    result = run(path, tmp_path)
    assert result.nodes[0].id == "pkg:golang/example.com/Acme/App"
    assert [(e.object, e.line) for e in result.edges] == [
        ("pkg:golang/github.com/BurntSushi/toml", 8), ("pkg:golang/golang.org/x/text", 10),
        ("pkg:golang/github.com/x/y", 18)]
    assert sorted((p.line, p.code) for p in result.problems) == [
        (11, "bad-require"), (16, "unknown-directive"), (17, "unterminated-block")]


def test_missing_module_directive(tmp_path):
    path = tmp_path / "svc" / "go.mod"
    path.parent.mkdir()
    path.write_text("require github.com/pkg/errors v0.9.1\n")
    result = run(path, tmp_path)
    assert result.nodes[0].id == "svc/go.mod#module" and result.nodes[0].label == "svc"
    assert [e.subject for e in result.edges] == ["svc/go.mod#module"]
    assert [p.code for p in result.problems] == ["bad-module"]
