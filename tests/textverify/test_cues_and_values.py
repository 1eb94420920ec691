"""Relation cues (the quote's sentence must say *that* relation) and values as stated."""

from __future__ import annotations

import pytest

from kgbuild.schema.loader import parse_schema
from kgbuild.extract.text.cues import learn_lexicon, root, same_root
from kgbuild.extract.text.grounding import find_name, stated_date
from kgbuild.extract.text.verify import TextChunk, VerifyOptions, verify_relations
from kgbuild.graph.model import attribute_term


@pytest.fixture(scope="module")
def film():
    return parse_schema({
        "name": "film", "namespace": "https://example.org/film#",
        "node_types": {"Film": {}, "Person": {}, "Country": {}},
        "edge_types": {"director": {"domain": "Film", "range": "Person"},
                       "castMember": {"domain": "Film", "range": "Person"},
                       "producer": {"domain": "Film", "range": "Person"},
                       "country_2": {"domain": "Film", "range": "Country"}},
        "attributes": {"releaseDate": {"datatype": "date"}}})


def verify(schema, s, p, o, text, **opts):
    rel = {"subject": s, "predicate": p, "object": o, "evidence": text}
    return verify_relations([rel], TextChunk(text, "d.md", "d.md#c1"), schema,
                            options=VerifyOptions(**opts))


@pytest.mark.parametrize("a,b", [("director", "directed"), ("directs", "direction"),
                                 ("producer", "produced"), ("production", "produce"),
                                 ("starring", "stars"), ("composer", "composition"),
                                 ("wrote", "writer"), ("born", "birth"), ("led", "leader"),
                                 ("located", "location"), ("citizenship", "citizen")])
def test_word_forms_share_a_root(a, b):
    assert same_root(root(a), root(b))


@pytest.mark.parametrize("a,b", [("star", "start"), ("part", "party"), ("direct", "dire")])
def test_unrelated_words_do_not(a, b):
    assert not same_root(root(a), root(b))


TEXT = "Funny Lady was produced by Ray Stark and directed by Herbert Ross."


def test_produced_by_is_no_cast_member(film):
    """The issue's case: both ends named, the quote verbatim, the relation another one."""
    [rej] = verify(film, "Funny Lady", "castMember", "Ray Stark", TEXT).rejected
    assert rej.reason == "no-relation-cue" and "producer" in rej.detail
    [rej] = verify(film, "Funny Lady", "castMember", "Herbert Ross", TEXT).rejected
    assert rej.reason == "no-relation-cue"


def test_the_stated_relations_pass(film):
    for p, o in (("producer", "Ray Stark"), ("director", "Herbert Ross")):
        [edge] = verify(film, "Funny Lady", p, o, TEXT).accepted
        assert edge.confidence == 1.0


def test_reject_lower_and_off(film):
    text = "Funny Lady features Omar Sharif."
    assert verify(film, "Funny Lady", "castMember", "Omar Sharif", text,
                  relation_cues="reject").rejected[0].reason == "no-relation-cue"
    [low] = verify(film, "Funny Lady", "castMember", "Omar Sharif", text,
                   relation_cues="lower").accepted
    [default] = verify(film, "Funny Lady", "castMember", "Omar Sharif", text).accepted
    [off] = verify(film, "Funny Lady", "castMember", "Omar Sharif", text,
                   relation_cues="off").accepted
    assert low.confidence == default.confidence == pytest.approx(off.confidence - 0.2)
    assert any(n.startswith("no relation cue") for n in low.notes)


def test_a_type_named_relation_needs_no_cue(film):
    """'country' with range Country: English states it by the object ("from Italy")."""
    [edge] = verify(film, "Funny Lady", "country_2", "United States",
                    "Funny Lady is a musical from the United States.",
                    relation_cues="reject").accepted
    assert edge.predicate == "country_2"


def test_a_lexicon_learned_elsewhere_gives_more_cues(film):
    examples = [("birthPlace", f"{n} was born in {c}.", (0, len(n)),
                 (len(n) + 13, len(n) + 13 + len(c)))
                for n, c in [("Ann", "Rome"), ("Bob", "Oslo"), ("Cy", "Lima"), ("Di", "Kyiv")]]
    examples += [("club", f"{n} plays for {c}.", (0, len(n)), (len(n) + 15, len(n) + 15 + len(c)))
                 for n, c in [("Ann", "Roma"), ("Bob", "Ajax")]]
    lex = learn_lexicon(examples, min_count=3, min_share=0.5, min_lift=1.2)
    assert "birth" not in lex.get("birth", ())  # "born" is the word's own root: not listed
    assert lex.get("club") is None  # seen twice: not enough
    text = "Rex was raised in Oslo."
    schema = parse_schema({"name": "p", "namespace": "https://example.org/p#",
                           "node_types": {"Person": {}, "Place": {}},
                           "edge_types": {"birthPlace": {"domain": "Person", "range": "Place"}}})
    assert verify(schema, "Rex", "birthPlace", "Oslo", text,
                  relation_cues="reject").rejected[0].reason == "no-relation-cue"
    raised = learn_lexicon([("birthPlace", f"{n} was raised in {c}.", (0, len(n)),
                             (len(n) + 15, len(n) + 15 + len(c)))
                            for n, c in [("Ann", "Rome"), ("Bob", "Oslo"), ("Cy", "Lima")]]
                           + [("club", "Al plays for Roma.", (0, 2), (13, 17))],
                           min_count=3, min_share=0.5, min_lift=1.2)
    assert "rais" in raised["birth"]
    assert verify(schema, "Rex", "birthPlace", "Oslo", text, relation_cues="reject",
                  lexicon=tuple(raised.items())).accepted


# -- values as stated -----------------------------------------------------------------------------

def test_a_date_claimed_finer_than_stated_is_kept_at_the_stated_precision(film):
    text = "Funny Lady, a 1949 serial, ran for weeks."
    [value] = verify(film, "Funny Lady", "releaseDate", "01 January 1949", text).accepted
    assert value.object_literal == "1949"
    assert any("'01 January 1949' stated as 1949" in n for n in value.notes)
    assert attribute_term(film, "releaseDate", "1949")[1].endswith(
        "<http://www.w3.org/2001/XMLSchema#gYear>")
    assert attribute_term(film, "releaseDate", "1949-05")[1].endswith("gYearMonth>")
    assert attribute_term(film, "releaseDate", "1949-05-02")[1].endswith("#date>")


def test_a_month_stated_keeps_the_month():
    m = find_name("1949-05-03", "released in May 1949 it")
    assert m.how == "date-stated"
    assert stated_date("released in May 1949 it"[m.start:m.end]) == "1949-05"


def test_another_year_is_not_the_date():
    assert find_name("01 January 1950", "a 1949 serial") is None
    assert find_name("01 January 1949", "about 1949.5 units") is None
