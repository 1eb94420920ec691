"""Seeds in the forms users write: percent-encoding, purl versions, Backstage defaults."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import CATALOGS, REPO

from kgbuild.project.pipeline import build, build_graph
from kgbuild.cli.main import main
from kgbuild.graph.access import Principal
from kgbuild.retrieve.seeds import SeedIndex, seed_key
from kgbuild.retrieve.traverse import TraversalSpec, Traverser

CATALOG = REPO / "fixtures" / "retrieval" / "catalog"
MANIFESTS = CATALOGS / "manifests"


@pytest.fixture(scope="module")
def kg():
    return build_graph([CATALOG], timestamp=0, validate=False, root=CATALOG.parent).graph


def test_seed_key_undoes_encoding_versions_and_defaults():
    assert seed_key("pkg:npm/@babel/core") == seed_key("pkg:npm/%40babel/core") == \
        seed_key("pkg:npm/@Babel/Core@7.26.0?arch=x64#lib") == "pkg:npm/@babel/core"
    assert seed_key("pkg:pypi/Flask@3.1.3") == seed_key("pkg:PyPI/flask") == "pkg:pypi/flask"
    assert seed_key("pkg:pypi/Flask_SQLAlchemy@3.1") == "pkg:pypi/flask-sqlalchemy"
    assert seed_key("API:payments") == seed_key("api:default/payments") == "api:default/payments"
    assert seed_key("default/payments") == "*:default/payments"
    assert seed_key("payments") is None


def test_seed_index_lookup_ambiguity_and_suggestions(schema):
    ix = SeedIndex(["api:default/payments-api", "system:default/payments", "pkg:npm/%40babel/core",
                    "component:default/payments"], schema)
    assert ix.lookup("pkg:npm/@babel/core@7.0.0") == ["pkg:npm/%40babel/core"]
    assert ix.lookup("API:Payments-API") == ["api:default/payments-api"]
    assert ix.lookup("payments", ["System"]) == ["system:default/payments"]
    assert ix.lookup("payments", ["Service"]) == ["component:default/payments"]  # kind of a parent
    assert ix.lookup("payments") == ["component:default/payments", "system:default/payments"]
    assert ix.lookup("api:default/payments") == []
    assert ix.suggest("api:default/payments") == ["component:default/payments",
                                                  "system:default/payments", "api:default/payments-api"]
    assert ix.suggest("api:default/zzz") == []


def test_traverser_seeds_in_any_form(kg):
    t = Traverser(kg)
    for seed in ("api:default/payments-api", "API:payments-api", "API:default/Payments-API",
                 "default/payments-api"):
        r = t.run(TraversalSpec(seeds=[seed], path="ownedBy"))
        assert [(s["id"], s["mention"]) for s in r.seeds] == [("api:default/payments-api", seed)]
        assert r.answers == ["group:default/commerce-platform"]
    bare = t.run(TraversalSpec(seeds=["payments-api"], types=["Group"], path="ownedBy"))
    assert bare.abstain["reason"] == "no-seed"  # the kind comes from --type: group:payments-api
    typed = t.run(TraversalSpec(seeds=["pricing-sdk"], types=["Library"], follow=["ownedBy"], hops=1))
    assert [s["id"] for s in typed.seeds] == ["component:default/pricing-sdk"]


def test_unknown_seed_echoes_and_suggests_visible_ids_only(kg):
    public = Traverser(kg).run(TraversalSpec(seeds=["api:default/payments"], path="ownedBy"))
    [u] = public.unresolved
    assert u["mention"] == "api:default/payments" and u["status"] == "unknown"
    assert "api:default/payments-api" in [c["id"] for c in u["candidates"]]
    assert "did you mean" in public.render() and "'api:default/payments'" in public.render()
    spec = TraversalSpec(seeds=["component:default/fraud-scorer"], follow=["dependsOn"])
    hidden = Traverser(kg).run(spec)
    assert hidden.unresolved[0]["candidates"] == [] and "fraud-scoring" not in str(hidden.to_dict())
    risk = Traverser(kg, Principal.of("risk")).run(spec)
    assert [c["id"] for c in risk.unresolved[0]["candidates"]] == ["component:default/fraud-scoring"]


@pytest.mark.corpus
def test_real_manifests_purl_seeds(tmp_path):
    """Flask's pyproject and Backstage's package.json: seeds as people write package names."""
    out = tmp_path / "g.ttl"
    build([MANIFESTS / "pallets-flask", MANIFESTS / "backstage-demo"], out, timestamp=0,
          validate=False, store=None)
    runner = CliRunner()
    for seed, step, dep in (("pkg:pypi/Flask@3.1.3", "dependsOn", "pkg:pypi/werkzeug"),
                            ("pkg:npm/@backstage/cli@0.29.0", "dependencyOf",
                             "backstage-demo/package.json#root")):
        r = runner.invoke(main, ["traverse", "--graph", str(out), "--seed", seed, "--follow",
                                 step, "--hops", "1", "--format", "json"])
        assert r.exit_code == 0, r.output
        assert dep in r.output
    both = [runner.invoke(main, ["traverse", "--graph", str(out), "--seed", s, "--follow",
                                 "dependencyOf", "--hops", "1"]).output
            for s in ("pkg:npm/@backstage/cli", "pkg:npm/%40backstage/cli")]
    assert both[0].replace("pkg:npm/@backstage/cli", "pkg:npm/%40backstage/cli") == both[1]
    assert "seed: " in both[0] and "ABSTAIN" not in both[0]
