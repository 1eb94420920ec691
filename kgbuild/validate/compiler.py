"""Reading a SHACL shapes graph into the plan the fast engine runs, or saying why it cannot.

The fast engine covers what kgbuild's own shapes use: targets (``sh:targetClass``,
``targetSubjectsOf``, ``targetObjectsOf``, ``targetNode``), node and property shapes with a
single-IRI path, ``sh:class``, ``datatype``, ``nodeKind``, ``in``, ``minCount``, ``maxCount``,
``minLength``, ``min/maxInclusive``, ``qualifiedValueShape`` (with ``sh:in``/``sh:class``),
``sh:or`` on node shapes, and the SPARQL constraints of ``shapes/provenance.ttl`` (recognised by
their text). Anything else raises :class:`Unsupported` naming the shape and feature, and the
caller falls back to pyshacl. Every result needs an ``sh:message`` (pyshacl's generated messages
are not reproduced), so a constraint without one is unsupported too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS, SH

from ..schema.shapes import handwritten_shapes


class Unsupported(Exception):
    """The shapes use something the fast engine does not compile."""


@dataclass
class Shape:
    """One node or property shape: where it applies and what it requires."""

    node: URIRef | BNode
    path: URIRef | None = None
    targets: list[tuple[URIRef, URIRef | Literal]] = field(default_factory=list)
    constraints: list[tuple[URIRef, object]] = field(default_factory=list)  # (sh:key, argument)
    properties: list["Shape"] = field(default_factory=list)
    severity: URIRef = SH.Violation
    message: Literal | None = None


TARGETS = (SH.targetClass, SH.targetSubjectsOf, SH.targetObjectsOf, SH.targetNode)
_VALUE = (SH["class"], SH.datatype, SH.nodeKind, SH["in"], SH.minLength, SH.minInclusive,
          SH.maxInclusive)
_PROPERTY_ONLY = (SH.minCount, SH.maxCount, SH.qualifiedValueShape)
_IGNORED = {RDF.type, RDFS.comment, RDFS.label, SH.message, SH.severity, SH.name, SH.description,
            SH.path, SH.order, SH.group, SH.property, SH.qualifiedMinCount, SH.qualifiedMaxCount,
            SH.qualifiedValueShapesDisjoint, *TARGETS}
NODE_KINDS = {SH.IRI, SH.BlankNode, SH.Literal, SH.BlankNodeOrIRI, SH.BlankNodeOrLiteral,
              SH.IRIOrLiteral}


def compile_shapes(shapes: Graph) -> list[Shape]:
    """Every shape that has a target, with its property shapes; raises :class:`Unsupported`."""
    roots = sorted({s for t in TARGETS for s in shapes.subjects(t, None)}, key=str)
    implicit = [s for s in set(shapes.subjects(RDF.type, SH.NodeShape)) |
                set(shapes.subjects(RDF.type, SH.PropertyShape))
                if (s, RDF.type, RDFS.Class) in shapes or (s, RDF.type, OWL.Class) in shapes]
    if implicit:
        raise Unsupported(f"{implicit[0]}: implicit class target")
    out = []
    for node in roots:
        shape = _shape(shapes, node, depth=0)
        if shape is not None:
            shape.targets = sorted(((t, o) for t in TARGETS for o in shapes.objects(node, t)),
                                   key=lambda x: (str(x[0]), str(x[1])))
            out.append(shape)
    return out


def _one(shapes: Graph, node, pred):
    values = list(shapes.objects(node, pred))
    if len(values) > 1:
        raise Unsupported(f"{node}: several {pred}")
    return values[0] if values else None


def _shape(shapes: Graph, node, depth: int, reports: bool = True) -> Shape | None:
    """The shape at ``node``, or None when it is deactivated. ``reports``: its results are
    reported (not an ``sh:or`` member's), so it needs an ``sh:message``."""
    if depth > 8:
        raise Unsupported(f"{node}: shapes nested too deeply")
    deactivated = _one(shapes, node, SH.deactivated)
    if deactivated is not None and deactivated.toPython() is True:
        return None
    path = _one(shapes, node, SH.path)
    if path is not None and not isinstance(path, URIRef):
        raise Unsupported(f"{node}: a property path that is not a single IRI")
    messages = list(shapes.objects(node, SH.message))
    if len(messages) > 1:
        raise Unsupported(f"{node}: several sh:message values")
    shape = Shape(node, path, severity=_one(shapes, node, SH.severity) or SH.Violation,
                  message=messages[0] if messages else None)
    for pred, obj in sorted(shapes.predicate_objects(node), key=lambda po: (str(po[0]), str(po[1]))):
        if pred in _IGNORED or pred == SH.deactivated or not str(pred).startswith(str(SH)):
            continue
        if pred in _PROPERTY_ONLY and path is None:
            raise Unsupported(f"{node}: {pred} on a node shape")
        if pred == SH["or"]:
            if path is not None:
                raise Unsupported(f"{node}: sh:or on a property shape")
            members = [_shape(shapes, m, depth + 1, False) for m in Collection(shapes, obj)]
            shape.constraints.append((pred, [m for m in members if m is not None]))
        elif pred == SH.qualifiedValueShape:
            shape.constraints.append((pred, _qualified(shapes, node, obj)))
        elif pred == SH.sparql:
            shape.constraints.append((pred, _sparql(shapes, node, obj)))
        elif pred == SH["in"]:
            items = list(Collection(shapes, obj))
            if any(isinstance(i, BNode) for i in items):
                raise Unsupported(f"{node}: a blank node in sh:in")
            shape.constraints.append((pred, items))
        elif pred in _VALUE or pred in (SH.minCount, SH.maxCount):
            if pred == SH.nodeKind and obj not in NODE_KINDS:
                raise Unsupported(f"{node}: sh:nodeKind {obj}")
            if pred in (SH.minCount, SH.maxCount, SH.minLength) and not (
                    isinstance(obj, Literal) and isinstance(obj.toPython(), int)):
                raise Unsupported(f"{node}: {pred} {obj!r} is not an integer")
            if pred in (SH["class"], SH.datatype) and not isinstance(obj, URIRef):
                raise Unsupported(f"{node}: {pred} {obj!r} is not an IRI")
            if pred == SH.datatype and obj in (RDFS.Literal, RDFS.Datatype):
                raise Unsupported(f"{node}: sh:datatype {obj}")
            shape.constraints.append((pred, obj))
        else:
            raise Unsupported(f"{node}: {pred}")
    for p in sorted(shapes.objects(node, SH.property), key=str):
        prop = _shape(shapes, p, depth + 1, reports)
        if prop is not None:
            if prop.path is None:
                raise Unsupported(f"{p}: a property shape without sh:path")
            shape.properties.append(prop)
    if reports and shape.message is None and any(k != SH.sparql for k, _ in shape.constraints):
        raise Unsupported(f"{node}: a constraint without sh:message")
    return shape


def _qualified(shapes: Graph, node, inner) -> tuple[list, int | None, int | None]:
    """``(value tests, min, max)``: the inner shape may only use ``sh:in`` or ``sh:class``."""
    if _one(shapes, node, SH.qualifiedValueShapesDisjoint) not in (None, Literal(False)):
        raise Unsupported(f"{node}: sh:qualifiedValueShapesDisjoint")
    tests = []
    for pred, obj in shapes.predicate_objects(inner):
        if pred == SH["in"]:
            items = list(Collection(shapes, obj))
            if any(isinstance(i, BNode) for i in items):
                raise Unsupported(f"{node}: a blank node in sh:in")
            tests.append((pred, items))
        elif pred == SH["class"] and isinstance(obj, URIRef):
            tests.append((pred, obj))
        elif pred not in (RDF.type, RDFS.comment):
            raise Unsupported(f"{node}: {pred} inside sh:qualifiedValueShape")
    low, high = (_one(shapes, node, p) for p in (SH.qualifiedMinCount, SH.qualifiedMaxCount))
    return tests, low.toPython() if low is not None else None, high.toPython() if high is not None else None


def _sparql(shapes: Graph, node, constraint) -> tuple[str, Literal | None]:
    """``(kind, message)`` of a SPARQL constraint kgbuild knows by its text."""
    select = _one(shapes, constraint, SH.select)
    if select is None:
        raise Unsupported(f"{node}: sh:sparql without sh:select")
    if _one(shapes, constraint, SH.prefixes) is not None:
        raise Unsupported(f"{node}: sh:sparql with sh:prefixes")
    deactivated = _one(shapes, constraint, SH.deactivated)
    if deactivated is not None and deactivated.toPython() is True:
        return "off", None
    kind = known_queries().get(" ".join(str(select).split()))
    if kind is None:
        raise Unsupported(f"{node}: a SPARQL constraint the fast engine does not know")
    message = _one(shapes, constraint, SH.message) or _one(shapes, node, SH.message)
    if message is None:
        raise Unsupported(f"{node}: a SPARQL constraint without sh:message")
    return kind, message


_KNOWN: dict[str, str] | None = None
_KINDS = {"Assertion": "statement-exists", "EdgeCoverage": "coverage",
          "DocumentCompleteness": "completeness"}


def known_queries() -> dict[str, str]:
    """The bundled provenance shapes' SPARQL texts (whitespace-normalised) -> what they check."""
    global _KNOWN
    if _KNOWN is None:
        g = handwritten_shapes()
        _KNOWN = {}
        for shape, constraint in g.subject_objects(SH.sparql):
            kind = _KINDS.get(str(shape).rsplit("#", 1)[-1])
            for select in g.objects(constraint, SH.select):
                if kind:
                    _KNOWN[" ".join(str(select).split())] = kind
    return _KNOWN
