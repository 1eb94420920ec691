"""Shared paths and helpers for the test-suite."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs property tests on a fixed seed so that a red build always means a change broke
# something; local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "corpora"
CATALOGS = SHARED / "catalogs"
BACKSTAGE = CATALOGS / "backstage"
FIXTURE_CATALOG = REPO / "fixtures" / "catalog"


def expected_relations(path: Path) -> set[tuple[str, str, str]]:
    """Relations from one of Backstage's own EXPECTED-*.relations.jsonl files."""
    return {(d["source_ref"], d["type"], d["target_ref"])
            for d in map(json.loads, path.read_text().splitlines()) if d}


def both_directions(kg) -> set[tuple[str, str, str]]:
    """Every stored edge plus its schema-derived inverse, as Backstage emits them."""
    out = set()
    for s, p, o in kg.edges():
        out.add((s, p, o))
        inverse = kg.schema.edge_types[p].inverse
        if inverse:
            out.add((o, inverse, s))
    return out


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path, monkeypatch):
    """Commands default to ./.kgbuild: keep every test's store out of the repository."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def schema():
    from kgbuild import load_schema
    return load_schema()
