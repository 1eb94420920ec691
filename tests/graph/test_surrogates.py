"""Lone surrogates (JSON's ``"\\ud800"``, an undecodable byte) are carried as the escape
``\\ud800``, the same way wherever they occur, and never break a hash, an IRI or a literal."""

from kgbuild import Assertion, KnowledgeGraph
from kgbuild.graph.model import lit, node_iri, safe_text, source_iri


def test_safe_text_escapes_only_surrogates():
    assert safe_text("plain ascii") == "plain ascii"
    assert safe_text("déjà vu \u2028 ✓") == "déjà vu \u2028 ✓"
    assert safe_text("a\ud800b\udfff") == "a\\ud800b\\udfff"
    assert safe_text("\ud800") != safe_text("\ud801")  # two surrogates stay two names
    assert safe_text(safe_text("x\udcff")) == safe_text("x\udcff")


def test_iris_and_literals_of_surrogates_are_utf8():
    for term in (node_iri("pkg:npm/x\ud800"), source_iri("dir/\udcff.json"), lit("t\udfff")):
        term.encode("utf-8")  # strict: raises on a surrogate
    assert node_iri("pkg:npm/x\ud800") == node_iri("pkg:npm/x\\ud800")


def test_an_assertion_with_surrogates_has_a_key_and_escaped_fields(schema):
    a = Assertion("pkg:npm/a\ud800", "dependsOn", "pkg:npm/b", "bom\udcff.json", "cyclonedx",
                  "1970-01-01T00:00:00Z", pointer="/dependencies/0/\ud800",
                  evidence="\"a\ud800\"", qualifiers=frozenset({"dev\udfff"}))
    assert len(a.key) == 24
    assert a.subject == "pkg:npm/a\\ud800" and a.source == "bom\\udcff.json"
    assert a.pointer.endswith("\\ud800") and a.qualifiers == {"dev\\udfff"}
    same = Assertion("pkg:npm/a\\ud800", "dependsOn", "pkg:npm/b", "bom\\udcff.json", "cyclonedx",
                     "1970-01-01T00:00:00Z", pointer="/dependencies/0/\\ud800")
    assert same.key == a.key  # escaped or not, one assertion


def test_a_graph_with_surrogates_serialises(schema):
    kg = KnowledgeGraph(schema)
    kg.add_node("pkg:npm/a\ud800", "Library", "A\ud800", source="x.json")
    kg.add_node("pkg:npm/b", "Library", "B")
    kg.add_assertion(Assertion("pkg:npm/a\ud800", "dependsOn", "pkg:npm/b", "x.json", "npm",
                               "1970-01-01T00:00:00Z", line=1))
    assert set(kg.nodes) == {"pkg:npm/a\\ud800", "pkg:npm/b"}
    assert kg.nodes["pkg:npm/a\\ud800"].label == "A\\ud800"
    text = "\n".join(" ".join(t) for t in kg.triples())
    text.encode("utf-8")
    assert [a.subject for a in kg.assertions.values()] == ["pkg:npm/a\\ud800"]
