"""``kgbuild show``, ``kgbuild ls`` and ``kgbuild stats``: looking around a graph."""

from __future__ import annotations

import json
import os

import click

from ..retrieve.spec import MAX_HOPS, no_cap
from ..schema.loader import load_schema
from .main import (
    FORMAT,
    SCHEMA,
    STORE,
    FileArg,
    UsageError,
    check_output,
    count,
    emit,
    main,
    open_project,
    write_or_echo,
)
from .reading import ALL_ACCESS, GRAPH, PRINCIPAL, principal_of, print_warnings

# show, ls and stats do no linear algebra: numpy's OpenBLAS need not start a thread per core
# when numpy is imported (0.03-0.04 s of CPU of each call's start-up; as traverse)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _browser(graph_file, store_path, schema_name, labels, all_access):
    browser = open_project(schema=schema_name, store=store_path).browser(
        principal_of(labels, all_access), graph=graph_file)
    print_warnings(browser.problems)
    return browser


@main.command()
@click.argument("node_id", metavar="[ID]", required=False)
@click.option("--result", "result_file", type=FileArg(),
              help="Draw this saved traversal result (kgbuild traverse --format json) instead "
                   "of a node's neighbourhood (with --format html or svg).")
@GRAPH
@STORE
@SCHEMA
@PRINCIPAL
@ALL_ACCESS
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html", "svg"]),
              default="text", show_default=True,
              help="The node as text or JSON, or a picture of its neighbourhood: a "
                   "self-contained HTML page, or SVG (needs Graphviz's dot).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here, not to stdout.")
@click.option("--hops", **count(1, 1, MAX_HOPS), help="Pictures: hops of neighbourhood drawn.")
@click.option("--hub-cap", "--cap", "cap", **count(20),
              help="Pictures: at most this many edges from any node per hop (0: no cap); cut "
                   "hubs are marked.")
@click.option("--max-nodes", **count(60), help="Pictures: at most this many nodes.")
@click.option("--max-edges", **count(100),
              help="Text/JSON: edges listed each way; pictures: edges drawn.")
def show(node_id, result_file, graph_file, store_path, schema_name, labels, all_access, fmt,
         output, hops, cap, max_nodes, max_edges):
    """Show one node: type, label, attributes, edges both ways (counts by type, each edge's
    source), the documents behind it; or draw its neighbourhood or a saved traversal.

    Only what the principal may see is shown: an ID hidden from it is reported like an
    unknown one, with suggestions among the visible nodes.

    \b
    Exit codes: 0 shown; 2 usage or input error (an unknown ID included).

    \b
    Examples:
      kgbuild show component:default/pricing-sdk
      kgbuild show group:default/commerce-platform --format json
      kgbuild show api:default/payments-api --format html --hops 2 -o payments.html
      kgbuild traverse -q "Who owns Payments API?" --path ownedBy --format json > r.json
      kgbuild show --result r.json --format html -o r.html
    """
    from ..render.html import render_html
    from ..render.picture import load_result
    from ..render.svg import dot_program, render_svg
    from ..retrieve.browse import render_node

    if bool(node_id) == bool(result_file):
        raise UsageError("give a node ID or --result FILE (not both)")
    if result_file and fmt not in ("html", "svg"):
        raise UsageError("--result is drawn as a picture: add --format html or --format svg")
    check_output(output)
    if fmt == "svg":
        dot_program()  # before any work
    schema = load_schema(schema_name)
    draw = {"html": render_html, "svg": render_svg}.get(fmt)
    if result_file:
        write_or_echo(draw(load_result(result_file), schema.node_types), output)
        return
    browser = _browser(graph_file, store_path, schema_name, labels, all_access)
    if draw:
        result = browser.neighbourhood(node_id, hops, no_cap(cap), max_nodes,
                                       max_edges)
        write_or_echo(draw(result, schema.node_types), output)
        return
    summary = browser.node(node_id, max_edges)
    if output:
        write_or_echo(json.dumps(summary, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
                      if fmt == "json" else render_node(summary) + "\n", output)
    else:
        emit(summary, fmt, render_node(summary))


@main.command("ls")
@click.option("--type", "type_name", metavar="TYPE", help="Only nodes of this type (and subtypes).")
@click.option("--limit", **count(100), help="At most this many nodes (sorted by ID).")
@GRAPH
@STORE
@SCHEMA
@PRINCIPAL
@ALL_ACCESS
@FORMAT
def ls(type_name, limit, graph_file, store_path, schema_name, labels, all_access, fmt):
    """List nodes (label, type, ID, degree), of one type or all, sorted by ID.

    \b
    Exit codes: 0 listed; 2 usage or input error.

    \b
    Examples:
      kgbuild ls --type Service
      kgbuild ls --limit 20 --format json
    """
    from ..retrieve.browse import render_nodes

    if type_name:
        load_schema(schema_name).node_type(type_name)  # before the graph is read
    listing = _browser(graph_file, store_path, schema_name, labels, all_access).nodes(type_name,
                                                                                       limit)
    emit(listing, fmt, render_nodes(listing))


@main.command()
@click.option("--top", **count(10), help="Hubs and documents listed.")
@GRAPH
@STORE
@SCHEMA
@PRINCIPAL
@ALL_ACCESS
@FORMAT
def stats(top, graph_file, store_path, schema_name, labels, all_access, fmt):
    """Statistics: nodes and edges by type, assertions, the degree distribution, the top hubs,
    documents by assertions, extractors (the principal's visible graph only).

    \b
    Exit codes: 0 shown; 2 usage or input error.

    \b
    Examples:
      kgbuild stats
      kgbuild stats --graph graph.ttl --format json
    """
    from ..retrieve.browse import render_stats

    result = _browser(graph_file, store_path, schema_name, labels, all_access).stats(top)
    emit(result, fmt, render_stats(result))
