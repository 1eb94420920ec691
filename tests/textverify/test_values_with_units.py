"""A value stated with a unit ("120 km", "3.5 million", "$4 billion", "45 minutes") is kept
as the text states it, number and unit, never converted; a value whose number the quote's
sentence does not state is rejected."""

from __future__ import annotations

import pytest

from kgbuild.extract.text.grounding import quantity, stated_quantity
from kgbuild.extract.text.verify import TextChunk, verify_relations
from kgbuild.graph.model import attribute_term
from kgbuild.schema.loader import parse_schema

TEXT = ("The Lakeside line runs 120 km from Harbor City. It cost $4 billion, serves 3.5 million "
        "riders a year, and a trip takes 45 minutes. Its ferry, the A-Rosa Luna, is 125.8 "
        "metres long and weighs 1850 tonnes.")


@pytest.fixture(scope="module")
def transit():
    return parse_schema({
        "name": "transit", "namespace": "https://example.org/t#",
        "node_types": {"Line": {}, "Ship": {}},
        "edge_types": {"ferry": {"domain": "Line", "range": "Ship"}},
        "attributes": {"length": {"datatype": "decimal"}, "cost": {"datatype": "decimal"},
                       "riders": {"datatype": "integer"}, "runtime": {"datatype": "decimal"},
                       "weight": {"datatype": "decimal"}}})


def check(schema, subject, attribute, value, evidence=TEXT):
    rel = {"subject": subject, "predicate": attribute, "object": value, "evidence": evidence}
    return verify_relations([rel], TextChunk(TEXT, "t.md"), schema)


@pytest.mark.parametrize("attribute,value,stored,unit", [
    ("length", "120 km", "120 km", "km"),
    ("length", "120 kilometres", "120 km", "km"),              # the unit spelled otherwise
    ("cost", "$4 billion", "$4 billion", ""),
    ("cost", "4 billion", "$4 billion", ""),                    # the text's currency kept
    ("riders", "3.5 million", "3.5 million", ""),               # not 3500000
    ("riders", "3500000", "3.5 million", ""),                   # stored as stated, not converted
    ("runtime", "45 minutes", "45 minutes", "min"),
    ("runtime", "45", "45 minutes", "min"),                     # the text gives it its unit
])
def test_a_value_with_a_unit_is_kept_as_stated(transit, attribute, value, stored, unit):
    [edge] = check(transit, "Lakeside line", attribute, value).accepted
    assert edge.object_literal == stored
    assert edge.qualifiers == ((f"unit:{unit}",) if unit else ())
    if stored != value:
        assert any("kept as written" in n for n in edge.notes)
    # a plain literal, as written: never typed as a number it is not
    assert attribute_term(transit, attribute, stored)[1] == f'"{stored}"'


@pytest.mark.parametrize("attribute,value", [
    ("length", "130 km"),                     # another number
    ("length", "120 miles"),                  # another unit
    ("riders", "3.5 billion"),                # another scale
    ("cost", "€4 billion"),                   # another currency
    ("length", "120000.0 (metres)"),          # converted: the text says 120 km
])
def test_a_value_whose_number_is_not_stated_is_rejected(transit, attribute, value):
    out = check(transit, "Lakeside line", attribute, value)
    assert not out.accepted
    assert out.rejected[0].reason == "object-not-grounded"
    assert "never converted" in out.rejected[0].detail


def test_a_value_in_a_benchmark_form_matches_the_same_quantity(transit):
    """Text2KGBench writes values as "1850.0 (tonnes)": the same number and unit."""
    [edge] = check(transit, "A-Rosa Luna", "weight", "1850.0 (tonnes)").accepted
    assert edge.object_literal == "1850 tonnes"
    assert not check(transit, "A-Rosa Luna", "length", "125800.0 (millimetres)").accepted


def test_a_bare_number_keeps_its_datatype(transit):
    text = "The Lakeside line has 2,304,580 riders."
    rel = {"subject": "Lakeside line", "predicate": "riders", "object": "2304580", "evidence": text}
    [edge] = verify_relations([rel], TextChunk(text, "t.md"), transit).accepted
    assert edge.object_literal == "2304580" and edge.unit == ""
    assert attribute_term(transit, "riders", "2304580")[1].endswith("#integer>")


@pytest.mark.parametrize("text,value,stated", [
    ("born in 1950 in Paris", "1950", "1950"),      # "in" after a number is no inch
    ("a 4000ft runway", "4000.0", "4000ft"),
    ("it is 252 m long", "252", "252 m"),
    ("US$4 bn in debt", "$4 billion", "US$4 bn"),
    ("(its runtime is 94 minutes)", "94.0", "94 minutes"),   # a bracket of the text stays
    ("125800.0 (millimetres)", "125800 mm", "125800.0 (millimetres)"),
])
def test_quantities_in_text(text, value, stated):
    found = stated_quantity(quantity(value), text)
    assert found is not None and found[1].written == stated


def test_a_bare_number_stated_twice_takes_its_bare_occurrence():
    """Regression: "42 metres tall and has 42 floors" stored floorCount as "42 metres"."""
    schema = parse_schema({
        "name": "b", "namespace": "https://example.org/b#", "node_types": {"Building": {}, "City": {}},
        "edge_types": {"locatedIn": {"domain": "Building", "range": "City"}},
        "attributes": {"floorCount": {"datatype": "integer"}, "height": {"datatype": "decimal"}}})
    text = "Mill Tower is 42 metres tall and has 42 floors."
    rels = [{"subject": "Mill Tower", "predicate": p, "object": o, "evidence": text}
            for p, o in (("floorCount", "42"), ("height", "42 metres"))]
    result = verify_relations(rels, TextChunk(text, "b.md"), schema)
    assert {e.predicate: (e.object_literal, e.unit) for e in result.accepted} == {
        "floorCount": ("42", ""), "height": ("42 metres", "m")}
