"""Assertion filters applied while walking, and the prompt-ready context (``--format context``)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from conftest import CATALOGS, REPO

from kgbuild import Assertion, KgbuildError, KnowledgeGraph
from kgbuild.project.pipeline import build
from kgbuild.cli.main import main
from kgbuild.graph.access import Principal
from kgbuild.retrieve.spec import qualifier_excluded
from kgbuild.retrieve.traverse import TraversalSpec, Traverser, traverse

ALL = Principal.all_access()
APP, DEV, RUN, DEEP = ("component:default/app", "component:default/devtool",
                       "component:default/runtime", "component:default/deep")


def dep(kg, s, o, *, quals=(), conf=1.0, extractor="npm", line=1):
    kg.add_assertion(Assertion(s, "dependsOn", o, "package.json", extractor, "2024-01-01T00:00:00Z",
                               conf, line, evidence=f"{o.rsplit('/', 1)[-1]}: ^1.0",
                               qualifiers=frozenset(quals)))


def graph(schema) -> KnowledgeGraph:
    """app -dev-> devtool -> deep; app -> runtime (less confident, so the cap ranks it second)."""
    kg = KnowledgeGraph(schema)
    for n in (APP, DEV, RUN, DEEP):
        kg.add_node(n, "Component", n.rsplit("/", 1)[-1].title())
    dep(kg, APP, DEV, quals=("dev",), line=3)
    dep(kg, DEV, DEEP, line=4)
    dep(kg, APP, RUN, conf=0.6, extractor="llm", line=5)
    return kg


def test_qualifier_words():
    excluded = {"dev", "test", "doc"}
    assert all(qualifier_excluded(q, excluded) for q in ("dev", "group:dev", "group:tests",
                                                          "optional:docs", "group:docs-auto"))
    assert not any(qualifier_excluded(q, excluded) for q in ("group:typing", "build", "peer",
                                                              "optional:async", "developer"))


def test_filters_apply_while_walking_not_after(schema):
    kg = graph(schema)
    everything = traverse(kg, TraversalSpec(seeds=[APP], follow=["dependsOn"], hops=2), ALL)
    assert {n["id"] for n in everything.nodes} == {APP, DEV, RUN, DEEP}
    no_dev = traverse(kg, TraversalSpec(seeds=[APP], follow=["dependsOn"], hops=2,
                                        exclude_qualifiers=["dev"]), ALL)
    assert [n["id"] for n in no_dev.nodes] == [APP, RUN]  # deep is only reachable through dev
    # the hub cap is spent on walkable edges only: the excluded, better-ranked edge takes no slot
    capped = traverse(kg, TraversalSpec(seeds=[APP], follow=["dependsOn"], hops=1, cap=1,
                                        exclude_qualifiers=["dev"]), ALL)
    assert [n["id"] for n in capped.nodes] == [APP, RUN] and capped.truncated["cap"] == []
    by_extractor = traverse(kg, TraversalSpec(seeds=[APP], follow=["dependsOn"], hops=2,
                                              extractors=["npm"]), ALL)
    assert [n["id"] for n in by_extractor.nodes] == [APP, DEV, DEEP]
    sure = traverse(kg, TraversalSpec(seeds=[APP], path="dependsOn", min_confidence=0.7), ALL)
    assert sure.answers == [DEV]
    assert sure.spec["min_confidence"] == 0.7


def test_filtered_edges_keep_only_their_surviving_assertions(schema):
    kg = graph(schema)
    dep(kg, APP, RUN, quals=("group:tests",), line=9)  # runtime is also a test dependency
    r = traverse(kg, TraversalSpec(seeds=[APP], path="dependsOn", exclude_qualifiers=["test"]), ALL)
    assert sorted(r.answers) == sorted([DEV, RUN])
    [run] = [e for e in r.edges if e["object"] == RUN]
    assert [a["location"] for a in run["assertions"]] == ["line 5"]


def test_filter_settings_are_checked(schema):
    for bad in ({"min_confidence": 1.5}, {"min_confidence": True}, {"exclude_qualifiers": [" "]},
                {"extractors": [""]}):
        with pytest.raises(KgbuildError):
            traverse(graph(schema), TraversalSpec(seeds=[APP], **bad), ALL)


def test_filtered_views_are_reused_and_bounded(schema):
    t = Traverser(graph(schema), ALL)
    whole = t._whole
    first = whole.filtered(TraversalSpec(exclude_qualifiers=["dev"]).filter_key())
    assert whole.filtered(TraversalSpec(exclude_qualifiers=["Dev"]).filter_key()) is first
    # a comma-separated item (as a server's JSON client may send it) is its words, as in the CLI
    assert (TraversalSpec(exclude_qualifiers=["dev,test"]).filter_key()
            == TraversalSpec(exclude_qualifiers=["test", "dev"]).filter_key())
    edges = [first.model.edge(e) for e in range(len(first.index.src))]
    assert edges == sorted(edges) and len(edges) == 2  # filtered, in order
    assert first.root is whole  # (names and seed IDs: the unfiltered model's)
    for i in range(20):
        t.run(TraversalSpec(seeds=[APP], hops=1, min_confidence=i / 20))
    assert len(whole._filtered) <= 8


def test_prompt_context_each_relation_once_with_citations(schema):
    kg = graph(schema)
    r = traverse(kg, TraversalSpec(seeds=[APP], follow=["dependsOn"], hops=1), ALL)
    text = r.prompt()
    lines = text.splitlines()
    assert lines[0] == "App is a Component (ID component:default/app)."
    assert 'App depends on Devtool. [c1: package.json:3 "devtool: ^1.0"]' in lines
    assert 'App depends on Runtime. [c2: package.json:5 "runtime: ^1.0"]' in lines
    assert len(lines) == 3  # no quote repeated on a line of its own
    abstain = traverse(kg, TraversalSpec(seeds=[RUN], path="dependsOn"), ALL).prompt()
    assert abstain.startswith("No answer in the graph: no walk matches dependsOn from the seeds")


FIXTURES = REPO / "fixtures" / "retrieval"
CLASSIC = "ownedBy:out/ownerOf:out/dependsOn:in"


@pytest.fixture(scope="module")
def ttl(tmp_path_factory):
    out = tmp_path_factory.mktemp("g") / "graph.ttl"
    build([FIXTURES / "catalog"], out, timestamp=0, validate=False, store=None)
    return str(out)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_format_context_classic_question(ttl):
    r = run("traverse", "--graph", ttl, "-q", "Which service depends on the library maintained by "
            "the team that owns Payments API?", "--path", CLASSIC, "--format", "context")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("Payments API is an API (ID api:default/payments-api).")
    relations = [x for x in lines[1:]]
    assert len(relations) == len(set(relations)) == 3
    assert re.fullmatch(r'Pricing SDK is owned by Commerce Platform\. \[c\d: '
                        r'\S*catalog/commerce\.yaml:\d+ "owner: group:commerce-platform"\]',
                        next(x for x in relations if x.startswith("Pricing SDK")))
    assert all(re.search(r'\[c\d: \S*catalog/\S+:\d+ "', x) for x in relations)
    assert "answers:" not in r.output and "seed:" not in r.output  # only the pack
    assert [int(n) for n in re.findall(r"\[c(\d+):", r.output)] == [1, 2, 3]


@pytest.mark.corpus
def test_flask_dependencies_without_dev_test_docs(tmp_path):
    """The issue's "What does flask depend on?": dev, test and docs groups are not walked."""
    out = tmp_path / "flask.ttl"
    build([CATALOGS / "manifests" / "pallets-flask"], out, timestamp=0, validate=False, store=None)
    args = ["traverse", "--graph", out, "-q", "What does flask depend on?", "--follow", "dependsOn",
            "--hops", "1", "--format", "context"]
    full = run(*args).output
    lean = run(*args, "--exclude-qualifier", "dev,test", "--exclude-qualifier", "docs").output
    deps = lambda text: set(re.findall(r"^Flask depends on (\S+)\.", text, re.M))  # noqa: E731
    assert {"sphinx", "tox", "ruff", "werkzeug", "pytest"} <= deps(full)
    assert not {"sphinx", "sphinx-tabs", "sphinx-autobuild", "tox", "tox-uv", "ruff", "greenlet",
                "pallets-sphinx-themes"} & deps(lean)
    assert {"werkzeug", "jinja2", "click", "blinker", "itsdangerous", "markupsafe"} <= deps(lean)
    # pytest stays: the typing group names it too, and that assertion is not excluded
    assert re.search(r'^Flask depends on pytest\. \[c\d+: pallets-flask/pyproject\.toml:\d+ '
                     r'"dependency-groups\.typing: ', lean, re.M)


def test_prompt_context_cites_the_passage_of_llm_evidence(schema):
    from kgbuild.graph.model import Passage

    kg = graph(schema)
    kg.passages["docs/design.md#c1"] = Passage("docs/design.md#c1", "docs/design.md", 0, 60,
                                               "The app calls the runtime\nfor every request.")
    kg.add_assertion(Assertion(APP, "dependsOn", RUN, "docs/design.md", "llm", "2024-01-01T00:00:00Z",
                               0.9, span=(4, 25), evidence="app calls the runtime",
                               chunk="docs/design.md#c1"))
    r = traverse(kg, TraversalSpec(seeds=[APP], path="dependsOn", extractors=["llm"]), ALL)
    assert r.prompt().splitlines()[1:] == [
        'App depends on Runtime. [c1: package.json:5 "runtime: ^1.0"] '
        '[c2: docs/design.md chars 4-25 "app calls the runtime", in c3]',
        "[c3: docs/design.md#c1] The app calls the runtime for every request."]


def test_cli_filter_options(tmp_path, schema):
    from kgbuild.graph.rdf import to_rdflib

    out = tmp_path / "g.ttl"
    to_rdflib(graph(schema)).serialize(out, format="turtle")
    base = ["traverse", "--graph", out, "--seed", APP, "--follow", "dependsOn", "--hops", "2",
            "--all-access", "--format", "json"]
    ids = lambda r: [n["id"] for n in __import__("json").loads(r.output)["nodes"]]  # noqa: E731
    assert ids(run(*base, "--exclude-qualifier", "dev")) == [APP, RUN]
    assert ids(run(*base, "--extractor", "npm")) == [APP, DEV, DEEP]
    assert ids(run(*base, "--min-confidence", "0.7")) == [APP, DEV, DEEP]
    bad = run(*base, "--min-confidence", "2")
    assert bad.exit_code == 2 and "--min-confidence" in bad.output


def test_prompt_context_names_the_relation_of_evidence_the_budget_kept(schema):
    r = traverse(graph(schema), TraversalSpec(seeds=[APP], path="dependsOn", max_chars=150), ALL)
    assert [i["kind"] for i in r.context["items"]] == ["seed", "evidence", "evidence"]
    assert r.prompt().splitlines()[1:] == ['App depends on Devtool. [c1: package.json:3 "devtool: ^1.0"]',
                                           'App depends on Runtime. [c2: package.json:5 "runtime: ^1.0"]']


def _parsed_filter(model, key):
    """The filter as it was before the facet columns: every edge record parsed. Returns the
    kept edges, their records and (best confidence, latest time) each."""
    from kgbuild.store.readmodel import record_of

    excluded, extractors, least = set(key[0]), set(key[1]), key[2]

    def keep(a):
        return (not any(qualifier_excluded(q, excluded) for q in a["qualifiers"])
                and (not extractors or a["extractor"] in extractors)
                and (least is None or a["confidence"] >= least))

    edges, out = [], []
    for eid in range(len(model.index.src)):
        rec = model.record(eid)
        found = [x for x in rec["a"] if keep(x[1])]
        if found or (not extractors and least is None and not rec["a"]):
            cited = {x[1].get("passage") for x in found}
            edges.append(model.edge(eid))
            out.append(record_of(found, {k: v for k, v in rec["p"].items() if k in cited}))
    return edges, out


@pytest.mark.slow
def test_filters_read_the_facet_columns_as_parsing_every_record_did():
    """On real manifests (npm locks' direct/transitive/peer qualifiers, Maven scopes, several
    extractors and confidences): the filtered model built from the facets has the edges, records,
    sources, confidences, time order and ranked lists that parsing every record gave."""
    import numpy as np

    from kgbuild.project.pipeline import build_graph
    from kgbuild.store.adjacency import csr_lists
    from kgbuild.store.readmodel import GraphModel
    from kgbuild.retrieve.filters import filtered_model

    kg = build_graph([REPO / "fixtures" / "sources"], timestamp=0, validate=False,
                     resolve=False, root=REPO).graph
    model = GraphModel.of_graph(kg)
    keys = [TraversalSpec(exclude_qualifiers=["transitive"]).filter_key(),
            TraversalSpec(exclude_qualifiers=["dev,test,peer"], min_confidence=0.8).filter_key(),
            TraversalSpec(extractors=["npm-lock", "maven"]).filter_key(),
            TraversalSpec(min_confidence=0.9).filter_key(),
            TraversalSpec(min_confidence=0).filter_key(),
            TraversalSpec(extractors=["no-such-extractor"]).filter_key()]
    for key in keys:
        edges, records = _parsed_filter(model, key)
        sub = filtered_model(model, key)
        ix = sub.index
        assert [sub.edge(e) for e in range(len(ix.src))] == edges, key
        assert [sub.records.raw(e) for e in range(len(ix.src))] == [r[0] for r in records], key
        assert [sub.sources.raw(e) for e in range(len(ix.src))] == [r[3] for r in records], key
        assert np.array_equal(sub.conf, [r[1] for r in records]), key
        assert [sub.times[c] for c in sub.recency.tolist()] == [r[2] for r in records], key
        stamps = np.unique(np.array([r[2] for r in records], dtype=str), return_inverse=True)[1]
        ranked = csr_lists(ix.size, len(ix.edge_types), ix.src, ix.dst, ix.etype,
                           np.array([r[1] for r in records]), stamps)
        assert ranked.keys() == ix.lists.keys(), key
        for k, c in ranked.items():
            for name in ("indptr", "nbr", "eid", "rank"):
                assert np.array_equal(getattr(c, name), getattr(ix.lists[k], name)), (key, k)
    assert len(filtered_model(model, keys[0]).index.src) < len(model.index.src)
    assert len(filtered_model(model, keys[-1]).index.src) == 0
