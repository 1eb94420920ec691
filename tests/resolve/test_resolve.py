"""The staged resolver: type gate, IDs, aliases, normalised keys, fuzzy matching, review."""

import json
import random

import pytest
import yaml
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from kgbuild.errors import SchemaError
from kgbuild.graph.model import KnowledgeGraph
from kgbuild.resolve.aliases import AliasRegistry, accept, reject
from kgbuild.resolve.resolver import Resolver
from kgbuild.resolve.review import ResolutionStats, explain, review, review_queue, save_review_queue
from kgbuild.schema.loader import load_schema

FIXTURES = REPO / "fixtures" / "aliases"
CATALOG = yaml.safe_load((FIXTURES / "catalog.yaml").read_text())
SCHEMA = load_schema()


def make(entities=CATALOG, registry=None) -> Resolver:
    r = Resolver(SCHEMA, registry)
    for eid, type_name, label in entities:
        r.add_entity(eid, type_name, label)
    return r


@pytest.fixture(scope="module")
def r():
    return make()


def outcome(res):
    return res.status, res.id, res.stage


# -- the type gate ----------------------------------------------------------------------------
def test_same_name_in_two_types_stays_two_entities(r):
    assert outcome(r.resolve("Payments", "Group")) == ("resolved", "group:default/payments", "normalized")
    assert outcome(r.resolve("Payments", "API")) == ("resolved", "api:default/payments", "normalized")
    assert outcome(r.resolve("Payments Team")) == ("resolved", "group:default/payments", "normalized")
    assert outcome(r.resolve("payments_api")) == ("resolved", "api:default/payments", "normalized")


def test_untyped_match_in_incompatible_types_is_ambiguous(r):
    res = r.resolve("payments")
    assert res.status == "ambiguous" and res.id is None
    assert {t for _, t, _ in res.candidates} == {"API", "Group", "Service", "Resource"} - {"Resource"}


def test_compatible_types_resolve_through_the_gate(r):
    assert r.resolve("payments", "Component").id == "component:default/payments-service"
    assert r.resolve("ledger", "API").status == "new"  # a Service is never an API
    assert r.resolve("Ledger", "Library").status == "new"  # siblings are not compatible


def test_unknown_type_is_an_error(r):
    with pytest.raises(SchemaError):
        r.resolve("payments", "Teapot")


# -- IDs and references -----------------------------------------------------------------------
@pytest.mark.parametrize("mention, type_name, expected", [
    ("api:default/payments", None, "api:default/payments"),
    ("API:Payments", None, "api:default/payments"),
    ("default/ledger", "Service", "component:default/ledger"),
    ("component:ledger", None, "component:default/ledger"),
    ("pkg:pypi/PyYAML@6.0.1", "Library", "pkg:pypi/pyyaml"),
])
def test_ids_and_references(r, mention, type_name, expected):
    assert outcome(r.resolve(mention, type_name)) == ("resolved", expected, "id")


def test_reference_kind_narrows_an_untyped_mention(r):
    assert r.resolve("group:payments").id == "group:default/payments"
    assert r.resolve("default/payments").status == "ambiguous"


# -- the alias table and decisions ------------------------------------------------------------
def test_curated_aliases_are_exact_and_per_type():
    r = make(registry=AliasRegistry.load(FIXTURES / "aliases.yaml"))
    assert outcome(r.resolve("YAML", "Library")) == ("resolved", "pkg:pypi/pyyaml", "alias")
    assert outcome(r.resolve("cv2", "Library")) == ("resolved", "pkg:pypi/opencv-python", "alias")
    assert r.resolve("cv2", "API").status == "new"
    assert r.resolve("cv-2", "Library").status != "resolved"  # exact only, no fuzzy on aliases


def test_registry_decisions_survive_reload(tmp_path):
    path = tmp_path / "aliases.yaml"
    assert make().resolve("Money API", "API").status == "new"
    accept(path, "Money API", "API", "api:default/payments")
    reject(path, "Payments", "Group", "group:default/payments")
    r = make(registry=AliasRegistry.load(path))
    assert outcome(r.resolve("money  api", "API")) == ("resolved", "api:default/payments", "alias")
    assert r.resolve("payments", "Group").status == "new"  # rejected, nothing else to pick
    assert r.resolve("payments team", "Group").id == "group:default/payments"


def test_distinct_pair_never_merges():
    registry = AliasRegistry()
    entities = [["api:default/payments", "API", "Payments API"]]
    # A new record "api:default/payments-v1" labelled like the existing API would merge...
    assert make(entities).resolve("Payments API", "API", own_id="api:default/payments-v1").id \
        == "api:default/payments"
    # ...unless the registry says the two are different things.
    registry.add_distinct("api:default/payments", "api:default/payments-v1")
    r = make(entities + [["api:default/payments-v1", "API", "payments-api"]], registry)
    res = r.resolve("Payments API", "API", own_id="api:default/payments-v1")
    assert res.id == "api:default/payments-v1"
    assert "api:default/payments" not in [c[0] for c in res.candidates]
    assert r.possible_duplicates() == []
    assert [(d.a, d.b) for d in make(entities + [["api:default/payments-v1", "API",
                                                  "payments-api"]]).possible_duplicates()] == [
        ("api:default/payments", "api:default/payments-v1")]


# -- fuzzy matching and review ----------------------------------------------------------------
def test_typo_resolves_fuzzy(r):
    res = r.resolve("paymnets gateway", "Service")
    assert outcome(res) == ("resolved", "component:default/payments-gateway", "fuzzy")
    assert res.score >= 85


@pytest.mark.parametrize("mention", [
    "payments gateway ops",  # an extra word: a different, new thing
    "payments getaway",  # another word, not a typo
    "billing-v3",  # another version
])
def test_fuzzy_near_miss_of_a_new_entity_is_queued(r, mention):
    res = r.resolve(mention, "Service")
    assert res.status == "review" and res.id is None and res.candidates
    assert res.suggested_id is None


def test_new_entity_gets_a_stable_suggested_id(r):
    res = r.resolve("Shipping Label Printer", "Service")
    assert res.status == "new" and res.candidates == []
    assert res.suggested_id == "service:default/shipping-label-printer"


def test_acronym_only_match_goes_to_review(r):
    res = r.resolve("CIS", "Service")
    assert (res.status, res.stage) == ("review", "acronym")
    assert res.candidates[0][0] == "component:default/customer-identity-service"


def test_ties_go_to_review():
    r = make([["component:default/a", "Service", "order-sync"],
              ["component:default/b", "Service", "Order Sync Service"]])
    res = r.resolve("order sync", "Service")
    assert res.status == "review" and len(res.candidates) == 2
    assert r.resolve("Order Sync Service", "Service").id == "component:default/b"  # exact name wins


def test_untyped_fuzzy_match_naming_two_types_is_ambiguous():
    r = make([["api:default/ledger", "API", "Ledger Reconciliation"],
              ["group:default/ledger", "Group", "ledger-reconciliation"]])
    assert r.resolve("ledger reconcilation").status == "ambiguous"
    assert r.resolve("ledger reconcilation", "API").id == "api:default/ledger"


def test_split_differently_and_inside_a_longer_name_goes_to_review():
    r = make([["pkg:pypi/buildtools", "Library", "buildtools"],
              ["pkg:pypi/ajk-ios-buildtools", "Library", "ajk_ios_buildTools"]])
    assert r.resolve("buildTools", "Library").status == "review"
    assert r.resolve("buildtools", "Library").id == "pkg:pypi/buildtools"


def test_explain_shows_stage_reason_and_candidates(r):
    d = r.resolve("paymnets gateway", "Service").explain()
    json.dumps(d)
    assert d["stage"] == "fuzzy" and d["status"] == "resolved"
    assert d["searched_types"] == ["Component", "Service"]
    assert "margin" in d["reason"]
    first = d["candidates"][0]
    assert first["id"] == "component:default/payments-gateway"
    assert first["label"] == "Payments Gateway" and first["matched"] == "payment gateway"


# -- order independence and entity bookkeeping ------------------------------------------------
MENTIONS = [("payments", None), ("Payments", "API"), ("paymnets gateway", "Service"),
            ("CIS", "Service"), ("payments gateway ops", "Service"), ("api:payments", None),
            ("PyYaml", "Library"), ("Jane Doe", None), ("cusomer identity", "Service")]


def snapshot(entities):
    r = make(entities)
    return ([r.resolve(m, t).explain() for m, t in MENTIONS],
            [d.to_dict() for d in r.possible_duplicates()])


def test_output_independent_of_insertion_order():
    expected = snapshot(CATALOG)
    for seed in range(5):
        shuffled = list(CATALOG)
        random.Random(seed).shuffle(shuffled)
        assert snapshot(shuffled) == expected


@settings(deadline=None, max_examples=25)
@given(st.permutations(CATALOG + [["component:default/payments-gateway-v2", "Service",
                                   "payments-gateway-v2"]]))
def test_output_independent_of_insertion_order_property(entities):
    assert snapshot(entities) == snapshot(sorted(entities))


def test_output_independent_of_insertion_order_on_a_crowded_catalog():
    rng = random.Random(7)
    words = "pay payment payments gateway ledger order orders sync audit tracing tracking " \
            "quota quote route router billing invoice user users profile".split()
    types = ["Service", "Library", "API", "Group", "Resource"]
    entities, seen = [], set()
    while len(entities) < 150:
        name = "-".join(rng.sample(words, rng.choice([1, 2, 3])))
        t = rng.choice(types)
        if (t, name) not in seen:
            seen.add((t, name))
            entities.append([f"{t.lower()}:default/{name}", t, rng.choice([name, name.title()])])
    mentions = [(name.replace("-", " ")[:-1] + rng.choice("xe") if i % 3 == 0 else name, t)
                for i, (_, t, name) in enumerate(entities[:60])] + [(e[2], None) for e in entities[60:90]]

    def run(order):
        r = make(order)
        return ([r.resolve(m, t).explain() for m, t in mentions],
                [d.to_dict() for d in r.possible_duplicates()])

    expected = run(entities)
    for seed in range(3):
        shuffled = list(entities)
        random.Random(seed).shuffle(shuffled)
        assert run(shuffled) == expected


def test_readding_narrows_type_and_old_type_index_is_ignored():
    r = Resolver(SCHEMA)
    r.add_entity("component:default/pay", "Component", "pay-tool")
    r.add_entity("component:default/pay", "Service", "Pay Tool Service")
    assert r.type_of("component:default/pay") == "Service"
    assert r.resolve("pay tool", "Library").status == "new"  # a Library gate sees Component
    assert r.resolve("pay tool", "Service").id == "component:default/pay"


def test_from_graph_uses_labels_aliases_and_titles():
    kg = KnowledgeGraph(SCHEMA)
    kg.add_node("api:default/payments", "API", "payments", title="Payments Platform API")
    kg.nodes["api:default/payments"].aliases.add("PayAPI")
    r = Resolver.from_graph(kg)
    assert r.resolve("payments platform", "API").id == "api:default/payments"
    assert r.resolve("payapi", "API").id == "api:default/payments"


# -- questions, duplicates, queue and stats ---------------------------------------------------
def test_find_mentions_in_a_question(r):
    q = "Who owns the payments API, and which team is Payments Team? Ask Jane Doe."
    found = r.find_mentions(q)
    assert [(m.text, m.id, m.status) for m in found] == [
        ("payments API", "api:default/payments", "resolved"),
        ("Payments Team", "group:default/payments", "resolved"),
        ("Jane Doe", "user:default/jane-doe", "resolved")]
    assert all(q[m.start:m.end] == m.text for m in found)


def test_find_mentions_reports_ambiguity_and_ignores_plain_words(r):
    found = r.find_mentions("what does payments depend on?")
    assert [(m.text, m.status) for m in found] == [("payments", "ambiguous")]
    found = r.find_mentions("Which services use CIS or cis, and the ledgr?")
    assert [(m.text, m.status, m.stage) for m in found] == [
        ("CIS", "review", "acronym"), ("ledgr", "resolved", "fuzzy")]


def test_possible_duplicates_within_one_type():
    r = make(CATALOG + [["component:default/payment-gateway", "Service", "payment_gateway"],
                        ["group:default/payment-gateway", "Group", "Payment Gateway"]])
    dups = r.possible_duplicates("Service")
    assert [(d.a, d.b, d.reason) for d in dups] == [
        ("component:default/payment-gateway", "component:default/payments-gateway", "normalized")]
    assert all(d.type == "Service" for d in r.possible_duplicates())


def test_review_queue_stats_and_cli_helpers(r, tmp_path):
    results = [r.resolve(m, t) for m, t in MENTIONS + [("CIS", "Service")]]
    stats = ResolutionStats()
    for res in results:
        stats.add(res)
    d = stats.to_dict()
    assert d["mentions"] == len(results)
    assert d["queued"] == d["review"] + d["ambiguous"]
    assert sum(d["resolved"].values()) + d["new"] + d["queued"] == d["mentions"]
    assert "queued for review" in stats.summary()

    registry = AliasRegistry()
    registry.decide("payments", "", "group:default/payments", "accepted")
    queue = review_queue(results, registry)
    assert [(q["mention"], q["count"]) for q in queue] == [  # an acronym-only match ranks last
        ("payments gateway ops", 1), ("CIS", 2)]
    assert queue[0]["priority"] > queue[1]["priority"]
    path = tmp_path / "review.json"
    save_review_queue(path, queue)
    kg = KnowledgeGraph(SCHEMA)
    for eid, type_name, label in CATALOG:
        kg.add_node(eid, type_name, label)
    report = review(kg, tmp_path / "aliases.yaml", path, "Service")
    assert [q["mention"] for q in report["queue"]] == [q["mention"] for q in queue]
    assert explain(kg, "cv2", "Library")["status"] == "new"


def test_a_lone_type_word_is_not_a_mention():
    from kgbuild import load_schema
    from kgbuild.resolve.resolver import Resolver
    r = Resolver(load_schema())
    r.add_entity("location:default/apis", "Location", "apis")
    r.add_entity("group:default/teams", "Group", "teams")
    r.add_entity("api:default/payments-api", "API", "Payments API")
    found = [(m.text, m.id) for m in r.find_mentions("Which team owns the Payments API and which APIs?")]
    assert found == [("Payments API", "api:default/payments-api")]


# -- speed work must not change outcomes ------------------------------------------------------
def _bench_run(n: int, workers: int = 1):
    """Index a 2k benchmark catalog (bench/resolve_bench.py, seed 42) and resolve its mentions."""
    import importlib.util
    import sys
    path = REPO / "bench" / "resolve_bench.py"
    spec = importlib.util.spec_from_file_location("_resolve_bench", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("_resolve_bench", bench)
    spec.loader.exec_module(bench)
    rng = random.Random(f"42:{n}")
    entities = bench.make_catalog(n, rng)
    mentions = bench.make_mentions(entities, n, rng)
    registry = AliasRegistry()
    for e in entities:
        if e["nickname"]:
            registry.add_alias(e["type"], e["id"], e["nickname"])
    r = Resolver(SCHEMA, registry)
    r.add_entities((e["id"], e["type"], e["label"]) for e in entities)
    return r, mentions, r.resolve_many([(m["text"], m["type"]) for m in mentions], workers=workers)


def test_benchmark_outcomes_are_unchanged_by_the_speed_work():
    """(id, status, stage) of every mention of the 2k benchmark run, as the resolver gave them
    before it was optimised (a SHA-256 of their repr)."""
    import hashlib
    _, mentions, results = _bench_run(2000)
    outcomes = [(res.id, res.status, res.stage) for res in results]
    assert hashlib.sha256(repr(outcomes).encode()).hexdigest() == (
        "c9192d7cb162ff9fced13a193c278b036c991f4dc019d1bd8723bf00a6ac187b")


def test_resolve_many_equals_resolve_in_order_with_worker_processes():
    r, mentions, parallel = _bench_run(2000, workers=2)
    single = [r.resolve(m["text"], m["type"]) for m in mentions]
    assert parallel == single
    assert [x.mention for x in parallel] == [m["text"] for m in mentions]
    many = r.resolve_many(["payments", ("Payments", "API"), ("Payments", "API", None)], workers=2)
    assert [(x.mention, x.type) for x in many] == [("payments", None), ("Payments", "API"),
                                                   ("Payments", "API")]
    assert r.resolve_many([]) == []


def test_a_batch_in_one_process_equals_resolve_mention_by_mention(monkeypatch):
    """resolve_many runs the fuzzy stage of many mentions at once (scores_many): every field of
    every resolution is resolve()'s, across batch boundaries and with repeated mentions."""
    import kgbuild.resolve.resolver as resolver_module
    r, mentions, _ = _bench_run(2000)
    items = [(m["text"], m["type"]) for m in mentions] + [("paymnets gateway", None)] * 3
    monkeypatch.setattr(resolver_module, "BATCH", 700)
    batch = r.resolve_many(items)
    single = [r.resolve(m, t) for m, t in items]
    assert [x.explain() for x in batch] == [x.explain() for x in single]
    assert sum(x.stage == "fuzzy" for x in batch) > 500  # (the batched stage did run)


def test_resolve_many_raises_a_worker_error_in_the_caller(r):
    with pytest.raises(SchemaError):
        r.resolve_many([("payments", "NoSuchType")] * 1200, workers=2)


def test_a_batch_s_resolutions_go_to_the_oldest_gc_generation():
    """resolve_many's results are long-lived: moved to the oldest generation at once, not
    rescanned by young collections first; nothing is left frozen."""
    import gc

    gc.unfreeze()  # (a CLI run in this process may have frozen its graph: promote skips then)
    r = Resolver(load_schema(), AliasRegistry())
    r.add_entities([("component:default/payments", "Service", "payments")])
    gc.disable()  # (no collection of the test's own moves them meanwhile)
    try:
        results = r.resolve_many([("payments", "Service"), ("paymnets", "Service")])
        oldest = {id(o) for o in gc.get_objects(generation=2)}
    finally:
        gc.enable()
    assert all(id(res) in oldest for res in results)
    assert gc.get_freeze_count() == 0
