"""``kgbuild paths``: the schema's typed paths between two node types."""

from __future__ import annotations

import click

from ..schema.loader import load_schema
from .main import FORMAT, SCHEMA, count, emit, main


@main.command()
@click.argument("source", metavar="TYPE")
@click.argument("target", metavar="TYPE")
@click.option("--max-hops", **count(3, 1, 6), help="Longest path listed, in steps.")
@click.option("--limit", **count(50, 0, 10_000), help="At most this many paths (shortest first).")
@SCHEMA
@FORMAT
def paths(source, target, max_hops, limit, schema_name, fmt):
    """List the typed paths from node type TYPE to node type TYPE the schema allows.

    Each line is a --path for `kgbuild traverse` (stored names walked :out, inverse names
    for the other direction: ownerOf:out == ownedBy:in) and how it reads with stored edge
    directions. A step fits a type when the edge's domain (or, walked in, its range) is the
    type, a parent or a child of it: a Component may be a Service. Shortest first, then by
    path text; the total counts every path up to --max-hops.

    \b
    Examples:
      kgbuild paths API Service
      kgbuild paths Group Library --max-hops 2 --format json

    \b
    Exit codes: 0 listed (none found included); 2 usage error (an unknown type).
    """
    from ..retrieve.paths import paths_report, render_paths

    report = paths_report(load_schema(schema_name), source, target, max_hops, limit)
    emit(report, fmt, render_paths(report))
