"""The output contract's tolerant parser: what real models answer, never an exception."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kgbuild.extract.text.contract import Relation, parse_relations, relations_json_schema

GOOD = {"subject": "Checkout Service", "subject_type": "Service", "predicate": "dependsOn",
        "object": "Pricing SDK", "object_type": None,
        "evidence": "Checkout Service depends on Pricing SDK."}


def test_the_contract_shape_parses_to_relations():
    rels, errors = parse_relations(json.dumps({"relations": [GOOD]}))
    assert errors == []
    assert rels == [Relation("Checkout Service", "Service", "dependsOn", "Pricing SDK", None,
                             "Checkout Service depends on Pricing SDK.")]


def test_json_in_a_code_fence_with_prose_around_it():
    answer = ("Sure! Here are the relations:\n```json\n" + json.dumps({"relations": [GOOD]})
              + "\n```\nLet me know if you need more.")
    rels, errors = parse_relations(answer)
    assert [r.predicate for r in rels] == ["dependsOn"] and errors == []


def test_json_inside_prose_without_a_fence():
    answer = "The answer is " + json.dumps({"relations": [GOOD]}) + " as requested."
    rels, _ = parse_relations(answer)
    assert rels[0].object == "Pricing SDK"


def test_extra_keys_are_ignored_and_missing_types_are_none():
    item = {"subject": "A", "predicate": "dependsOn", "object": "B", "evidence": "A needs B",
            "confidence": 0.9, "reasoning": "because"}
    rels, errors = parse_relations({"relations": [item], "entities": []})
    assert errors == [] and rels[0].subject_type is None and rels[0].object_type is None


def test_wrong_types_are_reported_per_item_and_the_rest_kept():
    items = [GOOD, {"subject": ["A"], "predicate": "p", "object": "B"},
             {"predicate": "p", "object": "B"}, "not an object", {**GOOD, "object": 1000}]
    rels, errors = parse_relations({"relations": items})
    assert [r.object for r in rels] == ["Pricing SDK", "1000"]
    assert len(errors) == 3
    assert "relation 1" in errors[0] and "must be a string" in errors[0]
    assert "relation 2" in errors[1] and "'subject'" in errors[1]
    assert "relation 3" in errors[2] and "expected an object" in errors[2]


def test_a_bare_list_and_a_single_relation_object():
    assert len(parse_relations([GOOD, GOOD])[0]) == 2
    assert len(parse_relations(GOOD)[0]) == 1


def test_numbers_become_strings_without_a_spurious_decimal():
    rels, _ = parse_relations({"relations": [{**GOOD, "object": 12.0}, {**GOOD, "object": 1.5},
                                             {**GOOD, "object": True}]})
    assert [r.object for r in rels] == ["12", "1.5", "true"]


def test_malformed_answers_give_one_error_and_no_relations():
    for answer in ["", "   ", "{bad json", "no json here at all", "null", "42",
                   '{"relations": 5}', '{"other": []}', b"\xff\xfe{", None]:
        rels, errors = parse_relations(answer)
        assert rels == [] and len(errors) == 1, answer


@given(st.text(max_size=300))
def test_never_raises_on_any_text(text):
    rels, errors = parse_relations(text)
    assert isinstance(rels, list) and isinstance(errors, list)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
                    max_leaves=20))
def test_never_raises_on_any_json_value(value):
    parse_relations(value)
    parse_relations(json.dumps(value))


def test_the_json_schema_lists_predicates_and_types_as_enums():
    schema = relations_json_schema(["dependsOn", "ownedBy"], ["Service", "Group"])
    item = schema["properties"]["relations"]["items"]
    assert item["properties"]["predicate"]["enum"] == ["dependsOn", "ownedBy"]
    assert set(item["required"]) == {"subject", "subject_type", "predicate", "object",
                                     "object_type", "evidence"}
