"""``kgbuild extract``: verified relations from prose through an OpenAI-compatible LLM."""

from __future__ import annotations

import os
import sys

import click

from ..extract.text.extractor import TextSettings
from ..llm.settings import MODES, LLMSettings
from .main import (
    ACCESS,
    EXCLUDE,
    FORMAT,
    NO_GITIGNORE,
    SCHEMA,
    STORE,
    TIMESTAMP,
    VALIDATE,
    FileArg,
    UsageError,
    check_output,
    echo,
    emit,
    main,
    open_project,
    project,
)
from .output import QUIET, VERBOSE, plural, problem_lines


def _llm(key: str, default):
    return lambda: project().llm.get(key, default)


@main.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True))
@SCHEMA
@STORE
@click.option("--model", help="Model name (default: $KGBUILD_MODEL, else the project's llm.model).")
@click.option("--base-url", metavar="URL",
              help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (default: "
                   "$OPENAI_BASE_URL, else the project's llm.base_url, else OpenAI). The key "
                   "is read from $OPENAI_API_KEY only.")
@click.option("--trust-project-url", is_flag=True, envvar="KGBUILD_TRUST_PROJECT_URL",
              help="Send $OPENAI_API_KEY to the project file's llm.base_url too "
                   "($KGBUILD_TRUST_PROJECT_URL=1); by default only to OpenAI, --base-url or "
                   "$OPENAI_BASE_URL, so a checkout cannot point the key at its own host.")
@click.option("--mode", type=click.Choice(["chunk", "document"]), default=_llm("mode", "chunk"),
              show_default="the project's, else chunk",
              help="Ask per chunk (recalls more) or per document (sees more context; for short "
                   "documents).")
@click.option("--chunk-size", type=click.IntRange(100, 1_000_000), metavar="CHARS",
              default=_llm("chunk_size", 4000), show_default="the project's, else 4000",
              help="Largest chunk, in characters (cut at headings, paragraphs, sentences).")
@click.option("--chunk-overlap", type=click.IntRange(0, 500_000), metavar="CHARS",
              default=_llm("chunk_overlap", 400), show_default="the project's, else 400",
              help="Characters a chunk repeats of the one before it.")
@click.option("--concurrency", type=click.IntRange(1, 256), default=None, metavar="N",
              help="Requests in flight at once (default: the project's llm.concurrency, else 4).")
@click.option("--gleanings", type=click.IntRange(0, 5), default=_llm("gleanings", 0),
              show_default="the project's, else 0",
              help="Extra passes per chunk asking for relations the first answer missed.")
@click.option("--structured-output", type=click.Choice(["auto", *MODES]), default=None,
              help="Response format to start with (default auto: json_schema, falling back to "
                   "json_object with the schema, then plain json_object, as the server accepts).")
@click.option("--timeout", type=click.FloatRange(0.1, 3600), default=None, metavar="SECONDS",
              help="For a whole request attempt, answer included (default: the project's "
                   "llm.timeout, else 120).")
@click.option("--max-response-size", "max_response_mib", type=click.IntRange(1, 1024),
              default=None, metavar="MIB",
              help="Largest answer read, in MiB, received and decompressed each (default: the "
                   "project's llm.max_response_size, else 32); a larger one stops the run.")
@click.option("--max-retries", type=click.IntRange(0, 10), default=None,
              help="Retries of a request on 429, 5xx and timeouts (default: 2).")
@click.option("--max-tokens", type=click.IntRange(1, 1_000_000), default=None, metavar="N",
              help="Completion tokens per answer; a longer one is cut and repaired once "
                   "(default: the project's llm.max_tokens, else 4096).")
@click.option("--dry-run", is_flag=True,
              help="Send nothing, change nothing: list the requests and estimated tokens.")
@click.option("--batch", "batch", flag_value="submit", default=None,
              help="Through the server's Batch API (/v1/batches, /v1/files): fold in what "
                   "earlier batches answered, extract the documents fully answered, and submit "
                   "the requests still unanswered after showing their estimated cost.")
@click.option("--batch-status", "batch", flag_value="status",
              help="Like --batch, but never submit: poll the batches and fold in their answers.")
@click.option("--yes", "-y", "assume_yes", is_flag=True,
              help="With --batch: submit without asking (without a terminal, or with CI=true, "
                   "nothing is submitted unless --yes is given).")
@click.option("--full", is_flag=True, help="Re-extract every text document under SOURCES.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Also write the store's whole graph as Turtle.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the rejected relations, one JSON object per line, with their reason.")
@click.option("--aliases", "registry_path", type=FileArg(exists=False),
              help="Alias registry (default: the project's, else aliases.yaml in the project root).")
@ACCESS
@EXCLUDE
@NO_GITIGNORE
@VALIDATE
@TIMESTAMP
@QUIET
@VERBOSE
@FORMAT
def extract(sources, schema_name, store_path, model, base_url, trust_project_url, mode,
            chunk_size, chunk_overlap, concurrency, gleanings, structured_output, timeout,
            max_response_mib, max_retries, max_tokens, dry_run, batch, assume_yes, full, output,
            report_file,
            registry_path, access_file, excludes, no_gitignore, validate, timestamp, quiet, verbose,
            fmt):
    """Extract relations from prose (Markdown, text, reStructuredText) through an LLM.

    Folders are scanned for .md, .markdown, .txt and .rst files; a file named explicitly is
    read whatever its name. Each document is cut into chunks (or sent whole with --mode
    document), each chunk is asked for the schema's relations (a strict JSON schema), and
    every relation is verified before it enters the graph: its predicate and types against
    the schema, its evidence quoted verbatim from the chunk, both ends named in it and
    resolved to the entities the store already has (a catalog's "Pricing SDK" is
    component:default/pricing-sdk). Rejected relations are counted by reason (--report
    writes them). Accepted ones are assertions like a manifest's (extractor llm:<model>,
    evidence, character span, chunk), and each chunk is kept as a passage that traversal's
    context pack cites.

    The documents live in the store beside the manifests, one named graph each, incremental
    like `kgbuild build`: only new and changed documents are sent; answers are cached in
    <store>/llm-cache, so a re-run with nothing changed makes no request. `kgbuild build`
    never reads these documents, nor removes them.

    \b
    Exit codes: 0 extracted; 1 SHACL violations or a request failed (retried next run);
    2 usage or input error.

    \b
    Examples:
      kgbuild build fixtures/catalog && kgbuild extract fixtures/prose --model gpt-4o-mini
      kgbuild extract docs --base-url http://localhost:11434/v1 --model llama3.1 --dry-run
      kgbuild extract notes.txt --mode document --report rejected.jsonl --format json
    """
    proj = project()
    check_output(output)
    check_output(report_file, "--report")
    try:
        text = TextSettings(mode, chunk_size, min(chunk_overlap, chunk_size - 1), gleanings)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    settings = LLMSettings.resolve(model=model, base_url=base_url, concurrency=concurrency,
                                   timeout=timeout, max_retries=max_retries,
                                   structured_output=structured_output, max_tokens=max_tokens,
                                   max_response_mib=max_response_mib,
                                   trust_project_url=trust_project_url, config=proj.llm)
    if settings.warning:
        echo(f"warning: {settings.warning}", err=True)
    progress = _progress_bar() if fmt == "text" and sys.stderr.isatty() and not dry_run else None
    front = open_project(schema=schema_name, store=store_path, access=access_file,
                         aliases=registry_path, exclude=[*proj.exclude, *excludes],
                         gitignore=False if no_gitignore else None)
    result = front.extract(sources, llm=settings, text=text, dry_run=dry_run, full=full,
                           timestamp=timestamp, validate=validate, progress=progress,
                           output=output, report=report_file, batch=batch,
                           confirm=_confirm(assume_yes) if batch else None)
    try:
        summary = result.summary()
    finally:
        if result.store is not None:
            result.store.close()
    emit(summary, fmt, render(summary, output, report_file, quiet, verbose))
    build = result.build
    if result.batch and result.batch["declined"] and not assume_yes:
        echo("nothing submitted: pass --yes to submit", err=True)
    if build is not None:
        if build.validation is not None and not build.validation.conforms:
            sys.exit(1)
        if result.stats.failed_requests:
            sys.exit(1)


def render(s: dict, output: str | None, report: str | None, quiet: bool = False,
           verbose: bool = False) -> str:
    """The summary for people; ``quiet``: the errors and a failed validation only."""
    llm, usage, ex = s["llm"], s["usage"], s["extraction"]
    if quiet:
        b = s.get("build") or {}
        return "\n".join(problem_lines(b.get("problem_list") or (), quiet=True)
                         + ([f"does not conform: {b['violations']} violation(s)"]
                            if b.get("conforms") is False else []))
    mode = f"{llm['mode']}" + ("" if llm["confirmed"] else " (not yet confirmed by the endpoint)")
    lines = [f"model {llm['model']} at {llm['endpoint']}; structured output: {mode}"]
    lines.extend(f"  the endpoint rejected {r['mode']} (HTTP {r['status']}): {r['message']}"
                 for r in llm["rejected"])
    if s["dry_run"]:
        plan = s["plan"]
        lines.append(f"dry run: {plan['calls']} request(s) would be sent for "
                     f"{len(s['pending_documents'])} document(s), {plan['cached']} answered by the "
                     f"cache; about {plan['estimated_prompt_tokens']:,} prompt tokens "
                     f"({plan['estimate']})")
        lines.extend(f"  {c['chunk']}: {c['chars']:,} chars, ~{c['estimated_prompt_tokens']:,} "
                     f"tokens x {c['calls']}" for c in plan["requests"][:50])
        if len(plan["requests"]) > 50:
            lines.append(f"  ... and {len(plan['requests']) - 50} more")
        return "\n".join(lines)
    if "batch" in s:
        lines.extend(render_batch(s["batch"], s["usage"]))
        if "build" not in s:
            return "\n".join(lines)
    b = s["build"]
    changed = b["documents_changed"]
    lines.append("documents: " + ", ".join(f"{changed[k]} {k}" for k in
                                           ("unchanged", "changed", "added", "deleted")))
    reasons = ", ".join(f"{k} {v}" for k, v in ex["rejected_by_reason"].items())
    lines.append(f"relations: {ex['relations']} read from {ex['chunks']} chunk(s): "
                 f"{ex['accepted']} accepted, {ex['rejected']} rejected"
                 + (f" ({reasons})" if reasons else "")
                 + (f"; {ex['duplicates']} read twice in overlapping chunks, stored once"
                    if ex["duplicates"] else ""))
    cost = usage["estimated_cost_usd"]
    lines.append(f"requests: {usage['requests']} sent ({usage['completions']} answered, "
                 f"{usage['repairs']} repairs, {usage['failures']} failed), "
                 f"{usage['cache_hits']} cache hits")
    lines.append(f"tokens: {usage['prompt_tokens']:,} prompt ({usage['cached_prompt_tokens']:,} "
                 f"cached by the provider), {usage['completion_tokens']:,} completion; estimated "
                 f"cost " + (f"${cost:.4f}" if cost is not None else "unknown (no llm.price set)"))
    lines.append(f"store {b['store'] or '(memory)'}: {plural(b['entities'], 'entity', 'entities')}, "
                 f"{plural(b['edges'], 'edge')}, {plural(b['assertions'], 'assertion')}")
    if output:
        lines.append(f"wrote {output}")
    if report:
        lines.append(f"wrote {report}: {ex['rejected']} rejected relation(s)")
    lines += problem_lines(b["problem_list"], verbose=verbose)
    if b["conforms"] is not None:
        lines.append("conforms: the graph satisfies every shape" if b["conforms"]
                     else f"does not conform: {b['violations']} violation(s)")
    return "\n".join(lines)


def render_batch(batch: dict, usage: dict) -> list[str]:
    """The batch part of the summary for people."""
    lines = [f"batch {b['id']}: {b['status']}, {b['requests']} request(s)"
             + (f", {b['failed']} failed (asked again next run)" if b["failed"] else "")
             + (", folded in" if b["folded"] else "")
             + "".join(f"\n  the server: {e}" for e in b["errors"]) for b in batch["polled"]]
    if usage["completions"]:
        lines.append(f"folded {usage['completions']} answer(s) into the cache")
    plan = batch["plan"]
    if plan["requests"]:
        cost = plan["estimated_cost_usd"]
        longest = plan["max_completion_tokens"] // max(plan["requests"], 1)
        price = (f"estimated cost ${cost:.4f} for the prompts, at most "
                 f"${plan['max_cost_usd']:.4f} with every answer {longest:,} tokens long"
                 if cost is not None else "cost unknown (no llm.price set)")
        verb = ("submitted" if batch["submitted"] else "not submitted" if batch["declined"]
                else "to submit")
        lines.append(f"{verb}: {plan['requests']} request(s) in {plan['mode']} mode, about "
                     f"{plan['estimated_prompt_tokens']:,} prompt tokens (characters / 4); {price}")
        lines.extend(f"  batch {b['id']}: {b['requests']} request(s)" for b in batch["submitted"])
    if plan["awaiting"]:
        lines.append(f"{plan['awaiting']} request(s) awaiting batches not finished yet")
    if batch["awaiting_documents"]:
        lines.append(f"{len(batch['awaiting_documents'])} document(s) wait for answers; run "
                     f"`kgbuild extract --batch` again later")
    return lines


def _confirm(assume_yes: bool):
    """``--batch``'s question before submitting: yes with --yes; no without a terminal or
    under CI (nothing hangs waiting for an answer); else asked on the terminal."""
    def confirm(plan: dict) -> bool:
        if assume_yes:
            return True
        if os.environ.get("CI", "").lower() in ("1", "true", "yes") or not sys.stdin.isatty():
            return False
        cost = plan["estimated_cost_usd"]
        return click.confirm(f"submit {plan['requests']} request(s), about "
                             f"{plan['estimated_prompt_tokens']:,} prompt tokens"
                             + (f" (${cost:.4f} for the prompts)" if cost is not None else "")
                             + "?", default=False, err=True)
    return confirm


def _progress_bar():
    state: dict = {}

    def update(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = click.progressbar(length=total, label="asking", file=sys.stderr)
            bar.__enter__()
        bar.length = total
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)
            state.pop("bar")

    return update
