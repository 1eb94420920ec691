"""The ``kgbuild traverse`` and ``kgbuild eval retrieval`` commands."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import REPO

from kgbuild.project.pipeline import build
from kgbuild.cli.main import main

FIXTURES = REPO / "fixtures" / "retrieval"
PATH = "ownedBy:out/ownerOf:out/dependsOn:in"


@pytest.fixture(scope="module")
def ttl(tmp_path_factory):
    out = tmp_path_factory.mktemp("g") / "graph.ttl"
    build([FIXTURES / "catalog"], out, timestamp=0, validate=False, store=None)
    return str(out)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_traverse_question_path_text_and_json(ttl):
    r = run("traverse", "--graph", ttl, "-q", "Who depends on the library of the team owning Payments API?",
            "--path", PATH)
    assert r.exit_code == 0, r.output
    assert "answers: Checkout Service (component:default/checkout-service)" in r.output
    j = run("traverse", "--graph", ttl, "--seed", "api:default/payments-api", "--path", PATH,
            "--no-cap", "--format", "json")
    data = json.loads(j.output)
    assert data["answers"] == ["component:default/checkout-service"] and data["spec"]["cap"] is None


def test_traverse_access_labels_and_abstain_exit_code(ttl):
    seed = ["--seed", "component:default/fraud-scoring", "--follow", "dependsOn"]
    hidden = run("traverse", "--graph", ttl, *seed)
    assert hidden.exit_code == 1 and "ABSTAIN (no-seed)" in hidden.output
    assert "Fraud" not in hidden.output
    seen = run("traverse", "--graph", ttl, *seed, "--as", "risk")
    assert seen.exit_code == 0 and "Fraud Scoring Service" in seen.output
    assert run("traverse", "--graph", ttl, *seed, "--all-access").exit_code == 0


def test_traverse_usage_errors(ttl):
    assert "give at least one" in run("traverse", "--graph", ttl, "--path", PATH).output
    bad = run("traverse", "--graph", ttl, "--seed", "x", "--path", "ownedBy:sideways")
    assert bad.exit_code == 2 and "bad direction" in bad.output
    label = run("traverse", "--graph", ttl, "--seed", "x", "--as", "not a label")
    assert label.exit_code == 2 and "invalid access label" in label.output


def test_eval_retrieval_command(ttl, tmp_path):
    r = run("eval", "retrieval", FIXTURES / "cases.yaml")
    assert r.exit_code == 0, r.output
    assert "passed 10/10" in r.output
    j = run("eval", "retrieval", FIXTURES / "cases.yaml", "--graph", ttl, "--format", "json")
    assert json.loads(j.output)["total"]["recall"] == 1.0
    failing = tmp_path / "cases.yaml"
    failing.write_text("cases: [{name: x, seeds: [api:default/payments-api], path: ownedBy, "
                       "expect: abstain}]")
    f = run("eval", "retrieval", failing, "--graph", ttl)
    assert f.exit_code == 1 and "NO" in f.output
