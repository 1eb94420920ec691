"""Incremental validation: only the focus nodes a change to some documents can affect.

What a focus node's results read is listed in :mod:`kgbuild.validate.neighbourhood`. A change
rewrites some documents' named graphs (and the resolved types and labels of the nodes they
claim), so a node's results can change only when it is

- a subject or object in a changed graph, before or after (the *touched* IRIs);
- the node an assertion among them is about, or the document it is derived from (edge
  coverage and assertion counts read the assertion's own triples);
- an assertion about a touched node (it checks that the triple it describes exists);
- a node with an edge into a touched node whose types changed (``sh:class`` reads the
  value's types). Only these: a team every component points at is not re-checked with all
  its components when a changed file merely names it again.

Validating that set on its neighbourhood gives exactly the full run's results for those
nodes; every other node's results cannot have changed. (A document declaring
``rdfs:subClassOf`` or ``owl:ObjectProperty`` would change every node's; kgbuild's
extractors write neither.)
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from ..errors import InputError
from ..graph.model import iri_values, source_iri
from ..io.atomic import atomic_write
from ..vocab import PROV, RDF

if TYPE_CHECKING:  # (the validator is imported when a change is validated)
    from rdflib import Graph

    from .hygiene import HygieneOptions
    from .report import ValidationReport

Touched = dict[str, tuple[str, ...]]  # IRI -> its rdf:types, sorted
LAST_CHANGE = "last-change.json"  # in the store folder: what the last build changed


def record_change(store, documents: Sequence[str], before: Touched) -> None:
    """Remember what a build changed, for ``kgbuild validate --changed`` (persistent stores):
    the documents, and the IRIs they used with their types before the change."""
    if store.path is not None:
        atomic_write(store.path / LAST_CHANGE, json.dumps(
            {"generation": store.generation(), "documents": sorted(documents),
             "before": {t: list(types) for t, types in sorted(before.items())}}), durable=False)


_A = f"<{RDF}type>"


def touched_terms(store, documents: Iterable[str], new: Iterable[tuple[str, str, str]] = ()
                  ) -> Touched:
    """IRIs used as subject or object in the documents' named graphs (and in ``new``: their
    new content as N-Triples terms, before a change), each with its types in the store now.
    Classes (objects of ``rdf:type``) and the schema's own IRIs (types, edge and attribute
    properties, as objects of a declared type or ``rdf:predicate``) are left out: every node
    points at those, so they would make the focus the whole graph. Call before and after a
    change: a node a document stops mentioning is touched too, and a node whose types
    differ is *retyped*."""
    found = {x[1:-1] for s, p, o in new for x in ((s, o) if p != _A else (s,)) if x.startswith("<")}
    graphs = " ".join(f"<{source_iri(d)}>" for d in sorted(set(documents)))
    for row in store.sparql(
            f"SELECT DISTINCT ?t WHERE {{ VALUES ?g {{ {graphs} }} GRAPH ?g {{ "
            f"{{ ?t ?p ?o }} UNION {{ ?s ?p ?t FILTER(?p != <{RDF}type>) }} }} FILTER(isIRI(?t)) }}"
    ) if graphs else ():
        found.add(row["t"].value)
    schema = store.schema
    own = {*schema.type_by_iri, *schema.edge_by_iri, *(a.iri for a in schema.attributes.values()),
           *(e.inverse_iri for e in schema.edge_types.values() if e.inverse_iri)}
    return types_of(store, found - own)


def types_of(store, iris: Iterable[str]) -> Touched:
    """Each IRI with its ``rdf:type`` values in any graph of ``store``, sorted."""
    types: dict[str, set[str]] = {t: set() for t in iris}
    for chunk in iri_values(sorted(types)):
        for row in store.sparql(
                f"SELECT ?t ?c WHERE {{ VALUES ?t {{ {chunk} }} ?t <{RDF}type> ?c }}", union=True):
            types[row["t"].value].add(str(row["c"].value))
    return {t: tuple(sorted(c)) for t, c in types.items()}


def changed_focus(store, documents: Iterable[str],
                  before: Mapping[str, Iterable[str] | None] | Iterable[str] = ()) -> set[str]:
    """The focus nodes a change to ``documents`` can have affected (see the module's text).
    ``before``: :func:`touched_terms` of the same documents taken before the change; a plain
    collection of IRIs (types unknown) counts each as retyped."""
    before = dict(before) if isinstance(before, Mapping) else dict.fromkeys(before)
    after = touched_terms(store, documents)
    now = {**types_of(store, set(before) - set(after)), **after}
    retyped = sorted(t for t in now if before.get(t) is None or tuple(sorted(before[t])) != now[t])
    out = set(now)
    patterns = [f"?t <{RDF}subject> ?x", f"?t <{PROV}wasDerivedFrom> ?x", f"?x <{RDF}subject> ?t"]
    for chunk in iri_values(sorted(now)):
        out |= _iris(store, f"VALUES ?t {{ {chunk} }} {{ {' } UNION { '.join(patterns)} }}")
    for chunk in iri_values(retyped):
        out |= _iris(store, f"VALUES ?t {{ {chunk} }} ?x ?p ?t")
    return out


def _iris(store, pattern: str) -> set[str]:
    return {row["x"].value for row in store.sparql(
        f"SELECT DISTINCT ?x WHERE {{ {pattern} FILTER(isIRI(?x)) }}", union=True)}


def validate_changed(store, documents: Iterable[str], *,
                     before: Mapping[str, Iterable[str] | None] | Iterable[str] = (),
                     engine: str = "fast", shapes: Graph | None = None,
                     hygiene: HygieneOptions | None = None) -> ValidationReport:
    """Validate only what a change to ``documents`` (IDs) can have affected in ``store``.

    ``before`` is :func:`touched_terms` of the same documents taken before the change (a
    deleted document's or a dropped mention's nodes, and their types then); the result
    equals a full validation's results restricted to the focus nodes validated
    (:func:`changed_focus`; ``report.scope`` says how many)."""
    from .validator import validate_store

    focus = changed_focus(store, documents, before)
    return validate_store(store, engine=engine, shapes=shapes, focus=focus, hygiene=hygiene)


def last_change(store) -> dict:
    """What :func:`record_change` remembered of the store's last build; InputError when
    nothing is, or the store changed since."""
    path = store.path / LAST_CHANGE
    try:
        last = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise InputError("no recorded build change to validate; run `kgbuild validate` for "
                         "the whole store", str(path), code="no-change") from None
    if last.get("generation") != store.generation():
        raise InputError("the store changed since the recorded build (another writer?); run "
                         "`kgbuild validate` for the whole store", str(path), code="no-change")
    return last
