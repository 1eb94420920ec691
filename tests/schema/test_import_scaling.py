"""Importing deep subclass hierarchies with several parents per class: linear work, same parents.

The work is counted, not timed: the lines run in kgbuild/schema/ (the importer and the loader's
checks of the draft) for n and 2n classes. Picking parents once computed every class's
ancestor set for every pair of its parents, and the loader walked every type's whole parent
chain: both quadratic on a chain.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import kgbuild.schema.importer as importer
from kgbuild.errors import SchemaError
from kgbuild.schema.importer import import_ontology
from kgbuild.schema.loader import parse_schema

HEAD = ("@prefix ex: <http://example.org/o#> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\nex:p a owl:ObjectProperty .\n")


def chain(tmp_path: Path, n: int, cycle: bool = False) -> Path:
    """``C_i rdfs:subClassOf C_{i-1}, C_{i-2}``; with ``cycle``, ``C_0`` below ``C_{n-1}``."""
    lines = [HEAD]
    for i in range(n):
        sups = [f"ex:C{j}" for j in (i - 1, i - 2) if j >= 0] or (["ex:C%d" % (n - 1)] if cycle else [])
        lines.append(f"ex:C{i} a owl:Class" + (f" ; rdfs:subClassOf {', '.join(sups)}" if sups else "")
                     + " .\n")
    path = tmp_path / f"chain{n}{'c' if cycle else ''}.ttl"
    path.write_text("".join(lines))
    return path


def ladder(tmp_path: Path, n: int) -> Path:
    """Two chains, ``X_i`` and ``Y_i`` each a subclass of ``X_{i-1}`` and ``Y_{i-1}``."""
    lines = [HEAD]
    for i in range(n):
        for c in "XY":
            sup = f" ; rdfs:subClassOf ex:X{i - 1}, ex:Y{i - 1}" if i else ""
            lines.append(f"ex:{c}{i} a owl:Class{sup} .\n")
    path = tmp_path / f"ladder{n}.ttl"
    path.write_text("".join(lines))
    return path


def schema_lines(path: Path) -> int:
    """Lines run in kgbuild/schema/ while importing ``path`` (the RDF file read beforehand)."""
    graph, _ = importer.read_rdf(path)
    folder = str(Path(importer.__file__).parent)
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if not frame.f_code.co_filename.startswith(folder):
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        import_ontology(graph)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("make", [chain, ladder, lambda p, n: chain(p, n, cycle=True)],
                         ids=["chain", "ladder", "cycle"])
def test_work_grows_linearly_with_the_classes(tmp_path, make):
    small, large = schema_lines(make(tmp_path, 300)), schema_lines(make(tmp_path, 600))
    assert large / small < 2.3, (small, large)  # quadratic code gives about 4


def test_two_parent_chain_keeps_the_direct_parent(tmp_path):
    draft = import_ontology(chain(tmp_path, 500))
    types = draft.data["node_types"]
    assert all(types[f"C{i}"] == {"parent": f"C{i - 1}"} for i in range(1, 500))
    assert "parent" not in types["C0"]
    assert not [w for w in draft.warnings() if w.startswith("node_types.")]  # C_{i-2} is redundant
    assert draft.schema().ancestors("C499")[-1] == "C0"


def test_cycle_and_ladder_parents(tmp_path):
    types = import_ontology(chain(tmp_path, 50, cycle=True)).data["node_types"]
    # C0 is named first: it keeps C49; C1 then may not take C0 (a cycle) and takes nothing else,
    # as C_{i-2} of every later class is redundant only outside the cycle: each keeps C_{i-1}
    assert types["C0"]["parent"] == "C49"
    draft = import_ontology(ladder(tmp_path, 30))
    types = draft.data["node_types"]
    assert all(types[f"{c}{i}"]["parent"] == f"X{i - 1}" for c in "XY" for i in range(1, 30))
    assert "node_types.Y5: also rdfs:subClassOf Y4; kgbuild keeps one parent, the first by name: X4" \
        in draft.warnings()


def test_a_later_type_with_an_unknown_parent_is_reported_not_a_crash():
    raw = {"name": "x", "namespace": "http://example.org/x#", "node_types": {
        "A": {"parent": "B"}, "B": {"parent": "Missing"}}, "edge_types": {
        "e": {"domain": "A", "range": "A"}}}
    with pytest.raises(SchemaError, match="node type 'B' has unknown parent 'Missing'"):
        parse_schema(raw)
