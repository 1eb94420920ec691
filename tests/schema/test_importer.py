"""``kgbuild schema import`` (RDFS/OWL ontology -> schema YAML) and ``kgbuild schema infer``
(graph -> schema YAML): the mapping, names, notes, determinism, formats, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO, SHARED
from rdflib import Graph

from kgbuild import load_schema
from kgbuild.project.pipeline import build
from kgbuild.cli.main import main
from kgbuild.schema.importer import import_ontology, infer_schema, sanitise
from kgbuild.schema.writer import schema_yaml

FOREIGN = REPO / "fixtures" / "foreign"
ONTOLOGY = FOREIGN / "lab-ontology.ttl"
TEXT2KG = SHARED / "text2kgbench" / "data" / "dbpedia_webnlg" / "ontologies"
HEAD = """@prefix ex: <http://example.org/v#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
"""


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def ontology(text: str) -> Graph:
    return Graph().parse(data=HEAD + text, format="turtle")


def test_lab_ontology_maps_classes_properties_inverses_unions_and_datatypes():
    draft = import_ontology(ONTOLOGY)
    d = draft.data
    assert (d["name"], d["namespace"], d["prefix"]) == ("lab_ontology", "http://example.org/vocab#", "ex")
    assert d["description"] == "Lab ontology: People, the organisations they work at, their papers and places."
    t = d["node_types"]
    assert t["Person"] == {"description": "A researcher.", "iri": "http://xmlns.com/foaf/0.1/Person"}
    assert t["University"] == {"parent": "Organisation"}  # the redundant second parent (Agent) dropped
    assert t["Organisation"]["parent"] == "Agent" and t["Paper"]["description"] == "A published paper."
    e = d["edge_types"]
    # the side with its own domain and range is stored, the other one is its inverse
    assert e["writtenBy"] == {"domain": "Paper", "range": "Person", "inverse": "authorOf"}
    assert e["worksAt"] == {"domain": "Person", "range": "Organisation", "inverse": "employs"}
    assert e["locatedIn"] == {"domain": ["City", "Organisation"], "range": ["City", "Country"],
                              "inverse": "locationOf", "transitive": True}
    assert e["knows"]["iri"] == "http://xmlns.com/foaf/0.1/knows"
    assert set(e) == {"advisorOf", "bornIn", "cites", "knows", "locatedIn", "worksAt", "writtenBy"}
    assert d["attributes"] == {"email": {"datatype": "string", "multiple": True},
                               "year": {"datatype": "string"}}  # functional: not multiple
    assert draft.warnings() == ["attributes.year: xsd:gYear has no schema datatype: read as string"]
    s = draft.schema()
    assert s.predicate("authorOf") == (s.edge_types["writtenBy"], True)
    assert s.edge_types["worksAt"].inverse_iri == "http://example.org/vocab#employs"


def test_written_yaml_loads_and_is_byte_identical_across_runs_and_hash_seeds(tmp_path):
    text = import_ontology(ONTOLOGY).to_yaml()
    assert text == import_ontology(ONTOLOGY).to_yaml()
    out = tmp_path / "lab.yaml"
    out.write_text(text)
    assert load_schema(out).type_by_iri["http://xmlns.com/foaf/0.1/Person"] == "Person"
    assert run("schema", "check", out).exit_code == 0
    texts = set()
    for seed in ("1", "2"):  # set iteration order of IRIs changes with the hash seed
        r = subprocess.run([sys.executable, "-m", "kgbuild.cli", "schema", "import", str(ONTOLOGY)],
                           capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        texts.add(r.stdout)
    assert texts == {text}


@pytest.mark.parametrize("fmt, suffix", [("xml", ".owl"), ("nt", ".nt"), ("json-ld", ".jsonld"),
                                         ("xml", ".txt")])
def test_any_rdflib_format_gives_the_same_schema(tmp_path, fmt, suffix):
    f = tmp_path / f"lab{suffix}"
    f.write_text(Graph().parse(ONTOLOGY).serialize(format=fmt))
    want = import_ontology(ONTOLOGY, name="lab", prefix="ex").data
    assert import_ontology(f, name="lab", prefix="ex").data == want


def test_names_are_sanitised_and_deduplicated_case_insensitively():
    g = ontology("""
    ex:City a owl:Class . ex:my-class a owl:Class . <http://example.org/v#1stPlace> a owl:Class .
    <http://example.org/v#Caf%C3%A9> a owl:Class . <http://example.org/v#Café> a owl:Class .
    ex:yes a owl:Class . <http://other.org/ns/city> a owl:Class .
    ex:city a owl:ObjectProperty ; rdfs:domain ex:City ; rdfs:range ex:City .
    <http://other.org/ns/City> a owl:ObjectProperty ; rdfs:domain ex:City ; rdfs:range ex:City .
    ex:null a owl:DatatypeProperty .
    """)
    draft = import_ontology(g, name="t")
    d = draft.data
    assert list(d["node_types"]) == ["Caf_C3_A9", "Cafe", "City", "city_2", "my_class", "x1stPlace", "yes"]
    assert d["node_types"]["city_2"]["iri"] == "http://other.org/ns/city"  # the main namespace first
    assert "iri" not in d["node_types"]["City"]
    assert d["node_types"]["my_class"] == {"iri": "http://example.org/v#my-class"}
    assert d["edge_types"]["city_3"]["iri"] == "http://example.org/v#city"
    assert d["edge_types"]["City_4"]["iri"] == "http://other.org/ns/City"
    assert "edge_types.city_3: named city_3: 'city' is taken by node type City (IRI http://example.org/v#city)" in \
        " ".join(draft.warnings())
    text = draft.to_yaml()
    assert "\n  'yes':" in text or '\n  "yes":' in text  # a YAML 1.1 boolean stays a string
    s = draft.schema()
    assert s.node_types["my_class"].iri == "http://example.org/v#my-class"
    assert yaml.safe_load(text)["attributes"] == {"null": {"datatype": "string", "multiple": True}}
    assert (sanitise("über-Größe"), sanitise("2x"), sanitise("--")) == ("uber_Gro_e", "x2x", "")


def test_parents_several_and_cycles_are_resolved_with_notes():
    g = ontology("""
    ex:A a owl:Class . ex:B a owl:Class . ex:C a owl:Class ; rdfs:subClassOf ex:B, ex:A .
    ex:X a owl:Class ; rdfs:subClassOf ex:Y . ex:Y a owl:Class ; rdfs:subClassOf ex:X .
    ex:Z a owl:Class ; rdfs:subClassOf ex:Undeclared, owl:Thing, [ a owl:Restriction ] .
    ex:p a owl:ObjectProperty .
    """)
    draft = import_ontology(g, name="t")
    t = draft.data["node_types"]
    assert t["C"]["parent"] == "A"  # the first by name, said so
    assert (t["X"].get("parent"), t["Y"].get("parent")) == ("Y", None)  # the cycle is broken once
    assert t["Z"]["parent"] == "Undeclared" and "Undeclared" in t
    notes = draft.warnings()
    assert "node_types.C: also rdfs:subClassOf B; kgbuild keeps one parent, the first by name: A" in notes
    assert "node_types.Y: rdfs:subClassOf X dropped: it would make a parent cycle" in notes
    assert any(n.startswith("node_types.Undeclared: not declared as a class") for n in notes)
    draft.schema()


def test_domains_and_ranges_missing_any_several_or_unsupported():
    g = ontology("""
    ex:A a owl:Class . ex:B a owl:Class ; rdfs:subClassOf ex:A . ex:C a owl:Class .
    ex:none a owl:ObjectProperty .
    ex:thing a owl:ObjectProperty ; rdfs:domain owl:Thing ; rdfs:range rdfs:Resource .
    ex:several a owl:ObjectProperty ; rdfs:domain ex:B, ex:C ; rdfs:range ex:C .
    ex:meet a owl:ObjectProperty ; rdfs:domain [ owl:intersectionOf (ex:A ex:C) ] ; rdfs:range ex:A .
    ex:union a owl:ObjectProperty ; rdfs:domain [ owl:unionOf (ex:B [ owl:unionOf (ex:C) ]) ] ;
        rdfs:range ex:A .
    """)
    draft = import_ontology(g, name="t")
    e, notes = draft.data["edge_types"], " | ".join(draft.warnings())
    roots = ["A", "C"]  # every type: its subtypes are included
    assert (e["none"]["domain"], e["none"]["range"]) == (roots, roots)
    assert (e["thing"]["domain"], e["thing"]["range"]) == (roots, roots)
    assert e["several"]["domain"] == ["B", "C"] and "several rdfs:domain values" in notes
    assert e["meet"]["domain"] == roots and "class expression other than a union" in notes
    assert e["union"]["domain"] == ["B", "C"]
    assert "edge_types.none: no rdfs:domain on none: every type (the root types)" in notes


def test_attributes_datatypes_and_literal_ranges():
    g = ontology("""
    ex:T a owl:Class .
    ex:n a owl:DatatypeProperty, owl:FunctionalProperty ; rdfs:range xsd:nonNegativeInteger .
    ex:d a owl:DatatypeProperty ; rdfs:range xsd:double . ex:b a owl:DatatypeProperty ; rdfs:range xsd:boolean .
    ex:day a owl:DatatypeProperty ; rdfs:range xsd:date . ex:at a owl:DatatypeProperty ; rdfs:range xsd:dateTime .
    ex:u a owl:DatatypeProperty ; rdfs:range xsd:anyURI . ex:dur a owl:DatatypeProperty ; rdfs:range xsd:duration .
    ex:mixed a owl:DatatypeProperty ; rdfs:range xsd:integer, xsd:date .
    ex:lit a rdf:Property ; rdfs:range rdfs:Literal .
    ex:objlit a owl:ObjectProperty ; rdfs:range xsd:string .
    ex:named a owl:ObjectProperty ; rdfs:range ex:Number .
    ex:link a owl:ObjectProperty ; rdfs:range ex:T .
    """)
    draft = import_ontology(g, name="t")
    a = {k: v["datatype"] for k, v in draft.data["attributes"].items()}
    assert a == {"at": "dateTime", "b": "boolean", "d": "decimal", "day": "date", "dur": "string",
                 "lit": "string", "mixed": "string", "n": "integer", "named": "decimal",
                 "objlit": "string", "u": "anyURI"}
    assert "multiple" not in draft.data["attributes"]["n"]
    assert draft.data["attributes"]["d"]["multiple"] is True
    notes = " | ".join(draft.warnings())
    assert "xsd:duration has no schema datatype" in notes and "several ranges (date, integer)" in notes
    assert "attributes.objlit: an object property whose range (string) is a datatype" in notes
    assert list(draft.data["edge_types"]) == ["link"] and "Number" not in draft.data["node_types"]


def test_degenerate_ontologies_still_give_loadable_schemas():
    no_classes = import_ontology(ontology("ex:p a owl:ObjectProperty ."), name="t")
    assert no_classes.data["node_types"] == {"Node": {"iri": "http://www.w3.org/2000/01/rdf-schema#Resource"}}
    assert no_classes.data["edge_types"]["p"] == {"domain": "Node", "range": "Node"}
    taxonomy = import_ontology(ontology("ex:A a owl:Class . ex:B a rdfs:Class ; rdfs:subClassOf ex:A ."),
                               name="t")
    assert taxonomy.data["edge_types"] == {"seeAlso": {"domain": "A", "range": "A",
                                                       "iri": "http://www.w3.org/2000/01/rdf-schema#seeAlso"}}
    reserved = import_ontology(ontology("""
        @prefix kg: <https://kgbuild.dev/ns#> . @prefix dcterms: <http://purl.org/dc/terms/> .
        kg:Assertion a owl:Class . ex:A a owl:Class . dcterms:identifier a owl:DatatypeProperty .
        ex:p a owl:ObjectProperty ; owl:inverseOf ex:q ; rdfs:domain ex:A ; rdfs:range ex:A ."""),
                               name="t")
    assert list(reserved.data["node_types"]) == ["A"] and reserved.data["attributes"] == {}
    assert reserved.data["edge_types"]["p"]["inverse"] == "q"
    assert sum("kgbuild's graph layout defines it" in n for n in reserved.warnings()) == 2
    for draft in (no_classes, taxonomy, reserved):
        draft.schema()


def test_writer_quotes_what_yaml_would_misread(tmp_path):
    data = {"name": "w", "namespace": "http://x.org/#",
            "description": 'a "quoted"\nline: with # and \u2028 sep, \x85 nel, \x07 bell and 🙂',
            "node_types": {"No": {"description": "true"}, "A": {}},
            "edge_types": {"on": {"domain": ["No", "A"], "range": "A"}}}
    text = schema_yaml(data, {"": ["first\nnote"], "node_types.A": ["about A"]}, ["header"])
    assert text.startswith("# header\n# Notes:\n# - first note\n")
    assert "  # about A\n  A: {}" in text
    f = tmp_path / "w.yaml"
    f.write_text(text, encoding="utf-8")
    s = load_schema(f)
    assert s.description == data["description"].strip()
    assert s.node_types["No"].description == "true" and s.edge_types["on"].domain == ("No", "A")


def test_cli_import_writes_a_checked_file_and_reports_notes(tmp_path):
    out = tmp_path / "lab.yaml"
    r = run("schema", "import", ONTOLOGY, "-o", out, "--name", "lab2", "--prefix", "lab")
    assert r.exit_code == 0, r.output
    assert "note: attributes.year: xsd:gYear" in r.stderr and f"wrote {out}: schema lab2" in r.stderr
    assert load_schema(out).prefix == "lab" and r.stdout == ""
    r = run("schema", "import", ONTOLOGY)
    assert r.exit_code == 0 and yaml.safe_load(r.stdout)["name"] == "lab_ontology"


def test_cli_import_and_infer_refuse_unreadable_input_in_one_line(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("this is @not turtle .")
    r = run("schema", "import", bad)
    assert r.exit_code == 2 and "bad.ttl: not readable as RDF (turtle:" in r.output
    assert len(r.output.strip().splitlines()) == 1
    empty = tmp_path / "ontology.json"
    empty.write_text(json.dumps({"concepts": [{"qid": "City"}]}))
    r = run("schema", "infer", empty)
    assert r.exit_code == 2 and "no RDF triples read" in r.output


# -- infer --------------------------------------------------------------------------------------
def test_infer_from_an_untyped_graph_gives_one_node_type():
    g = Graph().parse(data="""@prefix ex: <http://example.org/> .
    ex:a ex:knows ex:b ; ex:age 31 ; ex:score 2.5 . ex:b ex:knows ex:c ; ex:age 40 ; ex:score 3 ;
    ex:nick "bee", "b" ; ex:knows "not a node" .""", format="turtle")
    draft = infer_schema(g, name="people")
    d = draft.data
    assert d["namespace"] == "http://example.org/" and d["prefix"] == "ex"
    assert d["node_types"] == {"Node": {"description": "Any node without another type.",
                                        "iri": "http://www.w3.org/2000/01/rdf-schema#Resource"}}
    assert d["edge_types"] == {"knows": {"domain": "Node", "range": "Node"}}
    assert d["attributes"] == {"age": {"datatype": "integer"}, "score": {"datatype": "decimal"},
                               "nick": {"datatype": "string", "multiple": True}}
    notes = draft.warnings()
    assert "edge_types.knows: also has 1 literal value(s), which are not edges and are not read" in notes
    assert any(n.startswith("node_types.Node: 3 node(s) have no rdf:type") for n in notes)


def test_infer_from_kgbuilds_own_graph_walks_like_the_software_schema(tmp_path):
    ttl = tmp_path / "g.ttl"
    build([FIXTURE_CATALOG], ttl, timestamp=0, validate=False, store=None)
    out = tmp_path / "inferred.yaml"
    r = run("schema", "infer", ttl, "-o", out)
    assert r.exit_code == 0, r.output
    s = load_schema(out)
    assert s.namespace == "https://kgbuild.dev/schema/software#" and s.prefix == "sw"
    assert "Service" in s.node_types and "Assertion" not in s.node_types
    assert "Group" in s.edge_types["ownedBy"].range and not s.edge_types["ownedBy"].inverse
    assert s.attributes["tag"].multiple and "identifier" not in s.attributes
    answers = []
    for schema, path in (("software", "ownedBy/ownerOf"), (out, "ownedBy/ownedBy:in")):
        r = run("traverse", "--graph", ttl, "--schema", schema, "--seed", "api:default/payments-api",
                "--path", path, "--no-cap", "--format", "json")
        assert r.exit_code == 0, r.output
        answers.append(json.loads(r.stdout)["answers"])
    assert answers[0] == answers[1] and len(answers[0]) >= 2
    assert infer_schema(ttl).to_yaml() == out.read_text()


# -- real ontologies ------------------------------------------------------------------------------
@pytest.mark.corpus
def test_every_text2kgbench_ontology_imports_to_a_loadable_schema_with_its_relations(tmp_path):
    files = sorted((TEXT2KG / "owl").glob("*.ttl"))
    assert len(files) == 19
    for f in files:
        draft = import_ontology(f)
        out = tmp_path / f"{f.stem}.yaml"
        out.write_text(draft.to_yaml())
        s = load_schema(out)
        # the JSON form of the same ontology: every concept a type, every relation an edge
        # type linking its domain and range types, or an attribute (a literal range)
        spec = json.loads(next(TEXT2KG.glob(f"{f.stem.split('_', 2)[1]}_*_ontology.json")).read_text())
        by_local = {t.iri.rsplit("#", 1)[1]: t.name for t in s.node_types.values()}
        edges = {e.iri.rsplit("#", 1)[1]: e for e in s.edge_types.values()}
        attrs = {a.iri.rsplit("#", 1)[1] for a in s.attributes.values()}
        assert {c["qid"] for c in spec["concepts"]} <= set(by_local), f
        for rel in spec["relations"]:
            assert rel["pid"] in edges or rel["pid"] in attrs, (f, rel)
            e = edges.get(rel["pid"])
            if e is not None and rel["domain"] in by_local:
                assert any(s.is_a(by_local[rel["domain"]], t) for t in e.domain), (f, rel, e.domain)
            if e is not None and rel["range"] in by_local:
                assert by_local[rel["range"]] in e.range, (f, rel, e.range)
    assert run("schema", "check", out).exit_code == 0


def test_iris_without_a_usable_namespace_get_a_kgbuild_namespace_and_explicit_iris():
    g = Graph().parse(data="""@prefix owl: <http://www.w3.org/2002/07/owl#> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    <urn:x:A> a owl:Class . <urn:x:link> a owl:ObjectProperty ; rdfs:domain <urn:x:A> ;
    rdfs:range <urn:x:A> .""", format="turtle")
    draft = import_ontology(g, name="urns")
    assert draft.data["namespace"] == "https://kgbuild.dev/schema/urns#"
    assert draft.data["node_types"] == {"A": {"iri": "urn:x:A"}}
    assert draft.data["edge_types"]["link"]["iri"] == "urn:x:link"
    assert any("'urn:x:A' is not an IRI ending in '#' or '/'" in n for n in draft.warnings())
    assert draft.schema().type_by_iri == {"urn:x:A": "A"}
