"""`kgbuild extract` of a changed document: the entities the document introduced are
introduced again (defined by it, typed as before), not resolved to its own old nodes."""

from __future__ import annotations

import shutil
from pathlib import Path

import llm_fixtures
import pytest
from click.testing import CliRunner
from fakellm import Reply, Script, rel

from kgbuild.cli import main
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

fake_llm = llm_fixtures.fake_llm
_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
QUOTE = "Billing Worker depends on Pricing SDK for every invoice."


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def billing_worker():
    with GraphStore(".kgbuild", load_schema("software"), write=False) as store:
        kg = store.knowledge_graph()
    node = kg.nodes["component:default/billing-worker"]
    edges = [a for (s, p, o), found in kg.edges().items() for a in found
             if s == node.id and p == "dependsOn"]
    return node, edges


@pytest.mark.slow
def test_a_changed_document_defines_its_new_entities_again(fake_llm, tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "catalog", tmp_path / "catalog")
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "billing.md"
    doc.write_text(f"# Billing\n\n{QUOTE}\n")
    (tmp_path / "kgbuild.toml").write_text('[llm]\nmodel = "fake-model"\n')
    monkeypatch.chdir(tmp_path)
    assert run("build", "catalog", "--timestamp", "0").exit_code == 0
    server = fake_llm(Script([("Billing", [Reply.relations(
        rel("Billing Worker", "dependsOn", "Pricing SDK", QUOTE))])]))
    extract = ("extract", "docs", "--base-url", server.base_url, "--timestamp", "0")
    assert run(*extract).exit_code == 0
    first, [edge] = billing_worker()
    assert first.defined_in == {"docs/billing.md"} and first.type == "Component"
    doc.write_text(doc.read_text() + "\nIt sends the invoices every night.\n")
    assert run(*extract).exit_code == 0
    again, [edge_again] = billing_worker()
    assert again.defined_in == {"docs/billing.md"} and again.type == "Component"
    assert edge_again.confidence == edge.confidence  # found, typed and scored as the first time
