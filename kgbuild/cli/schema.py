"""``kgbuild schema``: show, check and derive from a schema."""

from __future__ import annotations

import json
import sys

import click

from ..errors import KgbuildError
from ..graph.rdf import rdflib_term
from ..graph.turtle import to_turtle
from ..schema.loader import load_schema
from ..schema.shapes import all_shapes
from ..schema.vocabulary import vocabulary
from .main import FORMAT, FileArg, UsageError, check_output, echo, emit, main, write_or_echo


@main.group()
def schema():
    """Inspect a schema and what kgbuild derives from it.

    \b
    Examples:
      kgbuild schema show software
      kgbuild schema check my-schema.yaml
      kgbuild schema shapes -o shapes.ttl

    \b
    Exit codes: 0 done; 2 usage or input error (a schema that does not load).
    """


@schema.command("show")
@click.argument("name", default="software")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "turtle", "json-schema"]),
              default="text", show_default=True,
              help="text summary, json, the derived RDF vocabulary as Turtle, or the JSON Schema "
                   "`kgbuild extract` sends the LLM as its response_format.")
def schema_show(name, fmt):
    """Print schema NAME (bundled name or YAML path): types, edges, inverses, attributes.

    \b
    Examples:
      kgbuild schema show
      kgbuild schema show my-schema.yaml --format json
      kgbuild schema show software --format turtle > vocabulary.ttl

    \b
    Exit codes: 0 shown; 2 an unknown schema or one that does not load.
    """
    s = load_schema(name)
    if fmt == "json-schema":
        from ..extract.text.prompts import response_schema

        echo(json.dumps(response_schema(s), indent=2, sort_keys=True))
    elif fmt == "turtle":
        echo(to_turtle(((rdflib_term(a), rdflib_term(b), rdflib_term(c))
                              for a, b, c in vocabulary(s)), s), nl=False)
    else:
        emit(s.to_dict(), fmt, s.describe())


@schema.command("check")
@click.argument("path")
@FORMAT
def schema_check(path, fmt):
    """Load and check a schema file; print the first problem with its line, exit 2 if any.

    \b
    Examples:
      kgbuild schema check my-schema.yaml
      kgbuild schema check my-schema.yaml --format json

    \b
    Exit codes: 0 the schema loads; 2 it does not (the problem with its line).
    """
    try:
        s = load_schema(path)
    except KgbuildError as exc:
        if fmt == "json":
            echo(json.dumps({"ok": False, "error": str(exc)}))
            sys.exit(2)
        raise UsageError(str(exc), exc.code) from None
    emit({"ok": True, "name": s.name, "node_types": len(s.node_types),
          "edge_types": len(s.edge_types), "attributes": len(s.attributes)}, fmt,
         f"ok: schema {s.name}: {len(s.node_types)} node types, {len(s.edge_types)} edge types, "
         f"{len(s.attributes)} attributes")


@schema.command("shapes")
@click.argument("name", default="software")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to a file instead.")
def schema_shapes(name, output):
    """Emit the SHACL shapes (schema-derived + shapes/*.ttl) as Turtle.

    \b
    Examples:
      kgbuild schema shapes > shapes.ttl
      kgbuild schema shapes my-schema.yaml -o shapes.ttl

    \b
    Exit codes: 0 written; 2 usage or input error.
    """
    check_output(output)
    text = all_shapes(load_schema(name)).serialize(format="turtle")
    write_or_echo(text, output)




def _write_draft(draft, output) -> None:
    """The draft's YAML to ``output`` (or stdout); its notes on stderr."""
    text = draft.to_yaml()
    for line in draft.warnings():
        echo(f"note: {line}", err=True)
    write_or_echo(text, output)
    if output:
        d = draft.data
        echo(f"wrote {output}: schema {d['name']}: {len(d['node_types'])} node types, "
                   f"{len(d['edge_types'])} edge types, {len(d.get('attributes', {}))} attributes, "
                   f"{len(draft.warnings())} note(s) (comments in the file)", err=True)


NAME = click.option("--name", help="Schema name (default: the file's name).")
PREFIX = click.option("--prefix", help="Turtle prefix (default: the file's own prefix for the "
                                       "namespace, else the name).")
OUTPUT = click.option("-o", "--output", type=click.Path(dir_okay=False),
                      help="Write the schema YAML here instead of stdout.")


@schema.command("import")
@click.argument("ontology", type=FileArg())
@OUTPUT
@NAME
@PREFIX
def schema_import(ontology, output, name, prefix):
    """Write a schema from an RDFS/OWL ONTOLOGY (Turtle, RDF/XML, N-Triples, JSON-LD, ...).

    Classes become node types (rdfs:subClassOf: parent), object properties edge types
    (rdfs:domain/range, owl:unionOf, owl:inverseOf, owl:TransitiveProperty), datatype
    properties attributes. Names are local names; a term whose IRI is not namespace + name
    keeps it as iri:. Decisions to review are printed as notes and written as comments.

    \b
    Exit codes: 0 written; 2 unreadable ontology or bad option.

    \b
    Examples:
      kgbuild schema import university.ttl -o university.yaml
      kgbuild traverse --graph data.nt --schema university.yaml --seed ID --path rector
    """
    from ..schema.importer import import_ontology

    check_output(output)

    _write_draft(import_ontology(ontology, name=name, prefix=prefix), output)


@schema.command("infer")
@click.argument("graph", type=FileArg())
@OUTPUT
@NAME
@PREFIX
def schema_infer(graph, output, name, prefix):
    """Write a schema from what GRAPH (any RDF file) uses.

    Node types are its rdf:type classes (plus Node, IRI rdfs:Resource, for nodes without
    one); every predicate between two nodes is an edge type, domain and range the types
    seen; predicates with literal values are attributes, datatype from the literals.

    \b
    Exit codes: 0 written; 2 unreadable graph or bad option.

    \b
    Examples:
      kgbuild schema infer data.nt -o data.yaml
      kgbuild traverse --graph data.nt --schema data.yaml --seed ID --path knows/knows:in
    """
    from ..schema.importer import infer_schema

    check_output(output)

    _write_draft(infer_schema(graph, name=name, prefix=prefix), output)
