"""Endpoints that name something, found in the quote's own sentence: a quote about other
entities is no evidence (a hostile server's answers), a referring expression ("the film",
"it") is no entity unless the chunk before it or the context header resolves it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO

from kgbuild import load_schema
from kgbuild.extract.text.endpoints import referring, sentence_span
from kgbuild.extract.text.verify import TextChunk, verify_relations

PROSE = (REPO / "fixtures" / "prose" / "checkout-design.md").read_text()
T2KG = REPO.parent / "shared" / "corpora" / "text2kgbench" / "data" / "dbpedia_webnlg"


@pytest.fixture(scope="module")
def software():
    return load_schema("software")


@pytest.fixture(scope="module")
def film():
    from kgbuild.schema.loader import parse_schema
    return parse_schema({
        "name": "film", "namespace": "https://example.org/film#",
        "node_types": {"Film": {}, "Person": {}, "Award": {}, "Company": {}},
        "edge_types": {"director": {"domain": "Film", "range": "Person"},
                       "castMember": {"domain": "Film", "range": "Person"},
                       "producer": {"domain": "Film", "range": "Person"},
                       "nominatedFor": {"domain": "Film", "range": "Award"},
                       "owner": {"domain": "Company", "range": "Person"}}})


def one(schema, rel, text, **chunk):
    return verify_relations([rel], TextChunk(text, "d.md", "d.md#c1", 0, **chunk), schema)


@pytest.mark.parametrize("name,expected", [
    ("it", "pronoun"), ("They", "pronoun"), ("the film", "film"), ("The short", "short"),
    ("the seven and a half minute film", "film"), ("this company", "company"),
    ("The 3Arena", None), ("The Beatles", None), ("The Man Who Knew Too Much", None),
    ("Funny Lady", None), ("the 1975 film", None), ("Pricing SDK", None), ("US", None)])
def test_referring_expressions(name, expected):
    assert referring(name) == expected


# -- a quote about other entities (what a hostile server answers) ----------------------------------

@pytest.mark.parametrize("subject,predicate,obj", [
    ("Billing Worker", "dependsOn", "Pricing SDK"),
    ("Checkout Service", "dependsOn", "Ledger Store"),
    ("Billing Worker", "ownedBy", "Commerce Platform")])
def test_a_quote_about_other_entities_is_no_evidence(software, subject, predicate, obj):
    text = ("Billing Worker sends invoices; Ledger Store keeps the books. " + PROSE)
    rel = {"subject": subject, "predicate": predicate, "object": obj,
           "evidence": "Checkout Service depends on Pricing SDK"}
    result = one(software, rel, text)
    assert not result.accepted
    [rej] = result.rejected
    if obj == "Commerce Platform":  # neither end is in the quote
        assert rej.reason == "evidence-not-found"
    else:
        assert rej.reason in ("subject-not-grounded", "object-not-grounded")
        assert "named elsewhere in the chunk, not in the quote's sentence" in rej.detail


def test_the_matching_quote_is_accepted(software):
    rel = {"subject": "Checkout Service", "predicate": "dependsOn", "object": "Pricing SDK",
           "evidence": "Checkout Service depends on Pricing SDK"}
    [edge] = one(software, rel, PROSE).accepted
    assert edge.grounding == ("quote", "quote") and edge.qualifiers == ()


def test_a_quote_cut_mid_sentence_stands_for_its_sentence(software):
    rel = {"subject": "Payments API", "predicate": "ownedBy", "object": "Commerce Platform",
           "evidence": "is owned by Commerce Platform"}  # also in the Pricing SDK sentence
    [edge] = one(software, rel, PROSE).accepted
    assert edge.subject_label == "Payments API"
    a, b = edge.span
    assert PROSE[a:b] == "is owned by Commerce Platform"
    assert PROSE[a - len("Payments API "):a] == "Payments API "  # the second occurrence


def test_sentence_spans_keep_abbreviations():
    text = "He joined the U.S. Army in 1950. Dr. Smith left."
    assert sentence_span(text, 20, 25) == (0, 33)
    assert text[slice(*sentence_span(text, 40, 44))] == "Dr. Smith left."


# -- referring expressions ---------------------------------------------------------------------------

@pytest.mark.parametrize("subject", ["the film", "The short", "the seven and a half minute film",
                                     "It"])
def test_a_referring_subject_with_nothing_to_refer_to_is_rejected(film, subject):
    text = f"{subject[0].upper()}{subject[1:]} was directed by Herbert Ross."
    result = one(film, {"subject": subject, "predicate": "director", "object": "Herbert Ross",
                        "evidence": text}, text)
    [rej] = result.rejected
    assert rej.reason == "anaphoric-endpoint" and "points back" in rej.detail


def test_a_referring_subject_resolves_to_the_name_before_it(film):
    text = "Funny Lady is a 1975 musical. The film was directed by Herbert Ross."
    [edge] = one(film, {"subject": "the film", "predicate": "director", "object": "Herbert Ross",
                        "evidence": "The film was directed by Herbert Ross."}, text).accepted
    assert edge.subject_label == "Funny Lady" and edge.grounding == ("chunk", "quote")


def test_a_noun_naming_another_type_is_not_resolved(film):
    text = "Herbert Ross directed it. The company was owned by Ray Stark."
    result = one(film, {"subject": "the company", "predicate": "director", "object": "Ray Stark",
                        "evidence": "The company was owned by Ray Stark."}, text)
    [rej] = result.rejected
    assert rej.reason == "anaphoric-endpoint" and "cannot stand for a Film" in rej.detail


# -- the context header --------------------------------------------------------------------------------

def test_the_header_grounds_a_subject_the_sentence_refers_to(film):
    text = "The film was additionally nominated for the Golden Globe Award."
    rel = {"subject": "Funny Lady", "predicate": "nominatedFor", "object": "Golden Globe Award",
           "evidence": text}
    assert one(film, rel, text).rejected[0].reason == "subject-not-grounded"  # no header
    [edge] = one(film, rel, text, title="Funny Lady", section=("Awards",)).accepted
    assert edge.grounding == ("header", "quote")
    assert edge.header == "Funny Lady > Awards"
    assert edge.qualifiers == ("grounding:header", "header:Funny Lady > Awards")
    assert edge.confidence < 1.0


def test_the_header_resolves_a_referring_subject(film):
    text = "The film was additionally nominated for the Golden Globe Award."
    rel = {"subject": "The film", "predicate": "nominatedFor", "object": "Golden Globe Award",
           "evidence": text}
    [edge] = one(film, rel, text, title="Funny Lady").accepted
    assert edge.subject_label == "Funny Lady" and edge.grounding[0] == "header"


def test_a_file_name_is_no_header(film):
    text = "The film was additionally nominated for the Golden Globe Award."
    rel = {"subject": "The film", "predicate": "nominatedFor", "object": "Golden Globe Award",
           "evidence": text}
    assert one(film, rel, text, title="d.md").rejected[0].reason == "anaphoric-endpoint"


def test_a_header_naming_something_else_grounds_nothing(film):
    text = "The film was additionally nominated for the Golden Globe Award."
    rel = {"subject": "Funny Girl", "predicate": "nominatedFor", "object": "Golden Globe Award",
           "evidence": text}
    assert not one(film, rel, text, title="Funny Lady").accepted


# -- real sentences --------------------------------------------------------------------------------

@pytest.mark.corpus
def test_no_referring_end_is_accepted_on_the_visible_split():
    """Every response triple of the visible split whose end is a referring expression is
    rejected (a lone sentence resolves none of them)."""
    from kgbuild.schema.importer import import_ontology
    seen = 0
    for owl in sorted((T2KG / "ontologies" / "owl").glob("ont_*.ttl"))[:6]:
        key = owl.stem.removeprefix("ont_")
        schema = import_ontology(owl).schema()
        sents = {json.loads(line)["id"]: json.loads(line)["sent"] for line in
                 (T2KG / "test" / f"ont_{key}_test.jsonl").read_text().split("\n") if line}
        path = T2KG / "baselines" / "Vicuna-13B" / "llm_responses" / f"{key}_Vicuna13B_responses.jsonl"
        for line in path.read_text().split("\n"):
            if not line.strip():
                continue
            d = json.loads(line)
            for t in d.get("triples") or []:
                if len(t) == 3 and (referring(str(t[0])) or referring(str(t[2]))):
                    seen += 1
                    rel = {"subject": t[0], "predicate": t[1], "object": t[2],
                           "evidence": sents[d["id"]]}
                    assert not one(schema, rel, sents[d["id"]]).accepted, t
    assert seen >= 1


@pytest.mark.parametrize("obj,text,longer", [
    ("Rio de Janeiro", "Acme served the Rio de Janeiro Military Police for years.",
     "Rio de Janeiro Military Police"),
    ("Japan", "Acme was bought by Technos Japan Corp. in 1987.", "Technos Japan Corp.")])
def test_a_name_inside_a_longer_name_is_no_mention_and_the_reason_says_so(obj, text, longer):
    from kgbuild.schema.loader import parse_schema
    s = parse_schema({"name": "x", "namespace": "https://e.org/x#",
                      "node_types": {"Org": {}, "Place": {}},
                      "edge_types": {"locatedIn": {"domain": "Org", "range": "Place"}}})
    [rej] = one(s, {"subject": "Acme", "predicate": "locatedIn", "object": obj,
                    "evidence": text}, text).rejected
    assert rej.reason == "object-not-grounded"
    assert f"only inside the longer name {longer!r}" in rej.detail
