"""The fast engine and pyshacl give the same results on generated graphs and shape subsets.

Graphs start from the built fixture catalog and get random damage of every kind the shapes
check: wrong node types at an edge's domain or range, missing or doubled node fields, missing,
doubled or ill-typed provenance fields, values out of range, wrong node kinds, edges without
assertions, assertions of triples that do not exist, documents whose assertion count is off.
Shape sets are random subsets of the schema's and the provenance shapes (the others lose
their targets).
"""

import pyoxigraph as ox
import pytest
from conftest import FIXTURE_CATALOG
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SH, XSD

from kgbuild.graph.rdf import to_rdflib
from kgbuild.project.pipeline import build_graph
from kgbuild.schema.namespaces import KG
from kgbuild.schema.shapes import all_shapes
from kgbuild.schema.vocabulary import vocabulary
from kgbuild.validate.compiler import TARGETS, compile_shapes
from kgbuild.validate.engine import Data, run
from kgbuild.validate.neighbourhood import neighbourhood
from kgbuild.validate.validator import validate_graph


@pytest.fixture(scope="module")
def base(schema):
    kg = build_graph([FIXTURE_CATALOG], validate=False, timestamp=0, root=FIXTURE_CATALOG.parent).graph
    g = to_rdflib(kg)
    nodes = sorted(set(g.subjects(DCTERMS.identifier, None)))
    assertions = sorted(set(g.subjects(RDF.type, KG.Assertion)))
    docs = sorted(set(g.subjects(RDF.type, KG.SourceDocument)))
    return g, nodes, assertions, docs


FIELDS = [RDF.subject, RDF.predicate, RDF.object, PROV.wasDerivedFrom, KG.extractor,
          KG.confidence, PROV.generatedAtTime, KG.line, KG.jsonPointer]
BAD_VALUES = [Literal("high"), Literal("abc", datatype=XSD.double), Literal(1.5), Literal(-0.5),
              Literal(0.5), Literal(0), Literal("0", datatype=XSD.integer), Literal(""),
              Literal("yesterday"), Literal("2020-13-45T00:00:00", datatype=XSD.dateTime),
              Literal(3), Literal("x", lang="en"), URIRef("https://example.org/thing")]
KINDS = ["retype", "add-type", "drop-field", "double-field", "bad-value", "bare-edge",
         "drop-assertion-field", "double-assertion-field", "bad-assertion-value", "drop-assertion",
         "recount", "move-object"]


def damage(g: Graph, nodes, assertions, docs, schema, draw) -> None:
    """Apply one random damage to ``g`` in place."""
    kind = draw(st.sampled_from(KINDS))
    types = sorted(URIRef(t.iri) for t in schema.node_types.values())
    edges = sorted(URIRef(e.iri) for e in schema.edge_types.values())
    node = draw(st.sampled_from(nodes))
    a = draw(st.sampled_from(assertions))
    if kind == "retype":
        g.remove((node, RDF.type, None))
        g.add((node, RDF.type, draw(st.sampled_from(types))))
    elif kind == "add-type":
        g.add((node, RDF.type, draw(st.sampled_from(types))))
    elif kind == "drop-field":
        g.remove((node, draw(st.sampled_from([RDFS.label, DCTERMS.identifier, RDF.type])), None))
    elif kind == "double-field":
        g.add((node, draw(st.sampled_from([RDFS.label, DCTERMS.identifier])), Literal("another")))
    elif kind == "bad-value":
        g.remove((node, DCTERMS.identifier, None))
        g.add((node, DCTERMS.identifier, draw(st.sampled_from(BAD_VALUES))))
    elif kind == "bare-edge":
        g.add((node, draw(st.sampled_from(edges)), draw(st.sampled_from(nodes))))
    elif kind == "drop-assertion-field":
        g.remove((a, draw(st.sampled_from(FIELDS)), None))
    elif kind == "double-assertion-field":
        field = draw(st.sampled_from(FIELDS))
        g.add((a, field, draw(st.sampled_from(BAD_VALUES + nodes[:3]))))
    elif kind == "bad-assertion-value":
        field = draw(st.sampled_from(FIELDS))
        g.remove((a, field, None))
        g.add((a, field, draw(st.sampled_from(BAD_VALUES + [BNode("b1")]))))
    elif kind == "drop-assertion":
        g.remove((a, None, None))
    elif kind == "recount":
        doc = draw(st.sampled_from(docs))
        g.remove((doc, KG.assertionCount, None))
        g.add((doc, KG.assertionCount, Literal(draw(st.integers(0, 40)))))
    else:
        g.remove((a, RDF.object, None))
        g.add((a, RDF.object, draw(st.sampled_from(nodes))))


def shape_subset(schema, draw) -> Graph:
    shapes = all_shapes(schema)
    roots = sorted({s for t in TARGETS for s in shapes.subjects(t, None)}, key=str)
    keep = set(draw(st.lists(st.sampled_from(roots), min_size=1, unique=True)))
    for root in roots:
        if root not in keep:
            for t in TARGETS:
                shapes.remove((root, t, None))
    return shapes


def key(report):
    """What must agree: focus, path, component, value, severity and message of each result."""
    return {(r.focus, r.path, r.component, r.value, r.severity, str(r.message)) for r in report.results}


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fast_engine_equals_pyshacl(base, schema, data):
    g0, nodes, assertions, docs = base
    g = Graph()
    for t in g0:
        g.add(t)
    for _ in range(data.draw(st.integers(0, 4))):
        damage(g, nodes, assertions, docs, schema, data.draw)
    shapes = all_shapes(schema) if data.draw(st.booleans()) else shape_subset(schema, data.draw)
    fast = validate_graph(g, schema, engine="fast", shapes=shapes)
    ref = validate_graph(g, schema, engine="pyshacl", shapes=shapes)
    assert fast.engine == "fast" and ref.engine == "pyshacl"
    assert key(fast) == key(ref)
    assert fast.conforms == ref.conforms
    assert sorted(v.to_dict().items() for v in fast.violations) == \
        sorted(v.to_dict().items() for v in ref.violations)


def test_every_kind_of_damage_is_found_by_both(base, schema):
    """One graph with every kind of damage at once: both engines report every component."""
    g0, nodes, assertions, docs = base
    g = Graph()
    for t in g0:
        g.add(t)
    a = assertions
    g.add((nodes[0], RDF.type, URIRef(schema.node_types["Group"].iri)))        # two types
    g.remove((nodes[1], RDFS.label, None))                                        # minCount
    g.add((nodes[2], RDFS.label, Literal("again")))                               # maxCount
    group = next(n for n in nodes if (n, RDF.type, URIRef(schema.node_types["Group"].iri)) in g0)
    g.add((group, URIRef(schema.edge_types["consumesApi"].iri), group))          # bare edge, class
    g.set((a[0], KG.confidence, Literal("abc", datatype=XSD.double)))             # ill-typed
    g.set((a[1], KG.confidence, Literal(1.5)))                                    # out of range
    g.set((a[2], KG.extractor, Literal("")))                                      # minLength
    g.set((a[3], RDF.subject, Literal("not an IRI")))                             # nodeKind
    g.remove((a[4], KG.line, None))                                               # sh:or
    g.set((a[5], PROV.generatedAtTime, Literal("yesterday")))                     # datatype
    g.set((docs[0], KG.assertionCount, Literal(999)))                             # completeness
    shapes = all_shapes(schema)
    fast = validate_graph(g, schema, engine="fast", shapes=shapes)
    ref = validate_graph(g, schema, engine="pyshacl", shapes=shapes)
    assert key(fast) == key(ref)
    found = {r.component for r in fast.results}
    assert {SH.QualifiedMaxCountConstraintComponent, SH.MinCountConstraintComponent,
            SH.MaxCountConstraintComponent, SH.SPARQLConstraintComponent,
            SH.DatatypeConstraintComponent, SH.MaxInclusiveConstraintComponent,
            SH.MinLengthConstraintComponent, SH.NodeKindConstraintComponent,
            SH.OrConstraintComponent, SH.ClassConstraintComponent} <= found
    assert not fast.conforms


OWNER_SHAPE = """@prefix sh: <http://www.w3.org/ns/shacl#> .
    <urn:test#Owner> sh:targetClass <{component}> ; sh:property [
      sh:path <{owned_by}> ; sh:class <{group}> ; sh:message "owned by a group" ] ."""


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_neighbourhood_gives_the_focus_nodes_the_whole_runs_results(base, schema, data):
    """Incremental validation runs the plan on the focus nodes' neighbourhood: for every focus
    node it must give exactly the whole graph's results (damaged nodes and their neighbours
    are drawn as focus often, so the one-step-away checks are exercised)."""
    g0, nodes, assertions, docs = base
    g = Graph()
    for t in g0:
        g.add(t)
    damaged: set = set()
    for _ in range(data.draw(st.integers(1, 4))):
        before = set(g)
        damage(g, nodes, assertions, docs, schema, data.draw)
        damaged |= {x for t in before ^ set(g) for x in (t[0], t[2]) if isinstance(x, URIRef)}
    pool = sorted(damaged | set(nodes[:5]) | set(assertions[:5]) | set(docs[:2]))
    focus = sorted(map(str, data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8,
                                                unique=True))))
    shapes = all_shapes(schema) if data.draw(st.booleans()) else shape_subset(schema, data.draw)
    if data.draw(st.booleans()):  # a user shape reading a value's type through a property
        shapes.parse(data=OWNER_SHAPE.format(component=schema.node_types["Component"].iri,
                                             owned_by=schema.edge_types["ownedBy"].iri,
                                             group=schema.node_types["Group"].iri), format="turtle")
    plan = compile_shapes(shapes)
    db = ox.Store()
    db.extend(ox.parse(g.serialize(format="nt", encoding="utf-8"), format=ox.RdfFormat.N_TRIPLES))
    whole = [r for r in run(plan, Data(db, vocabulary(schema))) if str(r.focus) in focus]
    part = [r for r in run(plan, Data(neighbourhood(db, focus), vocabulary(schema)))
            if str(r.focus) in focus]
    assert part == whole


USER_SHAPES = """@prefix sh: <http://www.w3.org/ns/shacl#> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    @prefix dcterms: <http://purl.org/dc/terms/> .
    <urn:test#Named> sh:targetSubjectsOf dcterms:identifier ;
      sh:message "blank, a component or labelled" ;
      sh:or ( [ sh:nodeKind sh:BlankNode ] [ sh:class <{component}> ]
              [ sh:path rdfs:label ; sh:minCount 1 ] ) .
    <urn:test#Mixed> sh:targetClass <{group}> ; sh:message "a component IRI or a long label" ;
      sh:or ( [ sh:class <{component}> ; sh:nodeKind sh:IRI ]
              [ sh:path rdfs:label ; sh:minLength 12 ] ) .
    <urn:test#GroupLabel> sh:targetClass <{group}> ; sh:property [
      sh:path rdfs:label ; sh:minLength 40 ; sh:message "a group's label is long" ] ."""


def test_user_shapes_with_or_and_focus_tests_equal_pyshacl(base, schema):
    """The fast engine's ways of finding violations that the bundled shapes do not all use:
    an sh:or of single tests written as one query (a node kind, a class, a path's value), an
    sh:or with a member of two constraints (each member's violators intersected), and a path
    constraint whose failing values mostly belong to nodes that are not focus nodes (tested
    in the query), with blank-node focus nodes. Both engines give the same results."""
    g0, nodes, _, _ = base
    g = Graph()
    for t in g0:
        g.add(t)
    group, component = (URIRef(schema.node_types[t].iri) for t in ("Group", "Component"))
    blank, loose = BNode("b1"), URIRef("urn:test#loose")
    g.add((blank, RDF.type, group))
    g.add((blank, RDFS.label, Literal("b")))
    g.add((blank, DCTERMS.identifier, Literal("b1")))
    g.add((loose, DCTERMS.identifier, Literal("loose")))
    shapes = all_shapes(schema)
    shapes.parse(data=USER_SHAPES.format(group=group, component=component), format="turtle")
    fast = validate_graph(g, schema, engine="fast", shapes=shapes)
    ref = validate_graph(g, schema, engine="pyshacl", shapes=shapes)
    assert fast.engine == "fast" and key(fast) == key(ref)
    found = {(str(r.shape), r.focus) for r in fast.results}
    assert ("urn:test#Named", loose) in found and ("urn:test#Named", blank) not in found
    assert ("urn:test#Mixed", blank) in found
    short = {r.focus for r in fast.results if r.component == SH.MinLengthConstraintComponent}
    groups = set(g.subjects(RDF.type, group))
    assert blank in short and short <= groups
    assert {s for s, o in g.subject_objects(RDFS.label) if len(o) < 40} - groups  # not focus
