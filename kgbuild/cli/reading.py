"""What the reading commands share (traverse, eval, resolve, show, ls, stats): which graph
to read (a file or the store) and as which principal."""

from __future__ import annotations

import gc
from pathlib import Path

import click

from ..schema.loader import load_schema
from ..store.graphstore import GraphStore, cached_file_graph
from .main import FileArg, UsageError, echo

GRAPH = click.option("--graph", "graph_file", type=FileArg(),
                     help="Read this graph file (Turtle, N-Triples, ...) instead of the store.")
PRINCIPAL = click.option("--principal", "--as", "labels", multiple=True, metavar="LABEL[,LABEL]",
                         help="Access labels the caller holds; without --principal/--all-access "
                              "only unlabelled (public) items are visible.")
ALL_ACCESS = click.option("--all-access", is_flag=True, help="See every item (trusted local use).")


def graph_and_cache(graph_file, store_path, schema_name):
    """The graph to walk (a file, read once per content into a cache, or the store) and where
    its adjacency index is cached."""
    from ..graph.rdf import from_rdf
    from ..io.rdffile import load_graph

    schema = load_schema(schema_name)
    if graph_file:
        def read(path):
            problems: list = []
            return from_rdf(load_graph(path), schema, problems, source=str(path)), problems

        kg, problems, cache = cached_file_graph(graph_file, schema, read)
        print_warnings(problems)
        return kg, cache
    with GraphStore(store_path, schema, write=False) as store:
        kg = store.knowledge_graph()
    gc.freeze()  # one command, one graph: later collections need not rescan it
    return kg, Path(store_path) / "adjacency"


def print_warnings(problems, limit: int = 20) -> None:
    """What reading the graph skipped, one line each on stderr (at most ``limit``)."""
    for p in problems[:limit]:
        echo(str(p), err=True)
    if len(problems) > limit:
        echo(f"... and {len(problems) - limit} more warning(s)", err=True)


def principal_of(labels, all_access):
    """The caller's principal from --principal labels or --all-access."""
    from ..graph.access import Principal

    if all_access:
        return Principal.all_access()
    try:
        return Principal.of(",".join(labels))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
