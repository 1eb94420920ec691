"""access.yaml in builds: document labels reach nodes, assertions and traversal."""

import shutil

from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.project.pipeline import build_graph
from kgbuild.cli.main import main
from kgbuild.graph.access import Principal
from kgbuild.retrieve.traverse import TraversalSpec, Traverser


def catalog(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    (tmp_path / "access.yaml").write_text(
        "rules:\n  - paths: ['components/checkout-*.yaml']\n    labels: [storefront]\n")
    return root


def test_document_labels_reach_nodes_assertions_and_documents(tmp_path):
    root = catalog(tmp_path)
    result = build_graph([root], store=None, timestamp=0, validate=True, access=tmp_path / "access.yaml")
    kg = result.graph
    assert kg.documents["catalog/components/checkout-service.yaml"].access == {"storefront"}
    assert kg.nodes["component:default/checkout-service"].access == {"storefront"}
    from_doc = [a for a in kg.assertions.values() if a.source == "catalog/components/checkout-service.yaml"]
    assert from_doc and all("storefront" in a.access for a in from_doc)
    assert kg.nodes["component:default/pricing-sdk"].access == set()
    assert result.validation.conforms


def test_traversal_hides_what_the_principal_may_not_see(tmp_path):
    root = catalog(tmp_path)
    kg = build_graph([root], store=None, timestamp=0, validate=False,
                     access=tmp_path / "access.yaml").graph
    spec = TraversalSpec(seeds=["component:default/pricing-sdk"], follow=["dependsOn:in"], hops=1)
    public = Traverser(kg, Principal()).run(spec)
    assert {n["id"] for n in public.nodes} == {"component:default/pricing-sdk",
                                                "component:default/payments-service"}
    assert "checkout" not in str(public.to_dict())
    team = Traverser(kg, Principal.of("storefront")).run(spec)
    assert "component:default/checkout-service" in {n["id"] for n in team.nodes}


def test_cli_access_option(tmp_path):
    root = catalog(tmp_path)
    r = CliRunner().invoke(main, ["build", str(root), "--store", str(tmp_path / "s"),
                                  "--access", str(tmp_path / "access.yaml"), "--format", "json"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["traverse", "--store", str(tmp_path / "s"), "--seed",
                                  "component:default/checkout-service", "--follow", "dependsOn"])
    assert r.exit_code == 1 and "ABSTAIN" in r.output  # a hidden seed is as good as absent


def test_cli_principal_sees_labelled_items(tmp_path):
    root = catalog(tmp_path)
    store = str(tmp_path / "s")
    assert CliRunner().invoke(main, ["build", str(root), "--store", store, "--access",
                                     str(tmp_path / "access.yaml")]).exit_code == 0
    for flag in ("--principal", "--as"):
        r = CliRunner().invoke(main, ["traverse", "--store", store, "--seed",
                                      "component:default/checkout-service", "--follow", "dependsOn",
                                      flag, "storefront"])
        assert r.exit_code == 0 and "Pricing SDK" in r.output
