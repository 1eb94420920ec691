"""``kgbuild build`` and ``kgbuild export``."""

from __future__ import annotations

import os
import sys
import time

import click

from ..store.formats import EXPORT_FORMATS
from .main import (
    ACCESS,
    EXCLUDE,
    FORMAT,
    MAX_EPOCH,
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
from .output import QUIET, VERBOSE, WIDTH, plural, problem_lines


@main.command()
@click.argument("sources", nargs=-1, type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Also write the graph as Turtle (atomically: temp file, then rename).")
@SCHEMA
@STORE
@click.option("--no-store", is_flag=True, help="Build in memory only (needs -o).")
@click.option("--full", is_flag=True,
              help="Re-extract every document under SOURCES, not only changed ones.")
@click.option("--prune", is_flag=True,
              help="Also remove the store's documents outside SOURCES (kept by default).")
@click.option("--changed", "changed_paths", multiple=True, type=click.Path(), metavar="PATH",
              help="A file added, modified or deleted since the last build: only the files "
                   "given (and documents depending on them) are looked at, every other "
                   "stored document is taken as unchanged without a stat. Repeatable.")
@click.option("--changed-from", "changed_from", type=click.Path(allow_dash=True), metavar="FILE",
              help="Read --changed paths from FILE, one per line ('-': standard input), e.g. "
                   "the output of `git diff --name-only`.")
@click.option("--backstage", "backstage_urls", multiple=True, metavar="URL",
              help="Also read a running Backstage's catalog through its API: the backend's base "
                   "URL (e.g. http://localhost:7007), the token from $BACKSTAGE_TOKEN (or the "
                   "project's [backstage] token_env). Each entity is a document, re-extracted "
                   "when its etag changes. Repeatable.")
@click.option("--trust-project-url", is_flag=True, envvar="KGBUILD_TRUST_PROJECT_URL",
              help="Send the Backstage token to the project file's backstage.url too "
                   "($KGBUILD_TRUST_PROJECT_URL=1); by default only to a --backstage URL, so a "
                   "checkout cannot point the token at its own host.")
@EXCLUDE
@NO_GITIGNORE
@ACCESS
@VALIDATE
@click.option("--aliases", "registry_path", type=FileArg(exists=False),
              help="Alias registry (default: the project's, else aliases.yaml in the project root, "
                   "else in the first source folder); its aliases and accepted decisions rename "
                   "mentioned entities.")
@click.option("--resolve/--no-resolve", "resolve", default=None,
              help="Force or skip the resolution report (default: up to 5,000 entities).")
@TIMESTAMP
@click.option("--strict", is_flag=True, help="Exit 1 when any input was rejected or skipped.")
@QUIET
@VERBOSE
@click.option("--max-file-size", type=click.IntRange(min=1, max=1 << 20),
              default=lambda: project().max_file_size, show_default="the project's, else 20",
              metavar="MIB", help="Skip (and report) source files larger than this many MiB.")
@FORMAT
def build(sources, output, schema_name, store_path, no_store, full, prune, changed_paths,
          changed_from, backstage_urls, trust_project_url, excludes, no_gitignore, access_file, validate, registry_path, resolve, timestamp, strict,
          quiet, verbose, max_file_size, fmt):
    """Extract a typed graph from SOURCES (files or folders) into the store; optionally Turtle.

    Without SOURCES (or --backstage), the project's `sources` are built (and its
    [backstage] catalog, if it names one): the project is the folder of the
    nearest kgbuild.toml (or pyproject.toml with [tool.kgbuild]) from the working directory
    up, which also sets the schema, store, excludes, access and alias files (flags override
    it). Document IDs are paths relative to the project root. Building some sources into a
    store that holds others replaces only the documents under the given paths, and says how
    many it kept; --prune removes the rest.

    Folders are scanned recursively for files an extractor recognises (Backstage
    catalog-info.yaml, CycloneDX SBOMs, compose files, package manifests, OpenAPI specs).
    The store (default ./.kgbuild) keeps one named graph per source document: a rebuild
    re-extracts only documents whose content changed, replaces what they asserted, and drops
    what deleted documents asserted. Bad inputs are reported with file and line and skipped;
    the build goes on.

    A rebuild looks at every file's stat (about 9 s of CPU for a million files). When you
    know what changed (git, a file watcher), say so with --changed or --changed-from: only
    those files, and the documents that depend on them, are read, and only their part of
    the store's bookkeeping; the others are taken as unchanged (a warning `full-scan` says
    why when every file had to be looked at after all: changed build settings, access rules).

    --backstage URL reads a running Backstage's catalog API too (paged, bounded, read in
    full before the store changes): each entity is a document whose ID is its API URL and
    whose path is its origin location, with Backstage's relations as from its file; an
    entity whose etag is unchanged is not re-extracted, one no longer listed is removed.

    \b
    Exit codes: 0 built (and conforms, when checked); 1 SHACL violations (or, with
    --strict, rejected inputs); 2 usage or input error, or a Backstage catalog that cannot
    be read (nothing changed).

    \b
    Examples:
      kgbuild build fixtures/catalog -o graph.ttl
      kgbuild build ../catalogs --schema my-schema.yaml --format json
      kgbuild build . --no-store -o graph.ttl
      kgbuild build                         # the project's sources (kgbuild.toml)
      kgbuild build --backstage http://localhost:7007   # token in $BACKSTAGE_TOKEN
      git diff --name-only HEAD~1 | kgbuild build . --changed-from -
    """
    if no_store and not output:
        raise UsageError("--no-store builds in memory only: give -o FILE to keep the result")
    changed = _changed(changed_paths, changed_from)
    if changed is not None and (no_store or full or prune or backstage_urls):
        raise UsageError("--changed (or --changed-from) updates a store from the files given: "
                         "it cannot be combined with --no-store, --full, --prune or --backstage")
    check_output(output)  # before the build, not after it
    if timestamp is None:
        _check_source_date_epoch()
    proj = project()
    backstage, from_project = list(backstage_urls), False
    if not sources and not backstage:
        if not proj.sources and not proj.backstage:
            where = proj.config or f"{proj.root} (no kgbuild.toml or [tool.kgbuild] found)"
            raise UsageError(f"no SOURCES given and the project names none: pass files or "
                             f"folders (or --backstage URL), or set sources in {where}")
        sources = [str(p) for p in proj.source_paths()]
        backstage = [proj.backstage["url"]] if proj.backstage else []
        from_project = bool(backstage) and not trust_project_url
    tty = fmt == "text" and sys.stderr.isatty()
    progress, phase = (_progress_bar(), _phase_line()) if tty else (None, None)
    _check_names([*sources, store_path, access_file or proj.access_path(),
                  registry_path or proj.aliases_path()], proj)
    front = open_project(schema=schema_name, store=store_path, access=access_file,
                         aliases=registry_path, max_file_size=max_file_size,
                         exclude=[*proj.exclude, *excludes],
                         gitignore=False if no_gitignore else None)
    result = front.build(sources, output=output, in_memory=no_store, full=full, prune=prune,
                         validate=validate, resolve=resolve, timestamp=timestamp,
                         progress=progress, phase=phase, changed=changed,
                         backstage=_catalogs(backstage, proj, withhold=from_project))
    if phase:
        phase(None)
    summary = result.summary()
    result.store.close()
    emit(summary, fmt, _render_build(summary, result, quiet, verbose))
    errors = [p for p in result.problems if p.severity == "error"]
    if result.validation is not None and not result.validation.conforms:
        sys.exit(1)
    if strict and errors:
        sys.exit(1)


MAX_CHANGED_BYTES = 64 << 20  # a --changed-from list longer than this is refused


def _changed(paths, source) -> list[str] | None:
    """The --changed paths and those listed in the --changed-from file (None: neither given)."""
    if not paths and source is None:
        return None
    listed = list(paths)
    if source is not None:
        try:
            if source == "-":
                data = sys.stdin.buffer.read(MAX_CHANGED_BYTES + 1)
            else:
                with open(source, "rb") as fh:
                    data = fh.read(MAX_CHANGED_BYTES + 1)
        except OSError as exc:
            raise UsageError(f"{source}: cannot read the list of changed files "
                             f"({exc.strerror or exc})", "input") from None
        if len(data) > MAX_CHANGED_BYTES:
            raise UsageError(f"{source}: over {MAX_CHANGED_BYTES >> 20} MiB of changed paths; "
                             "build without --changed-from", "input")
        listed += [os.fsdecode(line) for line in data.splitlines() if line.strip()]
    return listed


def _catalogs(urls, proj, withhold: bool = False) -> list:
    """The Backstage catalogs to read: each URL checked now, the token and bounds from the
    environment and the project's ``[backstage]`` table; ``withhold``: the URL is the project
    file's, not trusted, so no token is sent (a checkout must not learn it by naming its own
    host; one warning line says so)."""
    if not urls:
        return []
    from ..io.urls import redact_url
    from ..remote.backstage import TOKEN_ENV, CatalogSource, catalog_base

    settings = proj.backstage
    env = settings.get("token_env", TOKEN_ENV)
    bounds = {k: settings[k] for k in ("page_size", "max_entities", "timeout", "request_timeout")
              if k in settings}
    if "max_page_size" in settings:
        bounds["max_page_bytes"] = settings["max_page_size"] << 20
    for url in urls:
        catalog_base(url)  # a usage error before anything is read
    token = os.environ.get(env) or None
    if token and withhold:
        token = None
        echo(f"warning: ${env} not sent to {redact_url(urls[0])}, the project file's "
             f"backstage.url (pass --trust-project-url to send it)", err=True)
    return [CatalogSource(url, token, env, **bounds) for url in urls]


def _check_names(paths, proj) -> None:
    """A path from the project file that no file system can name (a NUL byte) is the file's
    error, reported before the build (a command line cannot hold one)."""
    for path in paths:
        if path is not None and "\x00" in os.fsdecode(path):
            raise UsageError(f"{proj.config or 'a path'}: {os.fsdecode(path)!r} holds a NUL byte",
                             "input")


def _check_source_date_epoch() -> None:
    """``$SOURCE_DATE_EPOCH``, when set, must be what --timestamp accepts."""
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env is not None and not (env.isascii() and env.isdigit() and int(env) <= MAX_EPOCH):
        raise UsageError(f"$SOURCE_DATE_EPOCH must be seconds since 1970 (0 to {MAX_EPOCH}), "
                         f"got {env!r}")


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


def _phase_line():
    """Each later phase's name on stderr, with how long the one before took."""
    state = {}

    def update(name: str | None) -> None:  # None: the last phase ended
        now = time.monotonic()
        if state.pop("start", None) is not None:
            echo(f" {now - state['was']:.1f} s", err=True)
        if name is not None:
            echo(f"{name}...", err=True, nl=False)
            state.update(start=True, was=now)

    return update


def _render_build(s: dict, result, quiet: bool = False, verbose: bool = False) -> str:
    """The summary for people; ``quiet``: only the errors and a failed validation."""
    if quiet:
        failed = result.validation is not None and not result.validation.conforms
        return "\n".join(problem_lines(result.problems, quiet=True)
                         + ([result.validation.render()] if failed else []))
    where = f"wrote {s['output']}" if s["output"] else f"updated store {s['store']}"
    changed = s["documents_changed"]
    counts = (f"{plural(s['entities'], 'entity', 'entities')}, {plural(s['edges'], 'edge')}, "
              f"{plural(s['assertions'], 'assertion')} from {plural(s['documents'], 'document')}")
    lines = [f"{where}: {counts}" if len(where) + len(counts) + 2 <= WIDTH
             else f"{where}:\n  {counts}",
             "documents: " + ", ".join(f"{changed[k]} {k}" for k in
                                       ("unchanged", "changed", "added", "deleted"))
             + (f";\n  {s['documents_kept']} kept outside the given paths (--prune removes them)"
                if s["documents_kept"] else "")
             + (f";\n  {s['documents_unlisted']} not looked at (not among the changed files)"
                if s["documents_unlisted"] else ""),
             "entities: " + (", ".join(f"{k} {v}" for k, v in s["entities_by_type"].items()) or "none"),
             "edges:    " + (", ".join(f"{k} {v}" for k, v in s["edges_by_type"].items()) or "none")]
    lines[1:1] = [f"backstage: {c['url']}: {plural(c['entities'], 'entity', 'entities')} read "
                  f"in {plural(c['pages'], 'page')}" for c in s.get("catalogs") or ()]
    lines += problem_lines(result.problems, verbose=verbose)
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


@main.command()
@STORE
@SCHEMA
@click.option("--format", "fmt", type=click.Choice([*EXPORT_FORMATS, "cypher"]), default="turtle",
              show_default=True, help="turtle and nt are deterministic; trig and nquads keep "
                                      "one named graph per source document; cypher is the "
                                      "property graph as parameterised MERGE statements.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to a file (atomically).")
def export(store_path, schema_name, fmt, output):
    """Write the store's graph as Turtle, N-Triples, JSON-LD, TriG, N-Quads or Cypher.

    The store serialises itself, deterministically. A file -o wrote before that still holds
    this state of the store (same content, format and schema; the file untouched) is left
    as it is.

    \b
    Examples:
      kgbuild export --format nt -o graph.nt
      kgbuild export --format trig -o graph.trig    # one named graph per source document
      kgbuild export --format cypher > graph.cypher

    \b
    Exit codes: 0 written; 2 usage or input error (no store, an -o that cannot be written).
    """
    check_output(output)
    exported = open_project(schema=schema_name, store=store_path).export(output, fmt)
    if not output:
        for chunk in exported:  # printed as it is produced
            echo(chunk.decode("utf-8"), nl=False)
