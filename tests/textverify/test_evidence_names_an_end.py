"""A quote that names neither end of its relation is no evidence, even when it is verbatim:
SmolLM2-135M behind llama-cpp-python answered evidence like "1", "true" or a bare word, and
"a" or "Checkout" is found in almost any text (regression: such edges were accepted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgbuild.extract.text.verify import TextChunk, verify_relations

TEXT = (Path(__file__).resolve().parents[2] / "fixtures" / "prose" /
        "checkout-design.md").read_text()


@pytest.mark.parametrize("evidence", ["a", "Checkout", "Status: accepted.", "1"])
def test_a_quote_naming_neither_end_is_rejected(schema, evidence):
    rel = {"subject": "Storefront Team", "predicate": "ownedBy", "object": "Commerce Platform",
           "evidence": evidence}
    result = verify_relations([rel], TextChunk(TEXT, "d.md", "d.md#c1"), schema)
    [rejected] = result.rejected
    assert not result.accepted and rejected.reason == "evidence-not-found"


def test_a_quote_naming_one_end_still_grounds_the_other_in_the_chunk(schema):
    """"it is owned by ..." style evidence: the other end is named elsewhere in the chunk."""
    rel = {"subject": "Payments API", "predicate": "ownedBy", "object": "Commerce Platform",
           "evidence": "is owned by Commerce Platform"}
    result = verify_relations([rel], TextChunk(TEXT, "d.md", "d.md#c1"), schema)
    [edge] = result.accepted  # (no resolver: new IDs, typed by the predicate's domain)
    assert (edge.subject_id, edge.predicate, edge.object_id) == (
        "component:default/payments-api", "ownedBy", "group:default/commerce-platform")


@pytest.mark.parametrize("rel", [
    {"subject": "Pricing SDK", "predicate": "description", "object": "the shared pricing library"},
    {"subject": "Checkout Service", "predicate": "tag", "object": "pricing"}])
def test_an_attribute_value_needs_a_quote_naming_the_entity_or_the_value(schema, rel):
    chunk = TextChunk(TEXT, "d.md", "d.md#c1")
    [rejected] = verify_relations([{**rel, "evidence": "Checkout"}], chunk, schema).rejected
    assert rejected.reason == "evidence-not-found"


def test_an_attribute_value_quoted_with_its_entity_is_accepted(schema):
    rel = {"subject": "Pricing SDK", "predicate": "description", "object": "the shared pricing "
           "library", "evidence": "Pricing SDK is the shared pricing library"}
    [value] = verify_relations([rel], TextChunk(TEXT, "d.md", "d.md#c1"), schema).accepted
    assert value.predicate == "description"
