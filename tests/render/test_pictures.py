"""Pictures of traversal results: the HTML page (inline SVG, no network), DOT and SVG, the
palette, reading saved results, and hostile labels."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, require
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgbuild import load_schema
from kgbuild.project.pipeline import build, build_graph
from kgbuild.cli.main import main
from kgbuild.errors import InputError, KgbuildError
from kgbuild.render.html import render_html
from kgbuild.render.picture import PALETTE, colours, load_result
from kgbuild.render.svg import render_dot, render_svg
from kgbuild.retrieve.browse import Browser
from kgbuild.retrieve.traverse import TraversalSpec, traverse

CLASSIC = "ownedBy:out/ownerOf:out/dependsOn:in"
TEAM = "group:default/commerce-platform"


@pytest.fixture(scope="module")
def kg():
    return build_graph([FIXTURE_CATALOG], load_schema(), store=None, timestamp=0).graph


@pytest.fixture(scope="module")
def classic(kg):
    return traverse(kg, TraversalSpec(seeds=["api:default/payments-api"], path=CLASSIC)).to_dict()


def nodes_in(html: str) -> dict[str, str]:
    """data-id -> drawn label of every node group in the page."""
    return dict(re.findall(r'<g class="node[^"]*" id="n\d+" tabindex="0" data-id="([^"]+)">'
                           r'.*?<text class="label"[^>]*>([^<]*)</text>', html))


def test_html_draws_every_node_and_edge_with_provenance(classic, kg):
    html = render_html(classic, kg.schema.node_types)
    drawn = nodes_in(html)
    assert drawn == {n["id"]: n["label"] for n in classic["nodes"]}
    assert html.count('<g class="edge"') == len(classic["edges"]) == 4
    assert html.count('marker-end="url(#arrow)"') == 4
    for name in ("ownedBy", "dependsOn"):
        assert '<text class="name"' in html and f">{name}</text>" in html
    # provenance: in the tooltip (no script needed) and in the data the script shows on click
    assert re.search(r"<title>Pricing SDK ownedBy Commerce Platform\n\S*catalog/components/"
                     r"pricing-sdk.yaml line 11 &quot;owner: commerce-platform&quot;</title>", html)
    data = json.loads(re.search(r'<script type="application/json" id="kg-data">(.*?)</script>',
                                html, re.S).group(1))
    sources = {a["source"] for e in data["edges"].values() for a in e["assertions"]}
    assert any(x.endswith("catalog/apis/payments-api.yaml") for x in sources)
    seeds = [n for n in data["nodes"].values() if n["seed"]]
    assert [n["label"] for n in seeds] == ["Payments API"]
    assert {n["label"] for n in data["nodes"].values() if n["answer"]} == {
        "Checkout Service", "Payments Service"}


def test_html_is_self_contained_and_deterministic(classic, kg):
    a = render_html(classic, kg.schema.node_types)
    b = render_html(json.loads(json.dumps(classic)), kg.schema.node_types)
    assert a == b
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", a))
    assert urls == {"http://www.w3.org/2000/svg"}  # the SVG namespace, never fetched
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\((?!#)", a)


def test_cut_hubs_are_marked(kg):
    r = Browser(kg).neighbourhood(TEAM, hops=1, cap=2)
    html = render_html(r, kg.schema.node_types)
    cut = r["truncated"]["cap"][0]["edges"]
    assert re.search(r'<g class="node seed cut" id="n\d+" tabindex="0" '
                     rf'data-id="{re.escape(TEAM)}">', html)
    assert f"hub: +{cut} edges not shown" in html
    assert f'xlabel="hub: +{cut} edges not shown"' in render_dot(r)


def test_palette_is_fixed_per_schema_type(kg):
    known = kg.schema.node_types
    a = colours(["Service", "API"], known)
    assert a == colours(["API", "Service", "API"], known)
    order = sorted(known)
    assert a["API"] == PALETTE[order.index("API") % len(PALETTE)]
    assert colours(["Spaceship"]) == colours(["Spaceship"], known)  # unknown: by its name


def test_hostile_labels_are_escaped_everywhere():
    evil = "</script><script>alert(1)</script>&<b>"
    result = {"nodes": [{"id": "x:1", "label": evil, "type": "T<1>", "hop": 0, "seed": True},
                        {"id": 'y"2', "label": "y", "type": "T", "hop": 1}],
              "edges": [{"subject": "x:1", "predicate": "p<q", "object": 'y"2',
                         "assertions": [{"source": "a.yaml", "location": "line 1",
                                         "evidence": evil}]}]}
    html = render_html(result)
    assert "<script>alert" not in html and "</script><script>" not in html.replace(
        "</script>\n<script>", "")
    assert html.count("<script") == 2
    dot = render_dot(result)
    assert '\\"' in dot and "\n" not in dot.split("tooltip=")[1].split("]")[0]


def test_abstaining_result_draws_its_seed_and_says_why(kg):
    r = traverse(kg, TraversalSpec(seeds=["api:default/payments-api"], path="memberOf")).to_dict()
    assert r["abstain"]
    html = render_html(r, kg.schema.node_types)
    assert nodes_in(html) == {"api:default/payments-api": "Payments API"}
    assert "No answer: no walk matches" in html


def test_load_result_checks_the_file(tmp_path, classic):
    good = tmp_path / "r.json"
    good.write_text(json.dumps(classic))
    assert load_result(good) == classic
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "nodes": [\n}')
    with pytest.raises(InputError) as e:
        load_result(bad)
    assert e.value.line == 3 and str(e.value).startswith(f"{bad}:3: not JSON")
    shape = tmp_path / "shape.json"
    for text in ("[]", '{"nodes": []}', '{"nodes": [{"id": 1}], "edges": []}',
                 '{"nodes": [], "edges": [{"subject": "a"}]}',
                 '{"nodes": [], "edges": [], "truncated": {"cap": [{"node": "a", "edges": "x"}]}}'):
        shape.write_text(text)
        with pytest.raises(InputError):
            load_result(shape)


def test_dot_keeps_stored_directions_and_lays_out_by_hop(classic):
    dot = render_dot(classic)
    ids = dict(re.findall(r"  (n\d+) \[label=\"([^\\]+)\\n", dot))
    # Pricing SDK (hop 2) -ownedBy-> Commerce Platform (hop 1): drawn backwards, arrow kept
    team = next(k for k, v in ids.items() if v == "Commerce Platform")
    sdk = next(k for k, v in ids.items() if v == "Pricing SDK")
    assert re.search(rf"  {team} -> {sdk} \[label=\"ownedBy\".*dir=back\];", dot)
    assert dot == render_dot(json.loads(json.dumps(classic)))


def test_svg_without_dot_is_a_clear_error(classic, tmp_path):
    with pytest.raises(KgbuildError) as e:
        render_svg(classic, dot=str(tmp_path / "no-dot-here"))
    assert e.value.code == "missing-tool" and "Graphviz" in str(e.value)


def test_svg_through_graphviz(classic):
    require(shutil.which("dot") is not None, "Graphviz 'dot' is not installed")
    svg = render_svg(classic)
    text = unescape(svg)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for label in ("Payments API", "Commerce Platform", "Pricing SDK", "Checkout Service"):
        assert label in text
    assert svg.count('class="edge"') == 4 and "ownedBy" in text
    assert re.search(r'title="Pricing SDK ownedBy Commerce Platform\n\S*catalog/components/'
                     r'pricing-sdk.yaml line 11 "owner: commerce-platform""', text)  # provenance
    assert render_svg(classic) == svg


def test_show_result_command_and_output_file(tmp_path, classic):
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(classic))
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["show", "--result", str(saved), "--format", "html",
                                  "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text() == render_html(classic, load_schema().node_types)
    dumped = CliRunner().invoke(main, ["show", "--result", str(saved), "--format", "html"])
    assert dumped.output == out.read_text()


def test_traverse_json_round_trips_into_show(tmp_path):
    ttl = tmp_path / "g.ttl"
    build([FIXTURE_CATALOG], ttl, timestamp=0, validate=False, store=None)
    seed = ["--seed", "api:default/payments-api"]
    t = CliRunner().invoke(main, ["traverse", "--graph", str(ttl), *seed, "--path", CLASSIC,
                                  "--format", "json"])
    (tmp_path / "r.json").write_text(t.output)
    r = CliRunner().invoke(main, ["show", "--result", str(tmp_path / "r.json"), "--format", "html"])
    assert r.exit_code == 0, r.output
    assert set(nodes_in(r.output).values()) >= {"Payments API", "Commerce Platform",
                                                "Pricing SDK", "Checkout Service"}


JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**12, 10**12)
                    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


def _paths(value, prefix=()):
    """Every (container path) inside a JSON value, the root included."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


@pytest.mark.slow
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_damaged_result_file_is_drawn_or_one_line(classic, tmp_path, data):
    """Whatever a saved result holds, ``show --result`` draws it or says in one line why not."""
    doc = json.loads(json.dumps(classic))
    paths = [p for p in _paths(doc) if p]
    for _ in range(data.draw(st.integers(1, 3))):
        *parent, last = data.draw(st.sampled_from(paths))
        holder = doc
        try:
            for k in parent:
                holder = holder[k]
            holder[last] = data.draw(JSON)
        except (KeyError, IndexError, TypeError):
            continue
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(doc))
    for fmt in ("html", "svg") if shutil.which("dot") else ("html",):
        r = CliRunner().invoke(main, ["show", "--result", str(saved), "--format", fmt])
        assert r.exit_code in (0, 2), r.output
        if r.exit_code == 2:
            assert len(r.output.strip().splitlines()) == 1 and "[internal]" not in r.output
            assert "not a traversal result" in r.output


def test_deep_or_non_finite_json_is_one_line(tmp_path):
    for text in ("[" * 100_000 + "]" * 100_000, '{"nodes": [], "edges": [], "x": NaN}'):
        saved = tmp_path / "r.json"
        saved.write_text(text)
        with pytest.raises(InputError, match="not JSON"):
            load_result(saved)


def test_svg_without_dot_fails_before_reading_the_graph(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot here
    store = str(tmp_path / "none")
    r = CliRunner().invoke(main, ["show", "x", "--format", "svg", "--store", store])
    assert r.exit_code == 2 and "[missing-tool]" in r.output and "no kgbuild store" not in r.output
