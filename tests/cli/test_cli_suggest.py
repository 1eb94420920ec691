"""Did-you-mean wherever the CLI takes a node type, an edge name, a schema or an ID."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.cli.main import main
from kgbuild.io.suggest import closest, did_you_mean

EDGES = ["childOf", "dependencyOf", "dependsOn", "ownedBy", "ownerOf", "partOf"]


def test_closest_names():
    assert did_you_mean("dependsOm", EDGES) == " (did you mean dependsOn?)"
    assert did_you_mean("owned_by", EDGES) == " (did you mean ownedBy?)"
    assert did_you_mean("OWNEROF", EDGES) == " (did you mean ownerOf?)"
    assert did_you_mean("Lib", ["API", "Library", "Service"]) == " (did you mean Library?)"
    assert did_you_mean("xyz", EDGES) == did_you_mean("", EDGES) == ""
    assert closest("ownedBi", EDGES) == ["ownedBy"]
    assert closest("ownrOf", EDGES) == ["ownerOf"]
    ids = [f"component:default/service-{i:05d}" for i in range(60_000)]  # compared as they are
    assert closest("component:default/service-1234", ids, 1) == ["component:default/service-01234"]


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    out = tmp_path_factory.mktemp("g") / "g.ttl"
    assert CliRunner().invoke(main, ["build", str(FIXTURE_CATALOG), "--no-store", "-o",
                                     str(out)]).exit_code == 0
    return str(out)


@pytest.mark.slow
@pytest.mark.parametrize("args, hint", [
    (["traverse", "--seed", "api:default/payments-api", "--follow", "dependsOm"],
     "unknown edge type 'dependsOm' in schema 'software' (did you mean dependsOn?)"),
    (["traverse", "--seed", "api:default/payments-api", "--path", "ownedBy:out/ownerOff:out"],
     "unknown edge type 'ownerOff' in schema 'software' (did you mean ownerOf?)"),
    (["traverse", "--seed", "api:default/payments-api", "--follow", "ownedBy", "--type", "Grup"],
     "unknown node type 'Grup' in schema 'software' (did you mean Group?)"),
    (["ls", "--type", "Servce"], "(did you mean Service?)"),
    (["paths", "Servce", "API"], "(did you mean Service?)"),
    (["schema", "show", "sofware"], "(did you mean software?)"),
    (["show", "component:default/pricing-sdc"], "did you mean: Pricing SDK"),
    (["resolve", "accept", "Pricing", "component:default/pricing-sdc", "--type", "Library",
      "--registry", "{tmp}/aliases.yaml"],
     "not an entity of the graph (did you mean component:default/pricing-sdk?)"),
])
def test_the_cli_suggests_the_closest_name(graph, args, hint, tmp_path):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if argv[0] in ("traverse", "ls", "show", "resolve"):
        argv += ["--graph", graph]
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2 and hint in r.output, r.output
