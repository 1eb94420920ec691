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
from .main import FORMAT, UsageError, emit, main, write_or_echo


@main.group()
def schema():
    """Inspect a schema and what kgbuild derives from it."""


@schema.command("show")
@click.argument("name", default="software")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "turtle", "json-schema"]),
              default="text", show_default=True,
              help="text summary, json, the derived RDF vocabulary as Turtle, or the JSON Schema "
                   "an LLM's extraction output must follow.")
def schema_show(name, fmt):
    """Print schema NAME (bundled name or YAML path): types, edges, inverses, attributes."""
    s = load_schema(name)
    if fmt == "json-schema":
        click.echo(json.dumps(s.extraction_json_schema(), indent=2, sort_keys=True))
    elif fmt == "turtle":
        click.echo(to_turtle(((rdflib_term(a), rdflib_term(b), rdflib_term(c))
                              for a, b, c in vocabulary(s)), s), nl=False)
    else:
        emit(s.to_dict(), fmt, s.describe())


@schema.command("check")
@click.argument("path")
@FORMAT
def schema_check(path, fmt):
    """Load and check a schema file; print the first problem with its line, exit 2 if any."""
    try:
        s = load_schema(path)
    except KgbuildError as exc:
        if fmt == "json":
            click.echo(json.dumps({"ok": False, "error": str(exc)}))
            sys.exit(2)
        raise UsageError(str(exc)) from None
    emit({"ok": True, "name": s.name, "node_types": len(s.node_types),
          "edge_types": len(s.edge_types), "attributes": len(s.attributes)}, fmt,
         f"ok: schema {s.name}: {len(s.node_types)} node types, {len(s.edge_types)} edge types, "
         f"{len(s.attributes)} attributes")


@schema.command("shapes")
@click.argument("name", default="software")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to a file instead.")
def schema_shapes(name, output):
    """Emit the SHACL shapes (schema-derived + shapes/*.ttl) as Turtle."""
    text = all_shapes(load_schema(name)).serialize(format="turtle")
    write_or_echo(text, output)


