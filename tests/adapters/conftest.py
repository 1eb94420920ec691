"""Fixtures of the adapter tests: stores of the fixture catalogs and of a small passage corpus,
built once per session through the CLI (as a user makes them), and the real frameworks
(langchain-core, llama-index-core: skipped locally when missing, a failure under CI)."""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO, require

from kgbuild.cli.main import main

CLASSIC = "Which service depends on the library maintained by the team that owns Payments API?"
CLASSIC_PATH = "ownedBy:out/ownerOf:out/dependsOn:in"
CORPUS = [  # p6 is labelled: only a "press" principal sees it
    {"id": "p1", "title": "Blue Harbor", "text": "Blue Harbor is a 1999 film directed by Mara Quill."},
    {"id": "p2", "title": "Mara Quill", "text": "Mara Quill is a director born in Tallinn."},
    {"id": "p3", "title": "Tallinn", "text": "Tallinn is the capital of Estonia."},
    {"id": "p4", "title": "Red Valley", "text": "Red Valley is a 2004 documentary about rivers."},
    {"id": "p5", "title": "Harbor Lights", "text": "Harbor Lights is a 2011 film shot in Tallinn."},
    {"id": "p6", "title": "Quill interview", "access": ["press"],
     "text": "In an interview Mara Quill said Blue Harbor was filmed in a Tallinn harbor."},
]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def cli_json(*args) -> dict:
    """What ``kgbuild ARGS --format json`` prints (exit 0 or 1: answered or abstained)."""
    result = run(*args, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def framework(module: str, extra: str):
    """Skip (locally) or fail (CI) unless the framework is installed."""
    require(importlib.util.find_spec(module) is not None,
            f"needs {module} (pip install 'kgbuild[{extra}]'; .ci/steps/32-bolt-adapters.sh)")


@pytest.fixture(scope="session")
def catalog_store(tmp_path_factory):
    """A store of fixtures/catalog (the README's classic example)."""
    return _build(tmp_path_factory.mktemp("catalog"), FIXTURE_CATALOG)


@pytest.fixture(scope="session")
def labelled_store(tmp_path_factory):
    """A store of fixtures/retrieval/catalog, where Fraud Scoring Service is labelled risk."""
    return _build(tmp_path_factory.mktemp("labelled"), REPO / "fixtures" / "retrieval" / "catalog")


@pytest.fixture(scope="session")
def passage_store(tmp_path_factory):
    """A store of the small passage corpus (no embeddings: lexical and graph search)."""
    folder = tmp_path_factory.mktemp("passages")
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in CORPUS), encoding="utf-8")
    result = run("ingest", corpus, "--store", folder / "store", "--no-embed")
    assert result.exit_code == 0, result.output
    return folder / "store"


@pytest.fixture(autouse=True)
def no_embeddings_endpoint(monkeypatch, tmp_path):
    """The CLI and the adapters alike run without an embeddings endpoint or a project."""
    for name in ("KGBUILD_EMBEDDINGS_URL", "KGBUILD_EMBEDDINGS_MODEL", "OPENAI_BASE_URL",
                 "KGBUILD_QUERY_EMBEDDINGS_MODEL", "KGBUILD_RERANK_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def _build(folder, catalog):
    shutil.copytree(catalog, folder / "catalog")
    result = run("build", folder / "catalog", "--store", folder / "store", "--timestamp", 0,
                 "--no-validate")
    assert result.exit_code == 0, result.output
    return folder / "store"
