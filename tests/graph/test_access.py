"""Access labels: access.yaml rules, the visibility rule, the visible graph, traversal as a principal."""

from __future__ import annotations

import json

import pytest

from kgbuild import Assertion, InputError, KnowledgeGraph
from kgbuild.graph.model import SourceDocument
from kgbuild.graph.access import (
    WITHHELD,
    NameScreen,
    Principal,
    load_access,
    parse_access,
    parse_labels,
    visible_graph,
)
from kgbuild.retrieve.traverse import TraversalSpec, traverse


def test_rules_union_of_matching_globs_and_default(tmp_path):
    f = tmp_path / "access.yaml"
    f.write_text("""
rules:
  - paths: ["finance/**", "**/payroll-*.yaml"]
    labels: [finance]
  - paths: hr/*.yaml
    labels: "hr, pii"
default: [internal]
""")
    rules = load_access(f)
    assert rules.labels_for("finance/a/b/catalog-info.yaml") == {"finance"}
    assert rules.labels_for("finance/x.yaml") == {"finance"}
    assert rules.labels_for("teams/hr/payroll-2024.yaml") == {"finance"}
    assert rules.labels_for("payroll-1.yaml") == {"finance"}  # ** also matches zero folders
    assert rules.labels_for("hr/payroll-1.yaml") == {"finance", "hr", "pii"}
    assert rules.labels_for("hr/deep/x.yaml") == {"internal"}  # * stays inside one folder
    assert rules.labels_for("/hr/people.yaml") == {"hr", "pii"}
    assert rules.labels_for("hr\\people.yaml") == {"hr", "pii"}
    assert rules.labels_for("services/checkout.yaml") == {"internal"}
    assert rules.labels_for("finance.yaml") == {"internal"}


def test_single_character_wildcard_and_empty_file():
    rules = parse_access({"rules": [{"paths": ["team-?/*.yaml"], "labels": ["t"]}]})
    assert rules.labels_for("team-a/x.yaml") == {"t"}
    assert rules.labels_for("team-ab/x.yaml") == frozenset()
    assert parse_access(None).labels_for("anything") == frozenset()


def test_rules_are_gitignore_patterns():
    rules = parse_access({"rules": [
        {"paths": "*.secret.yaml", "labels": ["s"]},  # no '/': at any depth
        {"paths": "payroll", "labels": ["p"]},  # a folder name covers everything below it
        {"paths": "/ops/", "labels": ["o"]},  # anchored, folders only
        {"paths": "team-[ab]/**", "labels": ["t"]},  # a character class
    ]})
    assert rules.labels_for("a.secret.yaml") == {"s"}
    assert rules.labels_for("teams/x/a.secret.yaml") == {"s"}
    assert rules.labels_for("payroll/2024/a.yaml") == rules.labels_for("hr/payroll/a.yaml") == {"p"}
    assert rules.labels_for("payroll.yaml") == frozenset()
    assert rules.labels_for("ops/x.yaml") == {"o"} and rules.labels_for("x/ops/y.yaml") == frozenset()
    assert rules.labels_for("catalog/ops/x.yaml", "ops/x.yaml") == {"o"}  # doc ID or path below
    assert rules.labels_for("team-b/payroll/x.secret.yaml") == {"t", "p", "s"}
    assert rules.labels_for("team-c/x.yaml", "") == frozenset()


def test_hostile_pattern_against_a_long_folder_name():
    rules = parse_access({"rules": [{"paths": "*a*a*a*a*a*a*a*a*a*a*b", "labels": ["x"]}]})
    assert rules.labels_for("a" * 46 + "/catalog-info.yaml") == frozenset()
    assert rules.labels_for("a" * 46 + "b/catalog-info.yaml") == {"x"}


@pytest.mark.parametrize("text, message, line", [
    ("rules:\n  - paths: [a/**]\n    labels: [ok]\n  - paths: ['!b/**']\n    labels: [x]\n",
     "'!' cannot take labels away", 4),
    ("rules:\n  - paths: [a/**]\n    labels: ['bad label']\n", "invalid access label", 3),
    ("rules:\n  - paths: a\n", "exactly 'paths' and 'labels'", 2),
    ("rules:\n  - paths:\n      - ok/**\n      - " + "x" * 5000 + "\n    labels: [x]\n",
     "longer than", 4),
    ("rules: []\nrule: []\n", "expected a mapping", 2),
    ("rules: {a: b}\n", "'rules' must be a list", 1),
    ("default: [ok]\ndefault: [x]\n", "duplicate key 'default'", 2),
    ("rules: [\n", "not a readable YAML", 2),
])
def test_bad_access_files_are_refused_at_their_line(tmp_path, text, message, line):
    f = tmp_path / "access.yaml"
    f.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        load_access(f)
    assert (info.value.file, info.value.line) == (str(f), line)


@pytest.mark.parametrize("raw, message", [
    ([1, 2], "expected a mapping"),
    ({"rules": [{"paths": ["a/**"]}]}, "exactly 'paths' and 'labels'"),
    ({"rules": [{"paths": [], "labels": ["x"]}]}, "'paths' must be"),
    ({"rules": [{"paths": "a", "labels": ["bad label"]}]}, "invalid access label"),
    ({"rules": [], "default": 3}, "default"),
    ({"rule": []}, "expected a mapping"),
])
def test_bad_access_files_are_refused(raw, message):
    with pytest.raises(InputError, match=message):
        parse_access(raw, "access.yaml")


def test_unreadable_access_file(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        load_access(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [\n")
    with pytest.raises(InputError, match="not a readable YAML"):
        load_access(bad)


def test_principal_must_hold_every_label():
    assert parse_labels(" finance, pii ,") == {"finance", "pii"}
    p = Principal.of("finance")
    assert p.can_see(set()) and p.can_see({"finance"})
    assert not p.can_see({"finance", "pii"})
    assert Principal.of(["finance", "pii"]).can_see({"finance", "pii"})
    assert Principal.all_access().can_see({"anything"})
    assert not Principal().can_see({"finance"})


def _graph(schema) -> KnowledgeGraph:
    kg = KnowledgeGraph(schema)
    kg.add_document(SourceDocument("public.yaml", "public.yaml", "0" * 64))
    kg.add_document(SourceDocument("secret.yaml", "secret.yaml", "1" * 64, frozenset({"risk"})))
    kg.add_node("component:default/checkout", "Service", "Checkout", source="public.yaml")
    kg.add_node("component:default/pricing", "Library", "Pricing", source="public.yaml")
    kg.nodes["component:default/pricing"].defined_in.add("secret.yaml")
    kg.add_node("component:default/fraud", "Service", "Fraud Scoring", source="secret.yaml")
    kg.nodes["component:default/fraud"].access.add("risk")
    kg.add_node("group:default/team", "Group", "Team", source="public.yaml")
    for s, p, o, src, labels in [
        ("component:default/checkout", "dependsOn", "component:default/pricing", "public.yaml", ()),
        ("component:default/fraud", "dependsOn", "component:default/pricing", "secret.yaml", ("risk",)),
        ("component:default/pricing", "ownedBy", "group:default/team", "public.yaml", ()),
        ("component:default/checkout", "ownedBy", "group:default/team", "public.yaml", ("risk",)),
        ("component:default/checkout", "ownedBy", "group:default/team", "secret.yaml", ()),
    ]:
        kg.add_assertion(Assertion(s, p, o, src, "t", "2024-01-01T00:00:00Z", 1.0, 3,
                                   evidence=f"{src}: {p}", access=frozenset(labels)))
    return kg


def test_visible_graph_drops_hidden_nodes_assertions_and_documents(schema):
    kg = _graph(schema)
    view = visible_graph(kg, Principal())
    assert set(view.nodes) == {"component:default/checkout", "component:default/pricing", "group:default/team"}
    assert set(view.documents) == {"public.yaml"}
    assert view.nodes["component:default/pricing"].defined_in == {"public.yaml"}
    assert kg.nodes["component:default/pricing"].defined_in == {"public.yaml", "secret.yaml"}
    assert set(view.edges()) == {("component:default/checkout", "dependsOn", "component:default/pricing"),
                                 ("component:default/pricing", "ownedBy", "group:default/team")}
    assert visible_graph(kg, Principal.of("risk")).edges().keys() == kg.edges().keys()
    assert visible_graph(kg, Principal.all_access()) is kg


def test_traversal_never_passes_through_or_reports_hidden_items(schema):
    kg = _graph(schema)
    spec = TraversalSpec(seeds=["group:default/team"], path="ownerOf/dependencyOf")
    public = traverse(kg, spec)
    assert public.answers == ["component:default/checkout"]
    text = str(public.to_dict())
    for hidden in ("Fraud", "fraud", "secret.yaml", "risk"):
        assert hidden not in text
    risk = traverse(kg, spec, Principal.of("risk"))
    assert risk.answers == ["component:default/checkout", "component:default/fraud"]
    assert "secret.yaml" in str(risk.to_dict())
    # a hidden seed looks exactly like a missing one: only the echo of what was asked differs
    hidden_seed = traverse(kg, TraversalSpec(seeds=["component:default/fraud"], follow=["dependsOn"]))
    missing_seed = traverse(kg, TraversalSpec(seeds=["component:default/ghost"], follow=["dependsOn"]))
    hidden, missing = hidden_seed.to_dict(), missing_seed.to_dict()
    assert [u.pop("mention") for u in hidden["unresolved"]] == ["component:default/fraud"]
    assert [u.pop("mention") for u in missing["unresolved"]] == ["component:default/ghost"]
    assert hidden == missing
    # truncation counts ignore hidden edges: Pricing has one visible dependent
    capped = traverse(kg, TraversalSpec(seeds=["component:default/pricing"], follow=["dependencyOf"],
                                        hops=1, cap=1))
    assert capped.truncated["cap"] == []


# -- an entity is seen only through a visible document; evidence never names a hidden one ------
def _stub_graph(schema) -> KnowledgeGraph:
    """A public and a secret document; the secret one alone mentions two stubs and defines a
    component; the public one quotes a line naming the secret component."""
    kg = KnowledgeGraph(schema)
    kg.add_document(SourceDocument("pub.yaml", "pub.yaml", "0" * 64))
    kg.add_document(SourceDocument("sec.json", "sec.json", "1" * 64, frozenset({"s"})))
    kg.add_node("component:default/app", "Service", "App", source="pub.yaml",
                description=["Calls zephyr-vault at night.", "The shop."])
    kg.add_node("component:default/lib", "Library", "Lib", source="pub.yaml")
    kg.add_node("component:default/zephyr-vault", "Service", "Zephyr Vault", source="sec.json")
    kg.nodes["component:default/zephyr-vault"].access.add("s")
    kg.add_node("pkg:npm/quokka", "Library", "quokka")  # stubs: defined nowhere
    kg.add_node("pkg:npm/left-pad", "Library", "left-pad")
    kg.add_node("component:default/orphan", "Library", "Orphan")  # no provenance at all

    def add(s, p, o, src, evidence):
        kg.add_assertion(Assertion(s, p, o, src, "t", "2024-01-01T00:00:00Z", 1.0, 1,
                                   evidence=evidence, access=kg.documents[src].access))
    add("component:default/app", "dependsOn", "component:default/lib", "pub.yaml",
        "dependsOn: [component:lib, component:zephyr-vault]")
    add("component:default/app", "dependsOn", "pkg:npm/left-pad", "pub.yaml", "left-pad: ^1")
    add("component:default/zephyr-vault", "dependsOn", "pkg:npm/quokka", "sec.json", "quokka: 1")
    add("component:default/zephyr-vault", "dependsOn", "pkg:npm/left-pad", "sec.json", "left-pad")
    return kg


def test_a_node_only_hidden_documents_mention_is_hidden(schema):
    kg = _stub_graph(schema)
    view = visible_graph(kg, Principal())
    assert set(view.nodes) == {"component:default/app", "component:default/lib",
                               "pkg:npm/left-pad", "component:default/orphan"}
    assert set(visible_graph(kg, Principal.of("s")).nodes) == set(kg.nodes)
    # a hidden stub is as absent as a missing one, by every seed route
    for seed in ({"seeds": ["pkg:npm/quokka"]}, {"names": ["quokka"]}, {"question": "Who uses quokka?"}):
        hidden = traverse(kg, TraversalSpec(follow=["dependsOn:both"], **seed)).to_dict()
        ghost = {k: [x.replace("quokka", "wombat") for x in v] if isinstance(v, list) else
                 v.replace("quokka", "wombat") for k, v in seed.items()}
        missing = traverse(kg, TraversalSpec(follow=["dependsOn:both"], **ghost)).to_dict()
        assert hidden["abstain"]["reason"] == missing["abstain"]["reason"] == "no-seed"
        assert json.dumps(hidden).replace("quokka", "wombat") == json.dumps(missing)


def test_evidence_and_descriptions_naming_a_hidden_entity_are_withheld(schema):
    kg = _stub_graph(schema)
    view = visible_graph(kg, Principal())
    evidence = {a.object: a.evidence for a in view.assertions.values()}
    assert evidence == {"component:default/lib": WITHHELD, "pkg:npm/left-pad": "left-pad: ^1"}
    assert view.nodes["component:default/app"].attributes["description"] == {"The shop."}
    assert kg.nodes["component:default/app"].attributes["description"] == {
        "Calls zephyr-vault at night.", "The shop."}  # the graph itself is untouched
    assert {a.key for a in view.assertions.values()} <= set(kg.assertions)  # same keys
    r = traverse(kg, TraversalSpec(seeds=["component:default/app"], follow=["dependsOn"]))
    out = json.dumps(r.to_dict()) + r.render()
    assert "zephyr" not in out.lower() and WITHHELD in out
    assert all(WITHHELD not in i["text"] for i in r.context["items"])  # no empty passage
    assert "App depends on Lib." in [i["text"] for i in r.context["items"]]


def test_a_node_seen_only_through_a_mention_loses_what_hidden_definitions_said(schema):
    kg = KnowledgeGraph(schema)
    kg.add_document(SourceDocument("pub.yaml", "pub.yaml", "0" * 64))
    kg.add_document(SourceDocument("sec.yaml", "sec.yaml", "1" * 64, frozenset({"s"})))
    kg.add_node("component:default/app", "Service", "App", source="pub.yaml")
    n = kg.add_node("component:default/db-x", "Service", "Codename Marlin", source="sec.yaml",
                    description="secret plans")
    n.aliases.add("marlin")
    kg.add_assertion(Assertion("component:default/app", "dependsOn", "component:default/db-x",
                               "pub.yaml", "t", "2024-01-01T00:00:00Z", 1.0, 3, evidence="- db-x"))
    seen = visible_graph(kg, Principal()).nodes["component:default/db-x"]
    assert (seen.label, seen.attributes, seen.aliases, seen.defined_in) == ("db-x", {}, set(), set())


@pytest.mark.parametrize("text, hit", [
    ("dependsOn: [component:lib, component:zephyr-vault]", True),
    ("resource:zephyr-vault", True), ("Zephyr Vault", True), ("zephyr_vault", True),
    ("uses ZephyrVault daily", True), ("zephyrvault", True), ("ZEPHYR-VAULT", True),
    ("component:default/zephyr-vault", True),
    ("- component:zephyr-vault-client", False),  # a visible name containing the hidden one
    ("ZephyrVaultClient", False), ("vault", False), ("zephyr", False), ("zephyrs vaults", False),
    ("bar baz", True), ("foo bar", False), ("foo bar baz", True),  # overlapping, not inside
    ("", False), (None, False),
])
def test_name_screen(schema, text, hit):
    kg = KnowledgeGraph(schema)
    hidden = [kg.add_node("resource:default/zephyr-vault", "Resource", "Zephyr Vault"),
              kg.add_node("resource:default/bar-baz", "Resource", "bar baz")]
    visible = [kg.add_node("component:default/zephyr-vault-client", "Library", "Zephyr Vault Client"),
               kg.add_node("component:default/foo-bar", "Library", "foo bar")]
    assert NameScreen(hidden, visible).names_hidden(text) is hit


def test_name_screen_shared_names_reveal_nothing_and_is_linear(schema):
    kg = KnowledgeGraph(schema)
    hidden = kg.add_node("resource:default/db", "Resource", "db")
    public = kg.add_node("component:default/db", "Service", "db")
    screen = NameScreen([hidden], [public])
    assert not screen.names_hidden("image: db") and screen.names_hidden("resource:db")
    assert not NameScreen([], [public]) and not NameScreen([], [public]).names_hidden("db")
    many = [kg.add_node(f"resource:default/r{i}", "Resource", " ".join(["w"] * 40) + f" r{i}")
            for i in range(300)]
    screen = NameScreen(many, [public])
    assert screen.names_hidden("x " * 100_000 + "r7")  # finishes: linear in the text
    assert not screen.names_hidden("w " * 100_000)
