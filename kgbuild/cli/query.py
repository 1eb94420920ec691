"""``kgbuild query``."""

from __future__ import annotations

import json
import sys

import click

from ..store.query import MAX_ROWS, QUERY_FORMATS
from .main import SCHEMA, STORE, UsageError, count, echo, main, open_project
from .output import fit


@main.command()
@click.argument("sparql")
@STORE
@SCHEMA
@click.option("--format", "fmt", type=click.Choice(QUERY_FORMATS), default="table",
              show_default=True, help="An aligned table, JSON (rows as objects of N-Triples "
                                      "terms) or SPARQL CSV (plain values).")
@click.option("--limit", **count(1000, 1, MAX_ROWS), help="At most this many rows are printed.")
@click.option("--timeout", type=click.FloatRange(0.1, 86400), default=30.0, show_default=True,
              metavar="SECONDS", help="Stop the query after this long.")
@click.option("--union/--no-union", default=True, show_default=True,
              help="Patterns outside GRAPH match every document's graph (the whole graph); "
                   "--no-union: only the (empty) default graph.")
def query(sparql, store_path, schema_name, fmt, limit, timeout, union):
    """Run a SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the store.

    Each source document is a named graph src:PATH: GRAPH ?g finds which document says
    something. The prefixes of the exports are declared (the schema's, e.g. sw:, and kg:,
    id:, src:, rdf:, rdfs:, xsd:, prov:). SPARQL is read from the argument, or from stdin
    with '-'.

    \b
    Exit codes: 0 answered (an ASK answered false exits 1); 2 usage or query error.

    \b
    Examples:
      kgbuild query 'SELECT ?s ?o WHERE { ?s sw:dependsOn ?o } LIMIT 5'
      kgbuild query 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }
        GROUP BY ?g ORDER BY DESC(?n)' --format csv
      kgbuild query 'ASK { ?s a sw:Service }'
    """
    if sparql == "-":
        sparql = sys.stdin.read(1_000_001)
    if not sparql.strip():
        raise UsageError("the query is empty")
    result = open_project(schema=schema_name, store=store_path).query(
        sparql, limit=limit, union=union, timeout=timeout)
    if fmt == "json":
        echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    elif fmt == "csv":
        echo(result.to_csv(), nl=False)
    else:
        echo(fit(result.render()))  # within 100 columns: json and csv keep every value whole
    if result.kind == "ask" and not result.boolean:
        sys.exit(1)
