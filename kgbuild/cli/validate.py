"""``kgbuild validate``."""

from __future__ import annotations

import sys
from dataclasses import replace

import click

from ..validate.hygiene import CHECKS, HygieneOptions
from ..validate.validator import ENGINES
from .main import SCHEMA, STORE, FileArg, echo, emit, main, open_project
from .output import VERBOSE


@main.command()
@click.argument("graph", type=FileArg(exists=False), required=False)
@STORE
@SCHEMA
@click.option("--changed", is_flag=True,
              help="Validate only what the last build changed (the focus nodes its documents "
                   "touched) instead of the whole store.")
@click.option("--engine", type=click.Choice(ENGINES), default="fast", show_default=True,
              help="fast: the shapes compiled to SPARQL on the store; pyshacl: the reference "
                   "engine (also used, with a note, for shapes the fast engine cannot compile).")
@click.option("--shapes", "shape_files", multiple=True, type=FileArg(), metavar="FILE",
              help="Extra SHACL shapes (Turtle), beside the schema's and the provenance shapes "
                   "(repeatable).")
@click.option("--skip", "skipped", multiple=True, type=click.Choice(CHECKS),
              help="Skip one hygiene check (repeatable).")
@click.option("--no-hygiene", is_flag=True, help="Run no hygiene check.")
@click.option("--hub-degree", type=click.IntRange(1), default=200, show_default=True,
              help="hubs: report nodes with more edges than this.")
@click.option("--min-confidence", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="weak: report edges whose every assertion is below this confidence.")
@click.option("--undefined-external", is_flag=True,
              help="undefined: list external packages too (purls, images, charts, Terraform "
                   "modules; by default only counted).")
@click.option("--strict", is_flag=True, help="Hygiene warnings fail the run too (exit 1).")
@click.option("--quiet", is_flag=True,
              help="Print the violations only: no hygiene warnings or notes (JSON keeps them).")
@VERBOSE
@click.option("--format", "fmt", type=click.Choice(["text", "json", "shacl"]), default="text",
              show_default=True, help="text for people, json for machines, shacl: the standard "
                                      "sh:ValidationReport graph in Turtle for other SHACL tools.")
def validate(graph, store_path, schema_name, changed, engine, shape_files, skipped, no_hygiene,
             hub_degree, min_confidence, undefined_external, strict, quiet, verbose,
             fmt):
    """Check GRAPH (Turtle, N-Triples, JSON-LD, ...), or else the store, against the SHACL shapes.

    Shapes come from the schema (node typing, label, ID, the domain and range of every edge
    type), from shapes/*.ttl (every assertion has one source, a location, an extractor, a
    confidence in [0, 1]; every edge is covered by an assertion) and from --shapes. The report
    groups results by problem and names each offending node with the file and line of the
    assertion behind it.

    Hygiene checks (warnings and notes, never violations): undefined (an edge points at an
    entity no document defines; stores only; external packages such as purls are only
    counted unless --undefined-external), duplicates (near-duplicate names within a type,
    from the resolver), hubs (more edges than --hub-degree), weak (edges whose every
    assertion is below --min-confidence).

    \b
    Examples:
      kgbuild validate                     # the project's store, in full
      kgbuild validate --changed           # only what the last build touched
      kgbuild validate graph.ttl --engine pyshacl --format json
      kgbuild validate --format shacl > report.ttl
    \b
    Exit codes: 0 conforms; 1 violations (or, with --strict, hygiene warnings);
    2 usage or input error.
    """
    options = None if no_hygiene else HygieneOptions(
        tuple(c for c in CHECKS if c not in skipped), hub_degree, min_confidence,
        undefined_external)
    report = open_project(schema=schema_name, store=store_path).validate(
        graph, changed=changed, engine=engine, shapes=shape_files, hygiene=options)
    if fmt == "shacl":
        echo(report.to_shacl().rstrip())
    else:
        shown = replace(report, hygiene=[]) if quiet else report
        emit(report.to_dict(), fmt, shown.render(limit=10**9 if verbose else 10))
    warned = strict and any(f.severity == "Warning" for f in report.hygiene)
    sys.exit(0 if report.conforms and not warned else 1)
