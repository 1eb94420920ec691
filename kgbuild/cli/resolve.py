"""``kgbuild resolve``: explain, review, accept, reject."""

from __future__ import annotations

from pathlib import Path

import click

from ..schema.loader import load_schema
from .main import FORMAT, SCHEMA, STORE, FileArg, emit, main, project
from .reading import (
    ALL_ACCESS,
    GRAPH,
    PRINCIPAL,
    graph_source,
    principal_of,
    read_model,
    whole_graph,
)

REGISTRY = click.option(
    "--registry", "registry_path", type=FileArg(exists=False),
    default=lambda: str(project().aliases_path() or project().path("aliases.yaml")),
    show_default="the project's, else aliases.yaml in the project root",
    help="The alias registry.")


@main.group("resolve")
def resolve_group():
    """Entity resolution: explain a mention, review the queue, accept or reject a match.

    \b
    Examples:
      kgbuild resolve explain "payments api" --type API
      kgbuild resolve review                 # the last build's queue in the store
      kgbuild resolve accept "Paymnts" api:default/payments --type API
      kgbuild resolve reject "Payouts" api:default/payments --type API

    \b
    Exit codes: 0 done; 2 usage or input error (an unknown type or ID included).
    """


@resolve_group.command("explain")
@click.argument("mention")
@click.option("--type", "type_name", help="The mention's type (default: any type).")
@GRAPH
@STORE
@SCHEMA
@REGISTRY
@PRINCIPAL
@ALL_ACCESS
@FORMAT
def resolve_explain(mention, type_name, graph_file, store_path, schema_name, registry_path, labels,
                    all_access, fmt):
    """Show how MENTION resolves: stage, reason and every candidate with its score.

    Only entities the caller may see are candidates (public ones unless --principal or
    --all-access), as in traverse.

    \b
    Examples:
      kgbuild resolve explain "payments api" --type API
      kgbuild resolve explain Paymnts --all-access --format json

    \b
    Exit codes: 0 explained (an unresolved mention included); 2 usage or input error.
    """
    from ..resolve.review import explain, render_explain

    principal = principal_of(labels, all_access)
    model = read_model(graph_source(graph_file, store_path, schema_name), principal)
    result = explain(model, mention, type_name, registry_path, principal)
    emit(result, fmt, render_explain(result))


@resolve_group.command("review")
@click.option("--queue", "queue_path", type=FileArg(),
              help="Review queue written by a build (default: the store's review-queue.json).")
@click.option("--type", "type_name", help="Only this type.")
@GRAPH
@STORE
@SCHEMA
@REGISTRY
@PRINCIPAL
@ALL_ACCESS
@FORMAT
def resolve_review(queue_path, type_name, graph_file, store_path, schema_name, registry_path,
                   labels, all_access, fmt):
    """List undecided queued mentions and possible duplicate entities of the graph.

    Only what the caller may see is listed (public items unless --principal or --all-access),
    as in traverse.

    \b
    Examples:
      kgbuild resolve review
      kgbuild resolve review --type Group --all-access --format json

    \b
    Exit codes: 0 listed (an empty queue included); 2 usage or input error.
    """
    from ..resolve.review import render_review, review

    principal = principal_of(labels, all_access)
    if queue_path is None and not graph_file and (Path(store_path) / "review-queue.json").is_file():
        queue_path = Path(store_path) / "review-queue.json"  # written by the last build
    kg = whole_graph(graph_file, store_path, schema_name)
    report = review(kg, registry_path, queue_path, type_name, principal)
    emit(report, fmt, render_review(report))


def _decide_command(decision: str):
    @click.argument("mention")
    @click.argument("entity_id", metavar="ID")
    @click.option("--type", "type_name", required=True, help="The mention's type.")
    @click.option("--new", "new", is_flag=True,
                  help="ID need not be in the graph yet (an entity a document is still to define).")
    @GRAPH
    @STORE
    @SCHEMA
    @REGISTRY
    @FORMAT
    def command(mention, entity_id, type_name, new, graph_file, store_path, schema_name,
                registry_path, fmt):
        from ..resolve import aliases

        kg = None
        if graph_file or not new or Path(store_path).is_dir():
            kg = whole_graph(graph_file, store_path, schema_name)
        exists = kg is not None and entity_id in kg.nodes
        made = getattr(aliases, decision)(registry_path, mention, type_name, entity_id,
                                          load_schema(schema_name), kg, new)
        note = "" if exists else " (not in the graph yet: a document is to define it)"
        emit({**made.to_dict(), "exists": exists}, fmt,
             f"{made.decision}: {made.mention!r} as {made.type} -> {made.id}{note} (in {registry_path})")
    return command


_DECIDED = ("\n\n\b\nExit codes: 0 recorded; 2 usage or input error (an ID not in the graph, a "
            "type that does not fit).")
resolve_group.command("accept", help=(
    "Record that MENTION (a --type) is the entity ID.\n\nID must be an entity of the graph (the "
    "store, or --graph) of a compatible type; --new accepts one no document defines yet. MENTION "
    "is one line, ID has no whitespace.\n\n\b\nExamples:\n"
    "  kgbuild resolve accept \"Paymnts\" api:default/payments-api --type API\n"
    "  kgbuild resolve accept \"Ledger\" component:default/ledger --type Component --new"
    + _DECIDED))(_decide_command("accept"))
resolve_group.command("reject", help=(
    "Record that MENTION (a --type) is never the entity ID (checked as accept checks)."
    "\n\n\b\nExamples:\n"
    "  kgbuild resolve reject \"Payouts\" api:default/payments-api --type API" + _DECIDED))(
    _decide_command("reject"))
