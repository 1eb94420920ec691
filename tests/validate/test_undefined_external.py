"""Hygiene's ``undefined`` lists the one real dangling reference, not the third-party packages
real manifests depend on (counted in one note; --undefined-external lists them)."""

import json
import shutil

import pytest

from click.testing import CliRunner
from conftest import CATALOGS, FIXTURE_CATALOG

from kgbuild.cli.main import main

MANIFESTS = CATALOGS / "manifests"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.slow
@pytest.mark.corpus
def test_a_typo_stands_out_among_real_manifests(tmp_path):
    root = tmp_path / "estate"
    shutil.copytree(FIXTURE_CATALOG, root / "catalog")
    shutil.copytree(MANIFESTS / "pallets-flask", root / "flask")
    shutil.copytree(MANIFESTS / "spf13-cobra", root / "cobra")
    web = root / "catalog" / "components" / "web-shop.yaml"
    web.write_text(web.read_text().replace("dependsOn: [component:checkout-service]",
                                         "dependsOn: [component:checkout-servce]"))
    store = tmp_path / "store"
    assert run("build", root, "--store", store, "--no-validate").exit_code == 0
    r = run("validate", "--store", store, "--format", "json", "--skip", "duplicates")
    undefined = [h for h in json.loads(r.output)["hygiene"] if h["check"] == "undefined"]
    assert [h.get("node") for h in undefined] == [None, "component:default/checkout-servce"]
    note = undefined[0]
    assert note["severity"] == "Info" and note["message"].startswith("31 external package node(s)")
    text = run("validate", "--store", store, "--skip", "duplicates").output
    assert "component:default/checkout-servce is referenced" in text and "pkg:" not in text
    r = run("validate", "--store", store, "--format", "json", "--skip", "duplicates",
            "--undefined-external")
    nodes = [h["node"] for h in json.loads(r.output)["hygiene"] if h["check"] == "undefined"]
    assert len(nodes) == 32 and "component:default/checkout-servce" in nodes
    assert "pkg:golang/github.com/spf13/pflag" in nodes and "pkg:pypi/werkzeug" in nodes
