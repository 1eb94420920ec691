"""Finding quotes and names in text: the tolerances, and what must not match."""

from __future__ import annotations

import pytest

from kgbuild.extract.text.grounding import find_name, find_quote, literal, parse_date

TEXT = ("Jan Duursema and Paul Kupperberg created the comic book character of Arion, also known "
        "as Ahri'ahn. Duursema was born in the U.S. on 2 May 1980; the studio has 1,000 staff "
        "and a runway of 4000ft. Revenue was 875.4 million. Stavropolis 1147 is an asteroid. "
        "Atlanta is part of DeKalb County in Georgia. Abraham Ribicoff spoke English.")


def found(name):
    m = find_name(name, TEXT)
    return TEXT[m.start:m.end] if m else None


@pytest.mark.parametrize("name, expected", [
    ("Arion", "Arion"),
    ("arion", "Arion"),                                   # case
    ("Arion (comicsCharacter)", "Arion"),                 # parenthetical disambiguator
    ("Jan_Duursema", "Jan Duursema"),                     # underscores
    ("JanDuursema", "Jan Duursema"),                      # camelCase / no spaces
    ("Ahriahn", "Ahri'ahn"),                              # punctuation inside a name
    ("1000", "1,000"), ("1000.0", "1,000"),               # digit grouping, trailing .0
    ("4000.0", "4000"),                                   # a number with its unit glued on
    ("875400000", "875.4 million"),                       # a scale word
    ("1980-05-02", "2 May 1980"), ("May 2nd, 1980", "2 May 1980"),   # dates written differently
    ("1147 Stavropolis", "Stavropolis 1147"),             # word order
    ("DeKalb County, Georgia", "DeKalb County in Georgia"),          # two adjacent parts
    ("Abraham A. Ribicoff", "Abraham Ribicoff"),          # a middle initial
    ("English language", "English"),                      # a lowercase category word
    ("United States", "U.S."),                            # a common abbreviation
])
def test_tolerances(name, expected):
    assert found(name) == expected


@pytest.mark.parametrize("name", ["Marion", "Ari", "Paul Kupperberg Jr", "2 June 1980", "10000",
                                  "1001", "Georgia, United States", "Kupperberg Paul Jan"])
def test_what_is_not_a_mention(name):
    assert found(name) is None


def test_a_name_is_not_the_start_of_a_longer_one():
    assert find_name("Athens", "Athens International Airport opened in 2001.") is None
    m = find_name("Athens", "Athens International Airport serves the city of Athens.")
    assert m is not None and m.start == 48
    assert find_name("Philippines", "the Philippine Islands") is None
    assert find_name("United States", "he told us so") is None


@pytest.mark.parametrize("text", ["on 09/27/2003", "on 27.09.2003", "on September 27th, 2003",
                                  "on the 27th of September 2003", "on 2003-09-27"])
def test_dates(text):
    m = find_name("2003-09-27", text)
    assert m is not None and text[m.start:m.end].strip() in text


def test_parse_date():
    assert parse_date("2 May 1980") == "1980-05-02"
    assert parse_date("December 2008") == "2008-12"
    assert parse_date("1913") == "1913"
    assert parse_date("01-02-2003") is None  # January 2nd or 1st February
    assert parse_date("Houston") is None


def test_find_quote():
    text = "Checkout Service depends on\n   Pricing SDK. It is owned by \u201cCommerce\u201d."
    exact = find_quote("depends on\n   Pricing SDK", text)
    assert exact.exact and text[exact.start:exact.end] == "depends on\n   Pricing SDK"
    loose = find_quote("checkout service DEPENDS ON pricing sdk", text)
    assert not loose.exact and text[loose.start:loose.end] == "Checkout Service depends on\n   Pricing SDK"
    assert find_quote('owned by "Commerce"', text) is not None      # typographic quotes
    gap = find_quote("Checkout Service ... owned by", text)
    assert gap is not None and gap.how == "ellipsis"
    assert find_quote("depends on Payments API", text) is None
    assert find_quote("   ", text) is None


def test_literals():
    assert literal("1,000", "integer") == "1000"
    assert literal("12.0", "integer") == "12"
    assert literal("12.5", "integer") is None
    assert literal("4000 ft", "decimal") == "4000"
    assert literal("12 or 13", "decimal") is None
    assert literal("0-374-26131-8", "decimal") == "0-374-26131-8"  # an ISBN "number"
    assert literal("2 May 1980", "date") == "1980-05-02"
    assert literal("Houston", "date") is None
    assert literal("yes", "boolean") == "true" and literal("maybe", "boolean") is None
    assert literal("https://example.org/x", "anyURI") == "https://example.org/x"
    assert literal("not a uri", "anyURI") is None
    assert literal('"quoted"', "string") == "quoted"
