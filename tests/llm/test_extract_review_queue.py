"""`kgbuild extract`: a name that matches several known entities is rejected, never merged,
and joins the store's review queue for its document (candidates, evidence, chunk); a build
keeps those items, re-extracting the document replaces them, removing it drops them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import llm_fixtures
import pytest
from click.testing import CliRunner
from fakellm import Reply, Script, rel

from kgbuild.cli import main
from kgbuild.resolve.review import load_review_queue

fake_llm = llm_fixtures.fake_llm
_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
QUOTE = "Checkout Service sends every refund through Payments."  # appended to the design


@pytest.fixture
def project(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "catalog", tmp_path / "catalog")
    shutil.copytree(FIXTURES / "prose", tmp_path / "docs")
    design = tmp_path / "docs" / "checkout-design.md"
    design.write_text(design.read_text() + "\n" + QUOTE + "\n")
    (tmp_path / "kgbuild.toml").write_text('[llm]\nmodel = "fake-model"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def queued(project):
    return [q for q in load_review_queue(project / ".kgbuild" / "review-queue.json")
            if q.get("source")]


@pytest.mark.slow
def test_ambiguous_names_join_the_review_queue_per_document(fake_llm, project):
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    # "Payments" is the Payments API, the Payments Service and the Payments system alike
    server = fake_llm(Script([("Checkout pricing", [Reply.relations(
        rel("Checkout Service", "dependsOn", "Payments", QUOTE))])]))
    out = run("extract", "docs", "--base-url", server.base_url, "--timestamp", "0",
              "--format", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["extraction"]["rejected_by_reason"] == {"ambiguous-entity": 1}
    [item] = queued(project)
    assert item["mention"] == "Payments" and item["source"] == "docs/checkout-design.md"
    assert item["evidence"] == QUOTE and item["chunk"].startswith("docs/checkout-design.md#c")
    assert {c["id"] for c in item["candidates"]} == {
        "api:default/payments-api", "component:default/payments-service", "system:default/payments"}
    shown = run("resolve", "review")
    assert "'Payments'" in shown.output and "in docs/checkout-design.md (" in shown.output

    # a build writes its own queue and keeps the documents' items
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    assert [q["mention"] for q in queued(project)] == ["Payments"]

    # the document re-extracted: its items are what this run found; removed: they go
    doc = project / "docs" / "checkout-design.md"
    doc.write_text(doc.read_text().replace("every refund", "each refund"))
    assert run("extract", "docs", "--base-url", server.base_url, "--timestamp", "0").exit_code == 0
    assert queued(project) == []  # the quote is no longer in the text: nothing ambiguous
    doc.write_text(doc.read_text().replace("each refund", "every refund"))
    assert run("extract", "docs", "--base-url", server.base_url, "--timestamp", "0").exit_code == 0
    assert len(queued(project)) == 1
    doc.unlink()
    assert run("extract", "docs", "--base-url", server.base_url, "--timestamp", "0").exit_code == 0
    assert queued(project) == []
