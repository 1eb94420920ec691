"""Extractors declare what they are (name, version, what they emit, whether CODEOWNERS may own
their components) and are never matched by name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import CATALOGS, REPO

from kgbuild.extract.discover import extractor_for
from kgbuild.extract.manifests.codeowners import add_fallback_owners
from kgbuild.extract.records import Context, Extraction, SourceFile
from kgbuild.extract.registry import EXTRACTORS, get, register
from kgbuild.schema.loader import load_schema

SCHEMA = load_schema("software")
KNOWN = set(SCHEMA.node_types) | {name for e in SCHEMA.edge_types.values()
                                  for name in (e.name, e.inverse) if name}


def test_every_registered_extractor_declares_version_emits_and_ownable():
    assert len(EXTRACTORS) >= 9
    names = [ex.name for ex in EXTRACTORS]
    assert len(set(names)) == len(names)
    for ex in EXTRACTORS:
        assert isinstance(ex.version, (int, str)) and not isinstance(ex.version, bool), ex.name
        assert isinstance(ex.ownable, bool), ex.name
        assert isinstance(ex.emits, frozenset) and ex.emits <= KNOWN, (ex.name, ex.emits - KNOWN)
        assert get(ex.name) is ex
        if ex.ownable:  # CODEOWNERS adds ownedBy edges to its documents
            assert "ownedBy" in ex.emits and ex.emits & set(SCHEMA.node_types), ex.name
    ownable = {ex.name for ex in EXTRACTORS if ex.ownable}
    assert ownable == {"npm", "pyproject", "setup-cfg", "requirements", "gomod", "compose", "helm",
                       "cargo", "maven", "gradle"}
    assert EXTRACTORS[-1].name == "openapi"  # it sniffs any JSON/YAML, so it is tried last


class _Bare:
    name = "bare"

    def claims(self, path, head):
        return False

    def extract(self, src, ctx):
        return Extraction()


@pytest.mark.parametrize("missing, message", [
    ({"version": None}, "version"), ({"version": True}, "version"),
    ({"emits": {"Component"}}, "emits"), ({"ownable": "yes"}, "ownable"),
    ({"name": ""}, "name"), ({"name": "npm"}, "already registered"),
])
def test_register_refuses_an_extractor_that_does_not_declare_itself(missing, message):
    ex = _Bare()
    ex.version, ex.emits, ex.ownable = 1, frozenset({"Component"}), False
    for key, value in missing.items():
        setattr(ex, key, value)
    before = list(EXTRACTORS)
    with pytest.raises((TypeError, ValueError), match=message):
        register(ex)
    assert EXTRACTORS == before


def _extract_all(root: Path) -> dict[str, tuple[str, Extraction]]:
    """Every file under ``root`` an extractor claims, extracted as a build would."""
    ctx = Context(SCHEMA, [root])
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            path = Path(folder) / f
            ex = extractor_for(path)
            if ex is None:
                continue
            doc_id = f"{root.name}/{path.relative_to(root).as_posix()}"
            src = SourceFile(path=path, doc_id=doc_id, root=root)
            extraction = ex.extract(src, ctx)
            add_fallback_owners(src, extraction, ex, ctx)
            out[doc_id] = (ex.name, extraction)
    return out


def _check_emits(extractions: dict[str, tuple[str, Extraction]]) -> set[str]:
    seen = set()
    for doc_id, (name, extraction) in extractions.items():
        emits = get(name).emits
        for n in extraction.nodes:
            assert n.type in emits, (doc_id, name, n.type)
        for e in extraction.edges:
            assert e.predicate in emits, (doc_id, name, e.predicate)
        seen.add(name)
    return seen


def test_extractors_emit_only_what_they_declare_on_the_fixtures(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    (repo / ".github" / "CODEOWNERS").write_text("* @acme/all\n")
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["y"]\n')
    (repo / "requirements.txt").write_text("z\n")
    (repo / "go.mod").write_text("module example.com/x\n\nrequire example.com/y v1.0.0\n")
    (repo / "package.json").write_text('{"name": "x", "dependencies": {"y": "1"}}')
    (repo / "compose.yaml").write_text("services:\n  web: {image: nginx, depends_on: [db]}\n  db: {}\n")
    extractions = _extract_all(repo)
    assert _check_emits(extractions) == {"pyproject", "requirements", "gomod", "npm", "compose",
                                         "codeowners"}
    owned = {e.subject for _, x in extractions.values() for e in x.edges if e.predicate == "ownedBy"}
    # the project of each manifest (pyproject.toml and requirements.txt: one) and both services
    assert len(owned) == 5
    seen = _check_emits(_extract_all(REPO / "fixtures" / "catalog"))
    seen |= _check_emits(_extract_all(REPO / "fixtures" / "malformed"))
    assert {"backstage", "openapi", "cyclonedx"} <= seen


@pytest.mark.corpus
@pytest.mark.parametrize("corpus", ["backstage", "codeowners", "manifests", "compose"])
def test_extractors_emit_only_what_they_declare_on_the_corpora(corpus):
    assert _check_emits(_extract_all(CATALOGS / corpus))
