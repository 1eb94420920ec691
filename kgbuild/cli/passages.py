"""``kgbuild ingest`` and ``kgbuild retrieve``: passage corpora in, ranked passages out."""

from __future__ import annotations

import json
import sys

import click

from ..passages.retrieve import METHODS, MAX_K
from .main import STORE, FileArg, UsageError, count, echo, main, open_project
from .output import QUIET, VERBOSE, fit, problem_lines
from .reading import ALL_ACCESS, PRINCIPAL, principal_of

EMBEDDINGS_URL = click.option(
    "--embeddings-url", metavar="URL",
    help="OpenAI-compatible embeddings endpoint (else $KGBUILD_EMBEDDINGS_URL, the project's "
         "[embeddings] base_url, $OPENAI_BASE_URL; none: no dense search).")
EMBEDDINGS_MODEL = click.option(
    "--embeddings-model", metavar="MODEL",
    help="Model the passages are embedded with (else $KGBUILD_EMBEDDINGS_MODEL, [embeddings] "
         "model, text-embedding-3-small).")
QUERY_MODEL = click.option(
    "--query-embeddings-model", metavar="MODEL",
    help="Model the questions are embedded with (else $KGBUILD_QUERY_EMBEDDINGS_MODEL, "
         "[embeddings] query_model, the passage model's 'query' twin: e5-passage -> e5-query).")


def embeddings_settings(store, url=None, model=None, query_model=None):
    """The embeddings settings a passage command uses (flags, environment, project, the
    store's last ingest)."""
    return open_project(store=store).embeddings(url, model, query_model)


@main.command()
@click.argument("files", nargs=-1, type=FileArg())
@STORE
@click.option("--full", is_flag=True, help="Re-read every file, even one whose size and mtime "
                                           "are unchanged.")
@click.option("--no-embed", is_flag=True, help="Index and link only; embed later.")
@EMBEDDINGS_URL
@EMBEDDINGS_MODEL
@QUERY_MODEL
@QUIET
@VERBOSE
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def ingest(files, store_path, full, no_embed, embeddings_url, embeddings_model,
           query_embeddings_model, quiet, verbose, fmt):
    """Ingest passage corpora (JSONL: id, title, text; other keys kept as metadata) into the
    store: indexed for BM25, linked to the names they mention (other passages' titles; the
    store's entities, when `kgbuild build` made a graph there), embedded. The text chunks
    `kgbuild extract` stored are passages too (without FILES: only those).

    Incremental: an unchanged file is not read, a changed line is re-indexed, a removed
    line's passage disappears. Bad lines are reported (file:line) and skipped.

    \b
    Examples:
      kgbuild ingest corpus.jsonl --no-embed
      kgbuild ingest corpus.jsonl --embeddings-url http://127.0.0.1:8000/v1 \\
        --embeddings-model e5-passage
      kgbuild ingest                   # only the chunks `kgbuild extract` stored

    \b
    Exit codes: 0 ingested (bad lines are reported and skipped); 2 usage or input error.
    """
    front = open_project(store=store_path)
    settings = None if no_embed else front.embeddings(embeddings_url, embeddings_model,
                                                      query_embeddings_model)

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            click.echo(f"\rembedding {done}/{total}", err=True, nl=done == total)

    result = front.ingest(files, embeddings=settings, embed=not no_embed, full=full,
                          progress=progress)
    for line in problem_lines(result.problems, quiet=quiet, verbose=verbose):
        echo(line, err=True)
    if fmt == "json":
        echo(json.dumps(result.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    elif not quiet:
        echo(fit(result.summary()))


@main.command()
@click.option("-q", "--question", help="One question.")
@click.option("--questions", "questions_file", type=FileArg(), metavar="FILE.jsonl",
              help="Questions, one JSON object a line with 'id' and 'question'.")
@click.option("--k", "k", **count(10, 1, MAX_K), help="Passages per question.")
@click.option("--method", type=click.Choice(METHODS), default="default", show_default=True,
              help="One signal alone (bm25, dense, hybrid = RRF of both, graph) or the "
                   "measured best combination.")
@STORE
@EMBEDDINGS_URL
@EMBEDDINGS_MODEL
@QUERY_MODEL
@click.option("--rerank-url", metavar="URL",
              help="Rerank endpoint (POST URL/rerank: llama.cpp, vLLM, Infinity, TEI, Jina, "
                   "Cohere) reordering the best fused passages (else $KGBUILD_RERANK_URL, the "
                   "project's [rerank] base_url; none: no rerank).")
@click.option("--rerank-model", metavar="MODEL",
              help="Rerank model (else $KGBUILD_RERANK_MODEL, [rerank] model, the server's).")
@click.option("--rerank-top", type=click.IntRange(1, 1000), metavar="N",
              help="Fused passages reranked (else [rerank] top_n, 30).")
@click.option("--trust-project-url", is_flag=True, envvar="KGBUILD_TRUST_PROJECT_URL",
              help="Send $KGBUILD_RERANK_API_KEY/$OPENAI_API_KEY to a rerank URL the project "
                   "file names.")
@PRINCIPAL
@ALL_ACCESS
@click.option("--format", "fmt", type=click.Choice(["text", "json", "jsonl", "context"]),
              default="text", show_default=True,
              help="text for people; json: one object; jsonl: one line per question (id, "
                   "passages [{id, score}], abstain); context: prompt-ready passages.")
def retrieve(question, questions_file, k, method, store_path, embeddings_url, embeddings_model,
             query_embeddings_model, rerank_url, rerank_model, rerank_top, trust_project_url,
             labels, all_access, fmt):
    """Rank the store's passages for questions: lexical, dense and graph search, fused, with
    abstention when the evidence is weak.

    \b
    Exit codes: 0 answered (some questions may abstain); 2 usage or input error.

    \b
    Examples:
      kgbuild retrieve -q "Who directed the film that won ...?"
      kgbuild retrieve --questions q.jsonl --k 10 --format jsonl
      kgbuild retrieve -q "..." --rerank-url http://127.0.0.1:8080/v1 --rerank-top 30
    """
    from ..passages.retrieve import Question, read_questions

    if bool(question) == bool(questions_file):
        raise UsageError("give one of -q QUESTION or --questions FILE.jsonl")
    questions = read_questions(questions_file) if questions_file else [Question("q1", question)]
    front = open_project(store=store_path)
    rerank = front.rerank(rerank_url, rerank_model, rerank_top, trust_project_url)
    results = front.retrieve(questions, k=k, method=method,
                             principal=principal_of(labels, all_access),
                             embeddings=front.embeddings(embeddings_url, embeddings_model,
                                                         query_embeddings_model),
                             rerank=rerank)
    if fmt == "jsonl":
        for r in results:
            echo(json.dumps(r.to_line(), ensure_ascii=False))
        notes = dict.fromkeys(n for r in results for n in r.notes)
        for note in notes:
            echo(f"note: {note}", err=True)
    elif fmt == "json":
        data = {"method": method, "k": k, "results": [r.to_dict() for r in results]}
        if question:
            data = results[0].to_dict()
        echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False))
    elif fmt == "context":
        echo("\n".join(r.context() for r in results), nl=False)
    else:
        echo(fit("\n\n".join(r.render() for r in results)))
