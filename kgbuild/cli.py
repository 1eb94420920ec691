"""The ``kgbuild`` command line: thin click commands over the library.

Each command parses options, calls one library function and renders its result as text or,
with ``--format json``, as JSON. Library errors become one-line messages with exit code 2;
exit code 1 means the work ran and found violations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .build import build as build_library, build_graph
from .errors import KgbuildError
from .export import EXPORT_FORMATS, export_store, to_turtle
from .fileio import atomic_write
from .model import rdflib_term
from .schema import load_schema
from .shapes import all_shapes
from .store import DEFAULT_STORE, GraphStore
from .validate import validate_file
from .vocab import vocabulary


class UsageError(click.ClickException):
    """A bad input or argument: one line on stderr, exit code 2."""

    exit_code = 2


def fail(exc: KgbuildError) -> UsageError:
    return UsageError(str(exc))


def emit(data: dict, fmt: str, text: str) -> None:
    """Print ``data`` as sorted JSON, or ``text`` for people."""
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(text)


def write_or_echo(text: str, output: str | None) -> None:
    """Write ``text`` atomically to ``output``, or print it."""
    if output:
        atomic_write(Path(output), text)
    else:
        click.echo(text, nl=False)


FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                      show_default=True, help="Output for people (text) or machines (json).")
SCHEMA = click.option("--schema", "schema_name", default="software", show_default=True,
                      metavar="NAME|PATH", help="Bundled schema name or path to a schema YAML file.")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="kgbuild")
def main() -> None:
    """Build, validate and serve typed, provenance-carrying knowledge graphs for retrieval.

    \b
    Typical session (the store lives in ./.kgbuild, the alias registry in ./aliases.yaml):
      kgbuild build fixtures/catalog -o graph.ttl     # extract (incrementally), check, write
      kgbuild validate graph.ttl                      # SHACL-check any graph file
      kgbuild schema show software                    # what types and edges exist
      kgbuild traverse -q "Who owns Payments API?" --path ownedBy
      kgbuild resolve review                          # names that need a decision
      kgbuild export --format trig -o graph.trig      # one named graph per source file
    """


# -- build ---------------------------------------------------------------------------------
STORE = click.option("--store", "store_path", default=DEFAULT_STORE, show_default=True,
                     type=click.Path(file_okay=False), help="Store folder (the project's graph).")


@main.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Also write the graph as Turtle (atomically: temp file, then rename).")
@SCHEMA
@STORE
@click.option("--no-store", is_flag=True, help="Build in memory only (needs -o).")
@click.option("--full", is_flag=True, help="Re-extract every document, not only changed ones.")
@click.option("--access", "access_file", type=click.Path(dir_okay=False, exists=True),
              help="access.yaml mapping source path globs to access labels.")
@click.option("--validate/--no-validate", default=None,
              help="Force or skip the SHACL check (default: only for graphs up to 200k triples).")
@click.option("--aliases", "registry_path", type=click.Path(dir_okay=False),
              help="Alias registry (default: ./aliases.yaml, else aliases.yaml in the first "
                   "source folder); its aliases and accepted decisions rename mentioned entities.")
@click.option("--resolve/--no-resolve", "resolve", default=None,
              help="Force or skip the resolution report (default: up to 5,000 entities).")
@click.option("--timestamp", type=int, metavar="EPOCH",
              help="Fix prov:generatedAtTime (default: $SOURCE_DATE_EPOCH, else file mtime).")
@click.option("--strict", is_flag=True, help="Exit 1 when any input was rejected or skipped.")
@click.option("--max-file-size", type=click.IntRange(min=1), default=20, show_default=True,
              metavar="MIB", help="Skip (and report) source files larger than this many MiB.")
@FORMAT
def build(sources, output, schema_name, store_path, no_store, full, access_file, validate,
          registry_path, resolve, timestamp, strict, max_file_size, fmt):
    """Extract a typed graph from SOURCES (files or folders) into the store; optionally Turtle.

    Folders are scanned recursively for files an extractor recognises (Backstage
    catalog-info.yaml, CycloneDX SBOMs, compose files, package manifests, OpenAPI specs).
    The store (default ./.kgbuild) keeps one named graph per source document: a rebuild
    re-extracts only documents whose content changed, replaces what they asserted, and drops
    what deleted documents asserted. Bad inputs are reported with file and line and skipped;
    the build goes on.

    \b
    Exit codes: 0 built (and conforms, when checked); 1 SHACL violations (or, with
    --strict, rejected inputs); 2 usage or input error.

    \b
    Examples:
      kgbuild build fixtures/catalog -o graph.ttl
      kgbuild build ../catalogs --schema my-schema.yaml --format json
      kgbuild build . --no-store -o graph.ttl
    """
    if no_store and not output:
        raise UsageError("--no-store builds in memory only: give -o FILE to keep the result")
    progress = _progress_bar() if fmt == "text" and sys.stderr.isatty() else None
    try:
        kwargs = dict(store=None if no_store else store_path, full=full, validate=validate,
                      timestamp=timestamp, progress=progress, access=access_file,
                      max_file_bytes=max_file_size * 2**20, registry=registry_path,
                      resolve=resolve)
        if output:
            result = build_library(sources, output, schema_name, **kwargs)
        else:
            result = build_graph(sources, schema_name, **kwargs)
        summary = result.summary()
        result.store.close()
    except KgbuildError as exc:
        raise fail(exc) from None
    emit(summary, fmt, _render_build(summary, result))
    errors = [p for p in result.problems if p.severity == "error"]
    if result.validation is not None and not result.validation.conforms:
        sys.exit(1)
    if strict and errors:
        sys.exit(1)


def _progress_bar():
    state = {}

    def update(doc_id: str, done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = click.progressbar(length=total, label="extracting", file=sys.stderr)
            bar.__enter__()
        bar.length = total
        bar.update(1)
        if done >= total:
            bar.__exit__(None, None, None)

    return update


def _render_build(s: dict, result) -> str:
    where = f"wrote {s['output']}" if s["output"] else f"updated store {s['store']}"
    changed = s["documents_changed"]
    lines = [f"{where}: {s['entities']} entities, {s['edges']} edges, "
             f"{s['assertions']} assertions from {s['documents']} documents",
             "documents: " + ", ".join(f"{changed[k]} {k}" for k in
                                       ("unchanged", "changed", "added", "deleted")),
             "entities: " + (", ".join(f"{k} {v}" for k, v in s["entities_by_type"].items()) or "none"),
             "edges:    " + (", ".join(f"{k} {v}" for k, v in s["edges_by_type"].items()) or "none")]
    if result.problems:
        lines.append(f"problems ({len(result.problems)}):")
        lines.extend(f"  {p}" for p in result.problems)
    r = s["resolution"]
    if r:
        stages = ", ".join(f"{k} {v}" for k, v in r["resolved"].items())
        lines.append(f"resolution: {r['mentions']} mentions resolved by stage ({stages}); "
                     f"{r['new']} new entities; {r['queued']} queued for review; "
                     f"{r['possible_duplicates']} possible duplicates")
        lines.extend(f"  review: {q['mention']!r} ({q['type']}): {q['reason']}" for q in r["review"][:5])
        lines.extend(f"  duplicate? {d['a']} ~ {d['b']} ({d['type']})" for d in r["duplicates"][:5])
        if r["queued"] or r["possible_duplicates"]:
            lines.append("  see `kgbuild resolve review`; decide with `kgbuild resolve accept|reject`")
    elif s["resolution_note"]:
        lines.append(s["resolution_note"])
    if result.validation is not None:
        lines.append(result.validation.render())
    elif s["validation_note"]:
        lines.append(s["validation_note"])
    return "\n".join(lines)


# -- export --------------------------------------------------------------------------------
@main.command()
@STORE
@SCHEMA
@click.option("--format", "fmt", type=click.Choice(list(EXPORT_FORMATS)), default="turtle",
              show_default=True, help="turtle and nt are deterministic; trig and nquads keep "
                                      "one named graph per source document.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to a file (atomically).")
def export(store_path, schema_name, fmt, output):
    """Write the store's graph as Turtle, N-Triples, JSON-LD, TriG or N-Quads.

    \b
    Example:
      kgbuild export --format nt -o graph.nt
    """
    try:
        with GraphStore(store_path, load_schema(schema_name), write=False) as store:
            text = export_store(store, fmt)
    except KgbuildError as exc:
        raise fail(exc) from None
    write_or_echo(text, output)


# -- validate ------------------------------------------------------------------------------
@main.command()
@click.argument("graph", type=click.Path(dir_okay=False))
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
    try:
        report = validate_file(graph, load_schema(schema_name))
    except KgbuildError as exc:
        raise fail(exc) from None
    emit(report.to_dict(), fmt, report.render())
    sys.exit(0 if report.conforms else 1)


# -- schema --------------------------------------------------------------------------------
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
    try:
        s = load_schema(name)
    except KgbuildError as exc:
        raise fail(exc) from None
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
        raise fail(exc) from None
    emit({"ok": True, "name": s.name, "node_types": len(s.node_types),
          "edge_types": len(s.edge_types), "attributes": len(s.attributes)}, fmt,
         f"ok: schema {s.name}: {len(s.node_types)} node types, {len(s.edge_types)} edge types, "
         f"{len(s.attributes)} attributes")


@schema.command("shapes")
@click.argument("name", default="software")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to a file instead.")
def schema_shapes(name, output):
    """Emit the SHACL shapes (schema-derived + shapes/*.ttl) as Turtle."""
    try:
        text = all_shapes(load_schema(name)).serialize(format="turtle")
    except KgbuildError as exc:
        raise fail(exc) from None
    write_or_echo(text, output)


# -- traverse / eval retrieval (numpy and the resolver load only when these run) -------------
GRAPH = click.option("--graph", "graph_file", type=click.Path(dir_okay=False, exists=True),
                     help="Read this graph file (Turtle, N-Triples, ...) instead of the store.")
PRINCIPAL = click.option("--principal", "--as", "labels", multiple=True, metavar="LABEL[,LABEL]",
                         help="Access labels the caller holds; without --principal/--all-access "
                              "only unlabelled (public) items are visible.")
ALL_ACCESS = click.option("--all-access", is_flag=True, help="See every item (trusted local use).")


def _graph_and_cache(graph_file, store_path, schema_name):
    """The graph to walk (a file, or the store) and where its adjacency index is cached."""
    from .model import from_rdf
    from .validate import load_graph

    schema = load_schema(schema_name)
    if graph_file:
        return from_rdf(load_graph(graph_file), schema), None
    with GraphStore(store_path, schema, write=False) as store:
        return store.knowledge_graph(), Path(store_path) / "adjacency"


def _principal(labels, all_access):
    from .access import Principal

    if all_access:
        return Principal.all_access()
    try:
        return Principal.of(",".join(labels))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


@main.command()
@GRAPH
@STORE
@SCHEMA
@click.option("--seed", "seeds", multiple=True, metavar="ID", help="Seed by stable ID (repeatable).")
@click.option("--name", "names", multiple=True, help="Seed by name or alias, resolved (repeatable).")
@click.option("-q", "--question", help="Seed with the entities this question mentions.")
@click.option("--follow", multiple=True, metavar="PRED[:out|:in|:both]",
              help="Edge type and direction to walk (repeatable); inverse names work.")
@click.option("--hops", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--path", metavar="P:DIR/P:DIR/...", help="Exact typed path instead of --follow.")
@click.option("--hub-cap", "--cap", "cap", type=click.IntRange(min=0), default=50, show_default=True,
              help="At most this many edges from any node per hop (0: no cap).")
@click.option("--no-cap", is_flag=True, help="Walk every matching edge (same as --hub-cap 0).")
@click.option("--include-seeds", is_flag=True,
              help="Path mode: keep a seed among the answers when a walk returns to it.")
@click.option("--type", "types", multiple=True, help="Only enter nodes of this type (follow) / "
                                                       "only end at it (path). Repeatable.")
@click.option("--max-nodes", type=click.IntRange(min=0), default=200, show_default=True)
@click.option("--max-edges", type=click.IntRange(min=0), default=400, show_default=True)
@click.option("--max-paths", type=click.IntRange(min=0), default=100, show_default=True)
@click.option("--max-chars", type=click.IntRange(min=0), default=12000, show_default=True,
              help="Character budget of the context pack.")
@click.option("--semantic", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="With -q: also seed the N nodes whose embeddings are closest to the question.")
@click.option("--semantic-min", type=click.FloatRange(-1, 1), default=0.5, show_default=True,
              help="Least cosine similarity for a semantic seed.")
@click.option("--embeddings-model", default="text-embedding-3-small", show_default=True,
              envvar="KGBUILD_EMBEDDINGS_MODEL", help="Embeddings model ($KGBUILD_EMBEDDINGS_MODEL).")
@click.option("--embeddings-url", envvar="OPENAI_BASE_URL", metavar="URL",
              help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 ($OPENAI_BASE_URL); "
                   "the key comes from $OPENAI_API_KEY.")
@PRINCIPAL
@ALL_ACCESS
@FORMAT
def traverse(graph_file, store_path, schema_name, seeds, names, question, follow, hops, path, cap,
             no_cap, include_seeds, types, max_nodes, max_edges, max_paths, max_chars, semantic,
             semantic_min, embeddings_model, embeddings_url, labels, all_access, fmt):
    """Walk the graph from seeds and print nodes, edges, paths, evidence and a context pack.

    Seeds come from --seed IDs, --name (resolved like any mention) or the entities a
    --question mentions. Walk either --follow PRED[:DIR] for --hops hops, or one exact
    --path. Directions are relative to the name: ownerOf:out == ownedBy:in. When no seed is
    found or no walk completes the result says so (ABSTAIN) instead of listing neighbours.

    \b
    Exit codes: 0 answered; 1 abstained; 2 usage or input error.

    \b
    Examples:
      kgbuild traverse -q "Which service depends on the library maintained by the team
        that owns Payments API?" --path ownedBy:out/ownerOf:out/dependsOn:in
      kgbuild traverse --seed group:default/commerce-platform --follow ownerOf --hops 1
      kgbuild traverse --graph graph.ttl --seed api:default/payments-api \\
        --path ownedBy/ownerOf --no-cap --format json
    """
    from .traverse import TraversalSpec, Traverser

    spec = TraversalSpec(seeds=seeds, names=names, question=question, follow=follow, hops=hops,
                         path=path, cap=None if no_cap or cap == 0 else cap, types=types,
                         include_seeds=include_seeds, semantic=semantic, semantic_min=semantic_min,
                         max_nodes=max_nodes, max_edges=max_edges, max_paths=max_paths,
                         max_chars=max_chars)
    if not (seeds or names or question):
        raise UsageError("give at least one --seed, --name or --question")
    try:
        kg, cache = _graph_and_cache(graph_file, store_path, schema_name)
        matcher = None
        if semantic and question:
            from .embeddings import EmbeddingMatcher

            matcher = EmbeddingMatcher.from_env(embeddings_model, embeddings_url,
                                                cache_dir=cache.parent / "embeddings" if cache else None)
        result = Traverser(kg, _principal(labels, all_access), cache, matcher=matcher).run(spec)
    except KgbuildError as exc:
        raise fail(exc) from None
    emit(result.to_dict(), fmt, result.render())
    sys.exit(1 if result.abstain else 0)


@main.group("eval")
def eval_group():
    """Measure retrieval quality on curated cases."""


@eval_group.command("retrieval")
@click.argument("cases", type=click.Path(dir_okay=False, exists=True))
@GRAPH
@click.option("--store", "store_path", type=click.Path(file_okay=False),
              help="Use this store's graph instead of the graph the cases file names.")
@SCHEMA
@FORMAT
def eval_retrieval(cases, graph_file, store_path, schema_name, fmt):
    """Run the traversal CASES (YAML) and report evidence recall, noise, hops and context size.

    The graph is the one the cases file names (a catalog folder, built in memory, or a graph
    file), unless --graph or --store is given. Format of the file: see the README.

    \b
    Exit codes: 0 every case passed; 1 some failed; 2 usage or input error.

    \b
    Example:
      kgbuild eval retrieval fixtures/retrieval/cases.yaml
    """
    from .retrieval_eval import eval_retrieval as run_cases, render_report

    try:
        kg = _graph_and_cache(graph_file, store_path, schema_name)[0] \
            if graph_file or store_path else None
        report = run_cases(cases, kg)
    except KgbuildError as exc:
        raise fail(exc) from None
    emit(report, fmt, render_report(report))
    sys.exit(1 if report["total"]["failed"] else 0)


# -- resolve: entity resolution review (the resolver loads only when these run) -------------
REGISTRY = click.option("--registry", "registry_path", default="aliases.yaml", show_default=True,
                        type=click.Path(dir_okay=False),
                        help="The alias registry (default: aliases.yaml in the project folder).")


@main.group("resolve")
def resolve_group():
    """Entity resolution: explain a mention, review the queue, accept or reject a match.

    \b
    Examples:
      kgbuild resolve explain "payments api" --type API
      kgbuild resolve review                 # the last build's queue in the store
      kgbuild resolve accept "Paymnts" api:default/payments --type API
      kgbuild resolve reject "Payouts" api:default/payments --type API
    """


@resolve_group.command("explain")
@click.argument("mention")
@click.option("--type", "type_name", help="The mention's type (default: any type).")
@GRAPH
@STORE
@SCHEMA
@REGISTRY
@FORMAT
def resolve_explain(mention, type_name, graph_file, store_path, schema_name, registry_path, fmt):
    """Show how MENTION resolves: stage, reason and every candidate with its score."""
    from .review import explain, render_explain

    try:
        kg = _graph_and_cache(graph_file, store_path, schema_name)[0]
        result = explain(kg, mention, type_name, registry_path)
    except KgbuildError as exc:
        raise fail(exc) from None
    emit(result, fmt, render_explain(result))


@resolve_group.command("review")
@click.option("--queue", "queue_path", type=click.Path(dir_okay=False, exists=True),
              help="Review queue written by a build (default: the store's review-queue.json).")
@click.option("--type", "type_name", help="Only this type.")
@GRAPH
@STORE
@SCHEMA
@REGISTRY
@FORMAT
def resolve_review(queue_path, type_name, graph_file, store_path, schema_name, registry_path, fmt):
    """List undecided queued mentions and possible duplicate entities of the graph."""
    from .review import render_review, review

    if queue_path is None and not graph_file and (Path(store_path) / "review-queue.json").is_file():
        queue_path = Path(store_path) / "review-queue.json"  # written by the last build
    try:
        kg = _graph_and_cache(graph_file, store_path, schema_name)[0]
        report = review(kg, registry_path, queue_path, type_name)
    except KgbuildError as exc:
        raise fail(exc) from None
    emit(report, fmt, render_review(report))


def _decide_command(decision: str):
    @click.argument("mention")
    @click.argument("entity_id", metavar="ID")
    @click.option("--type", "type_name", required=True, help="The mention's type.")
    @SCHEMA
    @REGISTRY
    @FORMAT
    def command(mention, entity_id, type_name, schema_name, registry_path, fmt):
        from . import aliases

        try:
            made = getattr(aliases, decision)(registry_path, mention, type_name, entity_id,
                                              load_schema(schema_name))
        except KgbuildError as exc:
            raise fail(exc) from None
        emit(made.to_dict(), fmt, f"{made.decision}: {made.mention!r} as {made.type} -> "
                                  f"{made.id} (in {registry_path})")
    return command


resolve_group.command("accept", help="Record that MENTION (a --type) is the entity ID.")(
    _decide_command("accept"))
resolve_group.command("reject", help="Record that MENTION (a --type) is never the entity ID.")(
    _decide_command("reject"))

if __name__ == "__main__":  # pragma: no cover
    main()
