"""``kgbuild export``: every format from the store; Turtle equals the build's output."""

import json

from click.testing import CliRunner
from conftest import FIXTURE_CATALOG
from rdflib import Dataset, Graph

from kgbuild.cli.main import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_export_formats(tmp_path):
    store, ttl = tmp_path / "store", tmp_path / "g.ttl"
    assert run("build", FIXTURE_CATALOG, "--store", store, "-o", ttl, "--timestamp", 0).exit_code == 0
    r = run("export", "--store", store)
    assert r.exit_code == 0 and r.output == ttl.read_text()
    nt = run("export", "--store", store, "--format", "nt", "-o", tmp_path / "g.nt")
    assert nt.exit_code == 0
    lines = (tmp_path / "g.nt").read_text().splitlines()
    assert lines == sorted(lines) and len(Graph().parse(tmp_path / "g.nt")) == len(Graph().parse(ttl))
    trig = run("export", "--store", store, "--format", "trig")
    ds = Dataset()
    ds.parse(data=trig.output, format="trig")
    graphs = {str(g.identifier) for g in ds.graphs()}
    assert "https://kgbuild.dev/source/catalog/components/pricing-sdk.yaml" in graphs
    doc = json.loads(run("export", "--store", store, "--format", "jsonld").output)
    assert doc


def test_export_without_store_is_a_usage_error(tmp_path):
    r = run("export", "--store", tmp_path / "none")
    assert r.exit_code == 2 and "no kgbuild store" in r.output
