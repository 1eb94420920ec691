"""The optional ``cues:`` list of an edge type or attribute: loaded, checked, written, and
filled by ``schema import`` from rdfs:label and skos:altLabel."""

from __future__ import annotations

import pytest

from kgbuild.schema.importer import import_ontology
from kgbuild.schema.loader import parse_schema
from kgbuild.errors import SchemaError
from kgbuild.extract.text.verify import TextChunk, VerifyOptions, verify_relations

BASE = {"name": "f", "namespace": "https://example.org/f#",
        "node_types": {"Film": {}, "Person": {}}}


def test_cues_are_loaded_and_kept_in_the_digest():
    s = parse_schema({**BASE, "edge_types": {"castMember": {
        "domain": "Film", "range": "Person", "cues": ["starring", "stars", "starring"]}}})
    assert s.edge_types["castMember"].cues == ("starring", "stars")
    assert s.to_dict()["edge_types"]["castMember"]["cues"] == ["starring", "stars"]
    plain = parse_schema({**BASE, "edge_types": {"castMember": {"domain": "Film",
                                                                "range": "Person"}}})
    assert plain.digest != s.digest


@pytest.mark.parametrize("bad", [{"x": 1}, [["nested"]], [""], ["a\nb"], ["x" * 201]])
def test_bad_cues_are_refused(bad):
    with pytest.raises(SchemaError, match="cues must be a list"):
        parse_schema({**BASE, "edge_types": {"castMember": {"domain": "Film", "range": "Person",
                                                            "cues": bad}}})


def test_a_cue_lets_the_quote_state_the_relation():
    s = parse_schema({**BASE, "edge_types": {
        "castMember": {"domain": "Film", "range": "Person", "cues": ["features"]},
        "producer": {"domain": "Film", "range": "Person"}}})
    text = "Funny Lady features Omar Sharif."
    rel = {"subject": "Funny Lady", "predicate": "castMember", "object": "Omar Sharif",
           "evidence": text}
    [edge] = verify_relations([rel], TextChunk(text, "d"), s,
                              options=VerifyOptions(relation_cues="reject")).accepted
    assert edge.confidence == 1.0


def test_import_fills_cues_from_labels(tmp_path):
    owl = tmp_path / "o.ttl"
    owl.write_text("""@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix ex: <https://example.org/m#> .
ex:Film a owl:Class . ex:Human a owl:Class .
ex:P161 a owl:ObjectProperty ; rdfs:label "cast member"@en ; skos:altLabel "starring"@en,
    "actor"@en, "acteur"@fr ; rdfs:comment "actor in the subject production"@en ;
    rdfs:domain ex:Film ; rdfs:range ex:Human .
ex:P364 a owl:ObjectProperty ; rdfs:label "original language of film or TV show" ;
    rdfs:domain ex:Film ; rdfs:range ex:Human .
""")
    draft = import_ontology(owl)
    schema = draft.schema()
    assert schema.edge_types["P161"].cues == ("cast member", "actor", "starring")
    assert "cues: [cast member, actor, starring]" in draft.to_yaml().replace('"', "")
    # a label of any length names the predicate
    text = "Funny Lady is an English film with Omar Sharif."
    rel = {"subject": "Funny Lady", "predicate": "original language of film or TV show",
           "object": "Omar Sharif", "evidence": text}
    out = verify_relations([rel], TextChunk(text, "d"), schema)
    assert not [r for r in out.rejected if r.reason == "unknown-predicate"]
