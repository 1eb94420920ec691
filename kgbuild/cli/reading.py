"""What the reading commands share (traverse, eval, resolve, show, ls, stats): which graph
to read (a file or the store) and as which principal."""

from __future__ import annotations

import gc

import click

from ..schema.loader import load_schema
from .main import FileArg, UsageError, echo
from .output import problem_lines

GRAPH = click.option("--graph", "graph_file", type=FileArg(),
                     help="Read this graph file (Turtle, N-Triples, ...) instead of the store.")
PRINCIPAL = click.option("--principal", "--as", "labels", multiple=True, metavar="LABEL[,LABEL]",
                         help="Access labels the caller holds; without --principal/--all-access "
                              "only unlabelled (public) items are visible.")
ALL_ACCESS = click.option("--all-access", is_flag=True, help="See every item (trusted local use).")


def graph_source(graph_file, store_path, schema_name):
    """The graph to read: a file (its read model cached per content) or the store (its own
    read model)."""
    from ..retrieve.sources import GraphFile, StoreGraph

    schema = load_schema(schema_name)
    return GraphFile(graph_file, schema) if graph_file else StoreGraph(store_path, schema)


def read_model(source, principal):
    """``source``'s read model for ``principal``; a file's reading warnings are printed."""
    model = source.model(principal)
    print_warnings(getattr(source, "problems", []))
    return model


def whole_graph(graph_file, store_path, schema_name):
    """The whole graph in memory (for what reads every node: resolve review, accept, reject,
    eval): a file read, or the store materialised."""
    source = graph_source(graph_file, store_path, schema_name)
    kg = source.graph()
    print_warnings(getattr(source, "problems", []))
    gc.freeze()  # one command, one graph: later collections need not rescan it
    return kg


def print_warnings(problems) -> None:
    """What reading the graph skipped, on stderr, grouped by code (see
    :func:`~kgbuild.cli.output.problem_lines`), one problem a line."""
    for line in problem_lines(problems):
        echo(line, err=True)


def principal_of(labels, all_access):
    """The caller's principal from --principal labels or --all-access."""
    from ..graph.access import Principal

    if all_access:
        return Principal.all_access()
    try:
        return Principal.of(",".join(labels))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
