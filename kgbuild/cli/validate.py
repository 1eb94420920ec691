"""``kgbuild validate``."""

from __future__ import annotations

import sys

import click

from ..schema.loader import load_schema
from ..validate.validator import validate_file
from .main import FORMAT, SCHEMA, FileArg, emit, main


@main.command()
@click.argument("graph", type=FileArg(exists=False))
@SCHEMA
@FORMAT
def validate(graph, schema_name, fmt):
    """Check GRAPH (Turtle, N-Triples, JSON-LD, ...) against the schema's SHACL shapes.

    Shapes come from the schema (node typing, label, ID, the domain and range of every edge
    type) and from shapes/*.ttl (every assertion has one source, a location, an extractor,
    a confidence in [0, 1]; every edge is covered by an assertion). The report groups
    results by problem and names each offending node.

    \b
    Exit codes: 0 conforms; 1 violations; 2 usage or input error.
    """
    report = validate_file(graph, load_schema(schema_name))
    emit(report.to_dict(), fmt, report.render())
    sys.exit(0 if report.conforms else 1)


