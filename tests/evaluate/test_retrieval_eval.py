"""Retrieval evaluation on the shipped fixture cases and on malformed case files."""

from __future__ import annotations

import pytest
from conftest import REPO

from kgbuild import InputError, KgbuildError
from kgbuild.project.pipeline import build
from kgbuild.evaluate.retrieval import eval_retrieval, render_report

REPO = REPO
CASES = REPO / "fixtures" / "retrieval" / "cases.yaml"


@pytest.fixture(scope="module")
def report():
    return eval_retrieval(CASES)


def test_fixture_cases_all_pass(report):
    total = report["total"]
    assert total["failed"] == [] and total["passed"] == total["cases"] == 10
    assert total["recall"] == 1.0
    assert total["abstained_correctly"] == total["abstain_cases"] == 4


def test_case_details(report):
    by = {c["name"]: c for c in report["cases"]}
    assert by["classic-path"]["answers"] == ["component:default/checkout-service"]
    assert by["classic-path"]["hops"] == 3 and by["classic-path"]["irrelevant"] == 0
    assert by["classic-with-risk-label"]["answers"] == ["component:default/checkout-service",
                                                        "component:default/fraud-scoring"]
    assert by["classic-edge-removed"]["abstain"] == "no-path"
    assert by["classic-edge-removed"]["context_chars"] == 0
    assert by["similar-names-ambiguous"]["abstain"] == "ambiguous"
    assert by["hub-team-capped"]["cap_cut"] == 11  # 61 feasible libraries, 50 walked
    assert by["hub-team-follow"]["cap_cut"] == 131
    assert by["unknown-entity"]["abstain"] == "no-seed"
    text = render_report(report)
    assert "passed 10/10" in text and "classic-path" in text


def test_failures_are_reported_with_missing_items(tmp_path):
    cases = tmp_path / "cases.yaml"
    cases.write_text(f"""
graph: {REPO / "fixtures" / "retrieval" / "catalog"}
cases:
  - name: one-hop-only
    seeds: [api:default/payments-api]
    path: ownedBy
    required:
      - edge: [component:default/checkout-service, dependsOn, component:default/pricing-sdk]
      - edge: [api:default/payments-api, ownedBy, group:default/commerce-platform]
  - name: wrongly-expects-abstain
    seeds: [api:default/payments-api]
    path: ownedBy
    expect: abstain
""")
    r = eval_retrieval(cases)
    first, second = r["cases"]
    assert not first["passed"] and first["recall"] == 0.5
    assert first["missing"] == [["component:default/checkout-service", "dependsOn",
                                 "component:default/pricing-sdk"]]
    assert not second["passed"] and r["total"]["failed"] == ["one-hop-only", "wrongly-expects-abstain"]
    assert "NO" in render_report(r)


def test_graph_file_instead_of_catalog(tmp_path):
    ttl = tmp_path / "graph.ttl"
    build([REPO / "fixtures" / "retrieval" / "catalog"], ttl, timestamp=0, validate=False)
    cases = tmp_path / "cases.yaml"
    cases.write_text(CASES.read_text().replace("graph: catalog", f"graph: {ttl}"))
    assert eval_retrieval(cases)["total"]["failed"] == []


@pytest.mark.parametrize("text, message", [
    ("cases: []", "non-empty 'cases'"),
    ("cases: [{path: ownedBy}]", "needs a name"),
    ("cases: [{name: x, sedes: [a]}]", "unknown key 'sedes'"),
    ("cases: [{name: x, expect: maybe}]", "expect must be"),
    ("cases: [{name: x, seeds: [a]}]", "names none"),
    ("cases: [\n", "not a readable YAML"),
])
def test_malformed_case_files(tmp_path, text, message):
    f = tmp_path / "cases.yaml"
    f.write_text(text)
    with pytest.raises(InputError, match=message):
        eval_retrieval(f)


def test_bad_evidence_item(tmp_path):
    f = tmp_path / "cases.yaml"
    f.write_text(f"graph: {REPO / 'fixtures' / 'retrieval' / 'catalog'}\n"
                 "cases: [{name: x, seeds: [a], required: [{edge: [a, maintains, b]}]}]")
    with pytest.raises(KgbuildError, match="case 'x'.*unknown edge type"):
        eval_retrieval(f)
