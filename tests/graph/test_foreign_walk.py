"""Walking a graph kgbuild did not build (fixtures/foreign/lab.nt) with a hand-written, an
imported and an inferred schema; every answer is checked against a reference walk over the
raw triples (plain set iteration) and a SPARQL property path, both independent of kgbuild."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import REPO
from rdflib import Graph, Literal
from rdflib.namespace import DCTERMS

from kgbuild.cli.main import main
from kgbuild.schema.importer import import_ontology, infer_schema

FOREIGN = REPO / "fixtures" / "foreign"
LAB = FOREIGN / "lab.nt"
EX, FOAF = "http://example.org/vocab#", "http://xmlns.com/foaf/0.1/"

# the reference's own reading of the vocabulary: name -> (stored predicate IRI, inverse IRI)
PAIRS = {"worksAt": (EX + "worksAt", EX + "employs"), "authorOf": (EX + "authorOf", EX + "writtenBy"),
         "cites": (EX + "cites", EX + "citedBy"), "advisorOf": (EX + "advisorOf", EX + "advisedBy"),
         "locatedIn": (EX + "locatedIn", EX + "locationOf"), "bornIn": (EX + "bornIn", None),
         "knows": (FOAF + "knows", None)}
NAMES = {**{k: (k, False) for k in PAIRS},
         **{local: (k, True) for k, (_, inv) in PAIRS.items() if inv for local in [inv[len(EX):]]}}


@pytest.fixture(scope="module")
def raw():
    return Graph().parse(LAB, format="nt")


def ids(g: Graph) -> dict:
    return {s: str(o) for s, o in g.subject_objects(DCTERMS.identifier)}


def node(g: Graph, node_id: str):
    for s, i in ids(g).items():
        if i == node_id:
            return s
    return next(s for s in g.subjects() if str(s) == node_id)


def reference_walk(g: Graph, seed: str, path: str, inverses: bool = True) -> list[str]:
    """End nodes of every walk (SPARQL sequence path semantics), seed left out, as IDs. With
    ``inverses``, a triple using an inverse IRI is the stored edge flipped; without, every
    predicate is its own edge type (what an inferred schema sees)."""
    edges = set()
    for s, p, o in g:
        if isinstance(o, Literal):
            continue
        for name, (stored, inverse) in PAIRS.items():
            if str(p) == stored:
                edges.add((s, name, o))
            elif inverses and str(p) == inverse:
                edges.add((o, name, s))
            elif not inverses and str(p) == inverse:
                edges.add((s, inverse[len(EX):], o))
    current = {node(g, seed)}
    for step in path.split("/"):
        name, _, direction = step.partition(":")
        direction = direction or "out"
        stored, flipped = NAMES[name] if inverses else (name, False)
        dirs = {"out": ["out"], "in": ["in"], "both": ["out", "in"]}[direction]
        if flipped:
            dirs = [{"out": "in", "in": "out"}[d] for d in dirs]
        current = {o for s, p, o in edges if p == stored and s in current and "out" in dirs} | \
                  {s for s, p, o in edges if p == stored and o in current and "in" in dirs}
    known = ids(g)
    return sorted(known.get(n, str(n)) for n in current if n != node(g, seed))


def sparql_walk(g: Graph, seed: str, path: str) -> list[str]:
    """The same question as a SPARQL 1.1 property path (stored or inverse IRI either way)."""
    parts = []
    for step in path.split("/"):
        name, _, direction = step.partition(":")
        stored, flipped = NAMES[name]
        fwd, inv = PAIRS[stored]
        forward = f"<{fwd}>" + (f"|^<{inv}>" if inv else "")
        backward = f"^<{fwd}>" + (f"|<{inv}>" if inv else "")
        direction = direction or "out"
        if flipped:
            direction = {"out": "in", "in": "out", "both": "both"}[direction]
        parts.append({"out": f"({forward})", "in": f"({backward})",
                      "both": f"({forward}|{backward})"}[direction])
    q = f"""SELECT DISTINCT ?x ?id WHERE {{ <{node(g, seed)}> {'/'.join(parts)} ?x .
            OPTIONAL {{ ?x <{DCTERMS.identifier}> ?id }} FILTER (?x != <{node(g, seed)}>) }}"""
    return sorted(str(row.id) if row.id is not None else str(row.x) for row in g.query(q))


QUESTIONS = [  # (seed, path, expected answers) -- the expectations are checked by hand too
    ("w3", "authorOf:in/worksAt/employs", ["p3", "p5"]),  # colleagues of w3's author
    ("o1", "employs/authorOf/cites", ["w1"]),  # papers cited by Northfield's papers
    ("http://example.org/person/6", "worksAt/locatedIn/locatedIn", ["k2"]),  # Fay's employer's country
    ("p1", "advisorOf/authorOf/citedBy", ["w5"]),  # papers citing Ada's advisees' papers
    ("k1", "locationOf/locationOf/employs", ["p1", "p2", "p3", "p5"]),  # people working in Freedonia
    ("p1", "knows:in/bornIn", ["c1"]),  # where the people who know Ada were born
    ("http://example.org/person/6", "advisedBy/worksAt", ["o2"]),
    ("w1", "citedBy/citedBy/writtenBy", ["p4", "p5"]),  # authors of second-order citers
    ("w6", "cites:both/writtenBy", ["p4", "p5"]),
    ("p2", "bornIn/bornIn:in/authorOf/cites:in", ["w4", "w6"]),  # via Eli, born in Harbor City too
]


@pytest.fixture(scope="module")
def schemas(tmp_path_factory):
    d = tmp_path_factory.mktemp("schemas")
    imported = d / "imported.yaml"
    imported.write_text(import_ontology(FOREIGN / "lab-ontology.ttl").to_yaml())
    return {"hand-written": FOREIGN / "lab-schema.yaml", "imported": imported}


def walk(schema, seed, path, graph=LAB):
    r = CliRunner().invoke(main, ["traverse", "--graph", str(graph), "--schema", str(schema),
                                  "--seed", seed, "--path", path, "--no-cap", "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout), r


@pytest.mark.parametrize("which", ["hand-written", "imported"])
@pytest.mark.parametrize("seed, path, expected", QUESTIONS)
def test_multi_hop_answers_match_the_reference_walks(raw, schemas, which, seed, path, expected):
    assert reference_walk(raw, seed, path) == expected
    assert sparql_walk(raw, seed, path) == expected
    data, r = walk(schemas[which], seed, path)
    assert r.exit_code == 0 and data["abstain"] is None
    assert data["answers"] == expected


def test_the_imported_schema_types_every_node_like_the_hand_written_one(schemas):
    from kgbuild import load_schema
    from kgbuild.graph.rdf import from_rdf

    g = Graph().parse(LAB, format="nt")
    graphs = {k: from_rdf(g, load_schema(v), problems := []) for k, v in schemas.items()}
    assert problems == []
    types = {k: {n.id: n.type for n in kg.nodes.values()} for k, kg in graphs.items()}
    assert types["imported"] == types["hand-written"] and len(types["imported"]) == 20
    assert types["imported"]["o1"] == "University"  # typed University and Organisation
    edges = {k: set(kg.edges()) for k, kg in graphs.items()}
    flip = {"writtenBy": "authorOf"}  # the ontology stores that pair the other way round
    assert {(o, flip[p], s) if p in flip else (s, p, o) for s, p, o in edges["imported"]} \
        == edges["hand-written"]
    assert len(edges["hand-written"]) == 38


def test_evidence_of_a_reified_assertion_is_reported(schemas):
    data, _ = walk(schemas["hand-written"], "w1", "authorOf:in")
    assert data["answers"] == ["p1"]
    (edge,) = data["edges"]
    (a,) = edge["assertions"]
    assert a["evidence"] == "Ada Moreau wrote Sparse graph walks." and a["confidence"] == 0.9
    assert a["source"] == "http://example.org/docs/ada-cv.txt"


INFERRED = [  # an inferred schema knows no inverses: each predicate is its own edge type
    ("w3", "authorOf:in/worksAt/worksAt:in", ["p3"]),  # p5's job is stated as ex:employs
    ("w3", "authorOf:in/worksAt/employs", ["p5"]),
    ("k1", "locatedIn:in/locatedIn:in/worksAt:in", ["p1", "p2", "p3"]),  # not p5 (ex:employs)
    ("p1", "knows:in/bornIn", ["c1"]),
    ("w1", "cites:in/cites:in/authorOf:in", ["p4"]),
]


@pytest.mark.parametrize("seed, path, expected", INFERRED)
def test_an_inferred_schema_walks_the_predicates_as_used(raw, tmp_path, seed, path, expected):
    inferred = tmp_path / "inferred.yaml"
    inferred.write_text(infer_schema(LAB).to_yaml())
    assert reference_walk(raw, seed, path, inverses=False) == expected
    data, r = walk(inferred, seed, path)
    assert data["answers"] == expected, r.output
    # org/1 is typed University and Organisation, unrelated without the ontology: one warning
    assert r.stderr.count("warning:") == 1 and "<http://example.org/org/1>" in r.stderr


def test_walking_with_the_wrong_schema_abstains_and_says_nothing_matched(schemas):
    data, r = walk("software", "w3", "ownedBy")
    assert r.exit_code == 1 and data["abstain"]["reason"] == "no-seed"
