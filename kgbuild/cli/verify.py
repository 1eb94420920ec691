"""``kgbuild verify``."""

from __future__ import annotations

from dataclasses import replace

import click

from .main import EPOCH, FORMAT, SCHEMA, FileArg, FolderArg, check_output, emit, main, open_project
from .output import QUIET, VERBOSE, problem_lines


@main.command()
@click.argument("edges", type=FileArg())
@click.option("--sources", "sources", required=True,
              type=click.Path(exists=True, file_okay=False),
              help="Folder the relations' `source` paths are relative to.")
@SCHEMA
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the accepted relations as a kgbuild graph (deterministic Turtle).")
@click.option("--report", type=click.Path(dir_okay=False),
              help="Write the rejected relations, one JSON object per line with its line "
                   "number, reason code and detail.")
@click.option("--store", "store_path", type=FolderArg(), default=None,
              help="Store the verified documents go into, as extract's (made when missing; "
                   "incremental by document); its entities are what names resolve to. "
                   "Without it the project's store, when it exists, is only read.")
@click.option("--no-store", is_flag=True, help="Resolve against no store: every entity is new.")
@click.option("--aliases", "registry_path", type=FileArg(exists=False),
              help="Alias registry (default: the project's aliases.yaml when it exists).")
@click.option("--timestamp", type=EPOCH, metavar="EPOCH",
              help="Fix prov:generatedAtTime (default: $SOURCE_DATE_EPOCH, else the last commit "
                   "touching the file when git tracks it unmodified, else its mtime).")
@QUIET
@VERBOSE
@FORMAT
def verify(edges, sources, schema_name, output, report, store_path, no_store, registry_path,
           timestamp, quiet, verbose, fmt):
    """Check relations another extractor produced against their source documents.

    EDGES holds one JSON object per line: subject, subject_type (or null), predicate,
    object, object_type (or null), evidence (a verbatim quote) and source (the document's
    path relative to --sources). Each relation is checked as `kgbuild extract` checks an
    LLM's: the predicate is in the schema (name, inverse, attribute; tolerant to case and
    separators), the evidence is a quote of the document, subject and object are mentioned
    in it, types fit the predicate's domain and range, names resolve to the store's
    entities (ambiguous ones are rejected and, with --store, queued for review per
    document: `kgbuild resolve review`; never merged).

    \b
    Reason codes: malformed, unknown-predicate, evidence-not-found, subject-not-grounded,
    object-not-grounded, anaphoric-endpoint, invalid-literal, ambiguous-entity,
    type-mismatch, no-relation-cue.

    \b
    Examples:
      kgbuild verify edges.jsonl --sources docs -o verified.ttl --report rejected.jsonl
      kgbuild verify edges.jsonl --sources docs --store .kgbuild --format json

    \b
    Exit codes: 0 done (rejections are reported, not errors); 2 usage or input error.
    """
    check_output(output)
    check_output(report, "--report")
    write = store_path is not None and not no_store
    front = open_project(schema=schema_name, store=store_path, aliases=registry_path)
    result = front.verify(edges, sources, use_store=False if no_store else None, write=write,
                          output=output, report=report, timestamp=timestamp)
    problems = problem_lines(result.problems, quiet=quiet, verbose=verbose)
    text = problems if quiet else [replace(result, problems=[]).render(), *problems]
    emit(result.summary(), fmt, "\n".join(text))
