"""``kgbuild validate``: exit 0 conforms, 1 violations, 2 usage or input error."""

import json

from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.cli.main import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def built(tmp_path):
    out = tmp_path / "g.ttl"
    assert run("build", FIXTURE_CATALOG, "-o", out, "--no-validate").exit_code == 0
    return out


def test_conforming_graph(tmp_path):
    r = run("validate", built(tmp_path))
    assert r.exit_code == 0 and "conforms" in r.output


def test_violations_exit_1_and_json(tmp_path):
    out = built(tmp_path)
    text = out.read_text()
    out.write_text(text.replace('kg:extractor "backstage" ;', "", 1))
    r = run("validate", out, "--format", "json")
    assert r.exit_code == 1
    d = json.loads(r.output)
    assert d["conforms"] is False and d["violations"] == 1
    assert "extractor" in d["groups"][0]["problem"]


def test_broken_range_in_turtle_names_node_and_rule(tmp_path):
    out = built(tmp_path)
    text = out.read_text()
    marker = "<https://kgbuild.dev/id/group:default/commerce-platform> a sw:Group"
    assert marker in text
    out.write_text(text.replace(marker, marker.replace("sw:Group", "sw:Library")))
    r = run("validate", out)
    assert r.exit_code == 1
    assert "range of sw:ownedBy" in r.output and "group:default/commerce-platform (a Library)" in r.output


def test_unreadable_file_exit_2(tmp_path):
    bad = tmp_path / "g.ttl"
    bad.write_text("this is not turtle\n")
    r = run("validate", bad)
    assert r.exit_code == 2 and "g.ttl" in r.output
    assert run("validate", tmp_path / "missing.ttl").exit_code == 2
