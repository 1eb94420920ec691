"""Edge verification: every reason code on real-looking relations, the tolerances, and
resolution onto the fixture catalog's IDs."""

from __future__ import annotations

import pytest
from conftest import FIXTURE_CATALOG, REPO

from kgbuild import load_schema
from kgbuild.project.pipeline import build_graph
from kgbuild.resolve.aliases import AliasRegistry
from kgbuild.resolve.resolver import Resolver
from kgbuild.schema.loader import parse_schema
from kgbuild.extract.text.contract import Relation
from kgbuild.extract.text.verify import REASONS, TextChunk, verify_relations

DESIGN = """# Checkout pricing

Checkout Service depends on Pricing SDK for every price it shows.  The Pricing SDK
is owned by Commerce Platform, who also publish its release notes.
Checkout Service is part of the Payments effort. The Billing Worker depends on the Orders DB.
"""


@pytest.fixture(scope="module")
def schema():
    return load_schema("software")


@pytest.fixture(scope="module")
def catalog(schema):
    result = build_graph([FIXTURE_CATALOG], schema, store=None, timestamp=0, root=REPO,
                         resolve=False, validate=False)
    try:
        yield Resolver.from_graph(result.store.knowledge_graph())
    finally:
        result.store.close()


def chunk(text=DESIGN, start=1000):
    return TextChunk(text, "docs/checkout-design.md", "docs/checkout-design.md#c0", start)


def rel(s, p, o, evidence, st=None, ot=None):
    return Relation(s, st, p, o, ot, evidence)


def one(relation, schema, resolver=None, text=DESIGN):
    out = verify_relations([relation], chunk(text), schema, resolver)
    assert len(out.accepted) + len(out.rejected) == 1
    return out.accepted[0] if out.accepted else out.rejected[0]


# -- accepted, onto the catalog ---------------------------------------------------------------

def test_an_extracted_name_lands_on_the_catalog_id_with_span_and_confidence(schema, catalog):
    edge = one(rel("Checkout Service", "dependsOn", "Pricing SDK",
                   "Checkout Service depends on Pricing SDK for every price it shows."), schema, catalog)
    assert (edge.subject_id, edge.predicate, edge.object_id) == (
        "component:default/checkout-service", "dependsOn", "component:default/pricing-sdk")
    assert (edge.subject_type, edge.object_type) == ("Service", "Library")
    assert edge.subject_status == edge.object_status == "resolved"
    start, end = edge.span
    assert DESIGN[start - 1000:end - 1000] == edge.evidence  # absolute offsets (chunk at 1000)
    assert edge.confidence == 1.0 and edge.doc_id == "docs/checkout-design.md"


def test_an_inverse_predicate_is_stored_in_the_schema_direction(schema, catalog):
    edge = one(rel("Commerce Platform", "ownerOf", "pricing sdk",
                   "The Pricing SDK is owned by Commerce Platform"), schema, catalog)
    assert (edge.subject_id, edge.predicate, edge.object_id) == (
        "component:default/pricing-sdk", "ownedBy", "group:default/commerce-platform")
    assert any("inverse" in n for n in edge.notes)


@pytest.mark.parametrize("predicate", ["dependsOn", "depends_on", "Depends On", "DEPENDS-ON",
                                       "dependson", "DependsOn"])
def test_predicate_names_are_tolerant_to_case_and_separators(schema, catalog, predicate):
    edge = one(rel("Checkout Service", predicate, "Pricing SDK",
                   "Checkout Service depends on Pricing SDK"), schema, catalog)
    assert edge.predicate == "dependsOn"


def test_an_unknown_entity_gets_the_resolvers_suggested_id(schema, catalog):
    edge = one(rel("Billing Worker", "dependsOn", "Orders DB",
                   "The Billing Worker depends on the Orders DB."), schema, catalog)
    assert edge.subject_status == "new" and edge.subject_id == "component:default/billing-worker"
    assert edge.object_id == "resource:default/orders-db" and edge.object_status == "resolved"
    assert edge.confidence < 1.0  # the subject's type was chosen among Component/Resource


def test_evidence_tolerant_to_case_and_whitespace_records_the_real_span(schema, catalog):
    edge = one(rel("Pricing SDK", "ownedBy", "Commerce Platform",
                   "the pricing sdk is OWNED by   commerce platform"), schema, catalog)
    start, end = edge.span
    assert DESIGN[start - 1000:end - 1000] == "The Pricing SDK\nis owned by Commerce Platform"
    assert edge.evidence == "The Pricing SDK\nis owned by Commerce Platform"
    assert edge.confidence < 1.0


def test_a_curated_alias_grounds_the_canonical_name(schema):
    text = "The checkout calls PAPI for every card payment."
    kg_resolver = Resolver(schema, AliasRegistry.load(REPO / "fixtures/aliases/aliases.yaml"))
    kg_resolver.add_entity("api:default/payments", "API", "Payments API")
    kg_resolver.add_entity("component:default/checkout", "Service", "checkout")
    edge = one(rel("checkout", "consumesApi", "Payments API", "The checkout calls PAPI"),
               schema, kg_resolver, text)
    assert edge.object_id == "api:default/payments"
    assert any("alias" in n for n in edge.notes)


# -- rejections, one per reason -------------------------------------------------------------------

def test_every_reason_code_is_documented():
    assert set(REASONS) == {"malformed", "unknown-predicate", "evidence-not-found",
                            "subject-not-grounded", "object-not-grounded", "invalid-literal",
                            "ambiguous-entity", "type-mismatch", "anaphoric-endpoint",
                            "no-relation-cue", "both-directions"}


def test_unknown_predicate(schema, catalog):
    out = one(rel("Checkout Service", "likes", "Pricing SDK", "Checkout Service depends on Pricing SDK"),
              schema, catalog)
    assert out.reason == "unknown-predicate" and "likes" in out.detail


def test_invented_quote_is_evidence_not_found(schema, catalog):
    out = one(rel("Pricing SDK", "dependsOn", "pricingSDK", "a-verbatim quote"), schema, catalog)
    assert out.reason == "evidence-not-found"
    assert one(rel("Pricing SDK", "dependsOn", "Checkout Service", ""), schema, catalog).reason == \
        "evidence-not-found"


def test_a_subject_the_text_never_mentions(schema, catalog):
    out = one(rel("Payments Service", "dependsOn", "Pricing SDK",
                  "Checkout Service depends on Pricing SDK"), schema, catalog)
    assert out.reason == "subject-not-grounded"


def test_an_object_the_text_never_mentions(schema, catalog):
    out = one(rel("Checkout Service", "dependsOn", "Payments DB",
                  "Checkout Service depends on Pricing SDK"), schema, catalog)
    assert out.reason == "object-not-grounded"


def test_an_object_mentioned_only_inside_the_subjects_name(schema):
    s = parse_schema({"name": "t", "namespace": "https://example.org/t#", "prefix": "t",
                      "node_types": {"Airport": {}, "City": {}, "University": {}},
                      "edge_types": {"cityServed": {"domain": "Airport", "range": "City"},
                                     "locatedIn": {"domain": "University", "range": "City"}}})
    text = "Athens International Airport is run by the state."  # the start of a longer name
    out = one(rel("Athens International Airport", "cityServed", "Athens", text), s, None, text)
    assert out.reason == "object-not-grounded"
    text2 = text + " It serves the city of Athens."
    edge = one(rel("Athens International Airport", "cityServed", "Athens", text2), s, None, text2)
    assert edge.object_id == "city:default/athens"
    text3 = "The University of Cambridge is old."  # the end of the subject's own mention
    out = one(rel("University of Cambridge", "locatedIn", "Cambridge", text3), s, None, text3)
    assert out.reason == "object-not-grounded" and "only inside the longer name" in out.detail


def test_a_known_name_inside_a_longer_known_name_is_no_mention_of_its_own(schema, catalog):
    """'Payments' (ambiguous in the catalog: an API, a service, a system) inside 'Payments
    API' is rejected as a name inside a longer name, never sent to review as ambiguous."""
    text = "Checkout Service depends on Payments API for refunds."
    for declared in (None, "API", "System"):
        out = one(rel("Checkout Service", "dependsOn", "Payments", text, ot=declared), schema,
                  catalog, text)
        assert out.reason == "object-not-grounded", declared
        assert "only inside the longer name 'Payments API'" in out.detail


def test_a_self_loop_and_a_type_name_are_no_entities(schema, catalog):
    text = "Checkout Service depends on Checkout Service and on a Library."
    out = one(rel("Checkout Service", "dependsOn", "Checkout Service", text), schema, catalog, text)
    assert out.reason == "object-not-grounded"
    out = one(rel("Checkout Service", "dependsOn", "Library", text), schema, catalog, text)
    assert out.reason == "object-not-grounded" and "type" in out.detail


def test_a_reversed_direction_is_a_type_mismatch(schema, catalog):
    out = one(rel("Commerce Platform", "ownedBy", "Pricing SDK",
                  "The Pricing SDK\nis owned by Commerce Platform"), schema, catalog)
    assert out.reason == "type-mismatch" and out.detail.startswith("reversed")


def test_a_declared_type_contradicting_the_range(schema, catalog):
    out = one(rel("Pricing SDK", "ownedBy", "Commerce Platform",
                  "is owned by Commerce Platform", ot="Service"), schema, catalog)
    assert out.reason == "type-mismatch" and "Service" in out.detail


def test_an_ambiguous_name_is_queued_not_merged(schema, catalog):
    out = one(rel("Checkout Service", "partOf", "Payments",
                  "Checkout Service is part of the Payments effort."), schema, catalog)
    assert out.reason == "ambiguous-entity"
    ids = {c[0] for c in out.candidates}
    assert {"component:default/payments-service", "system:default/payments"} <= ids


def test_malformed_relations(schema):
    result = verify_relations([{"subject": "A", "predicate": "dependsOn"},
                               rel("Checkout Service (v2", "dependsOn", "Pricing SDK", "x"), 42],
                              chunk(), schema)
    assert [r.reason for r in result.rejected] == ["malformed"] * 3
    assert "unbalanced" in result.rejected[1].detail


# -- literals -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def people():
    return parse_schema({
        "name": "people", "namespace": "https://example.org/p#", "prefix": "p",
        "node_types": {"Person": {}, "Place": {}, "ComicsCharacter": {}},
        "edge_types": {"birthPlace": {"domain": "Person", "range": "Place"},
                       "creator": {"domain": "ComicsCharacter", "range": "Person"}},
        "attributes": {"birthDate": {"datatype": "date"}, "population": {"datatype": "integer"},
                       "alternativeName": {"datatype": "string"}}})


BIO = ("Jan Duursema created the comic book character Arion, also known as Ahri'ahn. "
       "Duursema was born on 2 May 1980 in Houston, a city of 2,304,580 people.")


def test_attribute_values_are_validated_and_normalised(people):
    out = verify_relations([rel("Jan Duursema", "birthDate", "1980-05-02", BIO),
                            rel("Houston", "population", "2304580", BIO),
                            rel("Arion (comicsCharacter)", "alternativeName", "Ahriahn", BIO)],
                           TextChunk(BIO, "bio.txt"), people)
    assert [(e.predicate, e.object_literal, e.object_id) for e in out.accepted] == [
        ("birthDate", "1980-05-02", None), ("population", "2304580", None),
        ("alternativeName", "Ahriahn", None)]
    assert all(e.is_attribute and e.to_edge_record() is None for e in out.accepted)


def test_an_invalid_literal(people):
    out = one(rel("Jan Duursema", "birthDate", "Houston", BIO), people, None, BIO)
    assert out.reason == "invalid-literal"
    out = one(rel("Houston", "population", "about a million", BIO), people, None, BIO)
    assert out.reason == "invalid-literal"


def test_a_parenthetical_disambiguator_and_underscores(people):
    edge = one(rel("Arion_(comicsCharacter)", "creator", "Jan_Duursema", BIO), people, None, BIO)
    assert (edge.subject_id, edge.object_id) == ("comicscharacter:default/arion-comics-character",
                                                 "person:default/jan-duursema")
    assert edge.subject_label == "Arion_(comicsCharacter)"


def test_types_the_other_relations_of_the_chunk_contradict(people):
    text = "Houston is where Jan Duursema was born; Jan Duursema created Houston, a hero."
    out = verify_relations([rel("Jan Duursema", "birthPlace", "Houston", text),
                            rel("Jan Duursema", "birthPlace", "Houston", text),
                            rel("Houston", "creator", "Jan Duursema", text)],
                           TextChunk(text, "t.txt"), people)
    assert len(out.accepted) == 2
    assert [r.reason for r in out.rejected] == ["type-mismatch"]
    assert "other relation" in out.rejected[0].detail


def test_a_declared_type_counts_on_the_stored_side_of_an_inverse():
    # Jordan is declared a Person as the stated object of the inverse name: stored, that is
    # the subject; the chunk's other relations (which make Jordan a Place twice) must not
    # override a declared type
    s = parse_schema({"name": "inv", "namespace": "https://example.org/i#", "prefix": "i",
                      "node_types": {"Person": {}, "Place": {}},
                      "edge_types": {"bornIn": {"domain": "Person", "range": "Place",
                                                "inverse": "birthplaceOf"},
                                     "mayorOf": {"domain": "Person", "range": "Place"}}})
    text = "Houston is where Jordan was born. Ann is mayor of Jordan. Bob is mayor of Jordan."
    out = verify_relations([rel("Houston", "birthplaceOf", "Jordan", text, st="Place", ot="Person"),
                            rel("Ann", "mayorOf", "Jordan", text),
                            rel("Bob", "mayorOf", "Jordan", text)],
                           TextChunk(text, "t.txt"), s)
    assert ("person:default/jordan", "bornIn", "place:default/houston") in {
        (e.subject_id, e.predicate, e.object_id) for e in out.accepted}
    assert out.rejected == []
