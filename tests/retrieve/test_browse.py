"""Looking around: ``Browser`` (node summary, listing, statistics, neighbourhood) and the
``kgbuild show``, ``ls`` and ``stats`` commands, on the fixture catalog, access labels
honoured."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgbuild import Principal, load_schema
from kgbuild.project.pipeline import build, build_graph
from kgbuild.cli.main import main
from kgbuild.errors import KgbuildError
from kgbuild.retrieve.browse import WIDTH, Browser, render_node, render_nodes, render_stats

SDK = "component:default/pricing-sdk"
TEAM = "group:default/commerce-platform"
SECRET = "resource:default/payments-db"  # labelled pci in fixtures/catalog


@pytest.fixture(scope="module")
def kg():
    return build_graph([FIXTURE_CATALOG], load_schema(), store=None, timestamp=0).graph


@pytest.fixture(scope="module")
def ttl(tmp_path_factory):
    out = tmp_path_factory.mktemp("g") / "graph.ttl"
    build([FIXTURE_CATALOG], out, timestamp=0, validate=False, store=None)
    return str(out)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_node_summary_has_edges_both_ways_counted_and_sourced(kg):
    s = Browser(kg).node(SDK)
    assert (s["label"], s["type"]) == ("Pricing SDK", "Library")
    assert s["attributes"]["lifecycle"] == ["production"] and s["aliases"] == ["pricing-sdk"]
    assert s["out_counts"] == {"ownedBy": 1, "partOf": 1} and s["in_counts"] == {"dependsOn": 2}
    assert [(e["name"], e["node"]["label"]) for e in s["in"]] == [
        ("dependencyOf", "Checkout Service"), ("dependencyOf", "Payments Service")]
    owned = s["out"][0]
    assert owned["predicate"] == "ownedBy" and owned["node"]["id"] == TEAM
    assert owned["assertions"][0]["source"].endswith("components/pricing-sdk.yaml")
    assert owned["assertions"][0]["location"] == "line 11"
    assert owned["assertions"][0]["evidence"] == "owner: commerce-platform"
    assert any(d.endswith("checkout-service.yaml") for d in s["sources"])
    assert s["truncated"] == {"out": 0, "in": 0}


def test_node_edges_are_bounded_and_the_rest_counted(kg):
    s = Browser(kg, Principal.all_access()).node(TEAM, max_edges=2)
    assert sum(s["in_counts"].values()) == 6  # five owned + one member, counts stay complete
    assert len(s["in"]) == 2 and s["truncated"]["in"] == 4
    assert "4 more (raise --max-edges)" in render_node(s)


def test_hidden_node_is_reported_like_an_unknown_one(kg):
    public = Browser(kg)
    with pytest.raises(KgbuildError) as hidden:
        public.node(SECRET)
    with pytest.raises(KgbuildError) as unknown:
        public.node("resource:default/no-such-db")
    assert hidden.value.code == unknown.value.code == "unknown-node"
    assert "Payments DB" not in str(hidden.value) and "payments-db'" in str(hidden.value)
    assert SECRET not in {e["node"]["id"] for e in public.node(TEAM)["in"]}
    seen = Browser(kg, Principal.of("pci")).node(SECRET)
    assert seen["label"] == "Payments DB" and seen["access"] == ["pci"]


def test_ids_in_other_forms_are_found_and_unknown_ones_get_suggestions(kg):
    b = Browser(kg)
    for written in ("component:pricing-sdk", "Component:default/pricing-sdk", "pricing-sdk",
                    "component:default/pricing%2Dsdk"):
        assert b.node(written)["id"] == SDK, written
    with pytest.raises(KgbuildError) as e:
        b.node("component:default/pricing-sdq")
    assert e.value.code == "unknown-node"
    assert "did you mean: Pricing SDK (component:default/pricing-sdk)" in str(e.value)
    with pytest.raises(KgbuildError) as e:
        Browser(kg).node("x" * 3000)
    assert "at most 2,000 characters" in str(e.value)


def test_listing_by_type_includes_subtypes_and_honours_limit(kg):
    b = Browser(kg)
    services = b.nodes("service")
    assert services["type"] == "Service" and services["total"] == 2
    assert [n["label"] for n in services["nodes"]] == ["Checkout Service", "Payments Service"]
    schema = kg.schema
    parent = next(t for t in schema.node_types
                  if "Service" in schema.descendants(t) and t != "Service")
    wider = b.nodes(parent)
    assert wider["total"] > services["total"]
    assert {n["id"] for n in services["nodes"]} <= {n["id"] for n in wider["nodes"]}
    some = b.nodes(limit=3)
    assert len(some["nodes"]) == 3 and some["truncated"] == some["total"] - 3
    assert [n["id"] for n in some["nodes"]] == sorted(n["id"] for n in b.nodes()["nodes"])[:3]
    assert SECRET not in {n["id"] for n in b.nodes(limit=1000)["nodes"]}
    with pytest.raises(KgbuildError, match="unknown node type"):
        b.nodes("Spaceship")


def test_stats_add_up_and_honour_access(kg):
    public, everyone = Browser(kg).stats(), Browser(kg, Principal.all_access()).stats()
    for got, b in ((public, Browser(kg)), (everyone, Browser(kg, Principal.all_access()))):
        assert sum(got["nodes_by_type"].values()) == got["nodes"] == len(b.ids())
        assert sum(got["edges_by_type"].values()) == got["edges"]
        assert sum(got["degree"]["buckets"].values()) == got["nodes"]
        assert sum(b.degree(i) for i in b.ids()) == 2 * got["edges"]  # no self-loops here
        assert sum(got["extractors"].values()) == got["assertions"]
        degrees = [h["degree"] for h in got["hubs"]]
        assert degrees == sorted(degrees, reverse=True) and degrees[0] == got["degree"]["max"]
    assert everyone["nodes"] == public["nodes"] + 1  # the pci resource
    assert everyone["nodes_by_type"]["Resource"] == public["nodes_by_type"]["Resource"] + 1
    assert everyone["edges"] > public["edges"]
    assert SECRET not in {h["id"] for h in Browser(kg).stats(top=100)["hubs"]}


def test_neighbourhood_is_a_capped_traversal_result(kg):
    r = Browser(kg).neighbourhood(TEAM, hops=1, cap=2)
    assert r["seeds"][0]["id"] == TEAM and r["mode"] == "follow"
    assert [c["node"] for c in r["truncated"]["cap"]] == [TEAM]
    assert len(r["edges"]) == 2
    full = Browser(kg).neighbourhood(TEAM, hops=1, cap=None)
    assert len(full["edges"]) == Browser(kg).degree(TEAM) == 6 and not full["truncated"]["cap"]
    with pytest.raises(KgbuildError):
        Browser(kg).neighbourhood(SECRET)


def test_text_wraps_long_lists_and_shows_labels(kg):
    b = Browser(kg)
    texts = [render_node(b.node(TEAM)), render_nodes(b.nodes()), render_stats(b.stats())]
    for text in texts:
        assert max(map(len, text.splitlines())) <= WIDTH
    node = texts[0]
    assert "ownerOf <- Pricing SDK (Library, component:default/pricing-sdk)" in node
    assert "catalog/components/pricing-sdk.yaml:11 \"owner: commerce-platform\"" in node
    assert "in: 5 edges (memberOf 1, ownedBy 4)" in node
    assert "Checkout Service" in texts[1] and "hubs:" in texts[2]
    wrapped = render_stats({**b.stats(), "nodes_by_type": {f"Type{i}": i for i in range(40)}})
    lines = [x for x in wrapped.splitlines() if "Type" in x]
    assert len(lines) > 2 and all(x.startswith("  ") for x in lines[1:])
    assert all(len(x) <= WIDTH for x in lines)


def test_show_ls_stats_commands(ttl):
    r = run("show", SDK, "--graph", ttl)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Pricing SDK (Library, component:default/pricing-sdk)")
    j = json.loads(run("show", SDK, "--graph", ttl, "--format", "json").output)
    assert j["in_counts"] == {"dependsOn": 2}
    ls = run("ls", "--type", "Service", "--graph", ttl)
    assert ls.exit_code == 0 and "2 nodes (Service)" in ls.output
    assert json.loads(run("ls", "--graph", ttl, "--limit", "2", "--format", "json").output)[
        "truncated"] > 0
    st = json.loads(run("stats", "--graph", ttl, "--format", "json").output)
    assert st["nodes"] == sum(st["nodes_by_type"].values())
    assert json.loads(run("stats", "--graph", ttl, "--all-access", "--format", "json").output)[
        "nodes"] == st["nodes"] + 1


def test_show_writes_html_and_json_files(ttl, tmp_path):
    page = tmp_path / "n.html"
    r = run("show", TEAM, "--graph", ttl, "--format", "html", "--hops", "2", "-o", page)
    assert r.exit_code == 0, r.output
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "Commerce Platform" in html
    out = tmp_path / "n.json"
    assert run("show", TEAM, "--graph", ttl, "--format", "json", "-o", out).exit_code == 0
    assert json.loads(out.read_text())["id"] == TEAM


@pytest.mark.parametrize("args, message", [
    (["show", "nope"], "no node 'nope'"),
    (["show"], "give a node ID or --result"),
    (["show", SDK, "--result", "r.json"], "give a node ID or --result"),
    (["show", "--result", "r.json"], "add --format html"),
    (["ls", "--type", "Spaceship"], "unknown node type"),
    (["show", SDK, "--hops", "0"], "--hops"),
    (["show", SDK, "--as", "not a label"], "invalid access label"),
])
def test_command_errors_are_one_line_exit_2(ttl, tmp_path, args, message):
    (tmp_path / "r.json").write_text("{}")
    r = run(*args, "--graph", ttl)
    assert r.exit_code == 2, r.output
    assert message in r.output and len(r.output.strip().splitlines()) == 1


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=st.one_of(
    st.tuples(st.just("show"), st.text(max_size=30)),
    st.tuples(st.just("show"), st.sampled_from([SDK, TEAM, SECRET]), st.just("--max-edges"),
              st.integers(-2, 5).map(str)),
    st.tuples(st.just("show"), st.sampled_from([SDK, TEAM]), st.just("--format"),
              st.sampled_from(["html", "json", "text", "png"]), st.just("--hops"),
              st.integers(-1, 4).map(str), st.just("--cap"), st.integers(-1, 3).map(str)),
    st.tuples(st.just("ls"), st.just("--type"), st.text(max_size=12), st.just("--limit"),
              st.integers(-1, 3).map(str)),
    st.tuples(st.just("stats"), st.just("--top"), st.integers(-1, 3).map(str)),
))
@pytest.mark.slow
def test_generated_command_lines_answer_or_fail_in_one_line(ttl, argv):
    r = run(*argv, "--graph", ttl)
    assert r.exit_code in (0, 2), r.output
    if r.exit_code == 2:
        assert len(r.output.strip().splitlines()) == 1 and "[internal]" not in r.output
