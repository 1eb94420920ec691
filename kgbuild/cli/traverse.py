"""``kgbuild traverse`` and ``kgbuild eval retrieval``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..io.urls import check_http_url
from ..retrieve.spec import BOUNDS, DEFAULTS
from .main import (
    COSINE,
    FORMAT,
    SCHEMA,
    STORE,
    FileArg,
    FolderArg,
    UsageError,
    count,
    emit,
    main,
    open_project,
    project,
)
from .reading import (
    ALL_ACCESS,
    GRAPH,
    PRINCIPAL,
    principal_of,
    print_warnings,
    whole_graph,
)


# A walk does no linear algebra: numpy's OpenBLAS need not start a thread per core when numpy
# is imported (0.03-0.04 s of CPU of every walk's start-up, measured on 2 cores).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _setting(name: str) -> dict:
    """The option of a spec setting: its default and range."""
    return count(DEFAULTS[name], *BOUNDS[name])


def _check_edges(schema, follow, path) -> None:
    """An unknown edge name of --follow or --path is an error naming the closest known ones
    (the walk itself would list every name)."""
    for step in [*follow, *(path.split("/") if path else ())]:
        name = step.strip().partition(":")[0]
        if name:
            schema.predicate(name)


def _split(values) -> tuple[str, ...]:
    """Repeated, comma-separated option values as one tuple (blanks dropped)."""
    return tuple(v.strip() for x in values for v in x.split(",") if v.strip())


@main.command()
@GRAPH
@STORE
@SCHEMA
@click.option("--endpoint", metavar="URL",
              help="Walk the graph `kgbuild push` sent to this SPARQL server (per-hop queries, "
                   "same results; seeds by exact --seed ID).")
@click.option("--seed", "seeds", multiple=True, metavar="ID",
              help="Seed by ID (repeatable), in any form: percent-encoded or not "
                   "(pkg:npm/@babel/core), a purl with version and qualifiers "
                   "(pkg:pypi/Flask@3.1.3), a Backstage ref with default kind/namespace "
                   "(API:payments-api, or payments-api with --type API).")
@click.option("--name", "names", multiple=True, help="Seed by name or alias, resolved (repeatable).")
@click.option("-q", "--question",
              help="Seed with the entities this question mentions. With --type and neither "
                   "--path nor --follow: walk the shortest typed path (see `kgbuild paths`) "
                   "from their types to the --type that has a complete walk.")
@click.option("--follow", multiple=True, metavar="PRED[:out|:in|:both]",
              help="Edge type and direction to walk (repeatable); inverse names work.")
@click.option("--hops", **_setting("hops"))
@click.option("--path", metavar="P:DIR/P:DIR/...", help="Exact typed path instead of --follow.")
@click.option("--hub-cap", "--cap", "cap", **_setting("cap"),
              help="At most this many edges from any node per hop (0: no cap).")
@click.option("--no-cap", is_flag=True, help="Walk every matching edge (same as --hub-cap 0).")
@click.option("--include-seeds", is_flag=True,
              help="Path mode: keep a seed among the answers when a walk returns to it.")
@click.option("--type", "types", multiple=True,
              help="Only enter nodes of this type (follow) / only end at it (path; with -q and "
                   "no --path/--follow: the target of the shortest typed path). Also the kind "
                   "of a bare --seed name. Repeatable.")
@click.option("--max-nodes", **_setting("max_nodes"))
@click.option("--max-edges", **_setting("max_edges"))
@click.option("--max-paths", **_setting("max_paths"))
@click.option("--max-chars", **_setting("max_chars"),
              help="Character budget of the context pack.")
@click.option("--exclude-qualifier", "exclude_qualifiers", multiple=True, metavar="Q[,Q]",
              help="Do not walk edges whose every assertion has a qualifier with one of these "
                   "words (dev,test,docs drops dev dependencies, group:tests, optional:docs).")
@click.option("--extractor", "extractors", multiple=True, metavar="NAME",
              help="Walk only edges some assertion of this extractor backs (repeatable).")
@click.option("--min-confidence", type=click.FloatRange(*BOUNDS["min_confidence"]), metavar="X",
              help="Walk only edges some assertion at least this confident backs.")
@click.option("--semantic", **_setting("semantic"), metavar="N",
              help="With -q: also seed the N nodes whose embeddings are closest to the question.")
@click.option("--semantic-min", type=COSINE, default=DEFAULTS["semantic_min"], show_default=True,
              help="Least cosine similarity for a semantic seed.")
@click.option("--embeddings-model", default="text-embedding-3-small", show_default=True,
              envvar="KGBUILD_EMBEDDINGS_MODEL", help="Embeddings model ($KGBUILD_EMBEDDINGS_MODEL).")
@click.option("--embeddings-url", envvar="OPENAI_BASE_URL", metavar="URL",
              help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 ($OPENAI_BASE_URL); "
                   "the key comes from $OPENAI_API_KEY.")
@PRINCIPAL
@ALL_ACCESS
@click.option("--format", "fmt", type=click.Choice(["text", "json", "context"]), default="text",
              show_default=True,
              help="text for people, json for machines, context: only the context pack as "
                   "prompt text (each relation once, evidence cited).")
def traverse(graph_file, store_path, schema_name, endpoint, seeds, names, question, follow, hops, path, cap,
             no_cap, include_seeds, types, max_nodes, max_edges, max_paths, max_chars,
             exclude_qualifiers, extractors, min_confidence, semantic, semantic_min,
             embeddings_model, embeddings_url, labels, all_access, fmt):
    """Walk the graph from seeds and print nodes, edges, paths, evidence and a context pack.

    Seeds come from --seed IDs, --name (resolved like any mention) or the entities a
    --question mentions. Walk either --follow PRED[:DIR] for --hops hops, or one exact
    --path. Directions are relative to the name: ownerOf:out == ownedBy:in. When no seed is
    found or no walk completes the result says so (ABSTAIN) instead of listing neighbours;
    for a --path it names the step that matched nothing, what would match there (the other
    direction) and the nearest partial walk. The filters (--exclude-qualifier, --extractor,
    --min-confidence) apply while walking: an edge they leave no assertion for is not walked.

    \b
    Exit codes: 0 answered; 1 abstained; 2 usage or input error.

    \b
    Examples:
      kgbuild traverse -q "Which service depends on the library maintained by the team
        that owns Payments API?" --path ownedBy:out/ownerOf:out/dependsOn:in
      kgbuild traverse --seed group:default/commerce-platform --follow ownerOf --hops 1
      kgbuild traverse --seed pkg:pypi/Flask@3.1.3 --follow dependsOn --hops 1 \\
        --exclude-qualifier dev,test,docs --format context
      kgbuild traverse -q "Who owns Pricing SDK?" --type Group
      kgbuild traverse --graph graph.ttl --seed api:default/payments-api \\
        --path ownedBy/ownerOf --no-cap --format json
    """
    from ..retrieve.spec import request_spec

    spec = request_spec(dict(
        seeds=seeds, names=names, question=question, follow=follow, hops=hops, path=path,
        cap=0 if no_cap else cap, types=types, include_seeds=include_seeds, semantic=semantic,
        semantic_min=semantic_min, max_nodes=max_nodes, max_edges=max_edges,
        max_paths=max_paths, max_chars=max_chars, min_confidence=min_confidence,
        exclude_qualifiers=_split(exclude_qualifiers), extractors=extractors))
    if not (seeds or names or question):
        raise UsageError("give at least one --seed, --name or --question")
    if semantic and question and embeddings_url is not None:
        check_http_url(embeddings_url, "--embeddings-url", "http://localhost:11434/v1")
    principal = principal_of(labels, all_access)
    front = open_project(schema=schema_name, store=store_path)
    _check_edges(front.schema, follow, path)
    spec.check(front.schema)  # before the graph is read
    if endpoint:
        if graph_file or semantic:
            raise UsageError("--endpoint walks the server's graph: it takes neither --graph nor "
                             "--semantic")
        from ..remote.sparql import SparqlClient

        with SparqlClient(endpoint) as client:
            result = front.traverser(principal, graph=client).run(spec)
        emit(result.to_dict(), fmt, result.prompt() if fmt == "context" else result.render())
        sys.exit(1 if result.abstain else 0)
    # the read model: a walk reads the index pages, node rows and edge records it touches
    walker = front.traverser(principal, graph=graph_file)
    print_warnings(getattr(walker.source, "problems", []))
    if semantic and question:
        from ..retrieve.embeddings import EmbeddingMatcher

        folder = walker.source.folder if graph_file else Path(store_path)
        try:  # the client checks the URL its own way and raises its own error types
            walker.matcher = EmbeddingMatcher.from_env(
                embeddings_model, embeddings_url,
                cache_dir=folder / "embeddings" if folder else None)
        except Exception as exc:
            raise UsageError(f"--embeddings-url {embeddings_url!r}: {type(exc).__name__}: {exc}") from None
    result = walker.run(spec)
    emit(result.to_dict(), fmt, result.prompt() if fmt == "context" else result.render())
    sys.exit(1 if result.abstain else 0)


@main.group("eval")
def eval_group():
    """Measure retrieval quality on curated cases.

    \b
    Examples:
      kgbuild eval retrieval fixtures/retrieval/cases.yaml
      kgbuild eval retrieval questions.jsonl --k 5 --format json

    \b
    Exit codes: 0 every case passed; 1 some failed; 2 usage or input error.
    """


@eval_group.command("retrieval")
@click.argument("cases", type=FileArg())
@GRAPH
@click.option("--store", "store_path", type=FolderArg(),
              help="Use this store's graph instead of the graph the cases file names.")
@SCHEMA
@click.option("--k", "k", **count(10, 1, 1000),
              help="Passages ranked per question (QUESTIONS.jsonl).")
@PRINCIPAL
@ALL_ACCESS
@FORMAT
def eval_retrieval(cases, graph_file, store_path, schema_name, k, labels, all_access, fmt):
    """Run the traversal CASES (YAML) and report evidence recall, noise, hops and context size.

    The graph is the one the cases file names (a catalog folder, built in memory, or a graph
    file), unless --graph or --store is given. Format of the file: see the README.

    A .jsonl file is passage questions instead (id, question, supporting_ids): every
    passage method on the store's passages, side by side (recall@k, all@k, MRR, per type and
    hop count, abstention); embeddings as `kgbuild retrieve` finds them.

    \b
    Exit codes: 0 every case passed; 1 some failed; 2 usage or input error.

    \b
    Examples:
      kgbuild eval retrieval fixtures/retrieval/cases.yaml
      kgbuild eval retrieval fixtures/retrieval/cases.yaml --graph graph.ttl --format json
      kgbuild eval retrieval questions.jsonl --k 5   # passage questions, every method
    """
    if str(cases).endswith(".jsonl"):
        from ..evaluate.passages import eval_passages, render_passages_report
        from .passages import embeddings_settings

        store = store_path or str(project().store_path())
        report = eval_passages(store, cases, k=k, principal=principal_of(labels, all_access),
                               embeddings=embeddings_settings(store))
        emit(report, fmt, render_passages_report(report))
        return
    from ..evaluate.retrieval import eval_retrieval as run_cases
    from ..evaluate.retrieval import render_report

    kg = whole_graph(graph_file, store_path, schema_name) if graph_file or store_path else None
    report = run_cases(cases, kg)
    emit(report, fmt, render_report(report))
    sys.exit(1 if report["total"]["failed"] else 0)


