"""``kgbuild build``: outputs, summaries, exit codes."""

import json

from click.testing import CliRunner
import pytest
from conftest import BACKSTAGE, FIXTURE_CATALOG

from kgbuild.cli.main import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_build_fixture_text_summary(tmp_path):
    out = tmp_path / "graph.ttl"
    r = run("build", FIXTURE_CATALOG, "-o", out)
    assert r.exit_code == 0, r.output
    assert "16 entities, 30 edges" in r.output and "conforms" in r.output
    assert out.read_text().startswith("@prefix ")


@pytest.mark.corpus
def test_build_json_summary_reports_rejections(tmp_path):
    r = run("build", BACKSTAGE, "-o", tmp_path / "g.ttl", "--format", "json")
    assert r.exit_code == 0
    s = json.loads(r.output)
    assert s["conforms"] is True and s["problems_by_code"]["rejected-entity"] == 8
    bad = [p for p in s["problem_list"] if p["code"] == "rejected-entity"]
    assert all(p["file"] and p["line"] for p in bad)


@pytest.mark.corpus
def test_strict_turns_rejections_into_exit_1(tmp_path):
    r = run("build", BACKSTAGE, "-o", tmp_path / "g.ttl", "--strict", "--format", "json")
    assert r.exit_code == 1


def test_missing_source_is_usage_error(tmp_path):
    r = run("build", tmp_path / "nope", "-o", tmp_path / "g.ttl")
    assert r.exit_code == 2 and "does not exist" in r.output


def test_bad_schema_is_one_line_error_exit_2(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("name: s\nnamespace: 'https://x/#'\nnode_types: {A: {}}\n"
                   "edge_types: {e: {domain: A, range: B}}\n")
    r = run("build", FIXTURE_CATALOG, "-o", tmp_path / "g.ttl", "--schema", bad)
    assert r.exit_code == 2
    assert "s.yaml:4: edge type 'e': unknown type 'B' in range" in r.output
    assert not (tmp_path / "g.ttl").exists()


def test_help_teaches():
    r = run("build", "--help")
    assert r.exit_code == 0 and "Exit codes" in r.output and "Example" in r.output


def test_a_file_no_extractor_reads_is_reported(tmp_path):
    (tmp_path / "notes.yaml").write_text("not: [a catalog\n")
    r = run("build", tmp_path / "notes.yaml", "--no-store", "-o", tmp_path / "g.ttl")
    assert r.exit_code == 0
    assert "notes.yaml: warning: no extractor reads this file; it was skipped [unrecognised]" in r.output
    assert "entities: none" in r.output
