"""One vocabulary: every RDF / RDFS / OWL / XSD / PROV / SHACL / DCTERMS / SKOS / kgbuild IRI
the code names is a constant of :mod:`kgbuild.vocab` (read from the source with ``ast``), and
that module stays below rdflib."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SH, SKOS, XSD

import kgbuild
from kgbuild import vocab

PACKAGE = Path(kgbuild.__file__).parent
NAMESPACES = ("http://www.w3.org/1999/02/22-rdf-syntax-ns", "http://www.w3.org/2000/01/rdf-schema",
              "http://www.w3.org/2002/07/owl", "http://www.w3.org/2001/XMLSchema",
              "http://www.w3.org/ns/prov", "http://www.w3.org/ns/shacl", "http://purl.org/dc/",
              "http://www.w3.org/2004/02/skos/", "https://kgbuild.dev")
OWNERS = {"vocab.py", "schema/namespaces.py"}


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def iri_literals(path: Path) -> list[str]:
    """``line: text`` of each string literal (f-string parts included) naming one of the
    namespaces, docstrings left out."""
    text = path.read_text(encoding="utf-8")
    if not any(ns in text for ns in NAMESPACES):  # (most modules: no need to parse them)
        return []
    tree = ast.parse(text)
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if any(ns in node.value for ns in NAMESPACES):
                found.append(f"{node.lineno}: {node.value[:80]!r}")
    return found


def test_no_module_but_the_vocabulary_names_an_iri_of_these_namespaces():
    wrong = [f"kgbuild/{path.relative_to(PACKAGE)}:{hit}"
             for path in sorted(PACKAGE.rglob("*.py"))
             if path.relative_to(PACKAGE).as_posix() not in OWNERS
             for hit in iri_literals(path)]
    assert wrong == [], "IRIs belong in kgbuild/vocab.py:\n" + "\n".join(wrong)


def test_the_check_finds_an_iri_in_code_and_leaves_docstrings_alone(tmp_path):
    source = tmp_path / "m.py"
    source.write_text('"""Mentions https://kgbuild.dev/ in prose."""\n\n'
                      'def f():\n    """And http://www.w3.org/ns/prov# here."""\n'
                      '    return f"<http://www.w3.org/ns/prov#wasDerivedFrom> {1}"\n'
                      'SVG = "http://www.w3.org/2000/svg"\n')
    assert iri_literals(source) == ["5: '<http://www.w3.org/ns/prov#wasDerivedFrom> '"]


@pytest.mark.parametrize("ours, theirs", [(vocab.RDF, RDF), (vocab.RDFS, RDFS), (vocab.OWL, OWL),
                                          (vocab.XSD, XSD), (vocab.PROV, PROV), (vocab.SH, SH),
                                          (vocab.DCTERMS, DCTERMS), (vocab.SKOS, SKOS)])
def test_the_standard_namespaces_are_rdflibs(ours, theirs):
    assert ours == str(theirs)


def test_the_vocabulary_imports_nothing():
    code = ("import json, sys, kgbuild; before = set(sys.modules); import kgbuild.vocab; "
            "print(json.dumps(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == ["kgbuild.vocab"]
